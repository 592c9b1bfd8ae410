package flagsnap

import (
	"strings"
	"testing"
	"time"

	"github.com/flagsnap/flagsnap/fractional"
)

func TestInvalidOptionsAreErrors(t *testing.T) {
	src := newFakeSource()
	cases := []struct {
		name string
		opts []Option
		want string
	}{
		{"backoff max below initial", []Option{WithRetryBackoff(2*time.Second, time.Second)}, "shorter than the initial"},
		{"zero backoff", []Option{WithRetryBackoff(0, time.Second)}, "must be positive"},
		{"bad port", []Option{WithPort(70000)}, "not a TCP port"},
		{"empty host", []Option{WithHost("")}, "host is empty"},
		{"empty socket", []Option{WithSocketPath("")}, "path is empty"},
		{"bad envoy target", []Option{WithTargetURI("envoy://localhost:9211")}, "envoy://host:port/authority"},
		{"empty target", []Option{WithTargetURI("")}, "URI is empty"},
		{"negative stream deadline", []Option{WithStreamDeadline(-1)}, "must not be negative"},
		{"negative keepalive", []Option{WithKeepAlive(-1)}, "must not be negative"},
		{"empty cache file", []Option{WithCacheFile("")}, "path is empty"},
		{"empty path", []Option{WithFile("")}, "path is empty"},
		{"file and source", []Option{WithFile("flags.json"), WithSource(src)}, "exclusive"},
		{"nil source", []Option{WithSource(nil)}, "source is nil"},
		{"negative poll", []Option{WithFile("f"), WithFilePollInterval(-time.Second)}, "WithFilePollInterval must not be negative"},
		{"zero poll", []Option{WithFile("f"), WithFilePollInterval(0)}, "WithFilePollInterval must be positive"},
		{"negative deadline", []Option{WithFile("f"), WithDeadline(-1)}, "WithDeadline must not be negative"},
		{"negative grace", []Option{WithFile("f"), WithRetryGracePeriod(-time.Second)}, "WithRetryGracePeriod must not be negative"},
		{"bad version", []Option{WithFile("f"), WithFractionalVersion(9)}, "unknown version 9"},
		{"nil enricher", []Option{WithFile("f"), WithContextEnricher(nil)}, "function is nil"},
		{"nil logger", []Option{WithFile("f"), WithLogger(nil)}, "logger is nil"},
		{"all reported", []Option{WithFile(""), WithDeadline(-1)}, "path is empty"},
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
}

func TestEnvironmentVariables(t *testing.T) {
	t.Setenv(EnvOfflineFlagSourcePath, "/etc/flags.json")
	t.Setenv(EnvOfflinePollMs, "250")
	t.Setenv(EnvDeadlineMs, "1500")
	t.Setenv(EnvRetryGracePeriod, "3")
	t.Setenv(EnvFractionalVersion, "V3")
	p, err := NewProvider()
	if err != nil {
		t.Fatal(err)
	}
	c := p.cfg
	if c.filePath != "/etc/flags.json" || c.pollInterval != 250*time.Millisecond || c.deadline != 1500*time.Millisecond ||
		c.grace != 3*time.Second || c.version != fractional.V3 {
		t.Errorf("config from the environment: %+v", c)
	}
	// Explicit options win over the variables...
	p, err = NewProvider(WithFile("mine.json"), WithDeadline(time.Second), WithFractionalVersion(fractional.V1))
	if err != nil {
		t.Fatal(err)
	}
	if p.cfg.filePath != "mine.json" || p.cfg.deadline != time.Second || p.cfg.version != fractional.V1 || p.cfg.grace != 3*time.Second {
		t.Errorf("explicit options: %+v", p.cfg)
	}
	// ...unless FromEnv comes after them.
	p, err = NewProvider(WithFile("mine.json"), WithDeadline(time.Second), FromEnv())
	if err != nil {
		t.Fatal(err)
	}
	if p.cfg.filePath != "/etc/flags.json" || p.cfg.deadline != 1500*time.Millisecond {
		t.Errorf("FromEnv last: %+v", p.cfg)
	}
}

func TestDefaults(t *testing.T) {
	p, err := NewProvider(WithFile("flags.json"))
	if err != nil {
		t.Fatal(err)
	}
	c := p.cfg
	if c.pollInterval != 5*time.Second || c.deadline != 500*time.Millisecond || c.grace != 5*time.Second || c.version != fractional.V2 || c.strict {
		t.Errorf("defaults: %+v", c)
	}
}

func TestUnparsableVariablesNameTheVariable(t *testing.T) {
	cases := map[string]string{
		EnvOfflinePollMs:         "fast",
		EnvDeadlineMs:            "-5",
		EnvRetryGracePeriod:      "1.5",
		EnvFractionalVersion:     "v4",
		EnvOfflineFlagSourcePath: "",
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
	t.Run("zero grace period is allowed", func(t *testing.T) {
		t.Setenv(EnvRetryGracePeriod, "0")
		p, err := NewProvider(WithFile("flags.json"))
		if err != nil || p.cfg.grace != 0 {
			t.Fatalf("%v %v", p, err)
		}
	})
}
