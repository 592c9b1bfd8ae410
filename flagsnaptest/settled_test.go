package flagsnaptest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap"
	"github.com/flagsnap/flagsnap/evaluator"
	"github.com/flagsnap/flagsnap/source"
)

// state fails the test unless the client reads want.
func state(t *testing.T, f *Flags, when string, want openfeature.State) {
	t.Helper()
	if s := f.Client().State(); s != want {
		t.Fatalf("state %s %s, want %s", s, when, want)
	}
}

// A call on the source returns once the client shows its outcome, though
// OpenFeature hands events to the client on goroutines of its own. A few
// rounds make a client that lags behind all but certain to be caught.
func TestTheSourcesCallsAreShownWhenTheyReturn(t *testing.T) {
	f := New(t, colors("red"), flagsnap.WithStrictValidation())
	for range 50 {
		if err := f.Source().Set(brokenDefault); err == nil {
			t.Fatal("a flag set strict mode rejects was accepted")
		}
		state(t, f, "after a rejected Source().Set", openfeature.ErrorState)
		if err := f.Source().Set(colors("blue")); err != nil {
			t.Fatal(err)
		}
		state(t, f, "after an accepted Source().Set", openfeature.ReadyState)
		f.Source().Lost(nil)
		state(t, f, "after Source().Lost", openfeature.StaleState)
		if err := f.Source().Restore(); err != nil {
			t.Fatal(err)
		}
		state(t, f, "after Source().Restore", openfeature.ReadyState)
	}
}

// Set after a rejected document returns with the client READY again.
func TestSetAfterARejectedDocument(t *testing.T) {
	f := New(t, colors("red"), flagsnap.WithStrictValidation())
	for range 50 {
		_ = f.Source().Set(brokenDefault)
		f.Set(colors("blue"))
		state(t, f, "after Set", openfeature.ReadyState)
	}
}

// Lost waits for the STALE of its own loss, not for an ERROR that an
// earlier rejected document left on the way.
func TestLostAfterARejectedDocumentAndAGoodOne(t *testing.T) {
	f := New(t, colors("red"), flagsnap.WithStrictValidation(), flagsnap.WithRetryGracePeriod(time.Hour))
	for range 50 {
		_ = f.Source().Set(brokenDefault)
		if err := f.Source().Set(colors("blue")); err != nil {
			t.Fatal(err)
		}
		f.Lost(nil)
		state(t, f, "after Lost", openfeature.StaleState)
		f.Restore()
	}
}

func TestTrySet(t *testing.T) {
	f := New(t, colors("red"), flagsnap.WithStrictValidation())
	for range 50 {
		var invalid *evaluator.ValidationError
		if err := f.TrySet(brokenDefault); !errors.As(err, &invalid) {
			t.Fatalf("TrySet of a flag set strict mode rejects: %v", err)
		}
		state(t, f, "after a rejected TrySet", openfeature.ErrorState)
		if c := color(f.Client()); c != "red" {
			t.Fatalf("flags lost: color %q", c)
		}
		if err := f.TrySet(colors("blue")); err != nil {
			t.Fatalf("TrySet of good flags: %v", err)
		}
		state(t, f, "after an accepted TrySet", openfeature.ReadyState)
		if c := color(f.Client()); c != "blue" {
			t.Fatalf("color %q after TrySet, want blue", c)
		}
		f.Set(colors("red"))
	}
}

// A loss does not hide a rejected flag set: the provider stays ERROR, and
// Lost returns with it so.
func TestLostAfterARejectedDocument(t *testing.T) {
	f := New(t, colors("red"), flagsnap.WithStrictValidation(), flagsnap.WithRetryGracePeriod(time.Hour))
	if err := f.Source().Set(brokenDefault); err == nil {
		t.Fatal("a flag set strict mode rejects was accepted")
	}
	f.Lost(nil)
	state(t, f, "after Lost", openfeature.ErrorState)
	f.Restore()
	state(t, f, "after Restore", openfeature.ReadyState)
}

// A flag set too large to take is an ERROR at once, even while the source
// is lost and the client STALE.
func TestLostWithAFlagSetTooLarge(t *testing.T) {
	f := New(t, colors("red"), flagsnap.WithRetryGracePeriod(time.Hour))
	f.Lost(nil)
	f.Source().Lost(&source.MessageTooLargeError{Target: "localhost:8015", Size: 2 << 30, Limit: 1 << 30})
	state(t, f, "after a flag set too large", openfeature.ErrorState)
	f.Restore()
	state(t, f, "after Restore", openfeature.ReadyState)
}

