package flagsnap

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"
	"github.com/open-feature/go-sdk/openfeature/isolated"
	"google.golang.org/grpc"

	"github.com/flagsnap/flagsnap/internal/logtest"
	"github.com/flagsnap/flagsnap/source"
	"github.com/flagsnap/flagsnap/syncserver"
)

// closedPort is a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

// bareGRPC is a gRPC server that serves nothing: every call is
// Unimplemented, as at flagd's evaluation port for a sync client.
func bareGRPC(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	go func() { _ = s.Serve(l) }()
	t.Cleanup(s.Stop)
	return l.Addr().(*net.TCPAddr).Port
}

// lostSource reports its origin lost at once, with err, and delivers
// nothing.
type lostSource struct{ err error }

func (s lostSource) Run(ctx context.Context, sink source.Sink) error {
	sink.Lost(s.err)
	<-ctx.Done()
	return nil
}

// remedied is an error that says what to change (source.Remedy).
type remedied struct{ error }

func (remedied) Remedy() string { return "unseal the vault" }

// Init that gets no flags says what was tried, what went wrong last and
// what to change, and logs the same text.
func TestInitFailureSaysWhatHappened(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	broken := filepath.Join(dir, "broken.json")
	if err := os.WriteFile(broken, []byte("{\n  \"flags\": {\n    \"a\": [\n}"), 0o644); err != nil {
		t.Fatal(err)
	}
	plain := serve(t, syncserver.WithFlags([]byte(flagsV1)))
	cases := []struct {
		name  string
		opts  func(t *testing.T) []Option
		want  []string
		code  openfeature.ErrorCode // "" for a plain error: waiting may heal it
		cause bool                  // errors.Unwrap finds the cause
	}{
		{"nothing listens", func(t *testing.T) []Option {
			port := closedPort(t)
			return []Option{WithResolver(ResolverInProcess), WithHost("127.0.0.1"), WithPort(port)}
		}, []string{"no flags within", "sync server at 127.0.0.1:", "(no TLS, no selector)", "connection refused", "nothing listens there", "FLAGD_HOST", "WithPort", "keeps trying"}, "", true},
		{"TLS against a plaintext server", func(t *testing.T) []Option {
			return []Option{WithResolver(ResolverInProcess), WithHost("127.0.0.1"), WithPort(plain.Port()), WithTLS(""), WithSelector("team-a")}
		}, []string{"(TLS, selector \"team-a\")", "handshake", "WithTLS", "FLAGD_TLS"}, "", true},
		{"not a sync server", func(t *testing.T) []Option {
			return []Option{WithResolver(ResolverInProcess), WithHost("127.0.0.1"), WithPort(bareGRPC(t))}
		}, []string{"Unimplemented", "does not serve flagd.sync.v1", "8015"}, "", true},
		{"missing file", func(t *testing.T) []Option {
			return []Option{WithFile(filepath.Join(dir, "nope.json"))}
		}, []string{"the flag file " + filepath.Join(dir, "nope.json"), "no such file", "create the file", "FLAGD_OFFLINE_FLAG_SOURCE_PATH"}, "", true},
		{"file that does not parse", func(t *testing.T) []Option {
			return []Option{WithFile(broken)}
		}, []string{"the flag file " + broken, "line 4", "fix the file"}, openfeature.ParseErrorCode, false},
		{"custom source with its own remedy", func(t *testing.T) []Option {
			return []Option{WithSource(lostSource{remedied{errors.New("the vault is sealed")}})}
		}, []string{"the vault is sealed", "To fix: unseal the vault."}, "", true},
		{"custom source without a remedy", func(t *testing.T) []Option {
			return []Option{WithSource(lostSource{errors.New("the vault is sealed")})}
		}, []string{"the vault is sealed", "To fix: check the source."}, "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var logs logtest.Buffer
			opts := append([]Option{WithoutEnv(), WithDeadline(300 * time.Millisecond), WithLogger(slog.New(slog.NewTextHandler(&logs, nil)))}, tc.opts(t)...)
			p, err := NewProvider(opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Shutdown()
			err = p.Init(openfeature.EvaluationContext{})
			if err == nil {
				t.Fatal("Init succeeded")
			}
			t.Log(err)
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Init's error does not say %q:\n%v", want, err)
				}
			}
			var initErr *openfeature.ProviderInitError
			if got := errors.As(err, &initErr); got != (tc.code != "") || (got && initErr.ErrorCode != tc.code) {
				t.Errorf("Init's error %T %v, want a ProviderInitError with code %q: %v", err, initErr, tc.code, got)
			}
			if tc.cause && errors.Unwrap(err) == nil {
				t.Errorf("Init's error keeps no cause")
			}
			if !strings.Contains(logs.String(), strconv.Quote(err.Error())) && !strings.Contains(logs.String(), err.Error()) {
				t.Errorf("the log does not give Init's message:\n%s", logs.String())
			}
		})
	}
}

