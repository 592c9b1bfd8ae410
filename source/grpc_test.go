package source

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"buf.build/gen/go/open-feature/flagd/grpc/go/flagd/sync/v1/syncv1grpc"
	syncv1 "buf.build/gen/go/open-feature/flagd/protocolbuffers/go/flagd/sync/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/flagsnap/flagsnap/syncserver"
)

func flagDoc(name, variant string) string {
	return fmt.Sprintf(`{"flags":{%q:{"state":"ENABLED","variants":{%q:true},"defaultVariant":%q}}}`, name, variant, variant)
}

var (
	docA = flagDoc("a", "on")
	docB = flagDoc("b", "on")
)

func TestGRPCDeliversFlagSets(t *testing.T) {
	t.Parallel()
	srv := newSyncServer(t, syncserver.WithFlags([]byte(docA)))
	h := startGRPC(t, tcpConfig(srv))

	want := net.JoinHostPort("127.0.0.1", strconv.Itoa(srv.Port()))
	if got := h.src.Target(); got != want {
		t.Errorf("Target() = %q, want %q", got, want)
	}
	first := h.rec.waitLatestUpdate(t, docA)
	if first.orig != want {
		t.Errorf("Origin = %q, want %q", first.orig, want)
	}
	if first.syncCtx != nil {
		t.Errorf("SyncContext = %v from a server without any, want nil", first.syncCtx)
	}

	srv.SetFlags([]byte(docB))
	h.rec.waitLatestUpdate(t, docB)
	calls := h.rec.snapshot()
	if n := count(calls, "lost") + count(calls, "fatal"); n != 0 {
		t.Errorf("healthy server: sink got %v", calls)
	}
	if n := len(requests(srv, "SyncFlags")); n != 1 {
		t.Errorf("both sets should come on one stream; server saw %d SyncFlags calls", n)
	}
}

func TestGRPCSelector(t *testing.T) {
	t.Parallel()
	srv := newSyncServer(t,
		syncserver.WithFlags([]byte(docA)),
		syncserver.WithSelectorFlags("team-b", []byte(docB)),
		syncserver.WithMetadata(map[string]any{"m": "x"}))
	cfg := tcpConfig(srv)
	cfg.Selector = "team-b"
	h := startGRPC(t, cfg)

	h.rec.waitLatestUpdate(t, docB)
	reqs := requests(srv, "SyncFlags")
	if len(reqs) == 0 {
		t.Fatal("no SyncFlags call recorded")
	}
	if r := reqs[0]; r.Selector != "team-b" || r.SelectorHeader != "team-b" {
		t.Errorf("selector field %q, header %q; want both %q", r.Selector, r.SelectorHeader, "team-b")
	}
	md := requests(srv, "GetMetadata")
	if len(md) != 1 || md[0].SelectorHeader != "team-b" {
		t.Errorf("GetMetadata calls %+v, want one carrying the selector header", md)
	}
}

func TestGRPCProviderID(t *testing.T) {
	t.Parallel()
	srv := newSyncServer(t, syncserver.WithFlags([]byte(docA)))
	cfg := tcpConfig(srv)
	cfg.ProviderID = "checkout-service"
	h := startGRPC(t, cfg)

	h.rec.waitLatestUpdate(t, docA)
	reqs := requests(srv, "SyncFlags")
	if len(reqs) == 0 {
		t.Fatal("no SyncFlags call recorded")
	}
	if reqs[0].ProviderID != "checkout-service" {
		t.Errorf("SyncFlags calls %+v, want provider_id %q", reqs, "checkout-service")
	}
	if reqs[0].SelectorHeader != "" || reqs[0].Selector != "" {
		t.Errorf("no selector configured, yet the call carried %+v", reqs[0])
	}
}

