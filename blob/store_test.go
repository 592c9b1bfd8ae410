package blob_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// store is an object store on loopback, run by a test: where its objects
// are, how the test writes them behind the source's back, and what the
// source asked of it.
type store struct {
	name   string // s3, gcs, azure
	bucket string
	// url is the object's URL for blob.Open, query included; origin is
	// the same without the query, as the source names it.
	url    func(key string) string
	origin func(key string) string
	put    func(t *testing.T, key, doc string)
	remove func(t *testing.T, key string)
	// requests counts what reached the store, when the test sees it.
	requests *requests
}

// requests counts, for each key, the attribute reads and the downloads a
// store served.
type requests struct {
	mu        sync.Mutex
	attrs     map[string]int
	downloads map[string]int
	// classify tells an attribute read from a download, and names the
	// object; ok is false for requests of neither kind (writes).
	classify func(r *http.Request) (key string, download, ok bool)
}

func newRequests(classify func(r *http.Request) (string, bool, bool)) *requests {
	return &requests{attrs: map[string]int{}, downloads: map[string]int{}, classify: classify}
}

// wrap counts what h serves.
func (c *requests) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if key, download, ok := c.classify(r); ok {
			c.mu.Lock()
			if download {
				c.downloads[key]++
			} else {
				c.attrs[key]++
			}
			c.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	})
}

// headOrGet classifies the requests of a store that reads an object's
// attributes with HEAD /PREFIX/KEY and downloads it with GET, as S3 and
// Azure do.
func headOrGet(prefix string) func(r *http.Request) (string, bool, bool) {
	return func(r *http.Request) (string, bool, bool) {
		key := pathKey(r.URL.Path, prefix)
		switch {
		case key == "":
			return "", false, false
		case r.Method == http.MethodHead:
			return key, false, true
		case r.Method == http.MethodGet:
			return key, true, true
		}
		return "", false, false
	}
}

// counts returns the attribute reads and downloads of key so far.
func (c *requests) counts(key string) (attrs, downloads int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.attrs[key], c.downloads[key]
}

// serve runs h on a loopback port until the test ends; closing the
// server also ends the idle connections the SDKs keep to it.
func serve(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// clearEnv unsets the variables for the rest of the test, restoring them
// after.
func clearEnv(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		t.Setenv(n, "")
		os.Unsetenv(n)
	}
}

// isolateAWS keeps the AWS SDK to what the test gives it: static keys,
// no profile, no shared files of the machine, no instance metadata.
func isolateAWS(t *testing.T) {
	t.Helper()
	clearEnv(t, "AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_SESSION_TOKEN", "AWS_REGION", "AWS_DEFAULT_REGION",
		"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CA_BUNDLE")
	dir := t.TempDir()
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_ACCESS_KEY_ID", "flagsnap-test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "flagsnap-test-secret")
}

// pathKey is the key of a path-style request /bucket/key, or "".
func pathKey(path, bucket string) string {
	key, ok := strings.CutPrefix(path, "/"+bucket+"/")
	if !ok {
		return ""
	}
	return key
}
