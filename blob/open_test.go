package blob_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flagsnap/flagsnap/blob"
	"github.com/flagsnap/flagsnap/source"
)

func TestOpenRefuses(t *testing.T) {
	isolateAWS(t)
	// Only s3:// URLs reach gocloud.dev here: its azblob and gs openers
	// take their credentials from the environment once per process, which
	// the Azure and GCS stores set for their own tests.
	tests := []struct {
		name string
		url  string
		opts []blob.Option
		want []string
	}{
		{"unknown scheme", "ftp://b/flags.json", nil, []string{"ftp://b/flags.json", "the scheme must be s3, gs or azblob"}},
		{"no key", "s3://bucket", nil, []string{"s3://bucket/", "names no object", "s3://bucket/path/to/flags.json"}},
		{"a directory", "gs://bucket/flags/", nil, []string{"names no object"}},
		{"no bucket", "azblob:///flags.json", nil, []string{"names no bucket"}},
		{"a parameter gocloud.dev does not know", "s3://bucket/flags.json?regoin=eu-west-1", nil,
			[]string{"blob: s3://bucket/flags.json: gocloud.dev cannot open the bucket: check the query parameters, and the credentials of the environment: ", "regoin"}},
		{"a value gocloud.dev does not take", "s3://bucket/flags.json?use_path_style=maybe", nil, []string{"cannot open the bucket", "use_path_style"}},
		{"zero interval", "s3://bucket/flags.json", []blob.Option{blob.WithPollInterval(0)}, []string{"blob: WithPollInterval must be positive, got 0s"}},
		{"negative timeout", "s3://bucket/flags.json", []blob.Option{blob.WithTimeout(-time.Second)}, []string{"blob: WithTimeout must be positive, got -1s"}},
		{"zero size", "s3://bucket/flags.json", []blob.Option{blob.WithMaxSize(0)}, []string{"blob: WithMaxSize must be positive, got 0"}},
		{"nil option", "s3://bucket/flags.json", []blob.Option{nil}, []string{"an Option is nil"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, err := blob.Open(context.Background(), tt.url, tt.opts...)
			if err == nil {
				src.Close()
				t.Fatal("Open accepted it")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Open: %v\nwant %q", err, w)
				}
			}
		})
	}
}

// sink records what a source reports.
type sink struct {
	mu      sync.Mutex
	updates int
	lost    []error
	changed chan struct{} // a send after each call, dropped when full
}

func newSink() *sink { return &sink{changed: make(chan struct{}, 1)} }

func (s *sink) Update(source.Update) error {
	s.record(func() { s.updates++ })
	return nil
}
func (s *sink) Lost(err error)  { s.record(func() { s.lost = append(s.lost, err) }) }
func (s *sink) Fatal(err error) { s.Lost(err) }

func (s *sink) record(f func()) {
	s.mu.Lock()
	f()
	s.mu.Unlock()
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// firstLoss waits for the first loss reported.
func (s *sink) firstLoss(t *testing.T) error {
	t.Helper()
	deadline := time.After(waitFor)
	for {
		s.mu.Lock()
		if len(s.lost) > 0 {
			err := s.lost[0]
			s.mu.Unlock()
			return err
		}
		s.mu.Unlock()
		select {
		case <-s.changed:
		case <-deadline:
			t.Fatalf("no loss reported within %v", waitFor)
		}
	}
}

// run runs src on s until the test ends.
func run(t *testing.T, src *blob.Source, s source.Sink) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx, s) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

// A store that refuses, hangs or fails is reported as a loss that says
// what to change.
func TestFailuresSayWhatToChange(t *testing.T) {
	isolateAWS(t)
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{"refused", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusForbidden) },
			"blob: s3://flags/flags.json refused access: check the credentials of the environment (AWS_ACCESS_KEY_ID"},
		{"no answer", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() },
			"blob: no answer from s3://flags/flags.json within 200ms: check the endpoint and the network, or raise the bound with blob.WithTimeout"},
		{"bad request", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadRequest) },
			"blob: reading s3://flags/flags.json: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serve(t, tt.handler)
			u := "s3://flags/flags.json?" + url.Values{"endpoint": {srv.URL}, "use_path_style": {"true"}, "region": {"us-east-1"}}.Encode()
			src, err := blob.Open(context.Background(), u, blob.WithTimeout(200*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			s := newSink()
			run(t, src, s)
			err = s.firstLoss(t)
			t.Log(err)
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("lost: %v\nwant %s", err, tt.want)
			}
		})
	}
}

// Run takes the bucket once and releases it when it returns; Close
// releases a source that never ran.
func TestSourceLifecycle(t *testing.T) {
	isolateAWS(t)
	const u = "s3://flags/flags.json?region=us-east-1&endpoint=http://127.0.0.1:1"
	open := func(t *testing.T) *blob.Source {
		t.Helper()
		src, err := blob.Open(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		return src
	}

	t.Run("origin", func(t *testing.T) {
		src := open(t)
		defer src.Close()
		if o := src.Origin(); o != "s3://flags/flags.json" {
			t.Errorf("Origin %q, want the object without the query", o)
		}
	})
	t.Run("closed, never run", func(t *testing.T) {
		src := open(t)
		if err := src.Close(); err != nil {
			t.Fatal(err)
		}
		if err := src.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		if err := src.Run(context.Background(), newSink()); err == nil || !strings.Contains(err.Error(), "after Close") {
			t.Errorf("Run after Close: %v", err)
		}
	})
	t.Run("run twice", func(t *testing.T) {
		src := open(t)
		s := newSink()
		run(t, src, s)
		s.firstLoss(t) // running: nothing listens at the endpoint
		if err := src.Run(context.Background(), s); err == nil || !strings.Contains(err.Error(), "more than once") {
			t.Errorf("second Run: %v", err)
		}
		if err := src.Close(); err != nil {
			t.Errorf("Close while running: %v", err)
		}
	})
	t.Run("run ended", func(t *testing.T) {
		src := open(t)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := src.Run(ctx, newSink()); err != nil {
			t.Fatalf("Run: %v", err)
		}
		if err := src.Close(); err != nil {
			t.Errorf("Close after Run: %v", err)
		}
		if err := src.Run(context.Background(), newSink()); err == nil {
			t.Error("Run after Run returned succeeded")
		}
	})
}
