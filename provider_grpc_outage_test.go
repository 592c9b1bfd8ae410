package flagsnap

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap/internal/blackhole"
	"github.com/flagsnap/flagsnap/internal/logtest"
	"github.com/flagsnap/flagsnap/syncserver"
)

// defaults points a provider at a sync server and leaves everything else
// as a user who sets nothing gets it.
func defaults(port int) []Option {
	return []Option{WithoutEnv(), WithResolver(ResolverInProcess), WithHost("127.0.0.1"), WithPort(port)}
}

// nextWithin is the next event, which must come within d.
func (e events) nextWithin(d time.Duration) (openfeature.Event, time.Duration) {
	e.t.Helper()
	start := time.Now()
	select {
	case ev := <-e.ch:
		return ev, time.Since(start)
	case <-time.After(d):
		e.t.Fatalf("no event within %v", d)
		return openfeature.Event{}, 0
	}
}

// expect takes the next event, within d, and fails unless it is of type
// want; it returns when it came, counted from the call.
func (e events) expect(want openfeature.EventType, d time.Duration) (openfeature.Event, time.Duration) {
	e.t.Helper()
	ev, took := e.nextWithin(d)
	if ev.EventType != want {
		e.t.Fatalf("got %s %q, want %s", ev.EventType, ev.Message, want)
	}
	return ev, took
}