func TestRestoreWithNothingLost(t *testing.T) {
	f := New(t, colors("red"), flagsnap.WithStrictValidation())
	if err := f.Source().Set(brokenDefault); err == nil {
		t.Fatal("a flag set strict mode rejects was accepted")
	}
	start := time.Now()
	msg := failure(t, func(tb testing.TB) {
		g := *f
		g.t = tb
		g.Restore()
	})
	if !strings.Contains(msg, "the client is ERROR") || !strings.Contains(msg, "no loss") {
		t.Errorf("Restore with nothing lost failed with %q", msg)
	}
	if d := time.Since(start); d > WaitTimeout/2 {
		t.Errorf("Restore with nothing lost took %v to fail", d)
	}
}

// A handler may change the flags: the call that sent the event it handles
// does not wait for handlers, so it does not wait for the handler's call.
func TestAHandlerSetsTheFlags(t *testing.T) {
	f := New(t, colors("red"), flagsnap.WithStrictValidation())
	errs := make(chan error, 1)
	fix := func(openfeature.EventDetails) { errs <- f.Source().Set(colors("blue")) }
	f.Client().AddHandler(openfeature.ProviderError, &fix)
	if err := f.Source().Set(brokenDefault); err == nil {
		t.Fatal("a flag set strict mode rejects was accepted")
	}
	select {
	case err := <-errs:
		if err != nil {
			t.Fatalf("the handler's Set: %v", err)
		}
	case <-time.After(WaitTimeout):
		t.Fatal("the handler's Set did not return")
	}
	state(t, f, "after the handler's Set", openfeature.ReadyState)
	if c := color(f.Client()); c != "blue" {
		t.Errorf("color %q after the handler's Set, want blue", c)
	}
}

// A wait that runs out says what the client shows and what was wanted.
func TestAWaitIsBounded(t *testing.T) {
	f := New(t, colors("red"))
	w := f.watch()
	defer w.stop()
	err := w.until(context.Background(), 10*time.Millisecond, "STALE", openfeature.StaleState)
	if err == nil || err.Error() != "the client is READY after 10ms, want STALE" {
		t.Errorf("until: %v", err)
	}
}

// Set, TrySet and Restore return once the CONFIGURATION_CHANGED they
// caused has been handed to the client's handlers. OpenFeature runs each
// handler on a goroutine of its own, and a handler removed before an event
// is handed over never sees it: a handler removed as soon as the call
// returns still sees the change the call caused.
func TestConfigurationChangedIsHandedOverWhenTheCallReturns(t *testing.T) {
	f := New(t, colors("red"), flagsnap.WithStrictValidation())
	// during runs call with a handler in place, removes it when call
	// returns, and returns the changes it was handed.
	during := func(call func()) []string {
		seen := make(chan string, 4)
		h := openfeature.EventCallback(ptr(func(d openfeature.EventDetails) {
			seen <- strings.Join(d.FlagChanges, ",")
		}))
		f.Client().AddHandler(openfeature.ProviderConfigChange, h)
		call()
		f.Client().RemoveHandler(openfeature.ProviderConfigChange, h)
		var got []string
		wait := time.After(100 * time.Millisecond)
		for {
			select {
			case c := <-seen:
				got = append(got, c)
			case <-wait:
				return got
			}
		}
	}
	for i := range 20 {
		a, b := fmt.Sprint("v", i%8), fmt.Sprint("v", 8+i%8)
		if got := during(func() { f.Set(colors(a)) }); !slices.Equal(got, []string{"color"}) {
			t.Fatalf("round %d: Set handed over %q, want one change of color", i, got)
		}
		if got := during(func() { f.TrySet(colors(a)) }); len(got) != 0 {
			t.Fatalf("round %d: the same flags again handed over %q, want nothing", i, got)
		}
		if got := during(func() { f.TrySet(colors(b)) }); !slices.Equal(got, []string{"color"}) {
			t.Fatalf("round %d: TrySet handed over %q, want one change of color", i, got)
		}
		f.Lost(nil)
		// A recovery announces READY and CONFIGURATION_CHANGED, here
		// naming no flag: the flags are those in force.
		if got := during(f.Restore); !slices.Equal(got, []string{""}) {
			t.Fatalf("round %d: Restore handed over %q, want one change naming no flag", i, got)
		}
	}
}

func ptr[T any](v T) *T { return &v }
