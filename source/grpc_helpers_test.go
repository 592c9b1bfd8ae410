package source

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/flagsnap/flagsnap/syncserver"
)

// Small delays keep the suite fast; the ratios between them are what the
// tests check.
const (
	testRetryBackoff    = 20 * time.Millisecond
	testRetryBackoffMax = 100 * time.Millisecond
)

// grpcHarness runs one GRPC source until the test ends.
type grpcHarness struct {
	*running
	src *GRPC
}

// startGRPC builds a GRPC source from cfg, with test-sized backoffs unless
// cfg sets its own, and runs it.
func startGRPC(t *testing.T, cfg GRPCConfig) *grpcHarness {
	t.Helper()
	if cfg.RetryBackoff == 0 && cfg.RetryBackoffMax == 0 {
		cfg.RetryBackoff, cfg.RetryBackoffMax = testRetryBackoff, testRetryBackoffMax
	}
	src, err := NewGRPC(cfg)
	if err != nil {
		t.Fatalf("NewGRPC: %v", err)
	}
	return &grpcHarness{running: runSource(t, src), src: src}
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
func tcpConfig(srv *syncserver.Server) GRPCConfig {
	return GRPCConfig{Host: "127.0.0.1", Port: srv.Port()}
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
func waitRequests(t *testing.T, srv *syncserver.Server, method string, n int) {
	t.Helper()
	waitUntil(t, func() bool { return len(requests(srv, method)) >= n }, func() string {
		return fmt.Sprintf("%d %s calls; got %d", n, method, len(requests(srv, method)))
	})
}

// attemptCounter records when the source opens a SyncFlags stream, as seen
// by the client before any gRPC-level retry.
type attemptCounter struct {
	mu    sync.Mutex
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

// waitSince waits until at least n attempts were made after from, and
// returns them.
func (a *attemptCounter) waitSince(t *testing.T, from time.Time, n int) []time.Time {
	t.Helper()
	waitUntil(t, func() bool { return len(a.since(from)) >= n }, func() string {
		return fmt.Sprintf("%d attempts; got %d", n, len(a.since(from)))
	})
	return a.since(from)
}
