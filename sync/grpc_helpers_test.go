package sync_test

import (
	"context"
	"fmt"
	"slices"
	stdsync "sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/flagsnap/flagsnap/e2e/syncserver"
	"github.com/flagsnap/flagsnap/sync"
)

// grpcWait bounds every wait; a passing wait takes milliseconds.
const grpcWait = 5 * time.Second

// Small delays keep the suite fast; the ratios between them are what the
// tests check.
const (
	testRetryBackoff    = 20 * time.Millisecond
	testRetryBackoffMax = 100 * time.Millisecond
)

// grpcCall is one call a GRPC source made on its sink.
type grpcCall struct {
	kind    string // "update", "lost" or "fatal"
	flags   string
	syncCtx map[string]any
	origin  string
	err     error
	at      time.Time
}

func (c grpcCall) String() string {
	if c.kind == "update" {
		return fmt.Sprintf("update(%q, %v)", c.flags, c.syncCtx)
	}
	return fmt.Sprintf("%s(%v)", c.kind, c.err)
}

// grpcRecorder is a Sink that remembers its calls, lets a test wait for
// them, and notices if it is ever called concurrently.
type grpcRecorder struct {
	mu     stdsync.Mutex
	calls  []grpcCall
	notify chan struct{} // closed and replaced on every call

	inside   atomic.Int32
	overlaps atomic.Int32
}

func newGRPCRecorder() *grpcRecorder { return &grpcRecorder{notify: make(chan struct{})} }

func (r *grpcRecorder) record(c grpcCall) {
	if r.inside.Add(1) != 1 {
		r.overlaps.Add(1)
	}
	defer r.inside.Add(-1)
	c.at = time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, c)
	close(r.notify)
	r.notify = make(chan struct{})
}

func (r *grpcRecorder) Update(u sync.Update) {
	r.record(grpcCall{kind: "update", flags: string(u.Flags), syncCtx: u.SyncContext, origin: u.Origin})
}
func (r *grpcRecorder) Lost(err error)  { r.record(grpcCall{kind: "lost", err: err}) }
func (r *grpcRecorder) Fatal(err error) { r.record(grpcCall{kind: "fatal", err: err}) }

func (r *grpcRecorder) snapshot() []grpcCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// waitFor returns the calls as soon as cond holds for them, and fails the
// test if it does not within grpcWait.
func (r *grpcRecorder) waitFor(t *testing.T, what string, cond func([]grpcCall) bool) []grpcCall {
	t.Helper()
	deadline := time.NewTimer(grpcWait)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		calls, ch := slices.Clone(r.calls), r.notify
		r.mu.Unlock()
		if cond(calls) {
			return calls
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("timed out after %v waiting for %s; sink got %v", grpcWait, what, calls)
		}
	}
}

// waitUpdate waits until the latest call is an Update carrying flags, and
// returns it.
func (r *grpcRecorder) waitUpdate(t *testing.T, flags string) grpcCall {
	t.Helper()
	calls := r.waitFor(t, fmt.Sprintf("update(%q)", flags), func(calls []grpcCall) bool {
		n := len(calls)
		return n > 0 && calls[n-1].kind == "update" && calls[n-1].flags == flags
	})
	return calls[len(calls)-1]
}

// waitKind waits until the latest call is of kind, and returns it.
func (r *grpcRecorder) waitKind(t *testing.T, kind string) grpcCall {
	t.Helper()
	calls := r.waitFor(t, kind, func(calls []grpcCall) bool {
		n := len(calls)
		return n > 0 && calls[n-1].kind == kind
	})
	return calls[len(calls)-1]
}

func countGRPC(calls []grpcCall, kind string) int {
	n := 0
	for _, c := range calls {
		if c.kind == kind {
			n++
		}
	}
	return n
}

// grpcHarness runs one GRPC source until the test ends.
type grpcHarness struct {
	src    *sync.GRPC
	rec    *grpcRecorder
	cancel context.CancelFunc
	done   chan error
	once   stdsync.Once
}