func TestGRPCSyncContext(t *testing.T) {
	t.Parallel()

	t.Run("from the stream", func(t *testing.T) {
		t.Parallel()
		srv := newSyncServer(t,
			syncserver.WithFlags([]byte(docA)),
			syncserver.WithSyncContext(map[string]any{"env": "prod", "n": 2}),
			syncserver.WithMetadata(map[string]any{"env": "metadata"}))
		h := startGRPC(t, tcpConfig(srv))

		got := h.rec.waitLatestUpdate(t, docA)
		want := map[string]any{"env": "prod", "n": 2.0}
		if !reflect.DeepEqual(got.syncCtx, want) {
			t.Errorf("SyncContext = %v, want %v", got.syncCtx, want)
		}
		if n := len(requests(srv, "GetMetadata")); n != 0 {
			t.Errorf("messages carry a sync_context, yet GetMetadata was called %d times", n)
		}
	})

	t.Run("from GetMetadata, once per stream", func(t *testing.T) {
		t.Parallel()
		srv := newSyncServer(t,
			syncserver.WithFlags([]byte(docA)),
			syncserver.WithMetadata(map[string]any{"env": "metadata"}))
		cfg := tcpConfig(srv)
		// A loaded machine can take longer than the default 500ms to
		// answer; a failed GetMetadata would leave the context out.
		cfg.Deadline = waitTimeout
		h := startGRPC(t, cfg)

		want := map[string]any{"env": "metadata"}
		if got := h.rec.waitLatestUpdate(t, docA); !reflect.DeepEqual(got.syncCtx, want) {
			t.Errorf("first SyncContext = %v, want %v", got.syncCtx, want)
		}
		srv.SetFlags([]byte(docB))
		if got := h.rec.waitLatestUpdate(t, docB); !reflect.DeepEqual(got.syncCtx, want) {
			t.Errorf("second SyncContext = %v, want %v", got.syncCtx, want)
		}
		if n := len(requests(srv, "GetMetadata")); n != 1 {
			t.Errorf("GetMetadata called %d times on one stream, want 1", n)
		}
	})

	t.Run("GetMetadata unimplemented", func(t *testing.T) {
		t.Parallel()
		srv := newSyncServer(t, syncserver.WithFlags([]byte(docA)))
		h := startGRPC(t, tcpConfig(srv))

		if got := h.rec.waitLatestUpdate(t, docA); got.syncCtx != nil {
			t.Errorf("SyncContext = %v, want nil", got.syncCtx)
		}
		if n := len(requests(srv, "GetMetadata")); n != 1 {
			t.Errorf("GetMetadata called %d times, want 1", n)
		}
		if calls := h.rec.snapshot(); count(calls, "lost") != 0 {
			t.Errorf("an unimplemented GetMetadata is not a loss; sink got %v", calls)
		}
	})

	t.Run("new metadata after a restart", func(t *testing.T) {
		t.Parallel()
		old := map[string]any{"version": "old"}
		srv := newSyncServer(t,
			syncserver.WithFlags([]byte(docA)),
			syncserver.WithMetadata(old))
		cfg := tcpConfig(srv)
		// A loaded machine can take longer than the default 500ms to
		// answer; a failed GetMetadata would leave the context out.
		cfg.Deadline = waitTimeout
		h := startGRPC(t, cfg)

		if got := h.rec.waitLatestUpdate(t, docA); !reflect.DeepEqual(got.syncCtx, old) {
			t.Fatalf("SyncContext = %v, want %v", got.syncCtx, old)
		}
		srv.Stop()
		h.rec.waitKind(t, "lost")
		fresh := map[string]any{"version": "new"}
		srv.SetMetadata(fresh)
		if err := srv.Restart(); err != nil {
			t.Fatal(err)
		}
		h.rec.waitKind(t, "update")
		calls := h.rec.snapshot()
		afterLoss := false
		for _, c := range calls {
			switch {
			case c.kind == "lost":
				afterLoss = true
			case c.kind == "update" && afterLoss && !reflect.DeepEqual(c.syncCtx, fresh):
				t.Errorf("update after the restart carries %v, want %v", c.syncCtx, fresh)
			}
		}
	})
}

