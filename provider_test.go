package flagsnap

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap/internal/leaktest"
	"github.com/flagsnap/flagsnap/internal/logtest"
	"github.com/flagsnap/flagsnap/source"
)

func TestMain(m *testing.M) {
	os.Exit(leaktest.Run(m))
}

// fakeSource is a Source the test drives by hand.
type fakeSource struct {
	sinks   chan source.Sink
	stopped chan struct{}
	runs    atomic.Int32
	stop    sync.Once
}

func newFakeSource() *fakeSource {
	return &fakeSource{sinks: make(chan source.Sink, 1), stopped: make(chan struct{})}
}

func (f *fakeSource) Run(ctx context.Context, s source.Sink) error {
	f.runs.Add(1)
	// A provider that wrongly ran the source twice must fail the test, not
	// hang it: the first sink may still sit in the buffer.
	select {
	case f.sinks <- s:
	case <-ctx.Done():
	}
	<-ctx.Done()
	f.stop.Do(func() { close(f.stopped) })
	return nil
}

// sink waits for Run and returns what it was given.
func (f *fakeSource) sink(t *testing.T) source.Sink {
	t.Helper()
	select {
	case s := <-f.sinks:
		f.sinks <- s
		return s
	case <-time.After(5 * time.Second):
		t.Fatal("the source was not started")
		return nil
	}
}

const flagsV1 = `{"flags": {
  "color": {"state": "ENABLED", "variants": {"red": "red", "blue": "blue"}, "defaultVariant": "red"},
  "beta":  {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off",
            "targeting": {"if": [{"==": [{"var": "tier"}, "gold"]}, "on"]}},
  "old":   {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on"}
}}`

// flagsV2 changes color, removes old and adds limit.
const flagsV2 = `{"flags": {
  "color": {"state": "ENABLED", "variants": {"red": "red", "blue": "blue"}, "defaultVariant": "blue"},
  "beta":  {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off",
            "targeting": {"if": [{"==": [{"var": "tier"}, "gold"]}, "on"]}},
  "limit": {"state": "ENABLED", "variants": {"low": 10, "high": 100}, "defaultVariant": "low"}
}}`

func update(doc string) source.Update { return source.Update{Flags: []byte(doc), Origin: "test"} }

// events collects a provider's events; next waits for one with a bound.
type events struct {
	t  *testing.T
	ch <-chan openfeature.Event
}

func (e events) next() openfeature.Event {
	e.t.Helper()
	select {
	case ev := <-e.ch:
		return ev
	case <-time.After(5 * time.Second):
		e.t.Fatal("no event within 5s")
		return openfeature.Event{}
	}
}

// recovered expects what a source that is back brings: READY, then
// CONFIGURATION_CHANGED naming exactly the flags in want (in any order).
func (e events) recovered(want ...string) {
	e.t.Helper()
	if ev := e.next(); ev.EventType != openfeature.ProviderReady {
		e.t.Fatalf("got %s %q, want READY", ev.EventType, ev.Message)
	}
	ev := e.next()
	if ev.EventType != openfeature.ProviderConfigChange || !slices.Equal(sorted(ev.FlagChanges), sorted(want)) {
		e.t.Fatalf("got %s %v, want CONFIGURATION_CHANGED %v", ev.EventType, ev.FlagChanges, want)
	}
}

func (e events) none(within time.Duration) {
	e.t.Helper()
	select {
	case ev := <-e.ch:
		e.t.Fatalf("unexpected event %s %q %v", ev.EventType, ev.Message, ev.FlagChanges)
	case <-time.After(within):
	}
}

