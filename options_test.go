package flagsnap

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/flagsnap/flagsnap/evaluator"
	"github.com/flagsnap/flagsnap/fractional"
)

func TestInvalidOptionsAreErrors(t *testing.T) {
	src := newFakeSource()
	inProcess := WithResolver(ResolverInProcess)
	cases := []struct {
		name string
		opts []Option
		want string
	}{
		{"rpc resolver by default", nil, "rpc resolver"},
		{"rpc resolver asked for", []Option{WithResolver(ResolverRPC), WithHost("flagd")}, "rpc resolver"},
		{"unknown resolver", []Option{WithResolver("remote")}, `unknown resolver "remote"`},
		{"file resolver without a file", []Option{WithResolver(ResolverFile)}, "needs a flag file"},
		{"empty path", []Option{WithFile("")}, "path is empty"},
		{"nil source", []Option{WithSource(nil)}, "source is nil"},
		{"negative poll", []Option{WithFile("f"), WithFilePollInterval(-time.Second)}, "WithFilePollInterval must not be negative"},
		{"zero poll", []Option{WithFile("f"), WithFilePollInterval(0)}, "WithFilePollInterval must be positive"},
		{"negative deadline", []Option{WithFile("f"), WithDeadline(-1)}, "WithDeadline must not be negative"},
		{"zero deadline", []Option{WithFile("f"), WithDeadline(0)}, "WithDeadline must be positive"},
		{"negative grace", []Option{WithFile("f"), WithRetryGracePeriod(-time.Second)}, "WithRetryGracePeriod must not be negative"},
		{"bad version", []Option{WithFile("f"), WithFractionalVersion(9)}, "unknown version 9"},
		{"nil enricher", []Option{WithFile("f"), WithContextEnricher(nil)}, "function is nil"},
		{"nil logger", []Option{WithFile("f"), WithLogger(nil)}, "logger is nil"},
		{"backoff max below initial", []Option{inProcess, WithRetryBackoff(2*time.Second, time.Second)}, "shorter than the initial"},
		{"zero backoff", []Option{inProcess, WithRetryBackoff(0, time.Second)}, "must be positive"},
		{"bad port", []Option{inProcess, WithPort(70000)}, "not a TCP port"},
		{"empty host", []Option{inProcess, WithHost("")}, "host is empty"},
		{"empty socket", []Option{inProcess, WithSocketPath("")}, "path is empty"},
		{"bad envoy target", []Option{inProcess, WithTargetURI("envoy://localhost:9211")}, "envoy://host:port/authority"},
		{"empty target", []Option{inProcess, WithTargetURI("")}, "URI is empty"},
		{"negative stream deadline", []Option{inProcess, WithStreamDeadline(-1)}, "must not be negative"},
		{"negative keepalive", []Option{inProcess, WithKeepAlive(-1)}, "must not be negative"},
		{"empty cache file", []Option{inProcess, WithCacheFile("")}, "path is empty"},
		{"unknown status code name", []Option{inProcess, WithFatalStatusCodeNames("PERMISSION_DENIED", "NOPE")}, `"NOPE" is not a gRPC status code`},
		{"invalid status code", []Option{inProcess, WithFatalStatusCodes(codes.Code(99))}, "not a gRPC status code"},
		{"all reported", []Option{WithFile(""), WithDeadline(-1)}, "path is empty"},
		{"URL without a scheme", []Option{WithURL("127.0.0.1:8016/flags.json")}, `WithURL: "127.0.0.1:8016/flags.json" is not an http:// or https:// URL: did you mean http://127.0.0.1:8016/flags.json?`},
		{"URL with a host for a scheme", []Option{WithURL("localhost:8016/flags.json")}, "did you mean http://localhost:8016/flags.json?"},
		{"URL of another scheme", []Option{WithURL("ftp://example.com/flags.json")}, `WithURL: "ftp://example.com/flags.json" is not an http:// or https:// URL`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := NewProvider(c.opts...)
			if p != nil || err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, %v; want an error containing %q", p, err, c.want)
			}
		})
	}
	_, err := NewProvider(WithFile(""), WithDeadline(-1))
	if !strings.Contains(err.Error(), "WithDeadline") {
		t.Errorf("only the first problem reported: %v", err)
	}
	if _, err := NewProvider(WithSource(src)); err != nil {
		t.Errorf("a custom source needs no resolver: %v", err)
	}
}