func TestGRPCTLS(t *testing.T) {
	t.Parallel()
	srv := newSyncServer(t, syncserver.WithTLS(), syncserver.WithFlags([]byte(docA)))
	ca, err := srv.WriteCACert(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}

	t.Run("trusted CA", func(t *testing.T) {
		t.Parallel()
		cfg := tcpConfig(srv)
		cfg.TLS, cfg.CACertPath = true, ca
		h := startGRPC(t, cfg)
		h.rec.waitLatestUpdate(t, docA)
	})

	t.Run("untrusted CA", func(t *testing.T) {
		t.Parallel()
		other, err := syncserver.New(syncserver.WithTLS())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(other.Close)
		otherCA, err := other.WriteCACert(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		cfg := tcpConfig(srv)
		cfg.TLS, cfg.CACertPath = true, otherCA
		h := startGRPC(t, cfg)
		lost := h.rec.waitKind(t, "lost")
		if code := status.Code(lost.err); code != codes.Unavailable {
			t.Errorf("Lost(%v): code %v, want Unavailable", lost.err, code)
		}
		if n := count(h.rec.snapshot(), "update"); n != 0 {
			t.Errorf("got %d updates over an untrusted connection", n)
		}
	})

	t.Run("plaintext client", func(t *testing.T) {
		t.Parallel()
		h := startGRPC(t, tcpConfig(srv))
		h.rec.waitKind(t, "lost")
	})
}

func TestGRPCUnixSocket(t *testing.T) {
	t.Parallel()
	srv, err := syncserver.New(syncserver.WithFlags([]byte(docA)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	path := filepath.Join(t.TempDir(), "flagd.sock")
	if err := srv.ListenUnix(path); err != nil {
		t.Fatal(err)
	}
	h := startGRPC(t, GRPCConfig{SocketPath: path, Host: "ignored.invalid", Port: 1})

	if got, want := h.src.Target(), "unix://"+path; got != want {
		t.Errorf("Target() = %q, want %q", got, want)
	}
	h.rec.waitLatestUpdate(t, docA)
	srv.SetFlags([]byte(docB))
	h.rec.waitLatestUpdate(t, docB)
}

func TestGRPCEnvoyTarget(t *testing.T) {
	t.Parallel()
	srv := newSyncServer(t, syncserver.WithFlags([]byte(docA)))
	uri := fmt.Sprintf("envoy://127.0.0.1:%d/my.service", srv.Port())
	h := startGRPC(t, GRPCConfig{TargetURI: uri, Port: 1})

	if got := h.src.Target(); got != uri {
		t.Errorf("Target() = %q, want %q", got, uri)
	}
	if got := h.rec.waitLatestUpdate(t, docA); got.orig != uri {
		t.Errorf("Origin = %q, want %q", got.orig, uri)
	}
	reqs := requests(srv, "SyncFlags")
	if len(reqs) == 0 || reqs[0].Authority != "my.service" {
		t.Errorf("SyncFlags calls %+v, want authority %q", reqs, "my.service")
	}
}

func TestGRPCTargetURIPassedToGRPC(t *testing.T) {
	t.Parallel()
	srv := newSyncServer(t, syncserver.WithFlags([]byte(docA)))
	uri := "passthrough:///" + srv.Addr()
	h := startGRPC(t, GRPCConfig{TargetURI: uri})
	h.rec.waitLatestUpdate(t, docA)
	if got := h.src.Target(); got != uri {
		t.Errorf("Target() = %q, want %q", got, uri)
	}
}

func TestGRPCFatalStatus(t *testing.T) {
	t.Parallel()
	srv := newSyncServer(t, syncserver.WithStatus(codes.PermissionDenied, "not for you"))
	cfg := tcpConfig(srv)
	cfg.FatalStatusCodes = []codes.Code{codes.PermissionDenied}
	h := startGRPC(t, cfg)

	fatal := h.rec.waitKind(t, "fatal")
	if err := h.waitReturn(t); err != nil {
		t.Errorf("Run returned %v after Fatal, want nil", err)
	}
	if code := status.Code(fatal.err); code != codes.PermissionDenied {
		t.Errorf("Fatal(%v): code %v, want PermissionDenied", fatal.err, code)
	}
	if !strings.Contains(fatal.err.Error(), h.src.Target()) {
		t.Errorf("Fatal(%v) does not name the target %s", fatal.err, h.src.Target())
	}
	time.Sleep(5 * testRetryBackoffMax)
	if n := len(requests(srv, "SyncFlags")); n != 1 {
		t.Errorf("server saw %d SyncFlags calls, want 1 and no retry", n)
	}
	if calls := h.rec.snapshot(); len(calls) != 1 {
		t.Errorf("sink got %v, want only the Fatal", calls)
	}
}

// The retry policy retries Unavailable inside gRPC: a server that keeps
// answering it sees maxAttempts (4) calls before the source hears of it.
func TestGRPCRetryPolicy(t *testing.T) {
	t.Parallel()
	srv := newSyncServer(t, syncserver.WithStatus(codes.Unavailable, "overloaded"))
	cfg := tcpConfig(srv)
	cfg.FatalStatusCodes = []codes.Code{codes.Unavailable}
	h := startGRPC(t, cfg)

	fatal := h.rec.waitKind(t, "fatal")
	if code := status.Code(fatal.err); code != codes.Unavailable {
		t.Errorf("Fatal(%v): code %v, want Unavailable", fatal.err, code)
	}
	if n := len(requests(srv, "SyncFlags")); n != 4 {
		t.Errorf("server saw %d SyncFlags calls, want 4 (maxAttempts)", n)
	}
}

func TestGRPCFatalStatusAfterSuccessIsRetried(t *testing.T) {
	t.Parallel()
	srv := newSyncServer(t, syncserver.WithFlags([]byte(docA)))
	cfg := tcpConfig(srv)
	cfg.FatalStatusCodes = []codes.Code{codes.PermissionDenied}
	h := startGRPC(t, cfg)
	h.rec.waitLatestUpdate(t, docA)

	srv.Stop()
	srv.SetStatus(codes.PermissionDenied, "not any more")
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	h.rec.waitKind(t, "lost")
	before := len(requests(srv, "SyncFlags"))
	waitRequests(t, srv, "SyncFlags", before+2)
	srv.SetStatus(codes.OK, "")
	h.rec.waitLatestUpdate(t, docA)

	calls := h.rec.snapshot()
	if n := count(calls, "fatal"); n != 0 {
		t.Errorf("a fatal code after the first success must be retried; sink got %v", calls)
	}
	if n := count(calls, "lost"); n != 1 {
		t.Errorf("got %d Lost for one outage, want 1: %v", n, calls)
	}
}

func TestGRPCNonFatalStatusRetries(t *testing.T) {
	t.Parallel()
	srv := newSyncServer(t,
		syncserver.WithFlags([]byte(docA)),
		syncserver.WithStatus(codes.PermissionDenied, "not for you"))
	h := startGRPC(t, tcpConfig(srv))

	lost := h.rec.waitKind(t, "lost")
	if code := status.Code(lost.err); code != codes.PermissionDenied {
		t.Errorf("Lost(%v): code %v, want PermissionDenied", lost.err, code)
	}
	waitRequests(t, srv, "SyncFlags", 4)
	srv.SetStatus(codes.OK, "")
	h.rec.waitLatestUpdate(t, docA)

	calls := h.rec.snapshot()
	if count(calls, "lost") != 1 || count(calls, "fatal") != 0 {
		t.Errorf("want one Lost for the whole refusal and no Fatal; sink got %v", calls)
	}
}

func TestGRPCReconnectsAfterRestart(t *testing.T) {
	t.Parallel()
	srv := newSyncServer(t, syncserver.WithFlags([]byte(docA)))
	var attempts attemptCounter
	cfg := tcpConfig(srv)
	cfg.DialOptions = []grpc.DialOption{attempts.option()}
	h := startGRPC(t, cfg)
	h.rec.waitLatestUpdate(t, docA)

	srv.Stop()
	lost := h.rec.waitKind(t, "lost")
	if code := status.Code(lost.err); code != codes.Unavailable {
		t.Errorf("Lost(%v): code %v, want Unavailable", lost.err, code)
	}
	if !strings.Contains(lost.err.Error(), h.src.Target()) {
		t.Errorf("Lost(%v) does not name the target %s", lost.err, h.src.Target())
	}

	// Several failed attempts, none of which is news (checked below).
	attempts.waitSince(t, lost.at, 3)
	srv.SetFlags([]byte(docB))
	restarted := time.Now()
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	back := h.rec.waitLatestUpdate(t, docB)

	// Reconnecting waits at most one backoff step of the source, one of
	// the channel's and one retry of the gRPC retry policy, each at most
	// RetryBackoffMax plus jitter; the rest is slack for a loaded machine.
	// gRPC's default channel backoff (1s growing to 120s) would not make it.
	took := back.at.Sub(restarted)
	t.Logf("reconnected %v after the restart", took)
	if took > 20*testRetryBackoffMax {
		t.Errorf("reconnected %v after the restart, want within ~%v", took, 3*testRetryBackoffMax)
	}
	calls := h.rec.snapshot()
	if n := count(calls, "lost"); n != 1 {
		t.Errorf("got %d Lost for one outage, want 1: %v", n, calls)
	}

	// A second outage is news again.
	srv.Stop()
	h.rec.waitKind(t, "lost")
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	h.rec.waitLatestUpdate(t, docB)
	if n := count(h.rec.snapshot(), "lost"); n != 2 {
		t.Errorf("got %d Lost for two outages, want 2", n)
	}
}

// endingServer sends one flag set on every SyncFlags stream and then ends
// the stream cleanly, as a server shutting down gracefully might.
type endingServer struct {
	syncv1grpc.UnimplementedFlagSyncServiceServer
}

func (endingServer) SyncFlags(_ *syncv1.SyncFlagsRequest, stream grpc.ServerStreamingServer[syncv1.SyncFlagsResponse]) error {
	return stream.Send(syncv1.SyncFlagsResponse_builder{FlagConfiguration: docA, SyncContext: &structpb.Struct{}}.Build())
}

// A stream the server ends cleanly is a loss all the same, and its error
// carries a status like any other broken stream.
func TestGRPCStreamEndedByServer(t *testing.T) {
	t.Parallel()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	syncv1grpc.RegisterFlagSyncServiceServer(srv, endingServer{})
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)

	h := startGRPC(t, GRPCConfig{TargetURI: "passthrough:///" + lis.Addr().String()})
	// The server ends every stream, and the source opens another at once:
	// updates and losses alternate too fast to catch either as the latest
	// call, so the wait is for an update followed by a loss.
	var lost error
	h.rec.waitFor(t, fmt.Sprintf("update(%q) then a loss", docA), func(calls []call) bool {
		for i, c := range calls {
			if c.kind == "update" && c.flags == docA {
				if j := slices.IndexFunc(calls[i+1:], func(c call) bool { return c.kind == "lost" }); j >= 0 {
					lost = calls[i+1+j].err
					return true
				}
			}
		}
		return false
	})
	if code := status.Code(lost); code != codes.Unavailable {
		t.Errorf("Lost(%v): code %v, want Unavailable", lost, code)
	}
}

func TestGRPCStreamDeadline(t *testing.T) {
	t.Parallel()
	// A sync context saves each stream a GetMetadata call.
	srv := newSyncServer(t,
		syncserver.WithFlags([]byte(docA)),
		syncserver.WithSyncContext(map[string]any{}))
	cfg := tcpConfig(srv)
	cfg.StreamDeadline = 400 * time.Millisecond
	h := startGRPC(t, cfg)

	// On a loaded machine the very first connection can take longer than
	// the deadline; that is an ordinary failed attempt, and not the
	// subject here.
	h.rec.waitLatestUpdate(t, docA)
	before := len(h.rec.snapshot())
	first := len(requests(srv, "SyncFlags"))
	waitRequests(t, srv, "SyncFlags", first+3)
	calls := h.rec.snapshot()[before:]
	if n := count(calls, "lost"); n != 0 {
		t.Errorf("an expiring stream deadline is not a loss; sink got %v", calls)
	}
	if n := count(calls, "update"); n < 2 {
		t.Errorf("got %d updates from 3 renewed streams, want one per stream", n)
	}
}

func TestGRPCBrokenPayload(t *testing.T) {
	t.Parallel()
	srv := newSyncServer(t, syncserver.WithFlags([]byte(docA)))
	h := startGRPC(t, tcpConfig(srv))
	h.rec.waitLatestUpdate(t, docA)

	srv.SendRaw("{not json")
	h.rec.waitLatestUpdate(t, "{not json")
	srv.SetFlags([]byte(docB))
	h.rec.waitLatestUpdate(t, docB)

	if n := len(requests(srv, "SyncFlags")); n != 1 {
		t.Errorf("the stream should survive a bad payload; server saw %d SyncFlags calls", n)
	}
	if calls := h.rec.snapshot(); count(calls, "lost") != 0 {
		t.Errorf("sink got %v", calls)
	}
}

func TestGRPCBackoff(t *testing.T) {
	t.Parallel()

	// Attempts seen before gRPC's own retries, which are turned off so
	// that the spacing measured is the source's alone.
	run := func(t *testing.T, base, maxDelay time.Duration) []time.Time {
		srv := newSyncServer(t)
		srv.Stop()
		var attempts attemptCounter
		cfg := tcpConfig(srv)
		cfg.RetryBackoff, cfg.RetryBackoffMax = base, maxDelay
		cfg.DialOptions = []grpc.DialOption{attempts.option(), grpc.WithDisableRetry()}
		h := startGRPC(t, cfg)
		h.rec.waitKind(t, "lost")
		time.Sleep(time.Second)
		h.stop(t)
		if n := count(h.rec.snapshot(), "lost"); n != 1 {
			t.Errorf("got %d Lost for one outage, want 1", n)
		}
		return attempts.snapshot()
	}

	t.Run("follows the outage's age", func(t *testing.T) {
		t.Parallel()
		base, maxDelay := 200*time.Millisecond, 400*time.Millisecond
		times := run(t, base, maxDelay)
		// The waits: base/4, raised to the 50ms floor that jitter does
		// not go below; then a sixteenth of the outage's age, at least
		// base/2 and at most maxDelay, each less at most 20% jitter.
		for i := 1; i < len(times); i++ {
			least := 50 * time.Millisecond
			if i > 1 {
				age := times[i-1].Sub(times[0])
				least = min(max(age/16, base/2), maxDelay) * 8 / 10
			}
			if gap := times[i].Sub(times[i-1]); gap < least {
				t.Errorf("attempt %d came %v after the previous one, want at least %v", i, gap, least)
			}
		}
		if n := len(times); n < 5 || n > 12 {
			t.Errorf("%d attempts in about a second, want 5 to 12", n)
		}
	})

	t.Run("never a busy loop", func(t *testing.T) {
		t.Parallel()
		times := run(t, time.Millisecond, time.Millisecond)
		for i := 1; i < len(times); i++ {
			if gap := times[i].Sub(times[i-1]); gap < 50*time.Millisecond {
				t.Errorf("attempt %d came %v after the previous one, want at least 50ms", i, gap)
			}
		}
		if n := len(times); n > 25 {
			t.Errorf("%d attempts in about a second, want at most 25", n)
		}
	})

	t.Run("first reconnect is quick with default backoff", func(t *testing.T) {
		t.Parallel()
		srv := newSyncServer(t, syncserver.WithFlags([]byte(docA)))
		var attempts attemptCounter
		cfg := tcpConfig(srv)
		cfg.DialOptions = []grpc.DialOption{attempts.option()}
		// Not startGRPC, which would put in the test's short backoffs.
		src, err := NewGRPC(cfg)
		if err != nil {
			t.Fatal(err)
		}
		rec := runSource(t, src).rec
		rec.waitUpdate(t, docA)
		srv.Stop()
		lost := rec.waitKind(t, "lost")
		next := attempts.waitSince(t, lost.at, 1)
		t.Logf("first reconnect attempt %v after the loss", next[0].Sub(lost.at))
		// RetryBackoff/4 with jitter: 200 to 300ms after the loss. The
		// upper bound leaves room for a loaded machine; TestGRPCRetryDelay
		// pins the schedule itself.
		if gap := next[0].Sub(lost.at); gap < 150*time.Millisecond || gap > 2*time.Second {
			t.Errorf("first reconnect attempt %v after the loss, want about 250ms", gap)
		}
	})
}

func TestGRPCKeepAlive(t *testing.T) {
	t.Parallel()
	srv := newSyncServer(t, syncserver.WithFlags([]byte(docA)))
	cfg := tcpConfig(srv)
	cfg.KeepAlive = 10 * time.Second
	h := startGRPC(t, cfg)
	h.rec.waitLatestUpdate(t, docA)
}

func TestGRPCStopsOnCancel(t *testing.T) {
	t.Parallel()

	t.Run("while streaming", func(t *testing.T) {
		t.Parallel()
		srv := newSyncServer(t, syncserver.WithFlags([]byte(docA)))
		h := startGRPC(t, tcpConfig(srv))
		h.rec.waitLatestUpdate(t, docA)
		if took := h.stop(t); took > time.Second {
			t.Errorf("Run took %v to return", took)
		}
		waitUntil(t, func() bool { return srv.Streams() == 0 }, func() string {
			return fmt.Sprintf("the server to see its streams closed; %d still open", srv.Streams())
		})
		if calls := h.rec.snapshot(); count(calls, "lost") != 0 {
			t.Errorf("stopping is not a loss; sink got %v", calls)
		}
	})

	t.Run("while backing off", func(t *testing.T) {
		t.Parallel()
		srv := newSyncServer(t)
		srv.Stop()
		cfg := tcpConfig(srv)
		cfg.RetryBackoff, cfg.RetryBackoffMax = time.Minute, time.Minute
		// Without gRPC's own retries the first failure comes at once.
		cfg.DialOptions = []grpc.DialOption{grpc.WithDisableRetry()}
		h := startGRPC(t, cfg)
		h.rec.waitKind(t, "lost")
		time.Sleep(100 * time.Millisecond)
		if took := h.stop(t); took > time.Second {
			t.Errorf("Run took %v to return", took)
		}
	})

	t.Run("during gRPC's own retries", func(t *testing.T) {
		t.Parallel()
		srv := newSyncServer(t, syncserver.WithStatus(codes.Unavailable, "overloaded"))
		cfg := tcpConfig(srv)
		// The retry policy waits about 1s between its attempts.
		cfg.RetryBackoff, cfg.RetryBackoffMax = time.Minute, time.Minute
		h := startGRPC(t, cfg)
		waitRequests(t, srv, "SyncFlags", 1)
		if took := h.stop(t); took > time.Second {
			t.Errorf("Run took %v to return", took)
		}
	})

	t.Run("already cancelled", func(t *testing.T) {
		t.Parallel()
		src, err := NewGRPC(GRPCConfig{Host: "127.0.0.1", Port: 1})
		if err != nil {
			t.Fatal(err)
		}
		calls, err := runAlone(t, src, true)
		if err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
		if len(calls) != 0 {
			t.Errorf("sink got %v", calls)
		}
	})

	t.Run("Run twice", func(t *testing.T) {
		t.Parallel()
		srv := newSyncServer(t, syncserver.WithFlags([]byte(docA)))
		h := startGRPC(t, tcpConfig(srv))
		h.rec.waitLatestUpdate(t, docA)
		calls, err := runAlone(t, h.src, false)
		if err == nil {
			t.Error("second Run returned nil, want an error")
		}
		if len(calls) != 0 {
			t.Errorf("second Run called its sink: %v", calls)
		}
	})
}

func TestNewGRPCValidation(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	missingCA := filepath.Join(dir, "missing-ca.pem")
	garbageCA := filepath.Join(dir, "garbage-ca.pem")
	if err := os.WriteFile(garbageCA, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Larger than any bundle of certificates, and sparse: nothing to read.
	hugeCA := filepath.Join(dir, "huge-ca.pem")
	if err := os.WriteFile(hugeCA, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(hugeCA, maxCAFile+1); err != nil {
		t.Fatal(err)
	}

	bad := []struct {
		name    string
		cfg     GRPCConfig
		mention string // the error must contain it
	}{
		{"negative port", GRPCConfig{Port: -1}, "Port"},
		{"port too large", GRPCConfig{Port: 65536}, "Port"},
		{"negative deadline", GRPCConfig{Deadline: -time.Second}, "Deadline"},
		{"negative stream deadline", GRPCConfig{StreamDeadline: -time.Second}, "StreamDeadline"},
		{"negative backoff", GRPCConfig{RetryBackoff: -time.Second}, "RetryBackoff"},
		{"negative backoff max", GRPCConfig{RetryBackoffMax: -time.Second}, "RetryBackoffMax"},
		{"negative keepalive", GRPCConfig{KeepAlive: -time.Second}, "KeepAlive"},
		{"negative message size", GRPCConfig{MaxMessageSize: -1}, "MaxMessageSize"},
		{"max below base", GRPCConfig{RetryBackoff: 2 * time.Second, RetryBackoffMax: time.Second}, "RetryBackoffMax"},
		{"OK as fatal code", GRPCConfig{FatalStatusCodes: []codes.Code{codes.OK}}, "FatalStatusCodes"},
		{"unknown fatal code", GRPCConfig{FatalStatusCodes: []codes.Code{99}}, "FatalStatusCodes"},
		{"host with port", GRPCConfig{Host: "localhost:8015"}, "Host"},
		{"host with space", GRPCConfig{Host: "flagd host"}, "Host"},
		{"missing CA file", GRPCConfig{TLS: true, CACertPath: missingCA}, missingCA},
		{"CA file without certificates", GRPCConfig{TLS: true, CACertPath: garbageCA}, garbageCA},
		{"CA file that is too large", GRPCConfig{TLS: true, CACertPath: hugeCA}, "is over 16777216 bytes"},
		{"CA file that is a device that never ends", GRPCConfig{TLS: true, CACertPath: "/dev/zero"}, "/dev/zero: not a regular file"},
		{"envoy without port", GRPCConfig{TargetURI: "envoy://127.0.0.1/svc"}, "envoy://host:port/authority"},
		{"envoy without authority", GRPCConfig{TargetURI: "envoy://127.0.0.1:8015"}, "envoy://host:port/authority"},
		{"envoy with empty authority", GRPCConfig{TargetURI: "envoy://127.0.0.1:8015/"}, "envoy://host:port/authority"},
		{"envoy without host", GRPCConfig{TargetURI: "envoy://:8015/svc"}, "envoy://host:port/authority"},
		{"envoy authority with a path", GRPCConfig{TargetURI: "envoy://127.0.0.1:8015/a/b"}, "envoy://host:port/authority"},
		{"target URI with spaces", GRPCConfig{TargetURI: " dns:///127.0.0.1:8015"}, "TargetURI"},
		{"target URI that does not parse", GRPCConfig{TargetURI: "%zz"}, "%zz"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			if dev, ok := strings.CutPrefix(tc.cfg.CACertPath, "/dev/"); ok {
				if _, err := os.Stat(tc.cfg.CACertPath); err != nil {
					t.Skipf("no /dev/%s here: %v", dev, err)
				}
			}
			src, err := NewGRPC(tc.cfg)
			if err == nil {
				t.Fatalf("NewGRPC(%+v) = %s, want an error", tc.cfg, src.Target())
			}
			if !strings.Contains(err.Error(), tc.mention) {
				t.Errorf("error %q does not mention %q", err, tc.mention)
			}
		})
	}
	t.Run("message size", func(t *testing.T) {
		for size, want := range map[int]int{0: DefaultMaxMessageSize, 1 << 20: 1 << 20} {
			src, err := NewGRPC(GRPCConfig{MaxMessageSize: size})
			if err != nil || src.MaxMessageSize() != want {
				t.Errorf("MaxMessageSize %d: %v, %v; want %d", size, src, err, want)
			}
		}
	})
	t.Run("missing CA file is ErrNotExist", func(t *testing.T) {
		_, err := NewGRPC(GRPCConfig{TLS: true, CACertPath: missingCA})
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("error %v is not fs.ErrNotExist", err)
		}
	})

	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	good := []struct {
		name   string
		cfg    GRPCConfig
		target string
	}{
		{"defaults", GRPCConfig{}, "localhost:8015"},
		{"host and port", GRPCConfig{Host: "flagd.example", Port: 9090}, "flagd.example:9090"},
		{"IPv6 literal", GRPCConfig{Host: "::1", Port: 9090}, "[::1]:9090"},
		{"bracketed IPv6 literal", GRPCConfig{Host: "[::1]", Port: 9090}, "[::1]:9090"},
		{"target URI", GRPCConfig{TargetURI: "dns:///flagd.example:9090", Host: "x"}, "dns:///flagd.example:9090"},
		{"target URI without scheme", GRPCConfig{TargetURI: "127.0.0.1:9090"}, "127.0.0.1:9090"},
		{"envoy", GRPCConfig{TargetURI: "envoy://localhost:9211/sync.service"}, "envoy://localhost:9211/sync.service"},
		{"socket wins", GRPCConfig{SocketPath: "/run/flagd.sock", TargetURI: "dns:///x:1"}, "unix:///run/flagd.sock"},
		{"relative socket", GRPCConfig{SocketPath: "flagd.sock"}, "unix://" + filepath.Join(wd, "flagd.sock")},
		{"CA without TLS is ignored", GRPCConfig{CACertPath: missingCA}, "localhost:8015"},
		{"max defaults to at least the base", GRPCConfig{RetryBackoff: time.Minute}, "localhost:8015"},
		{"odd durations", GRPCConfig{RetryBackoff: time.Nanosecond, RetryBackoffMax: 1500*time.Millisecond + time.Nanosecond}, "localhost:8015"},
		{"keepalive", GRPCConfig{KeepAlive: 5 * time.Millisecond}, "localhost:8015"},
		{"fatal codes", GRPCConfig{FatalStatusCodes: []codes.Code{codes.PermissionDenied, codes.Unauthenticated}}, "localhost:8015"},
	}
	for _, tc := range good {
		t.Run(tc.name, func(t *testing.T) {
			src, err := NewGRPC(tc.cfg)
			if err != nil {
				t.Fatalf("NewGRPC: %v", err)
			}
			if got := src.Target(); got != tc.target {
				t.Errorf("Target() = %q, want %q", got, tc.target)
			}
		})
	}
}
