package source

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/flagsnap/flagsnap/internal/httporigin"
)

// runHTTP runs an HTTP source for cfg until the test ends.
func runHTTP(t *testing.T, cfg HTTPConfig) *recorder {
	t.Helper()
	src, err := NewHTTP(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx, rec) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(waitTimeout):
			t.Error("Run did not return after its context ended")
		}
		if n := rec.overlaps.Load(); n > 0 {
			t.Errorf("the sink was called concurrently %d times", n)
		}
	})
	return rec
}

func TestHTTPPollsWithTheETag(t *testing.T) {
	o := httporigin.New(httporigin.Answer{Doc: `{"flags":{}}`, ETag: `"v1"`})
	srv := httptest.NewServer(o)
	defer srv.Close()
	rec := runHTTP(t, HTTPConfig{URL: srv.URL + "/flags.json", PollInterval: 10 * time.Millisecond})

	rec.waitUpdate(t, `{"flags":{}}`)
	rec.waitFor(t, "two unchanged polls", func(c []call) bool { return count(c, "unchanged") >= 2 })
	reqs := o.Requests()
	if got := reqs[0].Header.Get("If-None-Match"); got != "" {
		t.Errorf("first request: If-None-Match %q, want none", got)
	}
	if got := reqs[1].Header.Get("If-None-Match"); got != `"v1"` {
		t.Errorf("second request: If-None-Match %q, want the ETag of the first answer", got)
	}

	o.Set(httporigin.Answer{Doc: `{"flags":{"a":{}}}`, ETag: `"v2"`})
	calls := rec.waitUpdate(t, `{"flags":{"a":{}}}`)
	if n := count(calls, "update"); n != 2 {
		t.Errorf("%d updates, want 2 (one per document): %v", n, calls)
	}
	if got := calls[len(calls)-1].orig; got != srv.URL+"/flags.json" {
		t.Errorf("origin %q, want the URL", got)
	}
}

func TestHTTPPollsWithLastModified(t *testing.T) {
	o := httporigin.New(httporigin.Answer{Doc: `{"flags":{}}`, LastModified: "Wed, 25 Nov 2026 10:00:00 GMT"})
	srv := httptest.NewServer(o)
	defer srv.Close()
	rec := runHTTP(t, HTTPConfig{URL: srv.URL, PollInterval: 10 * time.Millisecond})
	rec.waitFor(t, "an unchanged poll", func(c []call) bool { return count(c, "unchanged") >= 1 })
	if got := o.Requests()[1].Header.Get("If-Modified-Since"); got != "Wed, 25 Nov 2026 10:00:00 GMT" {
		t.Errorf("If-Modified-Since %q, want the Last-Modified of the first answer", got)
	}
}

// A server without validators answers 200 every time; the same document
// is still no news.
func TestHTTPSameDocumentIsUnchanged(t *testing.T) {
	o := httporigin.New(httporigin.Answer{Doc: `{"flags":{}}`})
	srv := httptest.NewServer(o)
	defer srv.Close()
	rec := runHTTP(t, HTTPConfig{URL: srv.URL, PollInterval: 10 * time.Millisecond})
	calls := rec.waitFor(t, "three unchanged polls", func(c []call) bool { return count(c, "unchanged") >= 3 })
	if n := count(calls, "update"); n != 1 {
		t.Errorf("%d updates, want 1: %v", n, calls)
	}
}

