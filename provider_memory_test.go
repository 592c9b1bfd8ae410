package flagsnap

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap/evaluator"
	"github.com/flagsnap/flagsnap/source"
)

// brokenDefault loads outside strict mode (color answers PARSE_ERROR) and
// is rejected whole in strict mode.
const brokenDefault = `{"flags": {
  "color": {"state": "ENABLED", "variants": {"red": "red"}, "defaultVariant": "green"},
  "beta":  {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "on"}
}}`

// onMemory returns a provider on a memory source holding flagsV1, already
// initialised.
func onMemory(t *testing.T, opts ...Option) (*Provider, *source.Memory, events) {
	t.Helper()
	return onMemoryDoc(t, flagsV1, opts...)
}

// onMemoryDoc returns a provider on a memory source holding doc, with
// opts and without the environment, initialised and shut down with the
// test.
func onMemoryDoc(t *testing.T, doc string, opts ...Option) (*Provider, *source.Memory, events) {
	t.Helper()
	m := source.NewMemory([]byte(doc))
	p, err := NewProvider(append([]Option{WithoutEnv(), WithSource(m)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Shutdown)
	if err := p.Init(openfeature.EvaluationContext{}); err != nil {
		t.Fatal(err)
	}
	return p, m, events{t: t, ch: p.EventChannel()}
}

func TestWithFlags(t *testing.T) {
	p, err := NewProvider(WithFlags([]byte(flagsV1)))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown()
	begin := time.Now()
	if err := p.Init(openfeature.EvaluationContext{}); err != nil {
		t.Fatal(err)
	}
	// A bound far above what it takes, even on a loaded machine under the
	// race detector, and half the deadline (500ms), which a provider that
	// waited for its source would sit out.
	if took := time.Since(begin); took > DefaultDeadline/2 {
		t.Errorf("Init took %v", took)
	}
	if c := color(p); c != "red" {
		t.Errorf("color %q", c)
	}
}

func TestWithFlagsRejectsWhatDoesNotLoad(t *testing.T) {
	var syntax *evaluator.SyntaxError
	var document *evaluator.DocumentError
	tests := []struct {
		name   string
		doc    string
		target any
		msg    string
	}{
		{"bad JSON", "{\"flags\": {\n  \"color\": [", &syntax, "flagsnap: WithFlags: invalid JSON at line 2"},
		{"not a flag set", `{"flag": {}}`, &document, "flagsnap: WithFlags: not a flag set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewProvider(WithFlags([]byte(tt.doc)))
			if p != nil || !errors.As(err, tt.target) || !strings.HasPrefix(err.Error(), tt.msg) {
				t.Fatalf("NewProvider = %v, %v; want %q… (a %T)", p, err, tt.msg, tt.target)
			}
		})
	}
}

// Unlike a source given with WithSource, the flags of WithFlags serve
// every Init.
func TestWithFlagsInitAgainAfterShutdown(t *testing.T) {
	p, err := NewProvider(WithFlags([]byte(flagsV1)))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown()
	for i := range 3 {
		if err := p.Init(openfeature.EvaluationContext{}); err != nil {
			t.Fatalf("Init %d: %v", i+1, err)
		}
		if c := color(p); c != "red" {
			t.Errorf("Init %d: color %q", i+1, c)
		}
		p.Shutdown()
	}
}

// The flags are compiled by NewProvider with the provider's own options:
// strict mode's verdict is NewProvider's error, enrichment is applied.
func TestWithFlagsUsesTheProvidersOptions(t *testing.T) {
	_, err := NewProvider(WithFlags([]byte(brokenDefault)), WithStrictValidation())
	var invalid *evaluator.ValidationError
	if !errors.As(err, &invalid) || !strings.HasPrefix(err.Error(), "flagsnap: WithFlags: ") {
		t.Fatalf("NewProvider in strict mode: %v", err)
	}

	p, err := NewProvider(WithFlags([]byte(flagsV1)), WithContextEnricher(func(map[string]any) map[string]any {
		return map[string]any{"tier": "gold"}
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown()
	if err := p.Init(openfeature.EvaluationContext{}); err != nil {
		t.Fatal(err)
	}
	if v := p.BooleanEvaluation(context.Background(), "beta", false, nil); !v.Value || v.Variant != "on" {
		t.Errorf("beta without the enrichment: %+v", v)
	}
}

// WithFlags and WithSource together are an error, in either order;
// WithFlags needs no resolver, even when the environment asks for rpc.
func TestWithFlagsAndWithSource(t *testing.T) {
	t.Setenv(EnvResolver, "rpc")
	src := newFakeSource()
	for _, opts := range [][]Option{
		{WithSource(src), WithFlags([]byte(flagsV2))},
		{WithFlags([]byte(flagsV2)), WithSource(src)},
	} {
		if _, err := NewProvider(opts...); err == nil || !strings.Contains(err.Error(), "contradict") ||
			!strings.Contains(err.Error(), "WithFlags") || !strings.Contains(err.Error(), "WithSource") {
			t.Errorf("WithFlags with WithSource: %v; want an error naming both", err)
		}
	}

	p, err := NewProvider(WithFlags([]byte(flagsV2)))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown()
	if err := p.Init(openfeature.EvaluationContext{}); err != nil {
		t.Fatal(err)
	}
	if c := color(p); c != "blue" {
		t.Errorf("WithFlags: color %q", c)
	}

	if _, err := NewProvider(WithFlags(nil)); err == nil || !strings.Contains(err.Error(), "WithFlags: the document is nil") {
		t.Errorf("WithFlags(nil): %v", err)
	}
}

// When Set returns, the provider serves the new flags.
func TestMemorySetIsInForceWhenItReturns(t *testing.T) {
	p, m, ev := onMemory(t)
	for i, doc := range []string{flagsV2, flagsV1, flagsV2} {
		if err := m.Set([]byte(doc)); err != nil {
			t.Fatal(err)
		}
		want := map[bool]string{true: "blue", false: "red"}[i%2 == 0]
		if c := color(p); c != want {
			t.Fatalf("Set %d: color %q, want %q", i, c, want)
		}
		if e := ev.next(); e.EventType != openfeature.ProviderConfigChange || !equalSets(e.FlagChanges, []string{"color", "limit", "old"}) {
			t.Fatalf("got %s %v, want CONFIGURATION_CHANGED [color limit old]", e.EventType, e.FlagChanges)
		}
	}
}

func equalSets(a, b []string) bool {
	return strings.Join(sorted(a), ",") == strings.Join(sorted(b), ",")
}

// A document the provider rejects is Set's error; the flags in force stay,
// and the provider reports the rejection as for any source.
func TestMemorySetReturnsTheProvidersVerdict(t *testing.T) {
	p, m, ev := onMemory(t, WithStrictValidation())
	err := m.Set([]byte(brokenDefault))
	var invalid *evaluator.ValidationError
	if !errors.As(err, &invalid) || !strings.Contains(err.Error(), `flag "color"`) {
		t.Fatalf("Set of a document strict mode rejects: %v", err)
	}
	if c := color(p); c != "red" {
		t.Errorf("flags lost: color %q", c)
	}
	if e := ev.next(); e.EventType != openfeature.ProviderError || e.ErrorCode != openfeature.ParseErrorCode {
		t.Fatalf("got %s %s, want ERROR PARSE_ERROR", e.EventType, e.ErrorCode)
	}

	var syntax *evaluator.SyntaxError
	if err := m.Set([]byte(`{"flags": {`)); !errors.As(err, &syntax) {
		t.Fatalf("Set of bad JSON: %v", err)
	}
	if e := ev.next(); e.EventType != openfeature.ProviderError {
		t.Fatalf("got %s, want ERROR", e.EventType)
	}
	if err := m.Set([]byte(flagsV2)); err != nil {
		t.Fatal(err)
	}
	ev.recovered("color", "limit", "old")
}

func TestMemoryLostGoesStaleThenErrorThenReady(t *testing.T) {
	p, m, ev := onMemory(t, WithRetryGracePeriod(10*time.Millisecond))
	m.Lost(errors.New("unplugged"))
	if e := ev.next(); e.EventType != openfeature.ProviderStale || !strings.Contains(e.Message, "unplugged") {
		t.Fatalf("got %s %q, want STALE", e.EventType, e.Message)
	}
	if e := ev.next(); e.EventType != openfeature.ProviderError {
		t.Fatalf("got %s, want ERROR", e.EventType)
	}
	if c := color(p); c != "red" {
		t.Errorf("flags not served while lost: color %q", c)
	}
	if err := m.Restore(); err != nil {
		t.Fatal(err)
	}
	ev.recovered()
}

// A memory source lost before Init delivers nothing: Init gives up at its
// deadline, and Restore brings the flags and READY.
// A document set through a memory source is compiled once, by the
// provider: the source hands on bytes and passes the provider's verdict
// back, rejected documents included.
func TestMemorySetCompilesOnce(t *testing.T) {
	p, m, _ := onMemory(t)
	if n := p.compilations.Load(); n != 1 {
		t.Fatalf("%d compilations after Init, want 1", n)
	}
	if err := m.Set([]byte(flagsV2)); err != nil {
		t.Fatal(err)
	}
	if n := p.compilations.Load(); n != 2 {
		t.Errorf("%d compilations after a Set, want 2", n)
	}
	if err := m.Set([]byte(`{"flags": [`)); err == nil {
		t.Fatal("Set of bad JSON returned no error")
	}
	if n := p.compilations.Load(); n != 3 {
		t.Errorf("%d compilations after a rejected Set, want 3", n)
	}
}

func TestMemoryLostBeforeInit(t *testing.T) {
	m := source.NewMemory([]byte(flagsV1))
	m.Lost(errors.New("unplugged"))
	p, err := NewProvider(WithSource(m), WithDeadline(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown()
	if err := p.Init(openfeature.EvaluationContext{}); err == nil || !strings.Contains(err.Error(), "unplugged") {
		t.Fatalf("Init of a lost source: %v", err)
	}
	if err := m.Restore(); err != nil {
		t.Fatal(err)
	}
	if c := color(p); c != "red" {
		t.Errorf("color %q after Restore", c)
	}
	ev := events{t: t, ch: p.EventChannel()}
	ev.recovered("beta", "color", "old")
}

func TestMemorySetAfterShutdown(t *testing.T) {
	p, m, ev := onMemory(t)
	p.Shutdown()
	done := make(chan error, 1)
	go func() { done <- m.Set([]byte(flagsV2)) }()
	select {
	case err := <-done:
		if err == nil {
			t.Error("Set after Shutdown returned no error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Set after Shutdown did not return")
	}
	m.Lost(nil)
	if err := m.Restore(); err != nil {
		t.Error(err)
	}
	ev.none(20 * time.Millisecond)
	if c := color(p); c != "red" {
		t.Errorf("flags taken after Shutdown: color %q", c)
	}
}

// The provider's verdict on flags that come after Shutdown is an error,
// whatever the source.
func TestUpdateAfterShutdown(t *testing.T) {
	p, src, _ := started(t)
	s := src.sink(t)
	p.Shutdown()
	if err := s.Update(update(flagsV2)); !errors.Is(err, errShutDown) {
		t.Errorf("Update after Shutdown: %v", err)
	}
}

// Sets racing Shutdown each either put their flags in force or return an
// error, and none blocks.
func TestMemorySetsRacingShutdown(t *testing.T) {
	p, m, _ := onMemory(t)
	const writers = 4
	results := make(chan int, writers)
	for range writers {
		go func() {
			failed := 0
			for i := range 200 {
				if m.Set([]byte([]string{flagsV1, flagsV2}[i%2])) != nil {
					failed++
				}
			}
			results <- failed
		}()
	}
	p.Shutdown()
	for range writers {
		select {
		case <-results:
		case <-time.After(5 * time.Second):
			t.Fatal("a Set did not return after Shutdown")
		}
	}
	if err := m.Set([]byte(flagsV1)); err == nil {
		t.Error("Set after Shutdown returned no error")
	}
}

// A broken flag answers PARSE_ERROR with its reason on every evaluation,
// and the message is made once, at load: evaluating it does not allocate.
func TestBrokenFlagAnswersWithoutAllocating(t *testing.T) {
	p, err := NewProvider(WithFlags([]byte(brokenDefault)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Shutdown)
	if err := p.Init(openfeature.EvaluationContext{}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	d := p.StringEvaluation(ctx, "color", "blue", nil)
	if d.Value != "blue" || d.Reason != openfeature.ErrorReason || d.ResolutionError.Error() == "" ||
		!strings.Contains(d.ResolutionError.Error(), "PARSE_ERROR") || !strings.Contains(d.ResolutionError.Error(), `"green"`) {
		t.Fatalf("broken flag: %+v (%v)", d, d.ResolutionError)
	}
	if n := testing.AllocsPerRun(100, func() { p.StringEvaluation(ctx, "color", "blue", nil) }); n != 0 {
		t.Errorf("a broken flag's evaluation allocates %v times", n)
	}
}
