package blob

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	gcblob "gocloud.dev/blob"
	"gocloud.dev/gcerrors"
	"google.golang.org/api/googleapi"

	"github.com/flagsnap/flagsnap/source"
)

// fetcher reads the flag document from its object for a [source.Poll]: it
// asks for the object's attributes, and downloads it only when its
// version differs from the one delivered last.
type fetcher struct {
	bucket  *gcblob.Bucket
	key     string
	origin  string // the object's URL without the query, for messages
	timeout time.Duration
	maxSize int64
}

// Fetch implements [source.Fetcher].
func (f *fetcher) Fetch(ctx context.Context, since source.Version) ([]byte, source.Version, error) {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	attrs, err := f.bucket.Attributes(ctx, f.key)
	if err != nil {
		return nil, source.Version{}, f.error(ctx, err)
	}
	v := versionOf(attrs)
	if since != (source.Version{}) && v == since {
		return nil, since, source.ErrNotModified
	}
	if attrs.Size > f.maxSize {
		return nil, source.Version{}, f.tooLarge(attrs.Size)
	}
	// An object rewritten since its attributes were read downloads as
	// the newer document under the older version: the next poll then
	// downloads it again, and the poller finds it unchanged.
	doc, err := f.download(ctx)
	if err != nil {
		return nil, source.Version{}, err
	}
	return doc, v, nil
}

// versionOf names the object's content: its ETag, or, from a store that
// gives none, its modification time. A zero Version (neither) makes every
// poll download, and the poller recognise an unchanged document by its
// content.
func versionOf(a *gcblob.Attributes) source.Version {
	switch {
	case strings.Trim(strings.TrimPrefix(a.ETag, "W/"), `"`) != "":
		// gcsblob quotes what GCS sends, so an emulator that sends no
		// ETag gives "": no version at all, which must not be taken
		// for one that never changes.
		return source.Version{ETag: a.ETag}
	case !a.ModTime.IsZero():
		return source.Version{Modified: a.ModTime.UTC().Format(time.RFC3339Nano)}
	}
	return source.Version{}
}

// download reads the object, refusing more than maxSize bytes having
// read no more than that: the object may have grown since its attributes
// were read, and an object stored gzip-encoded is sized in its
// attributes as stored but may download decoded (GCS serves it gzipped,
// and Go's transport decodes it), to many times that size.
func (f *fetcher) download(ctx context.Context) ([]byte, error) {
	r, err := f.bucket.NewReader(ctx, f.key, &gcblob.ReaderOptions{BeforeRead: quietChecksums})
	if err != nil {
		return nil, f.error(ctx, err)
	}
	defer r.Close()
	if r.Size() > f.maxSize {
		return nil, f.tooLarge(r.Size())
	}
	// A decoded download announces no size (-1): it is read in pieces
	// that stop one byte past the bound.
	doc, over, err := source.ReadDocument(r, r.Size(), f.maxSize)
	switch {
	case err != nil:
		return nil, f.error(ctx, err)
	case over:
		return nil, f.tooLarge(-1)
	}
	return doc, nil
}

// quietChecksums stops the AWS SDK from warning on stderr, outside the
// source's logger, at every download of an object stored without a
// checksum, as objects uploaded by most tools are. Other drivers offer
// no such option and are left alone.
func quietChecksums(as func(any) bool) error {
	var opts *[]func(*s3.Options)
	if as(&opts) {
		*opts = append(*opts, func(o *s3.Options) { o.DisableLogOutputChecksumValidationSkipped = true })
	}
	return nil
}

func (f *fetcher) tooLarge(size int64) error {
	return &source.MessageTooLargeError{Target: f.origin, Size: int(size), Limit: int(f.maxSize), Setting: "blob.WithMaxSize"}
}

// error classifies what the store answered, for a message that says what
// to change.
func (f *fetcher) error(ctx context.Context, err error) error {
	code := gcerrors.Code(err)
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		code = gcerrors.DeadlineExceeded
	case code != gcerrors.NotFound && refused(err):
		// The drivers classify the stores' own error codes, and leave
		// many refusals as Unknown: a bad signature or an unknown key
		// on S3, a role without read access on Azure.
		code = gcerrors.PermissionDenied
	}
	return &ObjectError{URL: f.origin, Code: code, Timeout: f.timeout, Err: err}
}

// refused tells whether err carries an HTTP answer of 401 or 403, in
// the error type of one of the three SDKs.
func refused(err error) bool {
	c := httpStatus(err)
	return c == http.StatusUnauthorized || c == http.StatusForbidden
}

// httpStatus is the HTTP status an SDK's error carries, or 0.
func httpStatus(err error) int {
	var aws interface{ HTTPStatusCode() int }
	var azure *azcore.ResponseError
	var google *googleapi.Error
	switch {
	case errors.As(err, &aws):
		return aws.HTTPStatusCode()
	case errors.As(err, &azure):
		return azure.StatusCode
	case errors.As(err, &google):
		return google.Code
	}
	return 0
}
