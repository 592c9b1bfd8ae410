package flagsnap

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap/internal/logtest"
)

// clearEnv unsets every FLAGD_* variable for the test, whatever the
// machine has set, and sets env.
func clearEnv(t *testing.T, env map[string]string) {
	t.Helper()
	for _, check := range envChecks {
		t.Setenv(check.name, "") // restored when the test ends
		os.Unsetenv(check.name)
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
}

func TestUnusedVariablesAreLogged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flags.json")
	if err := os.WriteFile(path, []byte(flagsV1), 0o600); err != nil {
		t.Fatal(err)
	}
	const sock = "/tmp/flagd-test.sock"
	tests := []struct {
		name string
		env  map[string]string
		opts []Option
		want []string // variable=NAME value=VALUE reason="..." of each line
	}{
		{"a server's variable with a file",
			map[string]string{EnvHost: "flagd.internal"}, []Option{WithFile(path)},
			[]string{`variable=FLAGD_HOST value=flagd.internal reason="the flags come from the flag file ` + path + `, which does not read it"`}},
		{"a port an option overrides",
			map[string]string{EnvPort: "9000"}, []Option{WithResolver(ResolverInProcess), WithPort(8016)},
			[]string{`variable=FLAGD_PORT value=9000 reason="an option overrides it: port 8016 is in force"`}},
		{"the sync port wins over the port",
			map[string]string{EnvPort: "9000", EnvSyncPort: "9001", EnvResolver: "in-process"}, nil,
			[]string{`variable=FLAGD_PORT value=9000 reason="FLAGD_SYNC_PORT is used instead, as the in-process resolver's port"`}},
		{"a socket path wins over a host",
			map[string]string{EnvHost: "flagd.internal"}, []Option{WithResolver(ResolverInProcess), WithSocketPath(sock)},
			[]string{`variable=FLAGD_HOST value=flagd.internal reason="the socket path ` + sock + ` is used instead"`}},
		{"a CA file without TLS",
			map[string]string{EnvServerCertPath: "/etc/ca.pem", EnvResolver: "in-process"}, nil,
			[]string{`variable=FLAGD_SERVER_CERT_PATH value=/etc/ca.pem reason="TLS is off"`}},
		{"a deadline an option overrides",
			map[string]string{EnvDeadlineMs: "100"}, []Option{WithFile(path), WithDeadline(250 * time.Millisecond)},
			[]string{`variable=FLAGD_DEADLINE_MS value=100 reason="an option overrides it: 250ms is in force"`}},
		{"a resolver the options replace, and its server's variables",
			map[string]string{EnvResolver: "in-process", EnvSourceSelector: "flagSetId=shop"}, []Option{WithFile(path)},
			[]string{
				`variable=FLAGD_RESOLVER value=in-process reason="the options chose the flag file ` + path + `"`,
				`variable=FLAGD_SOURCE_SELECTOR value="flagSetId=shop" reason="the flags come from the flag file ` + path + `, which does not read it"`,
			}},
		{"a flag file with flags in memory",
			map[string]string{EnvOfflineFlagSourcePath: path, EnvOfflinePollMs: "100"}, []Option{WithFlags([]byte(flagsV1))},
			[]string{
				`variable=FLAGD_OFFLINE_FLAG_SOURCE_PATH value=` + path + ` reason="the flags come from the flags given with WithFlags, which does not read it"`,
				`variable=FLAGD_OFFLINE_POLL_MS value=100 reason="the flags come from the flags given with WithFlags, which does not read it"`,
			}},
		{"a server's variables and a flag file with a URL",
			map[string]string{EnvHost: "flagd.internal", EnvOfflineFlagSourcePath: path, EnvResolver: "in-process"}, []Option{WithURL("http://127.0.0.1:1/flags.json")},
			[]string{
				`variable=FLAGD_RESOLVER value=in-process reason="the options chose the URL http://127.0.0.1:1/flags.json"`,
				`variable=FLAGD_OFFLINE_FLAG_SOURCE_PATH value=` + path + ` reason="the flags come from the URL http://127.0.0.1:1/flags.json, which does not read it"`,
				`variable=FLAGD_HOST value=flagd.internal reason="the flags come from the URL http://127.0.0.1:1/flags.json, which does not read it"`,
			}},
		{"an override file an option replaces",
			map[string]string{EnvOverrideFile: "/etc/flags/override.json"}, []Option{WithFile(path), WithOverrideFile(path)},
			[]string{`variable=FLAGSNAP_OVERRIDE_FILE value=/etc/flags/override.json reason="an option overrides it: WithOverrideFile or WithOverrideSource replaces it"`}},
		{"every variable in force",
			map[string]string{EnvResolver: "in-process", EnvHost: "flagd.internal", EnvPort: "9000", EnvDeadlineMs: "100"}, nil, nil},
		{"FromEnv given last: the variables win",
			map[string]string{EnvResolver: "in-process", EnvPort: "9000"}, []Option{WithPort(8016), FromEnv()}, nil},
		{"WithoutEnv: the variables are not read",
			map[string]string{EnvHost: "flagd.internal"}, []Option{WithoutEnv(), WithFile(path)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clearEnv(t, tt.env)
			var logs logtest.Buffer
			p, err := NewProvider(append(tt.opts, WithLogger(logs.Logger()))...)
			if err != nil {
				t.Fatal(err)
			}
			lines := logs.Count(`level=INFO msg="environment variable not used"`)
			if lines != len(tt.want) {
				t.Errorf("%d lines, want %d:\n%s", lines, len(tt.want), logs.String())
			}
			for _, w := range tt.want {
				if logs.Count(`msg="environment variable not used" `+w+" ") != 1 {
					t.Errorf("no line %s:\n%s", w, logs.String())
				}
			}
			if p.cfg.Resolver == ResolverFile {
				// Logged once, when the provider is built.
				if err := p.Init(openfeature.EvaluationContext{}); err != nil {
					t.Fatal(err)
				}
				p.Shutdown()
				if n := logs.Count(`msg="environment variable not used"`); n != lines {
					t.Errorf("%d lines after Init, %d before", n, lines)
				}
			}
		})
	}
}