// started returns a provider on a fake source, initialised with flagsV1.
func started(t *testing.T, opts ...Option) (*Provider, *fakeSource, events) {
	t.Helper()
	src := newFakeSource()
	p, err := NewProvider(append([]Option{WithSource(src)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Shutdown)
	done := make(chan error, 1)
	go func() { done <- p.Init(openfeature.NewTargetlessEvaluationContext(nil)) }()
	src.sink(t).Update(update(flagsV1))
	if err := <-done; err != nil {
		t.Fatalf("Init: %v", err)
	}
	return p, src, events{t: t, ch: p.EventChannel()}
}

func TestInitWaitsForTheFirstFlagSet(t *testing.T) {
	p, _, ev := started(t)
	if v := p.StringEvaluation(context.Background(), "color", "?", nil); v.Value != "red" || v.Reason != openfeature.StaticReason {
		t.Errorf("color: %+v", v)
	}
	// OpenFeature announces READY for a successful Init; the provider does
	// not send a second one.
	ev.none(50 * time.Millisecond)
}

func TestNotReadyBeforeFlags(t *testing.T) {
	p, err := NewProvider(WithSource(newFakeSource()))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	b, s := p.BooleanEvaluation(ctx, "any", true, nil), p.StringEvaluation(ctx, "any", "d", nil)
	i, f := p.IntEvaluation(ctx, "any", 7, nil), p.FloatEvaluation(ctx, "any", 0.5, nil)
	o := p.ObjectEvaluation(ctx, "any", "d", nil)
	for _, c := range []struct {
		typ     string
		ok      bool
		details openfeature.ProviderResolutionDetail
	}{
		{"bool", b.Value, b.ProviderResolutionDetail},
		{"string", s.Value == "d", s.ProviderResolutionDetail},
		{"int", i.Value == 7, i.ProviderResolutionDetail},
		{"float", f.Value == 0.5, f.ProviderResolutionDetail},
		{"object", o.Value == "d", o.ProviderResolutionDetail},
	} {
		if !c.ok || c.details.Reason != openfeature.ErrorReason || c.details.ResolutionDetail().ErrorCode != openfeature.ProviderNotReadyCode {
			t.Errorf("%s: default served %v, %+v", c.typ, c.ok, c.details)
		}
	}
}

func TestConfigurationChanges(t *testing.T) {
	p, src, ev := started(t)
	s := src.sink(t)

	s.Update(update(flagsV2))
	e := ev.next()
	if e.EventType != openfeature.ProviderConfigChange || !slices.Equal(sorted(e.FlagChanges), []string{"color", "limit", "old"}) {
		t.Fatalf("got %s %v, want CONFIGURATION_CHANGED [color limit old]", e.EventType, e.FlagChanges)
	}
	if e.ProviderName != Name {
		t.Errorf("provider name %q", e.ProviderName)
	}
	if v := p.StringEvaluation(context.Background(), "color", "?", nil); v.Value != "blue" {
		t.Errorf("the new flags are not in force: %+v", v)
	}
	// The same flags again, even written differently, change nothing.
	s.Update(update(flagsV2))
	s.Update(update(`{"flags": {"limit": {"defaultVariant": "low", "variants": {"high": 100, "low": 10.0}, "state": "ENABLED"},
	  "beta": {"state": "ENABLED", "variants": {"off": false, "on": true}, "defaultVariant": "off",
	           "targeting": {"if": [{"==": [{"var": "tier"}, "gold"]}, "on"]}},
	  "color": {"state": "ENABLED", "variants": {"blue": "blue", "red": "red"}, "defaultVariant": "blue"}}}`))
	ev.none(50 * time.Millisecond)
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func TestRejectedFlagSetKeepsTheFlagsInForce(t *testing.T) {
	p, src, ev := started(t)
	s := src.sink(t)
	s.Update(update("{\n  \"flags\": {\n    \"color\": {\"state\": \"ENABLED\",\n"))
	e := ev.next()
	if e.EventType != openfeature.ProviderError || e.ErrorCode != openfeature.ParseErrorCode {
		t.Fatalf("got %s %s, want ERROR PARSE_ERROR", e.EventType, e.ErrorCode)
	}
	if !containsAll(e.Message, "line 4", "column") {
		t.Errorf("message %q does not locate the problem", e.Message)
	}
	if v := p.StringEvaluation(context.Background(), "color", "?", nil); v.Value != "red" {
		t.Errorf("flags lost: %+v", v)
	}
	// The next good flag set recovers.
	s.Update(update(flagsV2))
	ev.recovered("color", "limit", "old")
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

func TestLostSourceGoesStaleThenErrorThenReady(t *testing.T) {
	p, src, ev := started(t, WithRetryGracePeriod(100*time.Millisecond))
	s := src.sink(t)

	lostAt := time.Now()
	s.Lost(errors.New("file deleted"))
	if e := ev.next(); e.EventType != openfeature.ProviderStale || !strings.Contains(e.Message, "file deleted") {
		t.Fatalf("got %s %q, want STALE", e.EventType, e.Message)
	}
	if e := ev.next(); e.EventType != openfeature.ProviderError {
		t.Fatalf("got %s, want ERROR", e.EventType)
	}
	if waited := time.Since(lostAt); waited < 100*time.Millisecond {
		t.Errorf("ERROR after %v, before the grace period", waited)
	}
	if v := p.StringEvaluation(context.Background(), "color", "?", nil); v.Value != "red" || v.ResolutionError != (openfeature.ResolutionError{}) {
		t.Errorf("flags not served while lost: %+v", v)
	}
	s.Lost(errors.New("still gone")) // already reported
	s.Update(update(flagsV1))
	ev.recovered()
	ev.none(50 * time.Millisecond)
}

func TestSourceBackWithinTheGracePeriod(t *testing.T) {
	_, src, ev := started(t, WithRetryGracePeriod(time.Hour))
	s := src.sink(t)
	s.Lost(errors.New("gone"))
	if e := ev.next(); e.EventType != openfeature.ProviderStale {
		t.Fatalf("got %s, want STALE", e.EventType)
	}
	s.Update(update(flagsV2))
	ev.recovered("color", "limit", "old")
}

func TestInitDeadlineThenFlagsArrive(t *testing.T) {
	src := newFakeSource()
	p, err := NewProvider(WithSource(src), WithDeadline(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown()
	ev := events{t: t, ch: p.EventChannel()}
	start := time.Now()
	go func() { src.sink(t).Lost(errors.New("no such file")) }()
	err = p.Init(openfeature.EvaluationContext{})
	if err == nil || !strings.Contains(err.Error(), "no flags within 50ms") {
		t.Fatalf("Init: %v", err)
	}
	if d := time.Since(start); d < 50*time.Millisecond || d > 2*time.Second {
		t.Errorf("Init returned after %v", d)
	}
	src.sink(t).Update(update(flagsV1))
	ev.recovered("beta", "color", "old")
}

// initGaveUp returns a provider whose first Init ended, without flags,
// when its context did.
func initGaveUp(t *testing.T) (*Provider, *fakeSource) {
	t.Helper()
	src := newFakeSource()
	p, err := NewProvider(WithSource(src), WithDeadline(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Shutdown)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := p.InitWithContext(ctx, openfeature.EvaluationContext{}); err == nil {
		t.Fatal("Init without flags succeeded")
	}
	return p, src
}

func TestInitAgainOnceFlagsArrived(t *testing.T) {
	p, src := initGaveUp(t)
	src.sink(t).Update(update(flagsV1))
	events{t: t, ch: p.EventChannel()}.recovered("beta", "color", "old")
	done := make(chan error, 1)
	go func() { done <- p.Init(openfeature.EvaluationContext{}) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Init with flags in force: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Init with flags in force waits for its deadline")
	}
}

func TestFatalSource(t *testing.T) {
	t.Run("during Init", func(t *testing.T) {
		src := newFakeSource()
		p, err := NewProvider(WithSource(src), WithDeadline(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		defer p.Shutdown()
		go func() { src.sink(t).Fatal(errors.New("permission denied")) }()
		err = p.Init(openfeature.EvaluationContext{})
		var initErr *openfeature.ProviderInitError
		if !errors.As(err, &initErr) || initErr.ErrorCode != openfeature.ProviderFatalCode || !strings.Contains(initErr.Message, "permission denied") {
			t.Fatalf("Init: %v", err)
		}
	})
	t.Run("after Init gave up", func(t *testing.T) {
		src := newFakeSource()
		p, err := NewProvider(WithSource(src), WithDeadline(50*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		defer p.Shutdown()
		if err := p.Init(openfeature.EvaluationContext{}); err == nil {
			t.Fatal("Init without flags succeeded")
		}
		src.sink(t).Fatal(nil)
		ev := events{t: t, ch: p.EventChannel()}
		if e := ev.next(); e.EventType != openfeature.ProviderError || e.ErrorCode != openfeature.ProviderFatalCode {
			t.Fatalf("got %s %s, want ERROR PROVIDER_FATAL", e.EventType, e.ErrorCode)
		}
		// Init called again reports the source's end, and the run stays
		// fatal: a late flag set is not taken.
		err = p.Init(openfeature.EvaluationContext{})
		var initErr *openfeature.ProviderInitError
		if !errors.As(err, &initErr) || initErr.ErrorCode != openfeature.ProviderFatalCode {
			t.Fatalf("Init again: %v", err)
		}
		src.sink(t).Update(update(flagsV1))
		ev.none(50 * time.Millisecond)
		if v := p.StringEvaluation(context.Background(), "color", "?", nil); v.ResolutionDetail().ErrorCode != openfeature.ProviderNotReadyCode {
			t.Errorf("flags taken after a fatal error: %+v", v)
		}
	})
	t.Run("after Init", func(t *testing.T) {
		_, src, ev := started(t)
		src.sink(t).Fatal(errors.New("permission denied"))
		if e := ev.next(); e.EventType != openfeature.ProviderError || e.ErrorCode != openfeature.ProviderFatalCode {
			t.Fatalf("got %s %s, want ERROR PROVIDER_FATAL", e.EventType, e.ErrorCode)
		}
		src.sink(t).Update(update(flagsV2)) // ignored after a fatal error
		ev.none(50 * time.Millisecond)
	})
}

func TestInitAgainAfterTheSourceGaveUp(t *testing.T) {
	p, src := initGaveUp(t)
	done := make(chan error, 1)
	go func() { done <- p.Init(openfeature.EvaluationContext{}) }()
	src.sink(t).Fatal(errors.New("permission denied"))
	select {
	case err := <-done:
		var initErr *openfeature.ProviderInitError
		if !errors.As(err, &initErr) || initErr.ErrorCode != openfeature.ProviderFatalCode {
			t.Fatalf("Init: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Init waits for its deadline after the source gave up")
	}
}

// quitter reports Fatal and then returns an error as well, which a source
// is free to do.
type quitter struct{}

func (quitter) Run(_ context.Context, s source.Sink) error {
	err := errors.New("refused")
	s.Fatal(err)
	return err
}

func TestFatalAndErrorFromOneSourceReportOnce(t *testing.T) {
	var logs logtest.Buffer
	p, err := NewProvider(WithSource(quitter{}), WithDeadline(5*time.Second), WithLogger(logs.Logger()))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown()
	var initErr *openfeature.ProviderInitError
	if err := p.Init(openfeature.EvaluationContext{}); !errors.As(err, &initErr) || initErr.ErrorCode != openfeature.ProviderFatalCode {
		t.Fatalf("Init: %v", err)
	}
	// Shutdown waits for Run to return, so its own error has been handled.
	p.Shutdown()
	if n := logs.Count("refused"); n != 1 {
		t.Errorf("the source's end is logged %d times, want once:\n%s", n, logs.String())
	}
}

func TestSourceGivenWithSourceRunsOnce(t *testing.T) {
	p, src, _ := started(t)
	p.Shutdown()
	err := p.Init(openfeature.EvaluationContext{})
	var initErr *openfeature.ProviderInitError
	if !errors.As(err, &initErr) || initErr.ErrorCode != openfeature.ProviderFatalCode || !strings.Contains(initErr.Message, "already run") {
		t.Fatalf("Init after Shutdown: %v", err)
	}
	if n := src.runs.Load(); n != 1 {
		t.Errorf("the source ran %d times, want once", n)
	}
}

func TestShutdownStopsEverythingAndIsIdempotent(t *testing.T) {
	p, src, ev := started(t)
	s := src.sink(t)
	p.Shutdown()
	select {
	case <-src.stopped:
	default:
		t.Fatal("the source is still running after Shutdown")
	}
	p.Shutdown()
	if err := p.ShutdownWithContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A source that still calls after Shutdown is not heard.
	s.Update(update(flagsV2))
	s.Lost(errors.New("late"))
	ev.none(50 * time.Millisecond)
	if c := color(p); c != "red" {
		t.Errorf("flags taken after Shutdown: color %q", c)
	}
}

func TestEnrichment(t *testing.T) {
	doc := `{"flags": {"who": {"state": "ENABLED", "variants": {"app": "app", "sync": "sync", "user": "user", "none": "none"}, "defaultVariant": "none",
	  "targeting": {"var": "source"}}}}`
	src := newFakeSource()
	var seen []map[string]any
	var mu sync.Mutex
	// The enricher may hand out the same map every time.
	appValues := map[string]any{"source": "app", "region": "eu"}
	p, err := NewProvider(WithSource(src), WithContextEnricher(func(sc map[string]any) map[string]any {
		mu.Lock()
		seen = append(seen, sc)
		mu.Unlock()
		return appValues
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown()
	go func() { src.sink(t).Update(update(doc)) }()
	if err := p.Init(openfeature.EvaluationContext{}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if v := p.StringEvaluation(ctx, "who", "?", nil); v.Value != "app" {
		t.Errorf("enricher: %+v", v)
	}
	// The enrichment wins over the caller's values with the same key.
	if v := p.StringEvaluation(ctx, "who", "?", openfeature.FlattenedContext{"source": "user"}); v.Value != "app" {
		t.Errorf("enricher over caller: %+v", v)
	}
	ev := events{t: t, ch: p.EventChannel()}
	u := update(doc)
	u.SyncContext = map[string]any{"source": "sync"}
	src.sink(t).Update(u)
	if e := ev.next(); e.EventType != openfeature.ProviderConfigChange || !slices.Equal(e.FlagChanges, []string{"who"}) {
		t.Fatalf("changed enrichment: %s %v", e.EventType, e.FlagChanges)
	}
	if v := p.StringEvaluation(ctx, "who", "?", nil); v.Value != "sync" {
		t.Errorf("sync context over the enricher: %+v", v)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || seen[0] != nil || seen[1]["source"] != "sync" {
		t.Errorf("the enricher saw %v", seen)
	}
	if appValues["source"] != "app" {
		t.Errorf("the sync context was written into the enricher's map: %v", appValues)
	}
}

func TestEvaluationDetailsThroughOpenFeature(t *testing.T) {
	doc := `{"metadata": {"team": "shop"}, "flags": {
	  "flag":    {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "on", "metadata": {"owner": "ada", "rev": 3}},
	  "text":    {"state": "ENABLED", "variants": {"a": "A"}, "defaultVariant": "a"},
	  "num":     {"state": "ENABLED", "variants": {"pi": 3.14, "ten": 10.0}, "defaultVariant": "pi",
	              "targeting": {"if": [{"var": "whole"}, "ten"]}},
	  "obj":     {"state": "ENABLED", "variants": {"o": {"k": [1, 2]}}, "defaultVariant": "o"},
	  "off":     {"state": "DISABLED", "variants": {"on": true}, "defaultVariant": "on"},
	  "broken":  {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on", "targeting": {"nope": 1}},
	  "unknown": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on", "targeting": "elsewhere"}
	}}`
	src := newFakeSource()
	p, err := NewProvider(WithSource(src))
	if err != nil {
		t.Fatal(err)
	}
	go func() { src.sink(t).Update(update(doc)) }()
	if err := openfeature.SetNamedProviderAndWait(t.Name(), p); err != nil {
		t.Fatal(err)
	}
	client := openfeature.NewClient(t.Name())
	ctx := context.Background()
	ec := openfeature.NewEvaluationContext("user-1", map[string]any{"whole": true})

	b, err := client.BooleanValueDetails(ctx, "flag", false, ec)
	if err != nil || !b.Value || b.Variant != "on" || b.Reason != openfeature.StaticReason {
		t.Errorf("bool: %+v %v", b, err)
	}
	if owner, _ := b.FlagMetadata.GetString("owner"); owner != "ada" {
		t.Errorf("flag metadata %v", b.FlagMetadata)
	}
	if rev, _ := b.FlagMetadata.GetInt("rev"); rev != 3 {
		t.Errorf("flag metadata %v", b.FlagMetadata)
	}
	if team, _ := b.FlagMetadata.GetString("team"); team != "shop" {
		t.Errorf("flag-set metadata not merged: %v", b.FlagMetadata)
	}
	if i, err := client.IntValueDetails(ctx, "num", 0, ec); err != nil || i.Value != 10 || i.Reason != openfeature.TargetingMatchReason {
		t.Errorf("int: %+v %v", i, err)
	}
	i, err := client.IntValueDetails(ctx, "num", 7, openfeature.EvaluationContext{})
	if err == nil || i.Value != 7 || i.ErrorCode != openfeature.TypeMismatchCode || i.Variant != "pi" {
		t.Errorf("int of 3.14: %+v %v", i, err)
	}
	if f, err := client.FloatValueDetails(ctx, "num", 0, openfeature.EvaluationContext{}); err != nil || f.Value != 3.14 || f.Reason != openfeature.DefaultReason {
		t.Errorf("float: %+v %v", f, err)
	}
	if o, err := client.ObjectValueDetails(ctx, "obj", nil, ec); err != nil || fmt.Sprint(o.Value) != "map[k:[1 2]]" {
		t.Errorf("object: %+v %v", o, err)
	}
	if s, err := client.StringValueDetails(ctx, "off", "dflt", ec); err != nil || s.Value != "dflt" || s.Reason != openfeature.DisabledReason {
		t.Errorf("disabled: %+v %v", s, err)
	}
	cases := map[string]openfeature.ErrorCode{
		"missing": openfeature.FlagNotFoundCode,
		"broken":  openfeature.ParseErrorCode,
		"unknown": openfeature.GeneralCode,
		"text":    openfeature.TypeMismatchCode,
	}
	for key, code := range cases {
		d, err := client.BooleanValueDetails(ctx, key, true, ec)
		if err == nil || !d.Value || d.ErrorCode != code || d.Reason != openfeature.ErrorReason {
			t.Errorf("%s: %+v %v, want %s", key, d, err, code)
		}
	}
	md := p.FlagSetMetadata()
	if md["team"] != "shop" {
		t.Errorf("flag-set metadata %v", md)
	}
	md["team"] = "changed"
	if md := p.FlagSetMetadata(); md["team"] != "shop" {
		t.Errorf("FlagSetMetadata shares its map with the flag set: %v", md)
	}
	if p.Metadata().Name != "flagsnap" {
		t.Errorf("name %q", p.Metadata().Name)
	}
}

func TestCachedFlagsAtInitGoStaleThenError(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "cache.json")
	if err := writeCache(cache, update(flagsV1)); err != nil {
		t.Fatal(err)
	}
	src := newFakeSource()
	p, err := NewProvider(WithSource(src), WithCacheFile(cache), WithDeadline(50*time.Millisecond), WithRetryGracePeriod(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown()
	ev := events{t: t, ch: p.EventChannel()}
	if err := p.Init(openfeature.EvaluationContext{}); err != nil {
		t.Fatalf("Init with a cache: %v", err)
	}
	returned := time.Now()
	if v := color(p); v != "red" {
		t.Fatalf("cached flags not served: color %q", v)
	}
	if doc, _ := p.snap.Load().doc.document(); string(doc) != flagsV1 {
		t.Errorf("the document in force is %q, not the cached one", doc)
	}
	if at := p.SourceStatus().AppliedAt; time.Since(at) > time.Minute {
		t.Errorf("the cached flags were applied at %v, not when Init served them", at)
	}
	// OpenFeature's READY for Init comes first: STALE waits a moment.
	if e := ev.next(); e.EventType != openfeature.ProviderStale || !strings.Contains(e.Message, "cached") {
		t.Fatalf("got %s %q, want STALE", e.EventType, e.Message)
	}
	if d := time.Since(returned); d < initAnnounceDelay/2 {
		t.Errorf("STALE %v after Init returned", d)
	}
	if e := ev.next(); e.EventType != openfeature.ProviderError || !strings.Contains(e.Message, "grace period") {
		t.Fatalf("got %s %q, want ERROR", e.EventType, e.Message)
	}
	src.sink(t).Update(update(flagsV2))
	ev.recovered("color", "limit", "old")
	if doc, _ := p.snap.Load().doc.document(); string(doc) != flagsV2 {
		t.Errorf("the document in force is %q, not the source's", doc)
	}
}

func TestShutdownEndsAWaitingInit(t *testing.T) {
	src := newFakeSource()
	p, err := NewProvider(WithSource(src), WithDeadline(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Init(openfeature.EvaluationContext{}) }()
	src.sink(t) // Init has started the source
	p.Shutdown()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "shut down") {
			t.Fatalf("Init: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Init still waiting after Shutdown")
	}
}

// The flags in force delivered again (a poll, a reconnect, a reopened
// stream) are recognised without compiling them again, and cause no event
// unless they end a loss.
func TestSameFlagsAgainAreNotCompiledAgain(t *testing.T) {
	p, src, ev := started(t, WithRetryGracePeriod(time.Hour))
	s := src.sink(t)
	inForce := p.flags()
	s.Update(update(flagsV1))
	ev.none(50 * time.Millisecond)
	if p.flags() != inForce {
		t.Error("the same flags were compiled again")
	}
	// With another sync context they are other flags.
	s.Update(source.Update{Flags: []byte(flagsV1), SyncContext: map[string]any{"tier": "gold"}, Origin: "test"})
	if e := ev.next(); e.EventType != openfeature.ProviderConfigChange {
		t.Fatalf("got %s, want CONFIGURATION_CHANGED for a new sync context", e.EventType)
	}
	withCtx := p.flags()
	if withCtx == inForce {
		t.Fatal("a new sync context did not make a new flag set")
	}
	// Back after a loss, the same flags still end it.
	s.Lost(errors.New("gone"))
	if e := ev.next(); e.EventType != openfeature.ProviderStale {
		t.Fatalf("got %s, want STALE", e.EventType)
	}
	s.Update(source.Update{Flags: []byte(flagsV1), SyncContext: map[string]any{"tier": "gold"}, Origin: "test"})
	ev.recovered()
	if p.flags() != withCtx {
		t.Error("the same flags were compiled again after a loss")
	}
}

// A cache file that cannot be written is a warning: the flags it would
// hold are served all the same.
func TestCacheFileThatCannotBeWritten(t *testing.T) {
	var logs logtest.Buffer
	cache := filepath.Join(t.TempDir(), "no-such-dir", "cache.json")
	p, _, _ := started(t, WithoutEnv(), WithCacheFile(cache), WithLogger(logs.Logger()))
	if c := color(p); c != "red" {
		t.Errorf("color %q, want the source's red", c)
	}
	eventually(t, "the warning", func() bool { return logs.Count("flag cache not written") == 1 })
	if !strings.Contains(logs.String(), "no-such-dir") {
		t.Errorf("the warning does not name the file: %s", logs.String())
	}
}

// A cache file is read within bounds: what is not a regular file (a
// device, a FIFO, which would hold Init up for good) and a file larger
// than a cache of the provider's documents can be are refused unread.
func TestCacheFileIsReadWithinBounds(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.json")
	if err := os.WriteFile(small, []byte(`{"flags": "{}"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		limit      int64
		want       string // in the error; "" for none
	}{
		{"within the bound", small, 15, ""},
		{"over the bound", small, 14, "cache file " + small + " is 15 bytes, more than a cache of this provider's flags can be (14)"},
		{"a directory", dir, 1 << 20, "cache file " + dir + " is not a regular file"},
		{"a device that never ends", "/dev/zero", 1 << 20, "cache file /dev/zero is not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := os.Stat(tt.path); err != nil {
				t.Skipf("%s: %v", tt.path, err)
			}
			b, err := readCacheFile(tt.path, tt.limit)
			switch {
			case tt.want == "" && (err != nil || string(b) != `{"flags": "{}"}`):
				t.Errorf("%q, %v", b, err)
			case tt.want != "" && (err == nil || err.Error() != tt.want):
				t.Errorf("%v, want %q", err, tt.want)
			}
		})
	}
	for size, want := range map[int]int64{DefaultMaxMessageSize: 6<<30 + 1<<20, math.MaxInt: math.MaxInt64} {
		if got := maxCacheSize(size); got != want {
			t.Errorf("maxCacheSize(%d) = %d, want %d", size, got, want)
		}
	}
}

// Init gives up on a source that does not answer in time, and a cache
// file that is not a regular file neither holds it up nor serves flags.
func TestInitWithACacheFileThatIsNotAFile(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skipf("/dev/zero: %v", err)
	}
	var logs logtest.Buffer
	p, err := NewProvider(WithoutEnv(), WithSource(newFakeSource()), WithCacheFile("/dev/zero"), WithDeadline(50*time.Millisecond), WithLogger(logs.Logger()))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown()
	start := time.Now()
	if err := p.Init(openfeature.EvaluationContext{}); err == nil {
		t.Fatal("Init served flags from /dev/zero")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Init took %v", d)
	}
	if !strings.Contains(logs.String(), "flag cache not used") || !strings.Contains(logs.String(), "not a regular file") {
		t.Errorf("no warning that names the cache file's problem: %s", logs.String())
	}
}