// manyFlags is a flag document of n boolean flags, flag-0000000 on.
func manyFlags(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"flags":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"flag-%07d":{"state":"ENABLED","variants":{"on":true,"off":false},"defaultVariant":"on"}`, i)
	}
	b.WriteString(`}}`)
	return []byte(b.String())
}

// With default options, a flag set far past gRPC's own 4 MiB limit loads.
func TestGRPCLargeFlagSetWithDefaults(t *testing.T) {
	t.Parallel()
	doc := manyFlags(100_000)
	s := serve(t, syncserver.WithFlags(doc))
	// A generous deadline: the race detector slows compiling 100,000
	// flags down, and the limit, not the time, is under test.
	p, _ := grpcProvider(t, append(defaults(s.Port()), WithDeadline(2*time.Minute))...)
	if n := p.flags().Len(); n != 100_000 {
		t.Errorf("%d flags in force, want 100000", n)
	}
	if d := p.BooleanEvaluation(context.Background(), "flag-0099999", false, nil); !d.Value {
		t.Errorf("the last flag: %+v", d)
	}
	t.Logf("%d bytes of flags", len(doc))
}

// A flag set over WithMaxMessageSize is an ERROR at once that says how to
// fix it; the flags in force keep serving, and a set within the bound
// brings READY back.
func TestGRPCMessageTooLargeIsAnError(t *testing.T) {
	t.Parallel()
	s := serve(t, syncserver.WithFlags([]byte(flagsV1)))
	var logs logtest.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	p, ev := grpcProvider(t, append(fast(s), WithMaxMessageSize(2048), WithLogger(logger))...)

	big := manyFlags(40)
	s.SetFlags(big)
	e, _ := ev.expect(openfeature.ProviderError, 5*time.Second)
	if e.ErrorCode != openfeature.GeneralCode {
		t.Errorf("error code %q, want GENERAL", e.ErrorCode)
	}
	for _, want := range []string{"over the limit of 2048 bytes", "WithMaxMessageSize", s.Addr()} {
		if !strings.Contains(e.Message, want) {
			t.Errorf("the event %q does not say %q", e.Message, want)
		}
	}
	if !strings.Contains(logs.String(), "limit=2048") {
		t.Errorf("the log does not give the limit:\n%s", logs.String())
	}
	if c := color(p); c != "red" {
		t.Errorf("color %q: the flags in force were dropped", c)
	}
	s.SetFlags([]byte(flagsV2))
	ev.recovered("color", "old", "limit")
}

// An Init whose first flag set is over the bound fails with the reason.
func TestGRPCInitWithAFlagSetTooLarge(t *testing.T) {
	t.Parallel()
	s := serve(t, syncserver.WithFlags(manyFlags(40)))
	p, err := NewProvider(append(fast(s), WithMaxMessageSize(2048), WithDeadline(time.Second))...)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown()
	err = p.Init(openfeature.EvaluationContext{})
	if err == nil || !strings.Contains(err.Error(), "WithMaxMessageSize") {
		t.Errorf("Init: %v, want the size limit and the option", err)
	}
}

// flagd sends an empty set before it has read a large file: accepted, and
// worth a warning that names the source.
func TestGRPCEmptyFlagSetIsAWarning(t *testing.T) {
	t.Parallel()
	s := serve(t, syncserver.WithFlags([]byte(`{"flags":{}}`)))
	var logs logtest.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	_, ev := grpcProvider(t, append(fast(s), WithLogger(logger))...)
	if n := logs.Count("empty flag set"); n != 1 {
		t.Fatalf("%d warnings for an empty first set, want 1:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), s.Addr()) {
		t.Errorf("the warning does not name the source:\n%s", logs.String())
	}
	s.SetFlags([]byte(flagsV1))
	ev.expect(openfeature.ProviderConfigChange, 5*time.Second)
	s.SetFlags([]byte(`{"flags":{}}`))
	ev.expect(openfeature.ProviderConfigChange, 5*time.Second)
	if n := logs.Count("empty flag set"); n != 2 {
		t.Errorf("%d warnings after an empty set replaced a full one, want 2", n)
	}
}

// A server that stops answering without closing the connection is STALE
// within 30s with default options, ERROR after the grace period, READY
// within 5s of the network healing; evaluations answer throughout.
func TestGRPCSilentPartitionWithDefaults(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the default liveness check, about 20s")
	}
	t.Parallel()
	s := serve(t, syncserver.WithFlags([]byte(flagsV1)))
	proxy, err := blackhole.New(s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	p, ev := grpcProvider(t, defaults(proxy.Port())...)

	proxy.Blackhole()
	stopped := time.Now()
	e, _ := ev.expect(openfeature.ProviderStale, 30*time.Second)
	stale := time.Since(stopped)
	if c := color(p); c != "red" {
		t.Errorf("color %q while STALE", c)
	}
	_, grace := ev.expect(openfeature.ProviderError, 15*time.Second)
	t.Logf("STALE %v after the partition (%q), ERROR %v later", stale, e.Message, grace)
	if grace < 9*time.Second {
		t.Errorf("ERROR %v after STALE, want the 10s grace period", grace)
	}
	if c := color(p); c != "red" {
		t.Errorf("color %q while ERROR", c)
	}

	s.SetFlags([]byte(flagsV2))
	proxy.Heal()
	_, back := ev.expect(openfeature.ProviderReady, 10*time.Second)
	t.Logf("READY %v after healing", back)
	if back > 5*time.Second {
		t.Errorf("READY %v after healing, want within 5s", back)
	}
	ev.expect(openfeature.ProviderConfigChange, 5*time.Second)
	if c := color(p); c != "blue" {
		t.Errorf("color %q after healing", c)
	}
}

// A server that restarts within the grace period (10s, flagd issue 2027)
// is STALE and then READY within a second of serving again, with no
// ERROR, the flags served throughout; one that stays down longer is ERROR
// at the grace period, and READY within a second of coming back. Default
// backoff and grace period.
func TestGRPCRestartWithDefaults(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		down      time.Duration
		wantError bool
	}{
		{2 * time.Second, false},
		{6 * time.Second, false},
		{12 * time.Second, true},
	} {
		t.Run(tc.down.String(), func(t *testing.T) {
			t.Parallel()
			s := serve(t, syncserver.WithFlags([]byte(flagsV1)))
			p, ev := grpcProvider(t, defaults(s.Port())...)
			s.Stop()
			downAt := time.Now()
			ev.expect(openfeature.ProviderStale, 5*time.Second)
			if c := color(p); c != "red" {
				t.Errorf("color %q while STALE", c)
			}
			if tc.wantError {
				_, grace := ev.expect(openfeature.ProviderError, 15*time.Second)
				if since := time.Since(downAt); since < 9*time.Second {
					t.Errorf("ERROR %v after the stop (%v after STALE), want the 10s grace period", since, grace)
				}
			}
			// Within the grace period nothing else may come: no ERROR.
			ev.none(tc.down - time.Since(downAt))
			s.SetFlags([]byte(flagsV2))
			if err := s.Restart(); err != nil {
				t.Fatal(err)
			}
			_, back := ev.expect(openfeature.ProviderReady, 10*time.Second)
			t.Logf("down %v: READY %v after the restart", tc.down, back)
			if back > time.Second {
				t.Errorf("down %v: READY %v after the restart, want within 1s", tc.down, back)
			}
			ev.expect(openfeature.ProviderConfigChange, 5*time.Second)
			if c := color(p); c != "blue" {
				t.Errorf("color %q after the restart", c)
			}
		})
	}
}

// A server that ends every stream at its own deadline, as flagd's
// --stream-deadline does, is no outage: with default settings the provider
// reopens each stream without STALE or ERROR, and the flags are served
// throughout.
func TestGRPCServerStreamDeadlineWithDefaults(t *testing.T) {
	t.Parallel()
	s := serve(t, syncserver.WithFlags([]byte(flagsV1)), syncserver.WithStreamDeadline(200*time.Millisecond))
	p, ev := grpcProvider(t, defaults(s.Port())...)
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if c := color(p); c != "red" {
			t.Fatalf("color %q while the server ends its streams", c)
		}
		time.Sleep(50 * time.Millisecond)
	}
	ev.none(100 * time.Millisecond)
	syncs := 0
	for _, r := range s.Requests() {
		if r.Method == "SyncFlags" {
			syncs++
		}
	}
	if syncs < 5 {
		t.Errorf("%d SyncFlags streams in 3s with a 200ms server deadline, want the stream reopened each time", syncs)
	}
}