// The first flag set says, once and at INFO, where the flags come from,
// how many there are and how they are obtained.
func TestFirstLoadIsLogged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flags.json")
	if err := os.WriteFile(path, []byte(flagsV1), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opts []Option
		want string
	}{
		{"file", []Option{WithFile(path)}, `flags=3 resolver=file source=` + path + ` `},
		{"memory", []Option{WithFlags([]byte(flagsV2))}, `flags=3 resolver=memory source=memory `},
		{"a source of one's own", []Option{WithSource(newFakeSource())}, `flags=3 resolver=custom source=*flagsnap.fakeSource `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs logtest.Buffer
			p, err := NewProvider(append(tt.opts, WithoutEnv(), WithLogger(logs.Logger()))...)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Shutdown()
			if src, ok := p.cfg.source.(*fakeSource); ok {
				go func() { src.sink(t).Update(update(flagsV1)) }()
			}
			if err := p.Init(openfeature.EvaluationContext{}); err != nil {
				t.Fatal(err)
			}
			eventually(t, "the line", func() bool { return logs.Count(`msg="flags loaded"`) == 1 })
			if n := logs.Count(`level=INFO msg="flags loaded" `); n != 1 || !strings.Contains(logs.String(), tt.want) {
				t.Errorf("want one INFO line with %s:\n%s", tt.want, logs.String())
			}
		})
	}
}

// The end of the grace period, when a lost source turns ERROR, is logged
// as the ERROR it is, and not only sent as an event.
func TestGracePeriodEndIsLogged(t *testing.T) {
	var logs logtest.Buffer
	_, src, ev := started(t, WithRetryGracePeriod(50*time.Millisecond), WithLogger(logs.Logger()))
	src.sink(t).Lost(errorString("file deleted"))
	if e := ev.next(); e.EventType != openfeature.ProviderStale {
		t.Fatalf("got %s", e.EventType)
	}
	if e := ev.next(); e.EventType != openfeature.ProviderError {
		t.Fatalf("got %s", e.EventType)
	}
	want := `level=ERROR msg="flag source still lost after the grace period of 50ms: ERROR now; evaluations answer from the flags in force" error="file deleted"`
	if logs.Count(want) != 1 {
		t.Errorf("want %s in:\n%s", want, logs.String())
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }
