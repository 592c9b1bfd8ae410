package blob_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fsouza/fake-gcs-server/fakestorage"
)

// gcsStore is fake-gcs-server on loopback, which gocloud.dev's gcsblob
// reaches through STORAGE_EMULATOR_HOST, without credentials. Attributes
// come from the JSON API (/storage/v1/b/BUCKET/o/KEY), downloads from the
// XML API (/BUCKET/KEY).
func gcsStore(t *testing.T) *store {
	t.Helper()
	const bucket = "flags"
	srv := httptest.NewUnstartedServer(nil)
	addr := srv.Listener.Addr().String()
	// Downloads of the XML API (/BUCKET/KEY) are told from other paths by
	// the host they are sent to: the emulator's public host.
	fake, err := fakestorage.NewServerWithOptions(fakestorage.Options{Scheme: "http", Host: "127.0.0.1", PublicHost: addr, NoListener: true})
	if err != nil {
		srv.Close()
		t.Skipf("fake-gcs-server does not start here (%v): the GCS test needs it", err)
	}
	t.Cleanup(fake.Stop)
	fake.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: bucket})
	reqs := newRequests(func(r *http.Request) (string, bool, bool) {
		if r.Method != http.MethodGet {
			return "", false, false
		}
		if key, ok := strings.CutPrefix(r.URL.Path, "/storage/v1/b/"+bucket+"/o/"); ok {
			return key, r.URL.Query().Get("alt") == "media", true
		}
		if key := pathKey(r.URL.Path, bucket); key != "" {
			return key, true, true
		}
		return "", false, false
	})
	srv.Config.Handler = reqs.wrap(fake.HTTPHandler())
	srv.Start()
	t.Cleanup(srv.Close)
	t.Setenv("STORAGE_EMULATOR_HOST", addr)
	clearEnv(t, "STORAGE_EMULATOR_HOST_GRPC")
	return &store{
		name:     "gcs",
		bucket:   bucket,
		url:      func(key string) string { return "gs://" + bucket + "/" + key },
		origin:   func(key string) string { return "gs://" + bucket + "/" + key },
		requests: reqs,
		put: func(t *testing.T, key, doc string) {
			t.Helper()
			fake.CreateObject(fakestorage.Object{
				ObjectAttrs: fakestorage.ObjectAttrs{BucketName: bucket, Name: key, ContentType: "application/json"},
				Content:     []byte(doc),
			})
		},
		remove: func(t *testing.T, key string) {
			t.Helper()
			if err := fake.Backend().DeleteObject(bucket, key); err != nil {
				t.Fatal(err)
			}
		},
	}
}
