package blob

import (
	"strings"
	"testing"
)

func TestParseObjectURL(t *testing.T) {
	good := []struct {
		url, bucketURL, key, origin string
	}{
		{"s3://b/flags.json", "s3://b", "flags.json", "s3://b/flags.json"},
		{"s3://b/a/b/flags.json?region=eu-west-1&endpoint=http://127.0.0.1:9000", "s3://b?region=eu-west-1&endpoint=http://127.0.0.1:9000", "a/b/flags.json", "s3://b/a/b/flags.json"},
		{"S3://b/f.yaml", "s3://b", "f.yaml", "s3://b/f.yaml"},
		{"gs://bucket/with%20space.json", "gs://bucket", "with space.json", "gs://bucket/with%20space.json"},
		{"azblob://container/flags.json?protocol=http&domain=127.0.0.1:10000", "azblob://container?protocol=http&domain=127.0.0.1:10000", "flags.json", "azblob://container/flags.json"},
	}
	for _, tt := range good {
		t.Run(tt.url, func(t *testing.T) {
			u, err := parseObjectURL(tt.url)
			if err != nil {
				t.Fatal(err)
			}
			if u.bucketURL() != tt.bucketURL || u.key != tt.key || u.String() != tt.origin {
				t.Errorf("bucket URL %q, key %q, origin %q; want %q, %q, %q", u.bucketURL(), u.key, u.String(), tt.bucketURL, tt.key, tt.origin)
			}
		})
	}

	bad := []struct {
		url  string
		want []string
	}{
		{"ftp://b/f.json", []string{`ftp://b/f.json`, "must be s3, gs or azblob", "flagsnap.WithURL"}},
		{"flags.json", []string{"must be s3, gs or azblob", "flagsnap.WithFile"}},
		{"s3:///flags.json", []string{"names no bucket", "s3://bucket/path/to/flags.json"}},
		{"s3://b", []string{"s3://b/", "names no object", "s3://b/path/to/flags.json"}},
		{"gs://b/dir/", []string{"names no object"}},
		{"s3://key:secret@b/f.json", []string{"credentials do not belong in the URL"}},
		{"s3://b/%zz", []string{"does not parse"}},
	}
	for _, tt := range bad {
		t.Run(tt.url, func(t *testing.T) {
			_, err := parseObjectURL(tt.url)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v\nwant %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("%v shows the secret", err)
			}
		})
	}
}