func TestWithMaxMessageSize(t *testing.T) {
	c, err := NewConfig(WithMaxMessageSize(64 << 20))
	if err != nil || c.MaxMessageSize != 64<<20 {
		t.Errorf("WithMaxMessageSize(64 MiB): %d, %v", c.MaxMessageSize, err)
	}
	for _, bad := range []int{0, -1} {
		if _, err := NewConfig(WithMaxMessageSize(bad)); err == nil || !strings.Contains(err.Error(), "WithMaxMessageSize") {
			t.Errorf("WithMaxMessageSize(%d): %v, want an error naming the option", bad, err)
		}
	}
}

func TestDefaults(t *testing.T) {
	c, err := NewConfig()
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Resolver: ResolverRPC, Host: "localhost", Port: 8013, Deadline: 500 * time.Millisecond,
		StreamDeadline: 600 * time.Second, RetryBackoff: time.Second, RetryBackoffMax: 5 * time.Second,
		RetryGracePeriod: 10 * time.Second, OfflinePollInterval: 5 * time.Second, FractionalVersion: fractional.V2,
		MaxMessageSize: 1 << 30, PollInterval: 5 * time.Second,
	}
	if !sameConfig(c, want) {
		t.Errorf("defaults:\n got %+v\nwant %+v", c, want)
	}
	c, err = NewConfig(WithResolver(ResolverInProcess))
	if err != nil || c.Port != 8015 {
		t.Errorf("in-process port %d, %v", c.Port, err)
	}
	c, err = NewConfig(WithFile("flags.json"))
	if err != nil || c.Resolver != ResolverFile || c.OfflineFlagSourcePath != "flags.json" {
		t.Errorf("a file alone: %+v, %v", c, err)
	}
}