// Every failure is reported as a loss naming the URL and what went wrong;
// the next answer is delivered even though the document did not change,
// which is how the sink learns the origin is back.
func TestHTTPFailuresAreLossesUntilTheServerAnswers(t *testing.T) {
	tests := []struct {
		name    string
		fail    func(a *httporigin.Answer)
		timeout time.Duration
		want    string
	}{
		{"server error", func(a *httporigin.Answer) { a.Status = http.StatusInternalServerError }, 0, "500 Internal Server Error"},
		{"unavailable", func(a *httporigin.Answer) { a.Status = http.StatusServiceUnavailable }, 0, "503 Service Unavailable"},
		{"too many requests", func(a *httporigin.Answer) { a.Status = http.StatusTooManyRequests }, 0, "429 Too Many Requests"},
		{"not found", func(a *httporigin.Answer) { a.Status = http.StatusNotFound }, 0, "404 Not Found"},
		{"unauthorized", func(a *httporigin.Answer) { a.Status = http.StatusUnauthorized }, 0, "401 Unauthorized"},
		{"timeout", func(a *httporigin.Answer) { a.Delay = time.Second }, 50 * time.Millisecond, "deadline exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := httporigin.New(httporigin.Answer{Doc: `{"flags":{}}`, ETag: `"v1"`})
			srv := httptest.NewServer(o)
			defer srv.Close()
			rec := runHTTP(t, HTTPConfig{URL: srv.URL + "/f", PollInterval: 20 * time.Millisecond, Timeout: tt.timeout})
			rec.waitUpdate(t, `{"flags":{}}`)

			o.Update(tt.fail)
			err := rec.waitLost(t)
			if !strings.Contains(err.Error(), "GET "+srv.URL+"/f") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("lost: %v, want the URL and %q", err, tt.want)
			}
			var he *HTTPError
			if !errors.As(err, &he) {
				t.Errorf("lost: %T, want an *HTTPError", err)
			}

			o.Update(func(a *httporigin.Answer) { a.Status, a.Delay = 0, 0 })
			calls := rec.waitUpdate(t, `{"flags":{}}`)
			if n := count(calls, "lost"); n != 1 {
				t.Errorf("%d losses reported, want 1 for one failure repeated: %v", n, calls)
			}
			// The server answers If-None-Match "v1" with a 304: the
			// second update shows the request after the loss asked for
			// the document whatever it was.
			if n := count(calls, "update"); n != 2 {
				t.Errorf("%d updates, want the document again after the loss: %v", n, calls)
			}
		})
	}
}

func TestHTTPConnectionRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	rec := runHTTP(t, HTTPConfig{URL: url, PollInterval: 20 * time.Millisecond})
	err := rec.waitLost(t)
	if !strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), url) {
		t.Errorf("lost: %v, want the URL and connection refused", err)
	}
}

func TestHTTPHonoursRetryAfter(t *testing.T) {
	o := httporigin.New(httporigin.Answer{Status: http.StatusServiceUnavailable, RetryAfter: "1"})
	srv := httptest.NewServer(o)
	defer srv.Close()
	rec := runHTTP(t, HTTPConfig{URL: srv.URL, PollInterval: 10 * time.Millisecond})
	err := rec.waitLost(t)
	if !strings.Contains(err.Error(), "retry after 1s") {
		t.Errorf("lost: %v, want the Retry-After in it", err)
	}
	o.Set(httporigin.Answer{Doc: `{"flags":{}}`})
	rec.waitUpdate(t, `{"flags":{}}`)
	reqs := o.Requests()
	if len(reqs) != 2 {
		t.Errorf("%d requests, want 2: the retry waits out Retry-After, 100 poll intervals", len(reqs))
	}
}

func TestHTTPDecodesGzip(t *testing.T) {
	doc := `{"flags":{"zipped":{"state":"ENABLED","variants":{"on":true},"defaultVariant":"on"}}}`
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write([]byte(doc))
	zw.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Sent whether asked for or not: a transport with compression
		// off gets it encoded too.
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(zipped.Bytes())
	}))
	defer srv.Close()
	for _, tt := range []struct {
		name   string
		client *http.Client
	}{
		{"source's own client", nil},
		{"client without compression", &http.Client{Transport: &http.Transport{DisableCompression: true}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := runHTTP(t, HTTPConfig{URL: srv.URL, PollInterval: time.Hour, Client: tt.client})
			rec.waitUpdate(t, doc)
		})
	}
}

