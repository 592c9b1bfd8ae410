package source

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/flagsnap/flagsnap/internal/blackhole"
	"github.com/flagsnap/flagsnap/syncserver"
)

// proxied puts a blackholing proxy between a source and srv.
func proxied(t *testing.T, srv *syncserver.Server) (*blackhole.Proxy, GRPCConfig) {
	t.Helper()
	p, err := blackhole.New(srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p, GRPCConfig{Host: "127.0.0.1", Port: p.Port()}
}

// A server that goes silent without closing the connection is a loss once
// it misses a liveness check, and the source is back on a new connection
// once the network heals.
func TestGRPCSilentServerIsALoss(t *testing.T) {
	t.Parallel()
	srv := newSyncServer(t, syncserver.WithFlags([]byte(docA)))
	proxy, cfg := proxied(t, srv)
	cfg.LivenessInterval, cfg.LivenessTimeout = 50*time.Millisecond, 100*time.Millisecond
	h := startGRPC(t, cfg)
	h.rec.waitLatestUpdate(t, docA)
	// A loaded machine can miss the 100ms check before the first flag
	// set too; only what follows the silence belongs to this outage.
	before := len(h.rec.snapshot())

	silent := time.Now()
	proxy.Blackhole()
	lost := h.rec.waitKind(t, "lost")
	if !errors.Is(lost.err, errUnresponsive) || !strings.Contains(lost.err.Error(), h.src.Target()) {
		t.Errorf("Lost(%v), want the liveness check's failure naming %s", lost.err, h.src.Target())
	}
	t.Logf("lost %v after the server went silent", lost.at.Sub(silent))
	if took := lost.at.Sub(silent); took > 2*time.Second {
		t.Errorf("lost %v after the server went silent, want within about 150ms", took)
	}

	// Attempts in the outage meet the silence too; none is news.
	time.Sleep(300 * time.Millisecond)
	srv.SetFlags([]byte(docB))
	healed := time.Now()
	proxy.Heal()
	back := h.rec.waitLatestUpdate(t, docB)
	t.Logf("back %v after healing", back.at.Sub(healed))
	if outage := h.rec.snapshot()[before:]; count(outage, "lost") != 1 {
		t.Errorf("%d Lost for one outage, want 1: %v", count(outage, "lost"), outage)
	}
}

// healthChecks counts the liveness check's calls, as the client makes
// them.
type healthChecks struct{ n atomic.Int64 }

func (h *healthChecks) option() grpc.DialOption {
	return grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if method == "/grpc.health.v1.Health/Check" {
			h.n.Add(1)
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	})
}

// A healthy connection costs one small call per interval and nothing
// else: the flags are not asked for again, and the server's own methods
// are not called.
func TestGRPCLivenessCheckOnAHealthyServer(t *testing.T) {
	t.Parallel()
	srv := newSyncServer(t, syncserver.WithFlags([]byte(docA)), syncserver.WithSyncContext(map[string]any{}))
	var checks healthChecks
	cfg := tcpConfig(srv)
	cfg.LivenessInterval = 20 * time.Millisecond
	cfg.DialOptions = []grpc.DialOption{checks.option()}
	h := startGRPC(t, cfg)
	h.rec.waitLatestUpdate(t, docA)
	waitUntil(t, func() bool { return checks.n.Load() >= 5 }, func() string {
		return fmt.Sprintf("5 health checks; got %d", checks.n.Load())
	})
	if n := len(requests(srv, "SyncFlags")); n != 1 {
		t.Errorf("%d SyncFlags calls, want 1", n)
	}
	if n := len(requests(srv, "GetMetadata")); n != 0 {
		t.Errorf("%d GetMetadata calls, want none", n)
	}
	if calls := h.rec.snapshot(); len(calls) != 1 {
		t.Errorf("sink got %v, want the one update", calls)
	}
}

// The check can be turned off.
func TestGRPCLivenessCheckOff(t *testing.T) {
	t.Parallel()
	srv := newSyncServer(t, syncserver.WithFlags([]byte(docA)), syncserver.WithSyncContext(map[string]any{}))
	var checks healthChecks
	cfg := tcpConfig(srv)
	cfg.LivenessInterval = -1
	cfg.DialOptions = []grpc.DialOption{checks.option()}
	h := startGRPC(t, cfg)
	h.rec.waitLatestUpdate(t, docA)
	time.Sleep(100 * time.Millisecond)
	if n := checks.n.Load(); n != 0 {
		t.Errorf("%d health checks with the check off", n)
	}
}