// startGRPC builds a GRPC source from cfg, with test-sized backoffs unless
// cfg sets its own, and runs it.
func startGRPC(t *testing.T, cfg sync.GRPCConfig) *grpcHarness {
	t.Helper()
	if cfg.RetryBackoff == 0 && cfg.RetryBackoffMax == 0 {
		cfg.RetryBackoff, cfg.RetryBackoffMax = testRetryBackoff, testRetryBackoffMax
	}
	src, err := sync.NewGRPC(cfg)
	if err != nil {
		t.Fatalf("NewGRPC: %v", err)
	}
	h := &grpcHarness{src: src, rec: newGRPCRecorder(), done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() { h.done <- src.Run(ctx, h.rec) }()
	t.Cleanup(func() {
		h.stop(t)
		if n := h.rec.overlaps.Load(); n > 0 {
			t.Errorf("sink was called concurrently %d times", n)
		}
	})
	return h
}

// stop cancels Run and waits for it, returning how long that took.
func (h *grpcHarness) stop(t *testing.T) time.Duration {
	t.Helper()
	var took time.Duration
	h.once.Do(func() {
		begin := time.Now()
		h.cancel()
		select {
		case err := <-h.done:
			took = time.Since(begin)
			if err != nil {
				t.Errorf("Run returned %v after cancel, want nil", err)
			}
		case <-time.After(grpcWait):
			t.Errorf("Run did not return within %v of cancel", grpcWait)
		}
	})
	return took
}

// waitReturn waits for Run to return on its own.
func (h *grpcHarness) waitReturn(t *testing.T) error {
	t.Helper()
	var err error
	h.once.Do(func() {
		select {
		case err = <-h.done:
		case <-time.After(grpcWait):
			t.Fatalf("Run did not return within %v", grpcWait)
		}
	})
	return err
}

// newSyncServer starts a sync server on a loopback port for the test.
func newSyncServer(t *testing.T, opts ...syncserver.Option) *syncserver.Server {
	t.Helper()
	srv, err := syncserver.New(opts...)
	if err != nil {
		t.Fatalf("syncserver.New: %v", err)
	}
	t.Cleanup(srv.Close)
	if err := srv.ListenTCP("127.0.0.1:0"); err != nil {
		t.Fatalf("ListenTCP: %v", err)
	}
	return srv
}

// tcpConfig points a source at srv.
func tcpConfig(srv *syncserver.Server) sync.GRPCConfig {
	return sync.GRPCConfig{Host: "127.0.0.1", Port: srv.Port()}
}

// requests returns the calls of one method srv received.
func requests(srv *syncserver.Server, method string) []syncserver.Request {
	var out []syncserver.Request
	for _, r := range srv.Requests() {
		if r.Method == method {
			out = append(out, r)
		}
	}
	return out
}

// waitRequests waits until srv has received at least n calls of method.
func waitRequests(t *testing.T, srv *syncserver.Server, method string, n int) []syncserver.Request {
	t.Helper()
	deadline := time.Now().Add(grpcWait)
	for {
		got := requests(srv, method)
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %d %s calls; got %d", n, method, len(got))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// attemptCounter records when the source opens a SyncFlags stream, as seen
// by the client before any gRPC-level retry.
type attemptCounter struct {
	mu    stdsync.Mutex
	times []time.Time
}

func (a *attemptCounter) option() grpc.DialOption {
	return grpc.WithChainStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		a.mu.Lock()
		a.times = append(a.times, time.Now())
		a.mu.Unlock()
		return streamer(ctx, desc, cc, method, opts...)
	})
}

func (a *attemptCounter) snapshot() []time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.times)
}

// since returns the attempts made after t.
func (a *attemptCounter) since(t time.Time) []time.Time {
	var out []time.Time
	for _, at := range a.snapshot() {
		if at.After(t) {
			out = append(out, at)
		}
	}
	return out
}