func TestHTTPRedirects(t *testing.T) {
	o := httporigin.New(httporigin.Answer{Doc: `{"flags":{}}`})
	final := httptest.NewServer(o)
	defer final.Close()
	// /r/N redirects to /r/N-1, and /r/0 to the document.
	hops := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscanf(r.URL.Path, "/r/%d", &n)
		if n == 0 {
			http.Redirect(w, r, final.URL, http.StatusFound)
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/r/%d", n-1), http.StatusMovedPermanently)
	}))
	defer hops.Close()
	secure := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, final.URL, http.StatusFound)
	}))
	defer secure.Close()

	t.Run("five are followed", func(t *testing.T) {
		rec := runHTTP(t, HTTPConfig{URL: hops.URL + "/r/4", PollInterval: time.Hour})
		rec.waitUpdate(t, `{"flags":{}}`)
	})
	t.Run("six are not", func(t *testing.T) {
		rec := runHTTP(t, HTTPConfig{URL: hops.URL + "/r/5", PollInterval: time.Hour})
		if err := rec.waitLost(t); !strings.Contains(err.Error(), "stopped after 5 redirects") {
			t.Errorf("lost: %v", err)
		}
	})
	t.Run("never from https to http", func(t *testing.T) {
		rec := runHTTP(t, HTTPConfig{URL: secure.URL, PollInterval: time.Hour, Client: secure.Client()})
		if err := rec.waitLost(t); !strings.Contains(err.Error(), "refused a redirect from https to http") {
			t.Errorf("lost: %v", err)
		}
	})
}

func TestHTTPHeadersAndRotatedAuthorization(t *testing.T) {
	o := httporigin.New(httporigin.Answer{Doc: `{"flags":{}}`})
	srv := httptest.NewServer(o)
	defer srv.Close()
	authFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(authFile, []byte("first-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rec := runHTTP(t, HTTPConfig{
		URL: srv.URL, PollInterval: 10 * time.Millisecond,
		Header:            http.Header{"X-Api-Key": {"k1"}},
		AuthorizationFile: authFile,
	})
	rec.waitUpdate(t, `{"flags":{}}`)
	first := o.Requests()[0]
	if got := first.Header.Get("Authorization"); got != "Bearer first-token" {
		t.Errorf("Authorization %q, want a bare token sent as Bearer", got)
	}
	if got := first.Header.Get("X-Api-Key"); got != "k1" {
		t.Errorf("X-Api-Key %q, want k1", got)
	}

	if err := os.WriteFile(authFile, []byte("Basic dXNlcjpwYXNz"), 0o600); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(waitTimeout)
	for {
		reqs := o.Requests()
		if reqs[len(reqs)-1].Header.Get("Authorization") == "Basic dXNlcjpwYXNz" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the rewritten Authorization file was not used")
		}
		time.Sleep(10 * time.Millisecond)
	}

	if err := os.Remove(authFile); err != nil {
		t.Fatal(err)
	}
	if err := rec.waitLost(t); !strings.Contains(err.Error(), "Authorization file") {
		t.Errorf("lost: %v, want the Authorization file named", err)
	}
}

func TestHTTPBoundsTheBody(t *testing.T) {
	o := httporigin.New(httporigin.Answer{Doc: `{"flags":{}}` + strings.Repeat(" ", 100)})
	srv := httptest.NewServer(o)
	defer srv.Close()
	rec := runHTTP(t, HTTPConfig{URL: srv.URL, PollInterval: time.Hour, MaxBodySize: 50})
	err := rec.waitLost(t)
	var tooLarge *MessageTooLargeError
	if !errors.As(err, &tooLarge) || tooLarge.Limit != 50 || tooLarge.Size != 112 {
		t.Fatalf("lost: %#v, want a *MessageTooLargeError of 112 bytes over 50", err)
	}
}