// A server that cannot be reached is reported at once, with its cause,
// not after the retry policy's waits.
func TestGRPCUnreachableAtStartIsReportedAtOnce(t *testing.T) {
	t.Parallel()
	srv := newSyncServer(t)
	srv.Stop()
	start := time.Now()
	h := startGRPC(t, tcpConfig(srv))
	lost := h.rec.waitKind(t, "lost")
	if took := lost.at.Sub(start); took > time.Second {
		t.Errorf("lost reported %v after start, want at once", took)
	}
	if !strings.Contains(lost.err.Error(), "connection refused") {
		t.Errorf("Lost(%v) does not give the cause", lost.err)
	}
}

// manyFlags is a flag document of n flags.
func manyFlags(n int) string {
	var b strings.Builder
	b.WriteString(`{"flags":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"flag-%07d":{"state":"ENABLED","variants":{"on":true,"off":false},"defaultVariant":"on"}`, i)
	}
	b.WriteString(`}}`)
	return b.String()
}

// gRPC's default limit of 4 MiB would refuse a set of about 50,000 flags;
// the source's default takes it.
func TestGRPCDefaultMessageSizeTakesLargeSets(t *testing.T) {
	t.Parallel()
	doc := manyFlags(60_000)
	if len(doc) <= 4<<20 {
		t.Fatalf("the document is %d bytes; the test needs more than 4 MiB", len(doc))
	}
	srv := newSyncServer(t, syncserver.WithFlags([]byte(doc)))
	h := startGRPC(t, tcpConfig(srv))
	h.rec.waitLatestUpdate(t, doc)
}

// A flag set over the limit is reported with its size, the limit and the
// option, and asked for again only after the longest backoff; the flags
// delivered before stay with the sink.
func TestGRPCMessageTooLarge(t *testing.T) {
	t.Parallel()
	srv := newSyncServer(t, syncserver.WithFlags([]byte(docA)))
	var attempts attemptCounter
	cfg := tcpConfig(srv)
	cfg.MaxMessageSize = 1024
	cfg.RetryBackoff, cfg.RetryBackoffMax = 10*time.Millisecond, 300*time.Millisecond
	cfg.DialOptions = append(cfg.DialOptions, attempts.option())
	h := startGRPC(t, cfg)
	h.rec.waitLatestUpdate(t, docA)

	big := manyFlags(30)
	srv.SetFlags([]byte(big))
	lost := h.rec.waitKind(t, "lost")
	var tooLarge *MessageTooLargeError
	if !errors.As(lost.err, &tooLarge) {
		t.Fatalf("Lost(%v), want a *MessageTooLargeError", lost.err)
	}
	if tooLarge.Limit != 1024 || tooLarge.Size <= len(big) || tooLarge.Target != h.src.Target() {
		t.Errorf("got %+v; want the limit 1024, a size over %d, the target %s", tooLarge, len(big), h.src.Target())
	}
	for _, want := range []string{"1024", fmt.Sprint(tooLarge.Size), "MaxMessageSize"} {
		if !strings.Contains(lost.err.Error(), want) {
			t.Errorf("%q does not say %s", lost.err, want)
		}
	}

	times := attempts.waitSince(t, lost.at, 2)
	if gap := times[1].Sub(times[0]); gap < 240*time.Millisecond {
		t.Errorf("asked again %v after an oversized set, want the longest backoff (300ms less jitter)", gap)
	}
	srv.SetFlags([]byte(docB))
	h.rec.waitLatestUpdate(t, docB)
	if n := count(h.rec.snapshot(), "lost"); n != 1 {
		t.Errorf("%d Lost, want 1: %v", n, h.rec.snapshot())
	}
}

// A server that is down for a couple of seconds is found within a second
// of accepting streams again, with the default backoff.
func TestGRPCQuickRestartWithDefaults(t *testing.T) {
	t.Parallel()
	for _, down := range []time.Duration{time.Second, 3 * time.Second, 7 * time.Second} {
		t.Run(down.String(), func(t *testing.T) {
			t.Parallel()
			srv := newSyncServer(t, syncserver.WithFlags([]byte(docA)))
			// Not startGRPC, which would put in the test's short backoffs.
			src, err := NewGRPC(tcpConfig(srv))
			if err != nil {
				t.Fatal(err)
			}
			rec := runSource(t, src).rec
			rec.waitUpdate(t, docA)
			srv.Stop()
			rec.waitKind(t, "lost")
			time.Sleep(down)
			srv.SetFlags([]byte(docB))
			restarted := time.Now()
			if err := srv.Restart(); err != nil {
				t.Fatal(err)
			}
			back := rec.waitLatestUpdate(t, docB)
			took := back.at.Sub(restarted)
			t.Logf("down %v: back %v after the restart", down, took)
			if took > time.Second {
				t.Errorf("down %v: back %v after the restart, want within 1s", down, took)
			}
		})
	}
}
