package flagsnaptest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap"
	"github.com/flagsnap/flagsnap/evaluator"
)

// colors is a flag set whose color flag has the variants red, blue and
// v0 to v15, and whose default variant is def.
func colors(def string) []byte {
	var b strings.Builder
	b.WriteString(`{"flags": {"color": {"state": "ENABLED", "variants": {"red": "red", "blue": "blue"`)
	for i := range 16 {
		fmt.Fprintf(&b, `, "v%d": "v%d"`, i, i)
	}
	fmt.Fprintf(&b, `}, "defaultVariant": %q}}}`, def)
	return []byte(b.String())
}

// brokenDefault loads outside strict mode only.
var brokenDefault = []byte(`{"flags": {"color": {"state": "ENABLED", "variants": {"red": "red"}, "defaultVariant": "green"}}}`)

func color(c *openfeature.Client) string {
	return c.String(context.Background(), "color", "none", openfeature.EvaluationContext{})
}

// fakeT records how a helper failed the test instead of failing it.
type fakeT struct {
	testing.TB
	fatal string
}

func (f *fakeT) Fatalf(format string, args ...any) {
	f.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// failure runs fn with a fakeT on a goroutine of its own, as Fatalf ends
// the goroutine it is called on, and returns the message it failed with
// ("" if it did not).
func failure(t *testing.T, fn func(testing.TB)) string {
	t.Helper()
	ft := &fakeT{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(ft)
	}()
	select {
	case <-done:
	case <-time.After(2 * WaitTimeout):
		t.Fatal("the helper did not return")
	}
	return ft.fatal
}

func TestClientServesTheFlags(t *testing.T) {
	tests := []struct{ name, doc string }{
		{"JSON", string(colors("blue"))},
		{"YAML", "flags:\n  color:\n    state: ENABLED\n    variants: {red: red, blue: blue}\n    defaultVariant: blue\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := Client(t, []byte(tt.doc))
			if s := client.State(); s != openfeature.ReadyState {
				t.Errorf("state %s, want READY", s)
			}
			d, err := client.StringValueDetails(context.Background(), "color", "none", openfeature.EvaluationContext{})
			if err != nil || d.Value != "blue" || d.Variant != "blue" || d.Reason != openfeature.StaticReason {
				t.Errorf("color: %+v, %v", d, err)
			}
		})
	}
}

// Parallel tests each have their own flags, and change them, without
// seeing each other's.
func TestParallelTestsEachSeeTheirOwnFlags(t *testing.T) {
	for i := range 16 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			mine := fmt.Sprintf("v%d", i)
			f := New(t, colors(mine))
			for range 50 {
				if c := color(f.Client()); c != mine {
					t.Fatalf("color %q, want %q", c, mine)
				}
			}
			mine = fmt.Sprintf("v%d", 15-i)
			f.Set(colors(mine))
			for range 50 {
				if c := color(f.Client()); c != mine {
					t.Fatalf("color %q after Set, want %q", c, mine)
				}
			}
		})
	}
}

// When Set returns, the next evaluation sees the new flags.
func TestSetIsInForceWhenItReturns(t *testing.T) {
	f := New(t, colors("red"))
	for i := range 20 {
		want := []string{"blue", "red"}[i%2]
		f.Set(colors(want))
		if c := color(f.Client()); c != want {
			t.Fatalf("Set %d: color %q, want %q", i, c, want)
		}
	}
}

func TestSetOfABadDocumentFailsTheTest(t *testing.T) {
	f := New(t, colors("red"))
	msg := failure(t, func(tb testing.TB) {
		g := *f
		g.t = tb
		g.Set([]byte(`{"flags": {`))
	})
	if !strings.Contains(msg, "invalid JSON") {
		t.Errorf("Set of bad JSON failed with %q", msg)
	}
	if c := color(f.Client()); c != "red" {
		t.Errorf("flags lost: color %q", c)
	}
}