func TestHTTPTrustsTheCAFile(t *testing.T) {
	srv := httptest.NewTLSServer(httporigin.New(httporigin.Answer{Doc: `{"flags":{}}`}))
	defer srv.Close()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	block := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(caFile, block, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Run("with the CA", func(t *testing.T) {
		rec := runHTTP(t, HTTPConfig{URL: srv.URL, PollInterval: time.Hour, CACertPath: caFile})
		rec.waitUpdate(t, `{"flags":{}}`)
	})
	t.Run("without", func(t *testing.T) {
		// The system's roots are loaded at the first handshake that needs
		// them, which under the race detector, with the CPU shared by
		// another package's tests, can outlast the default 500ms: the
		// test is of the certificate error, not of the deadline.
		rec := runHTTP(t, HTTPConfig{URL: srv.URL, PollInterval: time.Hour, Timeout: waitTimeout})
		if err := rec.waitLost(t); !strings.Contains(err.Error(), "certificate") {
			t.Errorf("lost: %v, want a certificate error", err)
		}
	})
}

func TestNewHTTPRefusesBadConfig(t *testing.T) {
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(caFile, []byte("not a certificate"), 0o600)
	tests := []struct {
		name string
		cfg  HTTPConfig
		want string
	}{
		{"no URL", HTTPConfig{}, "URL is required"},
		{"other scheme", HTTPConfig{URL: "ftp://example.test/f"}, "must be http or https"},
		{"relative", HTTPConfig{URL: "/flags.json"}, "must be http or https"},
		{"no host", HTTPConfig{URL: "http:///flags.json"}, "has no host"},
		{"password hidden", HTTPConfig{URL: "ftp://me:secret@example.test/"}, "me:xxxxx@"},
		{"bad header name", HTTPConfig{URL: "http://h/", Header: http.Header{"Bad Name": {"v"}}}, `"Bad Name" is not a header name`},
		{"line break in a value", HTTPConfig{URL: "http://h/", Header: http.Header{"X-A": {"v\r\nX-B: w"}}}, "line break"},
		{"client and CA file", HTTPConfig{URL: "https://h/", Client: &http.Client{}, CACertPath: caFile}, "given together"},
		{"CA file without a certificate", HTTPConfig{URL: "https://h/", CACertPath: caFile}, "holds no PEM certificate"},
		{"negative timeout", HTTPConfig{URL: "http://h/", Timeout: -1}, "Timeout must not be negative"},
		{"negative interval", HTTPConfig{URL: "http://h/", PollInterval: -1}, "Interval must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewHTTP(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewHTTP: %v, want an error with %q", err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), "secret") {
				t.Errorf("NewHTTP: %v shows the password", err)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		value string
		want  time.Duration
	}{
		{"", 0},
		{"3", 3 * time.Second},
		{"0", 0},
		{"-5", 0},
		{"100000", maxRetryAfter},
		{"Thu, 26 Nov 2026 12:00:30 GMT", 30 * time.Second},
		{"Thu, 26 Nov 2026 13:00:00 GMT", maxRetryAfter},
		{"Fri, 26 Nov 2066 12:00:00 GMT", maxRetryAfter},
		{"Thu, 26 Nov 2026 11:00:00 GMT", 0},
		{"soon", 0},
	}
	for _, tt := range tests {
		if got := retryAfter(http.Header{"Retry-After": {tt.value}}, now); got != tt.want {
			t.Errorf("Retry-After %q: %v, want %v", tt.value, got, tt.want)
		}
	}
}

func TestPollBackoffDoublesUpToTheInterval(t *testing.T) {
	p := &Poll{interval: 8 * time.Second}
	r := &poller{p: p}
	wants := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second}
	for i, want := range wants {
		r.failures = i + 1
		for range 20 {
			got := r.backoff()
			if got < want-want/10 || got > min(want+want/10, p.interval) {
				t.Fatalf("failure %d: waits %v, want %v give or take a tenth, at most the interval", i+1, got, want)
			}
		}
	}
}

// A source that stopped leaves no connection open: the server sees its
// connection closed.
func TestHTTPClosesItsConnectionsWhenItStops(t *testing.T) {
	closed := make(chan struct{}, 1)
	srv := httptest.NewUnstartedServer(httporigin.New(httporigin.Answer{Doc: `{"flags":{}}`}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			select {
			case closed <- struct{}{}:
			default:
			}
		}
	}
	srv.Start()
	defer srv.Close()
	src, err := NewHTTP(HTTPConfig{URL: srv.URL, PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx, rec) }()
	rec.waitUpdate(t, `{"flags":{}}`)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	select {
	case <-closed:
	case <-time.After(waitTimeout):
		t.Fatal("the connection stayed open after Run returned")
	}
}

