package blob_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// s3Store is gofakes3 on loopback, reached path-style over plain HTTP
// with static keys. HEAD is an attribute read, GET a download.
func s3Store(t *testing.T) *store {
	t.Helper()
	isolateAWS(t)
	const bucket = "flags"
	backend := s3mem.New()
	if err := backend.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	reqs := newRequests(headOrGet(bucket))
	srv := serve(t, reqs.wrap(gofakes3.New(backend).Server()))
	query := url.Values{
		"endpoint":       {srv.URL},
		"use_path_style": {"true"},
		"disable_https":  {"true"},
		"region":         {"us-east-1"},
	}.Encode()
	return &store{
		name:     "s3",
		bucket:   bucket,
		url:      func(key string) string { return "s3://" + bucket + "/" + key + "?" + query },
		origin:   func(key string) string { return "s3://" + bucket + "/" + key },
		requests: reqs,
		put: func(t *testing.T, key, doc string) {
			t.Helper()
			if _, err := backend.PutObject(bucket, key, map[string]string{"Content-Type": "application/json"}, strings.NewReader(doc), int64(len(doc)), nil); err != nil {
				t.Fatal(err)
			}
		},
		remove: func(t *testing.T, key string) {
			t.Helper()
			if _, err := backend.DeleteObject(bucket, key); err != nil {
				t.Fatal(err)
			}
		},
	}
}