// Events name their source, and error events carry their code in the
// metadata, which is all the OpenFeature SDK hands a handler.
func TestEventsCarryCodeAndSource(t *testing.T) {
	t.Parallel()
	m := source.NewMemory([]byte(flagsV1))
	p, err := NewProvider(WithSource(m), WithRetryGracePeriod(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown()
	if err := p.Init(openfeature.EvaluationContext{}); err != nil {
		t.Fatal(err)
	}
	ev := events{t: t, ch: p.EventChannel()}
	check := func(e openfeature.Event, typ openfeature.EventType, code string) {
		t.Helper()
		if e.EventType != typ {
			t.Fatalf("got %s %q, want %s", e.EventType, e.Message, typ)
		}
		if e.EventMetadata["source"] != "memory" {
			t.Errorf("%s: source %v, want memory", typ, e.EventMetadata["source"])
		}
		if got, _ := e.EventMetadata["errorCode"].(string); got != code {
			t.Errorf("%s: errorCode %q, want %q", typ, got, code)
		}
	}
	if err := m.Set([]byte(`{"flags": [`)); err == nil {
		t.Fatal("a broken document was taken")
	}
	check(ev.next(), openfeature.ProviderError, "PARSE_ERROR")
	if err := m.Set([]byte(flagsV2)); err != nil {
		t.Fatal(err)
	}
	check(ev.next(), openfeature.ProviderReady, "")
	check(ev.next(), openfeature.ProviderConfigChange, "")
	m.Lost(errors.New("unplugged"))
	check(ev.next(), openfeature.ProviderStale, "")
	check(ev.next(), openfeature.ProviderError, "GENERAL")
}

// With a DEBUG logger, a provider that cannot reach its server says so at
// once, naming the address and the cause, and says nothing about serving
// flags it never had; the repeats are DEBUG. Each line names the source
// and what is served.
func TestLogsTellTheTruth(t *testing.T) {
	t.Parallel()
	var logs logtest.Buffer
	port := closedPort(t)
	p, err := NewProvider(WithoutEnv(), WithResolver(ResolverInProcess), WithHost("127.0.0.1"), WithPort(port),
		WithDeadline(2*time.Second), WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown()
	_ = p.Init(openfeature.EvaluationContext{})
	out := logs.String()
	addr := "127.0.0.1:" + strconv.Itoa(port)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.Contains(lines[0], "level=WARN") || !strings.Contains(lines[0], "cannot reach the sync server") ||
		!strings.Contains(lines[0], "connection refused") || !strings.Contains(lines[0], "retrying in") {
		t.Errorf("the first line is not the first failed attempt, with its cause and what comes next: %s", lines[0])
	}
	if n := strings.Count(out, "level=WARN"); n != 1 {
		t.Errorf("%d WARN lines for one outage, want 1:\n%s", n, out)
	}
	if !strings.Contains(out, "level=DEBUG msg=\"reconnect failed\"") {
		t.Errorf("no DEBUG line for the repeated attempts:\n%s", out)
	}
	for _, line := range lines {
		if !strings.Contains(line, "source="+addr) || !strings.Contains(line, `serving="nothing yet"`) {
			t.Errorf("a line does not name the source and what is served: %s", line)
		}
	}
	if strings.Contains(out, "last flags") {
		t.Errorf("a line speaks of last flags when none were loaded:\n%s", out)
	}
}

// Tracking events reach the function given with WithTracker, through
// OpenFeature's client.
func TestTrackReachesTheTracker(t *testing.T) {
	type tracked struct {
		name  string
		key   string
		value float64
	}
	got := make(chan tracked, 1)
	p, err := NewProvider(WithFlags([]byte(flagsV1)), WithTracker(func(_ context.Context, name string, ec openfeature.EvaluationContext, d openfeature.TrackingEventDetails) {
		got <- tracked{name, ec.TargetingKey(), d.Value()}
	}))
	if err != nil {
		t.Fatal(err)
	}
	api := isolated.NewAPI()
	defer api.Shutdown(context.Background())
	if err := api.SetProviderAndWait(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	api.NewClient().Track(context.Background(), "checkout", openfeature.NewEvaluationContext("user-1", nil), openfeature.NewTrackingEventDetails(42))
	select {
	case tr := <-got:
		if tr != (tracked{"checkout", "user-1", 42}) {
			t.Errorf("tracked %+v", tr)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the tracker was not called")
	}
	if _, err := NewProvider(WithFlags([]byte(flagsV1)), WithTracker(nil)); err == nil || !strings.Contains(err.Error(), "WithTracker") {
		t.Errorf("WithTracker(nil): %v", err)
	}
}

// The rpc resolver, which flagsnap refuses, is refused with what chose it,
// a variable, an option or nothing, and what to change there.
func TestRPCResolverSaysWhatChoseIt(t *testing.T) {
	const why = "the rpc resolver asks flagd for every evaluation, and flagsnap evaluates in-process"
	tests := []struct {
		name string
		env  map[string]string
		opts []Option
		want string
	}{
		{"the variable, applied by FromEnv after WithFile",
			map[string]string{EnvResolver: "rpc"}, []Option{WithFile("flags.json"), FromEnv()},
			"FLAGD_RESOLVER=rpc, which FromEnv applies after WithFile, replaced the flag file flags.json with the rpc resolver: " + why +
				"; set FLAGD_RESOLVER=file, or unset it, to read the file, or give FromEnv before WithFile to let WithFile win"},
		{"the variable with the file's variable",
			map[string]string{EnvResolver: "rpc", EnvOfflineFlagSourcePath: "flags.json"}, nil,
			"FLAGD_RESOLVER=rpc chose the rpc resolver for the flag file flags.json: " + why + "; set FLAGD_RESOLVER=file, or unset it, to read the file"},
		{"the variable alone",
			map[string]string{EnvResolver: "RPC"}, nil,
			"FLAGD_RESOLVER=rpc chose the rpc resolver: " + why +
				"; set FLAGD_RESOLVER=in-process to follow a sync server, or FLAGD_RESOLVER=file with FLAGD_OFFLINE_FLAG_SOURCE_PATH to read a flag file"},
		{"the option with a file",
			nil, []Option{WithResolver(ResolverRPC), WithFile("flags.json")},
			"WithResolver(ResolverRPC) was given with the flag file flags.json: " + why +
				"; drop WithResolver(ResolverRPC), or give WithResolver(ResolverFile), to read the file"},
		{"the option alone",
			nil, []Option{WithResolver(ResolverRPC)},
			"WithResolver(ResolverRPC) chose the rpc resolver: " + why +
				"; give WithResolver(ResolverInProcess) instead to follow a sync server, or WithFile to read a flag file"},
		{"a server's address without a resolver",
			nil, []Option{WithHost("flagd.internal")},
			"WithHost names a sync server, but no resolver was chosen, and flagd's default resolver is rpc: " + why +
				"; give WithResolver(ResolverInProcess) (or FLAGD_RESOLVER=in-process) to follow the sync server"},
		{"nothing",
			nil, nil,
			"no flag source was given, and flagd's default resolver is rpc: " + why +
				"; give WithFile (or FLAGD_OFFLINE_FLAG_SOURCE_PATH) to read a flag file, or WithResolver(ResolverInProcess) (or FLAGD_RESOLVER=in-process) to follow a sync server"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clearEnv(t, tt.env)
			_, err := NewProvider(tt.opts...)
			if err == nil || err.Error() != "flagsnap: "+tt.want {
				t.Errorf("got  %v\nwant flagsnap: %s", err, tt.want)
			}
		})
	}
}