// The second poll of each source falls anywhere in the first interval, and
// every later wait is the interval give or take a tenth: a fleet started
// together spreads out.
func TestPollPhaseAndSpread(t *testing.T) {
	const interval = time.Second
	lo, hi := interval, time.Duration(0)
	for range 200 {
		d := randomPhase(interval)
		if d <= 0 || d > interval {
			t.Fatalf("random phase %v, want in (0, %v]", d, interval)
		}
		lo, hi = min(lo, d), max(hi, d)
		if s := spread(interval); s < interval-interval/10 || s > interval+interval/10 {
			t.Fatalf("spread %v, want %v give or take a tenth", s, interval)
		}
	}
	if lo > interval/4 || hi < 3*interval/4 {
		t.Errorf("200 random phases in [%v, %v], want them across the interval", lo, hi)
	}
	// The longest interval an option or FLAGD_OFFLINE_POLL_MS allows is
	// not a poll at once.
	for _, d := range []time.Duration{math.MaxInt64, math.MaxInt64 - time.Second, 9223372036854 * time.Millisecond} {
		for range 50 {
			if s := spread(d); s < d-d/10 {
				t.Fatalf("spread(%v) = %v, want %v give or take a tenth", d, s, d)
			}
		}
	}
}

// A page served where the flags were expected (a login page, a proxy's
// error page, both answered 200) is a loss that says so; a flag document
// that a server labels text/html is taken all the same.
func TestHTTPSaysAnHTMLPageIsNoFlagDocument(t *testing.T) {
	tests := []struct {
		name, body string
		page       bool
	}{
		{"a login page", "\n  <!doctype html><html><body>Sign in</body></html>", true},
		{"a flag document labelled text/html", `{"flags":{}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				_, _ = w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			rec := runHTTP(t, HTTPConfig{URL: srv.URL + "/flags.json", PollInterval: 20 * time.Millisecond})
			if !tt.page {
				rec.waitUpdate(t, tt.body)
				return
			}
			err := rec.waitLost(t)
			if !strings.Contains(err.Error(), "GET "+srv.URL+"/flags.json: 200 OK with an HTML page (Content-Type text/html), not a flag document") {
				t.Errorf("lost: %v", err)
			}
		})
	}
}

func TestReadAuthorization(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	huge := write("huge", "")
	if err := os.Truncate(huge, maxAuthorizationFile+1); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, want, wantErr string
	}{
		{"a bare token", write("bare", "tok-1\n"), "Bearer tok-1", ""},
		{"a scheme and its value", write("basic", " Basic dXNlcjpwYXNz \n"), "Basic dXNlcjpwYXNz", ""},
		{"empty", write("empty", " \n"), "", "is empty"},
		{"two lines", write("two", "a\nb\n"), "", "holds more than one line"},
		{"too large", huge, "", "is over 65536 bytes: it should hold a token"},
		{"missing", filepath.Join(dir, "nope"), "", "no such file"},
		{"a directory", dir, "", "is a directory"},
	}
	if runtime.GOOS != "windows" {
		fifo := filepath.Join(dir, "fifo")
		if err := mkfifo(fifo); err == nil {
			// Opening it would wait for a writer for good.
			tests = append(tests, struct{ name, path, want, wantErr string }{"a FIFO", fifo, "", "not a regular file"})
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readAuthorization(tt.path)
			switch {
			case tt.wantErr == "" && (err != nil || got != tt.want):
				t.Errorf("%q, %v; want %q", got, err, tt.want)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "Authorization file")):
				t.Errorf("%q, %v; want an error naming the Authorization file with %q", got, err, tt.wantErr)
			}
		})
	}
}
