package source

import (
	"math"
	"strings"
	"testing"
	"time"
)

// The reconnect schedule, checked without a clock: a loaded machine can
// delay any timer, but not change what the source asks for.
func TestGRPCRetryDelay(t *testing.T) {
	t.Parallel()
	within := func(t *testing.T, g *GRPC, n int, age, lo, hi time.Duration) {
		t.Helper()
		for range 200 {
			if d := g.retryDelay(n, age); d < lo || d > hi {
				t.Fatalf("retryDelay(%d, %v) = %v, want within [%v, %v]", n, age, d, lo, hi)
			}
		}
	}
	ms := time.Millisecond

	t.Run("defaults", func(t *testing.T) {
		g, err := NewGRPC(GRPCConfig{})
		if err != nil {
			t.Fatal(err)
		}
		// The first attempt comes at once; for the first 8s of an outage
		// the attempts come every 500ms, so a server back within the
		// provider's 10s grace period is found within a second. Then a
		// sixteenth of the outage's age, up to 5s, each give or take 20%.
		within(t, g, 0, 0, 200*ms, 300*ms)
		within(t, g, 1, 300*ms, 400*ms, 600*ms)
		within(t, g, 5, 4*time.Second, 400*ms, 600*ms)
		within(t, g, 12, 8*time.Second, 400*ms, 600*ms)
		within(t, g, 14, 10*time.Second, 500*ms, 750*ms)
		within(t, g, 30, 32*time.Second, 1600*ms, 2400*ms)
		within(t, g, 35, 64*time.Second, 3200*ms, 4800*ms)
		within(t, g, 40, 96*time.Second, 4000*ms, 6000*ms)
		within(t, g, 1000, time.Hour, 4000*ms, 6000*ms)
	})

	t.Run("the first attempt ignores the age", func(t *testing.T) {
		g, err := NewGRPC(GRPCConfig{})
		if err != nil {
			t.Fatal(err)
		}
		within(t, g, 0, time.Hour, 200*ms, 300*ms)
	})

	t.Run("floor", func(t *testing.T) {
		g, err := NewGRPC(GRPCConfig{RetryBackoff: time.Nanosecond, RetryBackoffMax: time.Nanosecond})
		if err != nil {
			t.Fatal(err)
		}
		within(t, g, 0, 0, minRetryDelay, minRetryDelay)
		within(t, g, 7, time.Hour, minRetryDelay, minRetryDelay)
	})

	t.Run("no overflow", func(t *testing.T) {
		g, err := NewGRPC(GRPCConfig{RetryBackoff: time.Hour, RetryBackoffMax: math.MaxInt64})
		if err != nil {
			t.Fatal(err)
		}
		within(t, g, 100, math.MaxInt64, math.MaxInt64/16/10*8, math.MaxInt64/16/10*12)
		g.retryBackoff = math.MaxInt64
		within(t, g, 100, math.MaxInt64, math.MaxInt64/2/10*8, math.MaxInt64/2/10*12)
	})
}

func TestGRPCProtoDuration(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		12 * time.Second:                  "12s",
		100 * time.Millisecond:            "0.1s",
		1500 * time.Millisecond:           "1.5s",
		time.Nanosecond:                   "0.000000001s",
		time.Second + 20*time.Microsecond: "1.00002s",
	} {
		if got := protoDuration(d); got != want {
			t.Errorf("protoDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

// A client that cannot be built in Run is a Fatal, reported once and not
// returned as well, as Run's documentation says.
func TestGRPCRunClientFailure(t *testing.T) {
	t.Parallel()
	g, err := NewGRPC(GRPCConfig{Host: "127.0.0.1", Port: 1})
	if err != nil {
		t.Fatal(err)
	}
	// Without transport credentials grpc.NewClient refuses to build a
	// client, which NewGRPC's own options never lead to.
	g.dialOpts = nil
	calls, err := runAlone(t, g, false)
	if err != nil {
		t.Errorf("Run = %v after reporting Fatal, want nil", err)
	}
	if len(calls) != 1 || calls[0].kind != "fatal" {
		t.Fatalf("sink got %v, want one Fatal", calls)
	}
	if !strings.Contains(calls[0].err.Error(), g.Target()) {
		t.Errorf("Fatal(%v) does not name the target %s", calls[0].err, g.Target())
	}
}
