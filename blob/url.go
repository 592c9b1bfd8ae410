package blob

import (
	"fmt"
	"net/url"
	"strings"
)

// schemes are the object stores Open knows, with the drivers this package
// registers, and the credentials each one's driver reads, for messages.
var schemes = map[string]string{
	"s3":     "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or the role of the instance or task",
	"gs":     "GOOGLE_APPLICATION_CREDENTIALS, or the service account of the workload",
	"azblob": "AZURE_STORAGE_ACCOUNT with AZURE_STORAGE_KEY, AZURE_STORAGE_SAS_TOKEN or AZURE_STORAGE_CONNECTION_STRING, or Azure's default credential",
}

// objectURL is an object's URL taken apart: the bucket's URL, with the
// query that configures the client, goes to gocloud.dev; the path is the
// key.
type objectURL struct {
	scheme string
	bucket string // the bucket or container
	key    string
	query  string // raw, for the bucket's URL only
}

// parseObjectURL checks raw and takes it apart.
func parseObjectURL(raw string) (objectURL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return objectURL{}, &URLError{URL: raw, Reason: "it does not parse", Err: err}
	}
	o := objectURL{scheme: strings.ToLower(u.Scheme), bucket: u.Host, key: strings.TrimPrefix(u.Path, "/"), query: u.RawQuery}
	shown := o.String()
	switch {
	case schemes[o.scheme] == "":
		return objectURL{}, &URLError{URL: shown, Reason: fmt.Sprintf("the scheme must be s3, gs or azblob, not %q (a local file is flagsnap.WithFile, a web server flagsnap.WithURL)", u.Scheme)}
	case u.User != nil:
		return objectURL{}, &URLError{URL: shown, Reason: "credentials do not belong in the URL: they come from the environment"}
	case o.bucket == "":
		return objectURL{}, &URLError{URL: shown, Reason: fmt.Sprintf("it names no bucket: write it %s://bucket/path/to/flags.json", o.scheme)}
	case o.key == "" || strings.HasSuffix(o.key, "/"):
		return objectURL{}, &URLError{URL: shown, Reason: fmt.Sprintf("it names no object: add the key, as in %s://%s/path/to/flags.json", o.scheme, o.bucket)}
	}
	return o, nil
}

// bucketURL is what gocloud.dev opens: the bucket, with the query.
func (o objectURL) bucketURL() string {
	u := url.URL{Scheme: o.scheme, Host: o.bucket, RawQuery: o.query}
	return u.String()
}

// String is the object's URL as messages show it: without the query,
// which configures the client (endpoint, region) and is no part of the
// object's name.
func (o objectURL) String() string {
	u := url.URL{Scheme: o.scheme, Host: o.bucket, Path: "/" + o.key}
	return u.String()
}