// The source's Set returns the provider's verdict, which follows the
// provider's options.
func TestSourceSetReturnsTheProvidersVerdict(t *testing.T) {
	f := New(t, colors("red"), flagsnap.WithStrictValidation())
	var invalid *evaluator.ValidationError
	if err := f.Source().Set(brokenDefault); !errors.As(err, &invalid) {
		t.Fatalf("Set of a flag set strict mode rejects: %v", err)
	}
	if c := color(f.Client()); c != "red" {
		t.Errorf("flags lost: color %q", c)
	}
	f.Await(openfeature.ErrorState)
	f.Set(colors("blue"))
	f.Await(openfeature.ReadyState)
}

func TestNewFailsOnABadDocument(t *testing.T) {
	msg := failure(t, func(tb testing.TB) { New(tb, []byte(`{"flags": 1}`)) })
	if !strings.Contains(msg, "not a flag set") {
		t.Errorf("New with a bad document failed with %q", msg)
	}
	msg = failure(t, func(tb testing.TB) { New(tb, brokenDefault, flagsnap.WithStrictValidation()) })
	if !strings.Contains(msg, `flag "color"`) {
		t.Errorf("New with a document the provider rejects failed with %q", msg)
	}
}

func TestLostAndRestore(t *testing.T) {
	f := New(t, colors("red"), flagsnap.WithRetryGracePeriod(time.Hour))
	f.Lost(errors.New("unplugged"))
	if s := f.Client().State(); s != openfeature.StaleState {
		t.Fatalf("state %s after Lost, want STALE", s)
	}
	d, err := f.Client().StringValueDetails(context.Background(), "color", "none", openfeature.EvaluationContext{})
	if err != nil || d.Value != "red" {
		t.Errorf("flags not served while lost: %+v, %v", d, err)
	}
	f.Restore()
	if s := f.Client().State(); s != openfeature.ReadyState {
		t.Fatalf("state %s after Restore, want READY", s)
	}
}

func TestLostOutlastingTheGracePeriod(t *testing.T) {
	f := New(t, colors("red"), flagsnap.WithRetryGracePeriod(10*time.Millisecond))
	f.Lost(nil)
	f.Await(openfeature.ErrorState)
	if c := color(f.Client()); c != "red" {
		t.Errorf("flags not served while lost: color %q", c)
	}
	f.Restore()
	if s := f.Client().State(); s != openfeature.ReadyState {
		t.Fatalf("state %s after Restore, want READY", s)
	}
}

func TestAwaitAStateNoProviderReports(t *testing.T) {
	f := New(t, colors("red"))
	msg := failure(t, func(tb testing.TB) {
		g := *f
		g.t = tb
		g.Await(openfeature.NotReadyState)
	})
	if !strings.Contains(msg, "does not report") {
		t.Errorf("Await(NOT_READY) failed with %q", msg)
	}
}

// The provider stops with the test, and the global API never hears of it.
func TestIsolatedAndShutDownWithTheTest(t *testing.T) {
	var f *Flags
	t.Run("inner", func(t *testing.T) {
		f = New(t, colors("blue"))
		global := openfeature.NewDefaultClient()
		if c := color(global); c != "none" {
			t.Errorf("the global client sees color %q", c)
		}
	})
	if err := f.Source().Set(colors("red")); err == nil {
		t.Error("the source still runs after the test ended")
	}
}

// The FLAGD_* variables of the machine running the tests do not reach
// their providers: a bad one would otherwise fail every test, and a cache
// file would be written by each.
func TestTheEnvironmentStaysOut(t *testing.T) {
	t.Setenv("FLAGD_PORT", "not-a-port")
	t.Setenv("FLAGD_FRACTIONAL_VERSION", "v9")
	client := Client(t, colors("red"))
	if v, err := client.StringValue(context.Background(), "color", "none", openfeature.EvaluationContext{}); err != nil || v != "red" {
		t.Errorf("color: %q, %v", v, err)
	}
}