// TestEvaluatorBucketsAsTheProvider: a flag set loaded without the provider
// (flagsnap eval, a test) must bucket users as the provider does.
func TestEvaluatorBucketsAsTheProvider(t *testing.T) {
	set, err := evaluator.Load([]byte(`{"flags": {"f": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	x, err := set.Explain("f", nil)
	if err != nil {
		t.Fatal(err)
	}
	if x.FractionalVersion != DefaultFractionalVersion {
		t.Errorf("evaluator.Load buckets with %v by default, the provider with %v", x.FractionalVersion, DefaultFractionalVersion)
	}
}

func TestOptionsSetTheirFields(t *testing.T) {
	c, err := NewConfig(
		WithResolver(ResolverInProcess), WithHost("flagd"), WithPort(9000), WithSocketPath("/run/flagd.sock"),
		WithTargetURI("dns:///flagd:9000"), WithTLS("/etc/ca.pem"), WithSelector("app=shop"), WithProviderID("shop-1"),
		WithDeadline(2*time.Second), WithStreamDeadline(0), WithRetryBackoff(time.Second, 4*time.Second),
		WithRetryGracePeriod(7*time.Second), WithKeepAlive(30*time.Second),
		WithFatalStatusCodes(codes.PermissionDenied), WithCacheFile("/var/cache/flags.json"),
		WithFractionalVersion(fractional.V3), WithStrictValidation(),
	)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Resolver: ResolverInProcess, Host: "flagd", Port: 9000, TargetURI: "dns:///flagd:9000", TLS: true,
		SocketPath: "/run/flagd.sock", CertPath: "/etc/ca.pem", Deadline: 2 * time.Second, StreamDeadline: 0,
		RetryBackoff: time.Second, RetryBackoffMax: 4 * time.Second, RetryGracePeriod: 7 * time.Second,
		KeepAlive: 30 * time.Second, Selector: "app=shop", ProviderID: "shop-1", OfflinePollInterval: DefaultFilePollInterval,
		FatalStatusCodes: []string{"PERMISSION_DENIED"}, CacheFile: "/var/cache/flags.json",
		FractionalVersion: fractional.V3, StrictValidation: true, MaxMessageSize: DefaultMaxMessageSize,
		PollInterval: DefaultPollInterval,
	}
	if !sameConfig(c, want) {
		t.Errorf("options:\n got %+v\nwant %+v", c, want)
	}
	c, err = NewConfig(WithFile("flags.json"))
	if err != nil || c.OfflineFlagSourcePath != "flags.json" {
		t.Errorf("WithFile: %+v, %v", c, err)
	}
}

func sameConfig(a, b Config) bool {
	return reflect.DeepEqual(a, b)
}

func TestResolverRules(t *testing.T) {
	cases := []struct {
		name string
		opts []Option
		want Resolver
	}{
		{"in-process with a file becomes file", []Option{WithResolver(ResolverInProcess), WithFile("f")}, ResolverFile},
		{"rpc with a file stays rpc", []Option{WithResolver(ResolverRPC), WithFile("f")}, ResolverRPC},
		{"file with a file", []Option{WithResolver(ResolverFile), WithFile("f")}, ResolverFile},
		{"a name in capitals is the same resolver", []Option{WithResolver("IN-PROCESS"), WithFile("f")}, ResolverFile},
		{"a name in capitals without a file", []Option{WithResolver(" In-Process ")}, ResolverInProcess},
	}
	for _, c := range cases {
		cfg, err := NewConfig(c.opts...)
		if err != nil || cfg.Resolver != c.want {
			t.Errorf("%s: %q %v", c.name, cfg.Resolver, err)
		}
	}
	for _, name := range []string{"in-process", "IN-PROCESS", "rpc", "RPC", "file", "File"} {
		if _, err := ParseResolver(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestEnvironmentVariables(t *testing.T) {
	t.Setenv(EnvResolver, "IN-PROCESS")
	t.Setenv(EnvHost, "flagd.internal")
	t.Setenv(EnvPort, "9000")
	t.Setenv(EnvTargetURI, "dns:///flagd:8015")
	t.Setenv(EnvTLS, "True")
	t.Setenv(EnvSocketPath, "/run/flagd.sock")
	t.Setenv(EnvServerCertPath, "/etc/ca.pem")
	t.Setenv(EnvDeadlineMs, "1500")
	t.Setenv(EnvStreamDeadlineMs, "0")
	t.Setenv(EnvRetryBackoffMs, "200")
	t.Setenv(EnvRetryBackoffMaxMs, "4000")
	t.Setenv(EnvRetryGracePeriod, "3")
	t.Setenv(EnvKeepAliveTimeMs, "30000")
	t.Setenv(EnvSourceSelector, "app=shop")
	t.Setenv(EnvProviderID, "shop-1")
	t.Setenv(EnvOfflinePollMs, "250")
	t.Setenv(EnvFatalStatusCodes, "PERMISSION_DENIED, unauthenticated")
	t.Setenv(EnvCacheFile, "/var/cache/flags.json")
	t.Setenv(EnvFractionalVersion, "V3")
	c, err := NewConfig()
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Resolver: ResolverInProcess, Host: "flagd.internal", Port: 9000, TargetURI: "dns:///flagd:8015", TLS: true,
		SocketPath: "/run/flagd.sock", CertPath: "/etc/ca.pem", Deadline: 1500 * time.Millisecond, StreamDeadline: 0,
		RetryBackoff: 200 * time.Millisecond, RetryBackoffMax: 4 * time.Second, RetryGracePeriod: 3 * time.Second,
		KeepAlive: 30 * time.Second, Selector: "app=shop", ProviderID: "shop-1", OfflinePollInterval: 250 * time.Millisecond,
		FatalStatusCodes: []string{"PERMISSION_DENIED", "unauthenticated"}, CacheFile: "/var/cache/flags.json",
		FractionalVersion: fractional.V3, MaxMessageSize: DefaultMaxMessageSize, PollInterval: DefaultPollInterval,
	}
	if !sameConfig(c, want) {
		t.Errorf("from the environment:\n got %+v\nwant %+v", c, want)
	}

	// Explicit options win over the variables...
	c, err = NewConfig(WithHost("mine"), WithDeadline(time.Second), WithFractionalVersion(fractional.V1), WithFatalStatusCodes(codes.Internal))
	if err != nil {
		t.Fatal(err)
	}
	if c.Host != "mine" || c.Deadline != time.Second || c.FractionalVersion != fractional.V1 || !slices.Equal(c.FatalStatusCodes, []string{"INTERNAL"}) || c.RetryGracePeriod != 3*time.Second {
		t.Errorf("explicit options: %+v", c)
	}
	// ...unless FromEnv comes after them.
	c, err = NewConfig(WithHost("mine"), WithDeadline(time.Second), FromEnv())
	if err != nil {
		t.Fatal(err)
	}
	if c.Host != "flagd.internal" || c.Deadline != 1500*time.Millisecond {
		t.Errorf("FromEnv last: %+v", c)
	}
	// NewProvider accepts the same (the codes are real, the resolver
	// in-process), once the CA file is one that exists.
	if _, err := NewProvider(); err == nil || !strings.Contains(err.Error(), "/etc/ca.pem") {
		t.Errorf("a missing CA file: %v", err)
	}
	t.Setenv(EnvServerCertPath, "")
	p, err := NewProvider()
	if err != nil {
		t.Fatal(err)
	}
	want.CertPath = ""
	got := p.Config()
	if !sameConfig(got, want) {
		t.Errorf("provider config %+v", got)
	}
	got.FatalStatusCodes[0] = "CHANGED"
	if c := p.Config(); c.FatalStatusCodes[0] != "PERMISSION_DENIED" {
		t.Errorf("Config shares its status codes with the provider: %v", c.FatalStatusCodes)
	}
}

func TestSyncPort(t *testing.T) {
	t.Setenv(EnvPort, "8888")
	t.Setenv(EnvSyncPort, "9999")
	in := WithResolver(ResolverInProcess)
	cases := []struct {
		name string
		opts []Option
		port int
	}{
		{"in-process: the sync port wins over FLAGD_PORT", []Option{in}, 9999},
		{"rpc: the sync port does not apply", []Option{WithResolver(ResolverRPC)}, 8888},
		{"an explicit port wins", []Option{in, WithPort(1234)}, 1234},
		{"unless FromEnv comes last", []Option{in, WithPort(1234), FromEnv()}, 9999},
		{"an explicit port after FromEnv wins", []Option{in, FromEnv(), WithPort(1234)}, 1234},
		{"rpc: an explicit port wins over FLAGD_PORT", []Option{WithResolver(ResolverRPC), WithPort(1234)}, 1234},
		{"file: FLAGD_PORT is kept", []Option{WithFile("f")}, 8888},
	}
	for _, c := range cases {
		cfg, err := NewConfig(c.opts...)
		if err != nil || cfg.Port != c.port {
			t.Errorf("%s: port %d, %v", c.name, cfg.Port, err)
		}
	}
}

func TestUnparsableVariablesNameTheVariable(t *testing.T) {
	cases := map[string]string{
		EnvResolver:              "remote",
		EnvHost:                  "",
		EnvPort:                  "abc",
		EnvSyncPort:              "70000",
		EnvTargetURI:             "envoy://nohost",
		EnvTLS:                   "yes please",
		EnvDeadlineMs:            "-5",
		EnvStreamDeadlineMs:      "soon",
		EnvRetryBackoffMs:        "0",
		EnvRetryBackoffMaxMs:     "1.5",
		EnvRetryGracePeriod:      "1.5",
		EnvKeepAliveTimeMs:       "-1",
		EnvOfflinePollMs:         "fast",
		EnvFractionalVersion:     "v4",
		EnvOfflineFlagSourcePath: "",
		EnvCacheFile:             "",
	}
	for name, value := range cases {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, value)
			_, err := NewProvider(WithFile("flags.json"))
			if err == nil || !strings.Contains(err.Error(), name) {
				t.Fatalf("%s=%q: %v", name, value, err)
			}
		})
	}
	t.Run(EnvFatalStatusCodes, func(t *testing.T) {
		t.Setenv(EnvFatalStatusCodes, "PERMISSION_DENIED,NOT_A_CODE")
		if _, err := NewConfig(); err != nil {
			t.Errorf("the configuration keeps the names as given: %v", err)
		}
		_, err := NewProvider(WithResolver(ResolverInProcess))
		if err == nil || !strings.Contains(err.Error(), EnvFatalStatusCodes) || !strings.Contains(err.Error(), "NOT_A_CODE") {
			t.Fatalf("NewProvider: %v", err)
		}
	})
	// A number of units past what a time.Duration holds would wrap around
	// to a negative duration.
	tooLarge := []struct{ name, value, want string }{
		{EnvDeadlineMs, "9223372036854775807", "FLAGD_DEADLINE_MS=\"9223372036854775807\" is too large: at most 9223372036854"},
		{EnvRetryGracePeriod, "9223372037", "FLAGD_RETRY_GRACE_PERIOD=\"9223372037\" is too large: at most 9223372036"},
	}
	for _, c := range tooLarge {
		t.Run(c.name+" too large", func(t *testing.T) {
			t.Setenv(c.name, c.value)
			_, err := NewProvider(WithFile("flags.json"))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("%v, want %q", err, c.want)
			}
		})
	}
	t.Run("the largest grace period is allowed", func(t *testing.T) {
		t.Setenv(EnvRetryGracePeriod, "9223372036")
		c, err := NewConfig()
		if err != nil || c.RetryGracePeriod != 9223372036*time.Second {
			t.Fatalf("%+v %v", c, err)
		}
	})
	t.Run("zero grace period is allowed", func(t *testing.T) {
		t.Setenv(EnvRetryGracePeriod, "0")
		c, err := NewConfig()
		if err != nil || c.RetryGracePeriod != 0 {
			t.Fatalf("%+v %v", c, err)
		}
	})
}

func TestStatusCodeNames(t *testing.T) {
	got, err := parseStatusCodes([]string{"permission_denied", " CANCELED ", "CANCELLED"})
	want := []codes.Code{codes.PermissionDenied, codes.Canceled, codes.Canceled}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("got %v, %v; want %v", got, err, want)
	}
	if _, err := parseStatusCodes([]string{"OK"}); err == nil {
		t.Error("OK is taken as a fatal status")
	}
}

// WithoutEnv keeps the variables out, bad ones included, wherever it
// stands in the list; FromEnv after it brings them back.
func TestWithoutEnv(t *testing.T) {
	t.Setenv(EnvHost, "flagd.internal")
	t.Setenv("FLAGD_PORT", "not-a-port")
	if _, err := NewConfig(); err == nil {
		t.Fatal("a bad FLAGD_PORT was not an error; the test proves nothing")
	}
	for _, opts := range [][]Option{
		{WithoutEnv(), WithHost("mine")},
		{WithHost("mine"), WithoutEnv()},
	} {
		c, err := NewConfig(opts...)
		if err != nil {
			t.Fatalf("WithoutEnv: %v", err)
		}
		if c.Host != "mine" {
			t.Errorf("WithoutEnv: %+v", c)
		}
	}
	if c, err := NewConfig(WithoutEnv()); err != nil || c.Host != "localhost" {
		t.Errorf("WithoutEnv alone: %+v, %v", c, err)
	}
	if _, err := NewConfig(WithoutEnv(), FromEnv()); err == nil {
		t.Error("FromEnv after WithoutEnv did not apply the variables")
	}
}

// Once the options choose where the flags come from, a variable that would
// choose another source is ignored, and the variables of the same kind
// fill what the options leave unset; FromEnv applies the variables at its
// position, the choice of source included.
func TestOptionsChooseTheSourceOverVariables(t *testing.T) {
	const file = "/etc/flagd/flags.json"
	doc := []byte(flagsV1)
	cases := []struct {
		name         string
		env          map[string]string
		opts         []Option
		resolver     Resolver
		path         string
		check        func(Config) bool // more to check, or nil
		memoryServes bool              // WithFlags or WithSource stays in force
	}{
		{"in-process and a port; a file in the environment", map[string]string{EnvOfflineFlagSourcePath: file},
			[]Option{WithResolver(ResolverInProcess), WithPort(8015)}, ResolverInProcess, "", nil, false},
		{"in-process alone; a file in the environment", map[string]string{EnvOfflineFlagSourcePath: file},
			[]Option{WithResolver(ResolverInProcess)}, ResolverInProcess, "", nil, false},
		{"a host; in-process and a file in the environment", map[string]string{EnvResolver: "in-process", EnvOfflineFlagSourcePath: file},
			[]Option{WithHost("flagd")}, ResolverInProcess, "", func(c Config) bool { return c.Host == "flagd" }, false},
		{"a file; rpc in the environment", map[string]string{EnvResolver: "rpc"},
			[]Option{WithFile("flags.json")}, ResolverFile, "flags.json", nil, false},
		{"a file; in-process and a server in the environment", map[string]string{EnvResolver: "in-process", EnvHost: "flagd.internal", EnvTargetURI: "dns:///flagd:8015"},
			[]Option{WithFile("flags.json")}, ResolverFile, "flags.json", nil, false},
		{"the file resolver; in-process and a file in the environment", map[string]string{EnvResolver: "in-process", EnvOfflineFlagSourcePath: file},
			[]Option{WithResolver(ResolverFile)}, ResolverFile, file, nil, false},
		{"a file takes the poll interval from the environment", map[string]string{EnvOfflinePollMs: "250"},
			[]Option{WithFile("flags.json")}, ResolverFile, "flags.json", func(c Config) bool { return c.OfflinePollInterval == 250*time.Millisecond }, false},
		{"a port takes the host and resolver from the environment", map[string]string{EnvHost: "flagd.internal", EnvResolver: "in-process"},
			[]Option{WithPort(9000)}, ResolverInProcess, "", func(c Config) bool { return c.Host == "flagd.internal" && c.Port == 9000 }, false},
		{"flags in memory; the file resolver and a file in the environment", map[string]string{EnvResolver: "file", EnvOfflineFlagSourcePath: file},
			[]Option{WithFlags(doc)}, "", "", nil, true},
		{"flags in memory; the file resolver without a file in the environment", map[string]string{EnvResolver: "file"},
			[]Option{WithFlags(doc)}, "", "", nil, true},
		{"a source; rpc in the environment", map[string]string{EnvResolver: "rpc"},
			[]Option{WithSource(newFakeSource())}, "", "", nil, true},
		{"FromEnv last: a file in the environment replaces a server", map[string]string{EnvOfflineFlagSourcePath: file},
			[]Option{WithResolver(ResolverInProcess), WithPort(8015), FromEnv()}, ResolverFile, file, nil, false},
		{"FromEnv last: a server in the environment replaces a file", map[string]string{EnvResolver: "in-process", EnvHost: "flagd.internal"},
			[]Option{WithFile("flags.json"), FromEnv()}, ResolverInProcess, "", func(c Config) bool { return c.Host == "flagd.internal" }, false},
		{"FromEnv last: a file in the environment replaces flags in memory", map[string]string{EnvOfflineFlagSourcePath: file},
			[]Option{WithFlags(doc), FromEnv()}, ResolverFile, file, nil, false},
		{"FromEnv last: a host in the environment keeps the file", map[string]string{EnvHost: "flagd.internal"},
			[]Option{WithFile("flags.json"), FromEnv()}, ResolverFile, "flags.json", nil, false},
		{"a server after FromEnv replaces the file in the environment", map[string]string{EnvOfflineFlagSourcePath: file},
			[]Option{FromEnv(), WithResolver(ResolverInProcess), WithPort(8015)}, ResolverInProcess, "", nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for name, v := range c.env {
				t.Setenv(name, v)
			}
			got, err := NewConfig(c.opts...)
			if err != nil {
				t.Fatal(err)
			}
			if got.Resolver != c.resolver || got.OfflineFlagSourcePath != c.path || (c.check != nil && !c.check(got)) {
				t.Errorf("got resolver %q, file %q, config %+v; want resolver %q, file %q", got.Resolver, got.OfflineFlagSourcePath, got, c.resolver, c.path)
			}
			internal, _ := buildConfig(c.opts)
			if serves := internal.flags != nil || internal.source != nil; serves != c.memoryServes {
				t.Errorf("flags in memory in force: %v, want %v", serves, c.memoryServes)
			}
			p, err := NewProvider(c.opts...)
			if err != nil {
				t.Fatalf("NewProvider: %v", err)
			}
			if pc := p.Config(); !sameConfig(pc, got) {
				t.Errorf("Config() %+v differs from NewConfig %+v", pc, got)
			}
		})
	}
}

// Options that choose different sources are an error naming both, from
// NewConfig and NewProvider alike.
func TestContradictoryOptions(t *testing.T) {
	doc := []byte(flagsV1)
	src := newFakeSource()
	cases := []struct {
		opts []Option
		a, b string
	}{
		{[]Option{WithFile("f"), WithFlags(doc)}, "WithFile", "WithFlags"},
		{[]Option{WithFlags(doc), WithFile("f")}, "WithFlags", "WithFile"},
		{[]Option{WithFile("f"), WithSource(src)}, "WithFile", "WithSource"},
		{[]Option{WithFlags(doc), WithSource(src)}, "WithFlags", "WithSource"},
		{[]Option{WithSource(src), WithFlags(doc)}, "WithSource", "WithFlags"},
		{[]Option{WithFile("f"), WithHost("flagd")}, "WithFile", "WithHost"},
		{[]Option{WithFile("f"), WithPort(8015)}, "WithFile", "WithPort"},
		{[]Option{WithFile("f"), WithSocketPath("/run/flagd.sock")}, "WithFile", "WithSocketPath"},
		{[]Option{WithFile("f"), WithTargetURI("dns:///flagd:8015")}, "WithFile", "WithTargetURI"},
		{[]Option{WithTLS(""), WithFile("f")}, "WithTLS", "WithFile"},
		{[]Option{WithResolver(ResolverFile), WithFile("f"), WithHost("flagd")}, "WithResolver(ResolverFile)", "WithHost"},
		{[]Option{WithResolver(ResolverFile), WithFile("f"), WithPort(8015)}, "WithResolver(ResolverFile)", "WithPort"},
		{[]Option{WithResolver(ResolverInProcess), WithFile("f"), WithPort(8015)}, "WithFile", "WithPort"},
		{[]Option{WithResolver(ResolverInProcess), WithFlags(doc)}, "WithResolver(ResolverInProcess)", "WithFlags"},
		{[]Option{WithSource(src), WithResolver(ResolverFile), WithFile("f")}, "WithSource", "WithResolver(ResolverFile)"},
		{[]Option{WithSource(src), WithPort(8015)}, "WithSource", "WithPort"},
	}
	for _, c := range cases {
		want := c.a + " and " + c.b + " contradict each other"
		opts := append([]Option{WithoutEnv()}, c.opts...)
		if _, err := NewConfig(opts...); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("NewConfig(%s, %s): %v; want an error containing %q", c.a, c.b, err, want)
		}
		if p, err := NewProvider(opts...); p != nil || err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("NewProvider(%s, %s): %v; want an error containing %q", c.a, c.b, err, want)
		}
	}
	// A file with a server named three ways is one contradiction.
	_, err := NewConfig(WithoutEnv(), WithFile("f"), WithHost("flagd"), WithPort(8015), WithTLS(""))
	if err == nil || strings.Count(err.Error(), "contradict") != 1 {
		t.Errorf("a file with a host, a port and TLS: %v; want one contradiction", err)
	}
}

// What flagd's providers accept together stays accepted, and so do the
// options that choose no source.
func TestCompatibleOptions(t *testing.T) {
	doc := []byte(flagsV1)
	cases := []struct {
		name     string
		opts     []Option
		resolver Resolver
	}{
		{"in-process with a file is the file resolver", []Option{WithResolver(ResolverInProcess), WithFile("f")}, ResolverFile},
		{"a file with the file resolver", []Option{WithFile("f"), WithResolver(ResolverFile)}, ResolverFile},
		{"a socket, a target and a host and port", []Option{WithResolver(ResolverInProcess), WithSocketPath("/run/flagd.sock"),
			WithTargetURI("dns:///flagd:8015"), WithHost("flagd"), WithPort(8015), WithTLS("")}, ResolverInProcess},
		{"a file and options that tune sources", []Option{WithFile("f"), WithFilePollInterval(time.Second),
			WithCacheFile("cache.json"), WithRetryBackoff(time.Second, 2*time.Second), WithProviderID("shop-1")}, ResolverFile},
		{"a source and a cache file", []Option{WithSource(newFakeSource()), WithCacheFile("cache.json"), WithDeadline(time.Second)}, ""},
		{"WithFlags twice", []Option{WithFlags(doc), WithFlags(doc)}, ""},
		{"a later resolver replaces an earlier one", []Option{WithResolver(ResolverFile), WithResolver(ResolverInProcess), WithHost("flagd")}, ResolverInProcess},
	}
	for _, c := range cases {
		got, err := NewConfig(append([]Option{WithoutEnv()}, c.opts...)...)
		if err != nil || got.Resolver != c.resolver {
			t.Errorf("%s: resolver %q, %v; want %q", c.name, got.Resolver, err, c.resolver)
		}
	}
}

// An option that the source settled on does not read is an error naming
// the option and the source, as a contradiction is: a selector given with
// a file would filter nothing.
func TestOptionsTheSourceDoesNotRead(t *testing.T) {
	cases := []struct {
		name string
		opts []Option
		want string
	}{
		{"a selector with a file", []Option{WithFile("f"), WithSelector("app=shop")},
			"WithSelector does not apply to the flags' source, a flag file: only a sync server reads it; drop it"},
		{"a selector with a URL", []Option{WithURL("http://h/f"), WithSelector("app=shop")}, "WithSelector does not apply to the flags' source, a URL"},
		{"a URL's poll interval with a file", []Option{WithFile("f"), WithPollInterval(time.Second)},
			"WithPollInterval does not apply to the flags' source, a flag file: only a URL reads it"},
		{"a header with a file", []Option{WithFile("f"), WithHTTPHeader("X-Team", "shop")}, "WithHTTPHeader does not apply to the flags' source, a flag file"},
		{"a file's poll interval with a URL", []Option{WithURL("http://h/f"), WithFilePollInterval(time.Second)},
			"WithFilePollInterval does not apply to the flags' source, a URL: only a flag file reads it"},
		{"a selector with flags in memory", []Option{WithFlags([]byte(flagsV1)), WithSelector("s")}, "flags in memory or a source of your own"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewProvider(append([]Option{WithoutEnv()}, c.opts...)...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("NewProvider: %v, want %q", err, c.want)
			}
		})
	}
	// Each with the source that reads it is fine.
	for _, opts := range [][]Option{
		{WithResolver(ResolverInProcess), WithSelector("app=shop")},
		{WithURL("http://h/f"), WithPollInterval(time.Second), WithHTTPHeader("X-Team", "shop")},
		{WithFile("f"), WithFilePollInterval(time.Second)},
	} {
		if _, err := NewConfig(append([]Option{WithoutEnv()}, opts...)...); err != nil {
			t.Errorf("NewConfig: %v", err)
		}
	}
}

// Config names no flagd resolver and no file when the flags are in memory.
func TestConfigOfFlagsInMemory(t *testing.T) {
	for name, opt := range map[string]Option{"WithFlags": WithFlags([]byte(flagsV1)), "WithSource": WithSource(newFakeSource())} {
		p, err := NewProvider(WithoutEnv(), opt)
		if err != nil {
			t.Fatal(err)
		}
		if c := p.Config(); c.Resolver != "" || c.OfflineFlagSourcePath != "" {
			t.Errorf("%s: resolver %q, file %q; want neither", name, c.Resolver, c.OfflineFlagSourcePath)
		}
	}
}
