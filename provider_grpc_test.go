package flagsnap

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/flagsnap/flagsnap/syncserver"
)

// serve starts a sync server on a loopback port.
func serve(t *testing.T, opts ...syncserver.Option) *syncserver.Server {
	t.Helper()
	s, err := syncserver.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if err := s.ListenTCP("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	return s
}

// fast keeps reconnection quick in tests.
func fast(s *syncserver.Server) []Option {
	return []Option{
		WithResolver(ResolverInProcess), WithHost("127.0.0.1"), WithPort(s.Port()),
		WithRetryBackoff(50*time.Millisecond, 200*time.Millisecond),
		WithDeadline(3 * time.Second),
	}
}

func grpcProvider(t *testing.T, opts ...Option) (*Provider, events) {
	t.Helper()
	p, err := NewProvider(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Shutdown)
	if err := p.Init(openfeature.EvaluationContext{}); err != nil {
		t.Fatalf("Init: %v", err)
	}
	return p, events{t: t, ch: p.EventChannel()}
}

const teamFlags = `{"flags": {"color": {"state": "ENABLED", "variants": {"red": "red", "green": "green"}, "defaultVariant": "green"}}}`

func TestGRPCSelectorAndProviderID(t *testing.T) {
	s := serve(t, syncserver.WithFlags([]byte(flagsV1)), syncserver.WithSelectorFlags("team-a", []byte(teamFlags)))
	p, _ := grpcProvider(t, append(fast(s), WithSelector("team-a"), WithProviderID("checkout-7"))...)
	if c := color(p); c != "green" {
		t.Fatalf("color %q: the selector's flags are not served", c)
	}
	if v := p.BooleanEvaluation(context.Background(), "beta", false, nil); v.ResolutionDetail().ErrorCode != openfeature.FlagNotFoundCode {
		t.Errorf("a flag of another set is visible: %+v", v)
	}
	reqs := s.Requests()
	if len(reqs) == 0 {
		t.Fatal("no request")
	}
	r := reqs[0]
	if r.Method != "SyncFlags" || r.Selector != "team-a" || r.SelectorHeader != "team-a" || r.ProviderID != "checkout-7" {
		t.Errorf("request %+v", r)
	}
}

const enrichedFlags = `{"flags": {"where": {"state": "ENABLED", "variants": {"in": "INTERNAL", "out": "EXTERNAL"}, "defaultVariant": "out",
  "targeting": {"if": [{"==": [{"var": "injected"}, "set"]}, "in", "out"]}}}}`

func TestGRPCEnrichment(t *testing.T) {
	where := func(p *Provider) string {
		return p.StringEvaluation(context.Background(), "where", "?", nil).Value
	}
	t.Run("sync_context", func(t *testing.T) {
		s := serve(t, syncserver.WithFlags([]byte(enrichedFlags)), syncserver.WithSyncContext(map[string]any{"injected": "set"}))
		p, _ := grpcProvider(t, fast(s)...)
		if w := where(p); w != "INTERNAL" {
			t.Errorf("sync_context not used: %s", w)
		}
	})
	t.Run("sync_context changed on an open stream", func(t *testing.T) {
		s := serve(t, syncserver.WithFlags([]byte(enrichedFlags)), syncserver.WithSyncContext(map[string]any{"injected": "set"}))
		p, ev := grpcProvider(t, fast(s)...)
		if w := where(p); w != "INTERNAL" {
			t.Fatalf("sync_context not used: %s", w)
		}
		// The same flags with another context change what every rule
		// reading it answers, so they are a change of every flag.
		s.SetSyncContext(map[string]any{"injected": "unset"})
		if e := ev.next(); e.EventType != openfeature.ProviderConfigChange || !slices.Equal(e.FlagChanges, []string{"where"}) {
			t.Fatalf("got %s %v, want CONFIGURATION_CHANGED [where]", e.EventType, e.FlagChanges)
		}
		if w := where(p); w != "EXTERNAL" {
			t.Errorf("the new sync_context is not in force: %s", w)
		}
	})
	t.Run("GetMetadata", func(t *testing.T) {
		s := serve(t, syncserver.WithFlags([]byte(enrichedFlags)), syncserver.WithMetadata(map[string]any{"injected": "set"}))
		p, _ := grpcProvider(t, fast(s)...)
		if w := where(p); w != "INTERNAL" {
			t.Errorf("GetMetadata not used: %s", w)
		}
	})
	t.Run("neither", func(t *testing.T) {
		s := serve(t, syncserver.WithFlags([]byte(enrichedFlags)))
		p, _ := grpcProvider(t, fast(s)...)
		if w := where(p); w != "EXTERNAL" {
			t.Errorf("enriched from nowhere: %s", w)
		}
	})
	t.Run("enricher then sync_context", func(t *testing.T) {
		s := serve(t, syncserver.WithFlags([]byte(enrichedFlags)), syncserver.WithSyncContext(map[string]any{"injected": "set"}))
		var seen atomic.Value
		p, _ := grpcProvider(t, append(fast(s), WithContextEnricher(func(sc map[string]any) map[string]any {
			seen.Store(fmt.Sprint(sc))
			return map[string]any{"injected": "by the enricher"}
		}))...)
		if w := where(p); w != "INTERNAL" {
			t.Errorf("the sync context did not win over the enricher: %s", w)
		}
		if got := seen.Load(); got != "map[injected:set]" {
			t.Errorf("the enricher was given %v, want the server's sync context", got)
		}
	})
}

func TestGRPCTransports(t *testing.T) {
	t.Run("TLS with a custom CA", func(t *testing.T) {
		s := serve(t, syncserver.WithFlags([]byte(flagsV1)), syncserver.WithTLS())
		ca, err := s.WriteCACert(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		p, _ := grpcProvider(t, append(fast(s), WithHost("localhost"), WithTLS(ca))...)
		if c := color(p); c != "red" {
			t.Errorf("color %q", c)
		}
	})
	t.Run("unix socket", func(t *testing.T) {
		s, err := syncserver.New(syncserver.WithFlags([]byte(flagsV1)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		sock := filepath.Join(t.TempDir(), "sync.sock")
		if err := s.ListenUnix(sock); err != nil {
			t.Fatal(err)
		}
		p, _ := grpcProvider(t, WithResolver(ResolverInProcess), WithSocketPath(sock), WithDeadline(3*time.Second))
		if c := color(p); c != "red" {
			t.Errorf("color %q", c)
		}
	})
	t.Run("envoy target URI", func(t *testing.T) {
		s := serve(t, syncserver.WithFlags([]byte(flagsV1)))
		p, _ := grpcProvider(t, WithResolver(ResolverInProcess), WithTargetURI(fmt.Sprintf("envoy://127.0.0.1:%d/sync.service", s.Port())), WithDeadline(3*time.Second))
		if c := color(p); c != "red" {
			t.Errorf("color %q", c)
		}
		if a := s.Requests()[0].Authority; a != "sync.service" {
			t.Errorf("authority %q", a)
		}
	})
	t.Run("bad CA file", func(t *testing.T) {
		_, err := NewProvider(WithResolver(ResolverInProcess), WithTLS(filepath.Join(t.TempDir(), "missing.pem")))
		if err == nil || !strings.Contains(err.Error(), "missing.pem") {
			t.Errorf("NewProvider: %v", err)
		}
	})
}

func TestGRPCForbiddenIsFatal(t *testing.T) {
	s := serve(t, syncserver.WithStatus(codes.PermissionDenied, "not for you"))
	p, err := NewProvider(append(fast(s), WithFatalStatusCodes(codes.PermissionDenied))...)
	if err != nil {
		t.Fatal(err)
	}
	domain := t.Name()
	err = openfeature.SetNamedProviderAndWait(domain, p)
	var initErr *openfeature.ProviderInitError
	if !errors.As(err, &initErr) || initErr.ErrorCode != openfeature.ProviderFatalCode {
		t.Fatalf("SetNamedProviderAndWait: %v", err)
	}
	client := openfeature.NewClient(domain)
	if st := client.State(); st != openfeature.FatalState {
		t.Errorf("client state %s, want FATAL", st)
	}
	attempts := len(s.Requests())
	time.Sleep(300 * time.Millisecond)
	if n := len(s.Requests()); n != attempts {
		t.Errorf("retried after a fatal status: %d requests, then %d", attempts, n)
	}
	if err := openfeature.SetNamedProviderAndWait(domain, openfeature.NoopProvider{}); err != nil {
		t.Fatal(err)
	}
}

func TestGRPCRestartWithinGracePeriod(t *testing.T) {
	s := serve(t, syncserver.WithFlags([]byte(flagsV1)))
	p, ev := grpcProvider(t, append(fast(s), WithRetryGracePeriod(5*time.Second))...)
	s.Stop()
	if e := ev.next(); e.EventType != openfeature.ProviderStale {
		t.Fatalf("server stopped: %s", e.EventType)
	}
	if c := color(p); c != "red" {
		t.Fatalf("flags not served while stale: %q", c)
	}
	s.SetFlags([]byte(flagsV2))
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	ev.recovered("color", "limit", "old")
	if c := color(p); c != "blue" {
		t.Fatalf("color %q", c)
	}
}

func TestGRPCRestartAfterGracePeriod(t *testing.T) {
	s := serve(t, syncserver.WithFlags([]byte(flagsV1)))
	p, ev := grpcProvider(t, append(fast(s), WithRetryGracePeriod(300*time.Millisecond))...)
	s.Stop()
	if e := ev.next(); e.EventType != openfeature.ProviderStale {
		t.Fatalf("server stopped: %s", e.EventType)
	}
	if e := ev.next(); e.EventType != openfeature.ProviderError {
		t.Fatalf("after the grace period: %s", e.EventType)
	}
	if c := color(p); c != "red" {
		t.Fatalf("flags not served in ERROR: %q", c)
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	ev.recovered()
}

func TestGRPCBrokenPayload(t *testing.T) {
	s := serve(t, syncserver.WithFlags([]byte(flagsV1)))
	p, ev := grpcProvider(t, fast(s)...)
	s.SendRaw(`{"flags": {"color": `)
	e := ev.next()
	if e.EventType != openfeature.ProviderError || !strings.Contains(e.Message, "line 1") {
		t.Fatalf("broken payload: %s %q", e.EventType, e.Message)
	}
	if c := color(p); c != "red" {
		t.Fatalf("flags lost to a broken payload: %q", c)
	}
	s.SetFlags([]byte(flagsV2))
	ev.recovered("color", "limit", "old")
	// Only changes are announced.
	s.SetFlags([]byte(flagsV2))
	ev.none(100 * time.Millisecond)
	syncs := 0
	for _, r := range s.Requests() {
		if r.Method == "SyncFlags" {
			syncs++
		}
	}
	if s.Streams() != 1 || syncs != 1 {
		t.Errorf("the stream did not stay open: %d streams, %d SyncFlags requests", s.Streams(), syncs)
	}
}

func TestGRPCCacheFile(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "flags-cache.json")
	s := serve(t, syncserver.WithFlags([]byte(enrichedFlags)), syncserver.WithSyncContext(map[string]any{"injected": "set"}))
	port := s.Port()
	first, _ := grpcProvider(t, append(fast(s), WithCacheFile(cache))...)
	first.Shutdown()
	if _, err := os.Stat(cache); err != nil {
		t.Fatalf("no cache written: %v", err)
	}
	s.Stop()

	// The server is down: the cache is served, and the provider is STALE.
	p, err := NewProvider(WithResolver(ResolverInProcess), WithHost("127.0.0.1"), WithPort(port), WithCacheFile(cache), WithDeadline(200*time.Millisecond),
		WithRetryBackoff(50*time.Millisecond, 200*time.Millisecond), WithRetryGracePeriod(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown()
	ev := events{t: t, ch: p.EventChannel()}
	if err := p.Init(openfeature.EvaluationContext{}); err != nil {
		t.Fatalf("Init with a cache: %v", err)
	}
	if e := ev.next(); e.EventType != openfeature.ProviderStale || !strings.Contains(e.Message, "cached") {
		t.Fatalf("cache served: %s %q", e.EventType, e.Message)
	}
	if w := p.StringEvaluation(context.Background(), "where", "?", nil); w.Value != "INTERNAL" {
		t.Fatalf("cached flags or their sync context not served: %+v", w)
	}
	// Live data replaces the cache as soon as it arrives.
	s.SetFlags([]byte(flagsV1))
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	ev.recovered("beta", "color", "old", "where")
	if c := color(p); c != "red" {
		t.Fatalf("color %q", c)
	}

	t.Run("corrupt cache is ignored", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "bad.json")
		writeFile(t, bad, "{not json")
		p, err := NewProvider(WithResolver(ResolverInProcess), WithHost("127.0.0.1"), WithPort(port+1), WithCacheFile(bad), WithDeadline(100*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		defer p.Shutdown()
		if err := p.Init(openfeature.EvaluationContext{}); err == nil || !strings.Contains(err.Error(), "no flags within") {
			t.Fatalf("Init with a corrupt cache: %v", err)
		}
	})
}

// openFiles counts this process's open file descriptors.
func openFiles(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("cannot count file descriptors here")
	}
	return len(entries)
}

func TestGRPCSoakRestarts(t *testing.T) {
	if testing.Short() {
		t.Skip("soak test")
	}
	s := serve(t, syncserver.WithFlags([]byte(versioned(0))))
	// Counted with the server already up: whatever is left above these
	// numbers after Shutdown belongs to the provider.
	goroutinesBefore := runtime.NumGoroutine()
	filesBefore := openFiles(t)

	p, err := NewProvider(append(fast(s), WithRetryGracePeriod(time.Hour))...)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Init(openfeature.EvaluationContext{}); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var failures, evaluations atomic.Int64
	var wg sync.WaitGroup
	ctx := context.Background()
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				d := p.StringEvaluation(ctx, "version", "", openfeature.FlattenedContext{"k": "key"})
				if d.ResolutionError != (openfeature.ResolutionError{}) || d.Variant != "v"+d.Value {
					failures.Add(1)
				}
				evaluations.Add(1)
				runtime.Gosched()
			}
		}()
	}
	const restarts = 50
	for n := 1; n <= restarts; n++ {
		s.Stop()
		s.SetFlags([]byte(versioned(n)))
		if err := s.Restart(); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprint(n)
		eventually(t, "version "+want+" served", func() bool {
			return p.StringEvaluation(ctx, "version", "", openfeature.FlattenedContext{"k": "key"}).Value == want
		})
	}
	stop.Store(true)
	wg.Wait()
	if n := failures.Load(); n > 0 {
		t.Errorf("%d evaluations failed", n)
	}
	if evaluations.Load() == 0 {
		t.Error("no evaluation ran during the restarts")
	}
	if got := p.IntEvaluation(ctx, "same", -1, nil).Value; got != restarts {
		t.Errorf("final flags at version %d, want %d", got, restarts)
	}
	p.Shutdown()
	eventually(t, "goroutines back to their number before", func() bool {
		return runtime.NumGoroutine() <= goroutinesBefore
	})
	eventually(t, "file descriptors back to their number before", func() bool {
		return openFiles(t) <= filesBefore
	})
}

func TestGRPCStreamOptions(t *testing.T) {
	s := serve(t, syncserver.WithFlags([]byte(flagsV1)))
	var streams atomic.Int64
	count := func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		streams.Add(1)
		return streamer(ctx, desc, cc, method, opts...)
	}
	p, ev := grpcProvider(t, append(fast(s),
		WithStreamDeadline(150*time.Millisecond),
		WithKeepAlive(10*time.Second),
		WithGRPCDialOptions(grpc.WithStreamInterceptor(count)),
	)...)
	// The stream deadline reopens the stream without reporting a loss.
	eventually(t, "the stream reopened twice", func() bool { return streams.Load() >= 3 })
	ev.none(100 * time.Millisecond)
	if c := color(p); c != "red" {
		t.Fatalf("color %q", c)
	}
	syncs := 0
	for _, r := range s.Requests() {
		if r.Method == "SyncFlags" {
			syncs++
		}
	}
	if syncs < 3 {
		t.Errorf("%d SyncFlags requests reached the server", syncs)
	}
}
