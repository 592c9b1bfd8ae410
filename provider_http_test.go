package flagsnap

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap/internal/httporigin"
)

// urlProvider starts a provider polling o every 20ms; Init's error is
// returned, not fatal.
func urlProvider(t *testing.T, o http.Handler, opts ...Option) (*Provider, *httptest.Server, events, error) {
	t.Helper()
	srv := httptest.NewServer(o)
	t.Cleanup(srv.Close)
	p, err := NewProvider(append([]Option{WithURL(srv.URL + "/flags.json"), WithPollInterval(20 * time.Millisecond)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Shutdown)
	err = p.Init(openfeature.EvaluationContext{})
	return p, srv, events{t: t, ch: p.EventChannel()}, err
}

func TestURLServesFlagsAndSaysNothingWhileUnchanged(t *testing.T) {
	o := httporigin.New(httporigin.Document(flagsV1))
	p, srv, ev, err := urlProvider(t, o)
	if err != nil {
		t.Fatalf("Init: %v", err)
	}
	if c := color(p); c != "red" {
		t.Fatalf("color %q, want red", c)
	}
	eventually(t, "three unchanged polls", func() bool { return p.SourceStatus().Unchanged >= 3 })
	ev.none(50 * time.Millisecond)
	st := p.SourceStatus()
	if st.Source != srv.URL+"/flags.json" || st.Received != 1 || st.Applied != 1 || st.State != SourceServing {
		t.Errorf("status %+v, want the URL, one set received and applied, serving", st)
	}

	o.Set(httporigin.Document(flagsV2))
	if e := ev.next(); e.EventType != openfeature.ProviderConfigChange || !containsAll(strings.Join(e.FlagChanges, ","), "color") {
		t.Fatalf("got %s %v, want CONFIGURATION_CHANGED naming color", e.EventType, e.FlagChanges)
	}
	if c := color(p); c != "blue" {
		t.Fatalf("color %q after the change, want blue", c)
	}
}

func TestURLOutageGoesStaleThenErrorThenReady(t *testing.T) {
	o := httporigin.New(httporigin.Document(flagsV1))
	p, _, ev, err := urlProvider(t, o, WithRetryGracePeriod(100*time.Millisecond))
	if err != nil {
		t.Fatalf("Init: %v", err)
	}
	o.Set(httporigin.Failing(http.StatusServiceUnavailable))
	if e := ev.next(); e.EventType != openfeature.ProviderStale || !strings.Contains(e.Message, "503 Service Unavailable") {
		t.Fatalf("got %s %q, want STALE with the status", e.EventType, e.Message)
	}
	if e := ev.next(); e.EventType != openfeature.ProviderError {
		t.Fatalf("got %s %q, want ERROR after the grace period", e.EventType, e.Message)
	}
	if c := color(p); c != "red" {
		t.Errorf("color %q during the outage, want the flags in force", c)
	}
	o.Set(httporigin.Document(flagsV1))
	ev.recovered()
	if st := p.SourceStatus(); st.Reconnects != 1 || st.State != SourceServing {
		t.Errorf("status %+v, want one reconnect, serving", st)
	}
}

func TestURLDocumentThatDoesNotLoadKeepsTheFlags(t *testing.T) {
	for _, bad := range []string{"", "{not json", `{"flags": 5}`} {
		t.Run(bad, func(t *testing.T) {
			o := httporigin.New(httporigin.Document(flagsV1))
			p, _, ev, err := urlProvider(t, o)
			if err != nil {
				t.Fatalf("Init: %v", err)
			}
			o.Set(httporigin.Document(bad))
			e := ev.next()
			if e.EventType != openfeature.ProviderError || e.ErrorCode != openfeature.ParseErrorCode {
				t.Fatalf("got %s %s %q, want ERROR with PARSE_ERROR", e.EventType, e.ErrorCode, e.Message)
			}
			if c := color(p); c != "red" {
				t.Errorf("color %q, want the flags in force", c)
			}
			// Rejected once, not at every poll.
			eventually(t, "two unchanged polls", func() bool { return p.SourceStatus().Unchanged >= 2 })
			if st := p.SourceStatus(); st.Rejected != 1 {
				t.Errorf("rejected %d, want 1", st.Rejected)
			}
			o.Set(httporigin.Document(flagsV2))
			ev.recovered("color", "limit", "old")
		})
	}
}

func TestURLInitErrorSaysWhatToChange(t *testing.T) {
	refused := httptest.NewServer(http.NotFoundHandler())
	refusedURL := refused.URL
	refused.Close()
	tests := []struct {
		name   string
		status int
		url    string
		want   []string
	}{
		{"not found", http.StatusNotFound, "", []string{"404 Not Found", "check the path"}},
		{"unauthorized", http.StatusUnauthorized, "", []string{"401 Unauthorized", "WithAuthorizationFile"}},
		{"forbidden", http.StatusForbidden, "", []string{"403 Forbidden", "credentials"}},
		{"server error", http.StatusBadGateway, "", []string{"502 Bad Gateway", "check the server"}},
		{"refused", 0, refusedURL, []string{"connection refused", "nothing listens there"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := httporigin.New(httporigin.Failing(tt.status))
			srv := httptest.NewServer(o)
			defer srv.Close()
			url := srv.URL + "/flags.json"
			if tt.url != "" {
				url = tt.url
			}
			p, err := NewProvider(WithURL(url), WithDeadline(300*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			defer p.Shutdown()
			err = p.Init(openfeature.EvaluationContext{})
			if err == nil || !containsAll(err.Error(), append([]string{url}, tt.want...)...) {
				t.Fatalf("Init: %v, want the URL and %q", err, tt.want)
			}
			var pe *openfeature.ProviderInitError
			if errors.As(err, &pe) && pe.ErrorCode == openfeature.ProviderFatalCode {
				t.Errorf("Init: %v is fatal; the provider keeps trying", err)
			}
		})
	}
}

func TestURLRecoversAfterAFailedInit(t *testing.T) {
	o := httporigin.New(httporigin.Failing(http.StatusServiceUnavailable))
	p, _, ev, err := urlProvider(t, o, WithDeadline(100*time.Millisecond))
	if err == nil {
		t.Fatal("Init succeeded with the server failing")
	}
	o.Set(httporigin.Document(flagsV1))
	if e := ev.next(); e.EventType != openfeature.ProviderReady {
		t.Fatalf("got %s, want READY once the server answers", e.EventType)
	}
	if c := color(p); c != "red" {
		t.Errorf("color %q, want red", c)
	}
}

func TestURLOptions(t *testing.T) {
	t.Setenv(EnvOfflineFlagSourcePath, "/nonexistent/flags.json")
	emptyCA := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(emptyCA, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := NewProvider(WithURL("https://user:secret@flags.example.test/f.json"),
		WithPollInterval(time.Minute), WithHTTPHeader("X-Api-Key", "k"), WithHTTPHeader("X-Api-Key", "k2"),
		WithAuthorizationFile("/run/token"), WithCertPath(emptyCA))
	if err == nil {
		t.Fatal("NewProvider accepted a CA file without a certificate")
	}
	if !strings.Contains(err.Error(), "holds no PEM certificate") {
		t.Errorf("NewProvider: %v, want the CA file's error", err)
	}
	p, err := NewProvider(WithURL("https://user:secret@flags.example.test/f.json"),
		WithPollInterval(time.Minute), WithHTTPHeader("X-Api-Key", "k"), WithHTTPHeader("X-Api-Key", "k2"),
		WithAuthorizationFile("/run/token"))
	if err != nil {
		t.Fatal(err)
	}
	c := p.Config()
	if c.URL != "https://user:secret@flags.example.test/f.json" || c.PollInterval != time.Minute ||
		strings.Join(c.HTTPHeader.Values("X-Api-Key"), ",") != "k,k2" || c.AuthorizationFile != "/run/token" ||
		c.Resolver != "" || c.OfflineFlagSourcePath != "" {
		t.Errorf("config %+v", c)
	}
	if st := p.SourceStatus(); st.Source != "https://user:xxxxx@flags.example.test/f.json" {
		t.Errorf("source %q, want the URL without its password", st.Source)
	}

	bad := []struct {
		name string
		opts []Option
		want string
	}{
		{"empty", []Option{WithURL("")}, "WithURL: the URL is empty"},
		{"scheme", []Option{WithURL("ftp://h/f")}, `WithURL: "ftp://h/f" is not an http:// or https:// URL`},
		{"with a file", []Option{WithURL("http://h/f"), WithFile("f.json")}, "WithURL and WithFile contradict each other"},
		{"with a host", []Option{WithHost("h"), WithURL("http://h/f")}, "contradict each other"},
		{"with flags", []Option{WithURL("http://h/f"), WithFlags([]byte(`{}`))}, "contradict each other"},
		{"nil client", []Option{WithURL("http://h/f"), WithHTTPClient(nil)}, "WithHTTPClient: the client is nil"},
		{"client and CA", []Option{WithURL("https://h/f"), WithHTTPClient(&http.Client{}), WithCertPath("/dev/null")}, "given together"},
		{"zero interval", []Option{WithURL("http://h/f"), WithPollInterval(0)}, "WithPollInterval must be positive"},
		{"header name", []Option{WithURL("http://h/f"), WithHTTPHeader("a b", "v")}, "is not a header name"},
		{"empty header name", []Option{WithURL("http://h/f"), WithHTTPHeader("", "v")}, "the header name is empty"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewProvider(tt.opts...); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewProvider: %v, want %q", err, tt.want)
			}
		})
	}
}

// The client given with WithHTTPClient makes the requests.
func TestURLThroughTheGivenClient(t *testing.T) {
	var through sync.Once
	used := make(chan struct{})
	client := &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		through.Do(func() { close(used) })
		return http.DefaultTransport.RoundTrip(r)
	})}
	p, _, _, err := urlProvider(t, httporigin.New(httporigin.Document(flagsV1)), WithHTTPClient(client))
	if err != nil {
		t.Fatalf("Init: %v", err)
	}
	select {
	case <-used:
	case <-time.After(time.Second):
		t.Fatal("the given client made no request")
	}
	if c := color(p); c != "red" {
		t.Errorf("color %q", c)
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
