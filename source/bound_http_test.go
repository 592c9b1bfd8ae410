package source

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flagsnap/flagsnap/internal/httporigin"
)

// The size bound of a source bounds its memory too: a document over it is
// refused having read, and held, about the bound, not the body. These
// tests measure what the heap handed out during the fetch that refused
// one.

const (
	// testBound is the bound of these tests: large enough that the fixed
	// costs of one request (a gzip decoder's window, the transport's
	// buffers) are small beside it.
	testBound = 1 << 20
	// oversize is the body the origin offers when it goes wrong, 16 times
	// the bound: a reader that held the body would allocate at least that.
	oversize = 16 * testBound
)

// boundGood is the document served before the one over the bound: the
// flags that must stay in force.
const boundGood = `{"flags":{"kept":{"state":"ENABLED","variants":{"on":true},"defaultVariant":"on"}}}`

// measuredFetch is what one fetch returned and what the heap handed out
// while it ran.
type measuredFetch struct {
	allocated uint64
	err       error
}

// measuredFetcher is a Fetcher that measures each of its fetches. It
// reads TotalAlloc, which only grows: its change over a fetch counts
// every byte allocated meanwhile, even what was freed and collected
// before the fetch returned, so it bounds the fetch's peak from above and
// cannot miss a short-lived buffer as a sampled HeapAlloc could. Poll
// calls Fetch on one goroutine, so nothing else of the source's runs
// meanwhile; what the test server allocates for the request is counted
// too, which only makes the bound harder to meet.
type measuredFetcher struct {
	Fetcher
	mu      sync.Mutex
	fetches []measuredFetch
}

func (m *measuredFetcher) Fetch(ctx context.Context, since Version) ([]byte, Version, error) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	doc, v, err := m.Fetcher.Fetch(ctx, since)
	runtime.ReadMemStats(&after)
	m.mu.Lock()
	m.fetches = append(m.fetches, measuredFetch{allocated: after.TotalAlloc - before.TotalAlloc, err: err})
	m.mu.Unlock()
	return doc, v, err
}

// tooLarge returns the fetches refused for their size, in order.
func (m *measuredFetcher) tooLarge() []measuredFetch {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []measuredFetch
	for _, f := range m.fetches {
		var tl *MessageTooLargeError
		if errors.As(f.err, &tl) {
			out = append(out, f)
		}
	}
	return out
}

