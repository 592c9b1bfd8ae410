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
	within := func(t *testing.T, g *GRPC, n int, lo, hi time.Duration) {
		t.Helper()
		for range 200 {
			if d := g.retryDelay(n); d < lo || d > hi {
				t.Fatalf("retryDelay(%d) = %v, want within [%v, %v]", n, d, lo, hi)
			}
		}
	}

	t.Run("defaults", func(t *testing.T) {
		g, err := NewGRPC(GRPCConfig{})
		if err != nil {
			t.Fatal(err)
		}
		// The first attempt comes well inside the provider's 5s grace
		// period; the rest double from 1s to 12s, give or take 20%.
		within(t, g, 0, 200*time.Millisecond, 300*time.Millisecond)
		within(t, g, 1, 800*time.Millisecond, 1200*time.Millisecond)
		within(t, g, 2, 1600*time.Millisecond, 2400*time.Millisecond)
		within(t, g, 3, 3200*time.Millisecond, 4800*time.Millisecond)
		within(t, g, 4, 6400*time.Millisecond, 9600*time.Millisecond)
		within(t, g, 5, 9600*time.Millisecond, 14400*time.Millisecond)
		within(t, g, 1000, 9600*time.Millisecond, 14400*time.Millisecond)
	})

	t.Run("floor", func(t *testing.T) {
		g, err := NewGRPC(GRPCConfig{RetryBackoff: time.Nanosecond, RetryBackoffMax: time.Nanosecond})
		if err != nil {
			t.Fatal(err)
		}
		within(t, g, 0, minRetryDelay, minRetryDelay)
		within(t, g, 7, minRetryDelay, minRetryDelay)
	})

	t.Run("huge", func(t *testing.T) {
		g, err := NewGRPC(GRPCConfig{RetryBackoff: time.Hour, RetryBackoffMax: 1 << 62})
		if err != nil {
			t.Fatal(err)
		}
		// Doubling stops at the cap instead of overflowing.
		within(t, g, 100, 1<<62/10*8, 1<<62/10*12)
	})

	t.Run("longest", func(t *testing.T) {
		g, err := NewGRPC(GRPCConfig{RetryBackoff: time.Hour, RetryBackoffMax: math.MaxInt64})
		if err != nil {
			t.Fatal(err)
		}
		within(t, g, 100, math.MaxInt64/10*8, math.MaxInt64)
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
