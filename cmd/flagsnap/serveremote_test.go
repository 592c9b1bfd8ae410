package main

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap"
	"github.com/flagsnap/flagsnap/internal/httporigin"
)

// serve follows a URL as it follows a file: its document is served at
// once, its changes are pushed to the streams and over HTTP, and its
// failures leave the last good flags served.
func TestServeFollowsAURL(t *testing.T) {
	o := httporigin.New(httporigin.Document(colorDoc("red")))
	up := httptest.NewServer(o)
	defer up.Close()
	r := startServe(t, up.URL+"/flags.json", "--addr", "127.0.0.1:0", "--http", "127.0.0.1:0",
		"--poll-interval", "20ms", "--header", "X-Api-Key: k1")
	base := r.httpURL(t)

	follower := connect(t, flagsnap.WithHost("127.0.0.1"), flagsnap.WithPort(r.port(t)))
	poller, err := flagsnap.NewProvider(flagsnap.WithURL(base), flagsnap.WithPollInterval(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(poller.Shutdown)
	if err := poller.Init(openfeature.EvaluationContext{}); err != nil {
		t.Fatalf("Init from serve's HTTP side: %v", err)
	}
	for name, p := range map[string]*flagsnap.Provider{"stream": follower, "HTTP": poller} {
		if got := str(p, "color", nil); got != "red" {
			t.Errorf("%s: color %q, want red", name, got)
		}
	}

	o.Set(httporigin.Document(colorDoc("blue")))
	nextEvent(t, follower, openfeature.ProviderConfigChange)
	nextEvent(t, poller, openfeature.ProviderConfigChange)
	for name, p := range map[string]*flagsnap.Provider{"stream": follower, "HTTP": poller} {
		if got := str(p, "color", nil); got != "blue" {
			t.Errorf("%s: color %q after the origin changed, want blue", name, got)
		}
	}

	o.Set(httporigin.Failing(http.StatusServiceUnavailable))
	waitFor(t, "the origin's failure reported", func() bool { return strings.Contains(r.stdout.String(), "503 Service Unavailable") })
	noEvent(t, follower, 100*time.Millisecond)
	if got := str(follower, "color", nil); got != "blue" {
		t.Errorf("color %q while the origin fails, want the last good flags", got)
	}
	reqs := o.Requests()
	if len(reqs) == 0 {
		t.Fatal("no request reached the origin")
	}
	for _, r := range reqs {
		if k := r.Header.Get("X-Api-Key"); k != "k1" {
			t.Errorf("a request to the origin carried X-Api-Key %q, want k1", k)
		}
	}
}

// An origin that cannot be read at start is bad input, reported before
// anything is served.
func TestServeURLUnreadableAtStart(t *testing.T) {
	up := httptest.NewServer(http.NotFoundHandler())
	defer up.Close()
	tests := []struct {
		url, want string
	}{
		{up.URL + "/missing.json", "404 Not Found"},
	}
	for _, tt := range tests {
		var stdout, stderr strings.Builder
		code := run([]string{"serve", tt.url, "--addr", "127.0.0.1:0"}, &stdout, &stderr)
		if code != exitBadInput || !strings.Contains(stderr.String(), tt.want) || !strings.Contains(stderr.String(), tt.url) {
			t.Errorf("serve %s: exit %d, stderr %q, want %d naming the URL and %q", tt.url, code, stderr.String(), exitBadInput, tt.want)
		}
	}
	notFlags := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("<html>")) }))
	defer notFlags.Close()
	var stdout, stderr strings.Builder
	if code := run([]string{"serve", notFlags.URL, "--addr", "127.0.0.1:0"}, &stdout, &stderr); code != exitBadInput {
		t.Errorf("serve of a page that is no flag set: exit %d, stderr %q", code, stderr.String())
	}
	if code := run([]string{"serve", up.URL, "--poll-interval", "0s"}, &stdout, &stderr); code != exitBadInput || !strings.Contains(stderr.String(), "--poll-interval must be positive") {
		t.Errorf("--poll-interval 0: exit %d, stderr %q", code, stderr.String())
	}
}

// serve follows an object in a bucket, here in an S3 store on loopback:
// several serve replicas can front one bucket.
func TestServeFollowsAnObject(t *testing.T) {
	dir := t.TempDir()
	for name, value := range map[string]string{
		"AWS_CONFIG_FILE": filepath.Join(dir, "config"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "credentials"),
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_ACCESS_KEY_ID": "flagsnap-test", "AWS_SECRET_ACCESS_KEY": "flagsnap-test-secret",
		"AWS_PROFILE": "", "AWS_REGION": "", "AWS_ENDPOINT_URL": "", "AWS_ENDPOINT_URL_S3": "", "AWS_SESSION_TOKEN": "",
	} {
		t.Setenv(name, value)
	}
	backend := s3mem.New()
	if err := backend.CreateBucket("flags"); err != nil {
		t.Fatal(err)
	}
	put := func(doc string) {
		t.Helper()
		if _, err := backend.PutObject("flags", "flags.json", nil, strings.NewReader(doc), int64(len(doc)), nil); err != nil {
			t.Fatal(err)
		}
	}
	put(colorDoc("red"))
	store := httptest.NewServer(gofakes3.New(backend).Server())
	defer store.Close()
	object := "s3://flags/flags.json?" + url.Values{
		"endpoint": {store.URL}, "use_path_style": {"true"}, "disable_https": {"true"}, "region": {"us-east-1"},
	}.Encode()

	r := startServe(t, object, "--addr", "127.0.0.1:0", "--poll-interval", "20ms")
	follower := connect(t, flagsnap.WithHost("127.0.0.1"), flagsnap.WithPort(r.port(t)))
	if got := str(follower, "color", nil); got != "red" {
		t.Errorf("color %q, want red", got)
	}
	put(colorDoc("blue"))
	nextEvent(t, follower, openfeature.ProviderConfigChange)
	if got := str(follower, "color", nil); got != "blue" {
		t.Errorf("color %q after the object changed, want blue", got)
	}
}