// runMeasuredHTTP polls cfg's URL as an HTTP source does, through a
// measuredFetcher, until the test ends.
func runMeasuredHTTP(t *testing.T, cfg HTTPConfig) (*recorder, *measuredFetcher) {
	t.Helper()
	f, err := newHTTPFetcher(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Registered before the source runs, so run after it stopped.
	t.Cleanup(f.closeIdle)
	m := &measuredFetcher{Fetcher: f}
	poll, err := NewPoll(PollConfig{Fetcher: m, Origin: f.origin, Interval: cfg.PollInterval})
	if err != nil {
		t.Fatal(err)
	}
	return runSource(t, poll).rec, m
}

// goesWrong is an origin that answers boundGood to the first request and
// bad to every later one.
func goesWrong(bad http.HandlerFunc) http.HandlerFunc {
	var served atomic.Int64
	return func(w http.ResponseWriter, r *http.Request) {
		if served.Add(1) == 1 {
			w.Write([]byte(boundGood))
			return
		}
		bad(w, r)
	}
}

// streamZeros writes n zero bytes in pieces, flushing each, so that the
// response goes chunked and announces no length; it stops when the client
// goes away.
func streamZeros(w http.ResponseWriter, n int) {
	piece := make([]byte, 32<<10)
	for sent := 0; sent < n; sent += len(piece) {
		if _, err := w.Write(piece); err != nil {
			return
		}
		w.(http.Flusher).Flush()
	}
}

func TestHTTPRefusesABodyOverTheBoundHavingReadOnlyTheBound(t *testing.T) {
	bomb := httporigin.GzipBomb(oversize)
	gzipped := func(w http.ResponseWriter, r *http.Request) {
		// Sent whether asked for or not, as TestHTTPDecodesGzip.
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(bomb)
	}
	unannounced := func(w http.ResponseWriter, r *http.Request) { streamZeros(w, oversize) }
	announced := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(oversize))
		streamZeros(w, oversize)
	}
	noCompression := &http.Transport{DisableCompression: true}
	t.Cleanup(noCompression.CloseIdleConnections)

	tests := []struct {
		name   string
		bad    http.HandlerFunc
		client *http.Client
		// read tells that the body had to be read to find it over the
		// bound; otherwise its announced length refuses it unread.
		read bool
		size int
	}{
		{"gzip decoded by the transport", gzipped, nil, true, -1},
		{"gzip decoded by the source", gzipped, &http.Client{Transport: noCompression}, true, -1},
		{"plain, length unannounced", unannounced, nil, true, -1},
		{"plain, length announced", announced, nil, false, oversize},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(goesWrong(tt.bad))
			t.Cleanup(srv.Close)
			rec, m := runMeasuredHTTP(t, HTTPConfig{URL: srv.URL, PollInterval: 50 * time.Millisecond,
				Timeout: waitTimeout, MaxBodySize: testBound, Client: tt.client})

			rec.waitUpdate(t, boundGood)
			err := rec.waitLost(t)
			var tl *MessageTooLargeError
			if !errors.As(err, &tl) || tl.Limit != testBound || tl.Size != tt.size || tl.Setting != "HTTPConfig.MaxBodySize" || tl.Target != srv.URL {
				t.Fatalf("lost: %#v, want a *MessageTooLargeError of size %d over %d naming HTTPConfig.MaxBodySize", err, tt.size, testBound)
			}
			// A retry is refused too, and neither delivers: the flags in
			// force stay those of boundGood.
			waitUntil(t, func() bool { return len(m.tooLarge()) >= 2 }, func() string { return "a second refusal" })
			if got := updates(rec.snapshot()); len(got) != 1 || got[0] != boundGood {
				t.Fatalf("updates %q, want only the document before the one over the bound", got)
			}
			checkRefusalMemory(t, m.tooLarge()[0].allocated, tt.read)
		})
	}
}

// checkRefusalMemory checks what a refusal allocated, read telling
// whether it had to read the body to find it over the bound.
//
// A refusal that read the body allocated at least the bound+1 bytes it
// read: less would mean the measure missed the read, so the test could
// pass without measuring anything. It must also allocate less than 1.5
// times the bound: beyond those bytes, one request costs tens of KiB (a
// gzip decoder's 32 KiB window and tables, the transport's buffers),
// while a buffer that doubles as it fills, as io.ReadAll's and
// bytes.Buffer's do, allocates twice its final size in all, and its
// final size is at least bound+1: it cannot meet 1.5 whatever its first
// size and the bound.
//
// A refusal from the announced size read nothing, so allocates well
// under a quarter of the bound: a buffer of the bound made to read into,
// and dropped, would not.
func checkRefusalMemory(t *testing.T, allocated uint64, read bool) {
	t.Helper()
	t.Logf("the refusal allocated %d bytes (%.2f times the bound)", allocated, float64(allocated)/testBound)
	switch {
	case read && allocated < testBound+1:
		t.Errorf("the refusal allocated %d bytes, under the bound+1 it must have read: the measure missed the read", allocated)
	case read && allocated >= testBound*3/2:
		t.Errorf("the refusal allocated %d bytes, %.2f times the bound of %d: want under 1.5", allocated, float64(allocated)/testBound, testBound)
	case !read && allocated >= testBound/4:
		t.Errorf("the refusal from the announced size allocated %d bytes, want under a quarter of the bound (%d): nothing needed reading", allocated, testBound/4)
	}
}
