package source

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"buf.build/gen/go/open-feature/flagd/grpc/go/flagd/sync/v1/syncv1grpc"
	syncv1 "buf.build/gen/go/open-feature/flagd/protocolbuffers/go/flagd/sync/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/flagsnap/flagsnap/syncserver"
)

// Streams that a server ends in an orderly way are reopened at once and are
// not losses: the sink sees the same flags again and never Lost.
func TestGRPCGracefulEndsAreNotLosses(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		opts []syncserver.Option
		// end ends the open stream(s) gracefully, for cases where the
		// server does not do it by itself.
		end func(*testing.T, *syncserver.Server)
	}{
		{name: "GOAWAY too_many_pings", end: func(t *testing.T, srv *syncserver.Server) {
			if n, err := srv.GoAwayTooManyPings(); err != nil || n == 0 {
				t.Fatalf("GoAwayTooManyPings: %d connections, %v", n, err)
			}
		}},
		{name: "GOAWAY max connection age", opts: []syncserver.Option{syncserver.WithKeepaliveParams(keepalive.ServerParameters{
			MaxConnectionAge: 300 * time.Millisecond, MaxConnectionAgeGrace: 100 * time.Millisecond,
		})}},
		{name: "server stream deadline", opts: []syncserver.Option{syncserver.WithStreamDeadline(300 * time.Millisecond)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			opts := append([]syncserver.Option{syncserver.WithFlags([]byte(docA)), syncserver.WithSyncContext(map[string]any{})}, c.opts...)
			srv := newSyncServer(t, opts...)
			h := startGRPC(t, tcpConfig(srv))
			h.rec.waitLatestUpdate(t, docA)
			for i := 2; i <= 3; i++ {
				if c.end != nil {
					c.end(t, srv)
				}
				waitRequests(t, srv, "SyncFlags", i)
				h.rec.waitFor(t, "an update from the reopened stream", func(calls []call) bool { return count(calls, "update") >= i })
			}
			calls := h.rec.snapshot()
			if n := count(calls, "lost"); n != 0 {
				t.Errorf("a graceful end is not a loss; sink got %v", calls)
			}
			for _, u := range updates(calls) {
				if u != docA {
					t.Errorf("reopened stream delivered %q, want %q", u, docA)
				}
			}
		})
	}
}

// A graceful end whose reopened stream is refused is a loss at once, and
// the source backs off as after any loss.
func TestGRPCGracefulEndThenRefusedIsALoss(t *testing.T) {
	t.Parallel()
	srv := newSyncServer(t, syncserver.WithFlags([]byte(docA)), syncserver.WithSyncContext(map[string]any{}))
	var attempts attemptCounter
	cfg := tcpConfig(srv)
	cfg.DialOptions = []grpc.DialOption{attempts.option()}
	h := startGRPC(t, cfg)
	h.rec.waitLatestUpdate(t, docA)

	srv.SetStatus(codes.Internal, "refusing new streams")
	ended := time.Now()
	if _, err := srv.GoAwayTooManyPings(); err != nil {
		t.Fatal(err)
	}
	lost := h.rec.waitKind(t, "lost")
	if took := lost.at.Sub(ended); took > 2*time.Second {
		t.Errorf("the failed reopen was reported %v after the stream ended, want at once", took)
	}
	if code := status.Code(lost.err); code != codes.Internal {
		t.Errorf("Lost(%v): want the refusal's status", lost.err)
	}
	// The attempts after the loss follow the backoff, not a busy loop.
	later := attempts.waitSince(t, lost.at, 2)
	if gap := later[0].Sub(lost.at); gap < testRetryBackoff/8 {
		t.Errorf("first attempt after the loss came %v later, want a backoff", gap)
	}
	srv.SetStatus(codes.OK, "")
	h.rec.waitLatestUpdate(t, docA)
	if n := count(h.rec.snapshot(), "lost"); n != 1 {
		t.Errorf("got %d Lost for one outage, want 1", n)
	}
}

// stallingServer delivers one flag set on its first stream and ends it the
// way a server's stream deadline does; every later stream opens and never
// delivers.
type stallingServer struct {
	syncv1grpc.UnimplementedFlagSyncServiceServer
	mu      sync.Mutex
	streams int
}

func (s *stallingServer) SyncFlags(_ *syncv1.SyncFlagsRequest, stream grpc.ServerStreamingServer[syncv1.SyncFlagsResponse]) error {
	s.mu.Lock()
	s.streams++
	first := s.streams == 1
	s.mu.Unlock()
	if first {
		if err := stream.Send(syncv1.SyncFlagsResponse_builder{FlagConfiguration: docA, SyncContext: &structpb.Struct{}}.Build()); err != nil {
			return err
		}
		return status.Error(codes.DeadlineExceeded, "stream closed due to server-side timeout")
	}
	<-stream.Context().Done()
	return stream.Context().Err()
}

// A reopened stream that does not deliver within the deadline is a loss.
func TestGRPCReopenWithoutFlagsIsALoss(t *testing.T) {
	t.Parallel()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	syncv1grpc.RegisterFlagSyncServiceServer(srv, &stallingServer{})
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)

	cfg := GRPCConfig{TargetURI: "passthrough:///" + lis.Addr().String(), Deadline: 200 * time.Millisecond}
	h := startGRPC(t, cfg)
	first := h.rec.waitLatestUpdate(t, docA)
	lost := h.rec.waitKind(t, "lost")
	if took := lost.at.Sub(first.at); took < 150*time.Millisecond || took > 3*time.Second {
		t.Errorf("Lost %v after the graceful end, want about the 200ms deadline", took)
	}
	if !strings.Contains(lost.err.Error(), "reopening") {
		t.Errorf("Lost(%v) should say the reopened stream brought no flags", lost.err)
	}
}

// The real thing, slowly: a server enforcing grpc-go's default keepalive
// policy (flagd's) and a client pinging every 10 seconds, the shortest
// interval grpc-go allows. The server ends the connection with
// too_many_pings after about 30-40 seconds; the source reopens and the sink
// hears of nothing.
func TestGRPCKeepaliveEnforcementIsNotALoss(t *testing.T) {
	if testing.Short() {
		t.Skip("takes about 40 seconds of keepalive pings")
	}
	t.Parallel()
	srv := newSyncServer(t, syncserver.WithFlags([]byte(docA)), syncserver.WithSyncContext(map[string]any{}),
		syncserver.WithKeepaliveEnforcement(keepalive.EnforcementPolicy{MinTime: 5 * time.Minute}))
	cfg := tcpConfig(srv)
	cfg.KeepAlive = 10 * time.Second
	// The liveness check's calls make the server write, which clears its
	// count of ping strikes: with it, the pings would never be refused.
	cfg.LivenessInterval = -1
	h := startGRPC(t, cfg)
	h.rec.waitLatestUpdate(t, docA)

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	for len(requests(srv, "SyncFlags")) < 2 {
		select {
		case <-ctx.Done():
			t.Fatal("the server never ended the connection for too many pings")
		case <-time.After(100 * time.Millisecond):
		}
	}
	h.rec.waitFor(t, "the reopened stream's update", func(calls []call) bool { return count(calls, "update") >= 2 })
	if calls := h.rec.snapshot(); count(calls, "lost") != 0 {
		t.Errorf("keepalive enforcement is not a loss; sink got %v", calls)
	}
}
