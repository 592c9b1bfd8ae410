package flagsnap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap/internal/httporigin"
	"github.com/flagsnap/flagsnap/internal/logtest"
	"github.com/flagsnap/flagsnap/source"
	"github.com/flagsnap/flagsnap/syncserver"
)

// betaOff turns beta off, whatever the context, and adds a flag of its own.
const betaOff = `{"flags": {
  "beta":  {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off"},
  "local": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on"}
}}`

// colorBlue forces color to blue.
const colorBlue = `{"flags": {
  "color": {"state": "ENABLED", "variants": {"red": "red", "blue": "blue"}, "defaultVariant": "blue"}
}}`

func beta(p *Provider) openfeature.BoolResolutionDetail {
	return p.BooleanEvaluation(context.Background(), "beta", true, openfeature.FlattenedContext{"tier": "gold"})
}

// expectChange takes the next event, which must be CONFIGURATION_CHANGED
// naming exactly keys.
func (e events) expectChange(keys ...string) {
	e.t.Helper()
	ev, _ := e.expect(openfeature.ProviderConfigChange, 5*time.Second)
	if !slices.Equal(sorted(ev.FlagChanges), sorted(keys)) {
		e.t.Fatalf("CONFIGURATION_CHANGED %v, want %v", ev.FlagChanges, keys)
	}
}

// overrideOnly is the layer of the status, which must be the only one.
func overrideOnly(t *testing.T, p *Provider) LayerStatus {
	t.Helper()
	st := p.SourceStatus()
	if len(st.Overrides) != 1 {
		t.Fatalf("overrides %+v, want one", st.Overrides)
	}
	return st.Overrides[0]
}

// An override file over a flag file: it wins by key, is rewritten through
// a rename, refused when broken, withdrawn when deleted, and the flags of
// the file come back with the events that say so.
func TestOverrideFileLifecycle(t *testing.T) {
	dir := t.TempDir()
	main, over := filepath.Join(dir, "flags.json"), filepath.Join(dir, "override.json")
	writeFile(t, main, flagsV1)
	writeFile(t, over, betaOff)
	var logs logtest.Buffer
	p, ev, err := fileProvider(t, main, WithoutEnv(), WithOverrideFile(over), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	// Init waits for the main source alone: the override may come after.
	eventually(t, "the override layered", func() bool { return overrideOnly(t, p).State == LayerServing })
	if d := beta(p); d.Value || d.Reason != openfeature.StaticReason {
		t.Errorf("beta %v %s, want the override's: off", d.Value, d.Reason)
	}
	if color(p) != "red" {
		t.Errorf("color %q, want the file's red", color(p))
	}
	st := p.SourceStatus()
	if want := map[string]string{"beta": over, "local": over}; !maps.Equal(st.Overridden, want) {
		t.Errorf("overridden %v, want %v", st.Overridden, want)
	}
	if l := st.Overrides[0]; l.Source != over || l.Flags != 2 || l.AppliedAt.IsZero() || l.LastError != "" {
		t.Errorf("layer %+v", l)
	}
	if st.State != SourceServing || st.Source != main {
		t.Errorf("status %s %s, want the file serving", st.State, st.Source)
	}
	x, err := p.flags().Explain("beta", nil)
	if err != nil || x.Layer != over {
		t.Errorf("Explain layer %q (%v), want %s", x.Layer, err, over)
	}
	if x, _ := p.flags().Explain("color", nil); x.Layer != main {
		t.Errorf("Explain layer of color %q, want %s", x.Layer, main)
	}
	eventually(t, "the WARN line", func() bool {
		return strings.Contains(logs.String(), `level=WARN msg="override shadows a flag of the source" flag=beta`)
	})

	// An editor's save: the override now forces color instead.
	for len(ev.ch) > 0 {
		<-ev.ch
	}
	replaceFile(t, over, colorBlue)
	ev.expectChange("beta", "color", "local")
	if color(p) != "blue" || !beta(p).Value {
		t.Errorf("color %q, beta %v after the rewrite", color(p), beta(p).Value)
	}

	// A broken override is refused whole; the last good one stays.
	writeFile(t, over, `{"flags": {"color": {"state": "ENABLED", "variants": {"red": "red"}, "defaultVariant": "green"}}}`)
	eventually(t, "the refusal", func() bool { return overrideOnly(t, p).State == LayerError })
	if l := overrideOnly(t, p); !strings.Contains(l.LastError, "green") {
		t.Errorf("last error %q, want the problem", l.LastError)
	}
	if color(p) != "blue" {
		t.Errorf("color %q after a broken override, want the last good blue", color(p))
	}
	if !strings.Contains(logs.String(), "override="+over) {
		t.Errorf("the refusal is not logged with the path:\n%s", logs.String())
	}
	ev.none(100 * time.Millisecond)

	// Deleted: the file's flags come back.
	if err := os.Remove(over); err != nil {
		t.Fatal(err)
	}
	ev.expectChange("color")
	if color(p) != "red" || overrideOnly(t, p).State != LayerAbsent || len(p.SourceStatus().Overridden) != 0 {
		t.Errorf("color %q, status %+v after the delete", color(p), p.SourceStatus())
	}
	if !strings.Contains(logs.String(), `msg="override no longer shadows a flag of the source" flag=color`) {
		t.Errorf("no WARN line for the withdrawal:\n%s", logs.String())
	}
}

// An override file that does not exist yet means no overrides, said once,
// and is layered when it appears.
func TestOverrideFileCreatedLate(t *testing.T) {
	dir := t.TempDir()
	main, over := filepath.Join(dir, "flags.json"), filepath.Join(dir, "override.json")
	writeFile(t, main, flagsV1)
	var logs logtest.Buffer
	p, ev, err := fileProvider(t, main, WithoutEnv(), WithOverrideFile(over), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err != nil {
		t.Fatalf("Init with no override file: %v", err)
	}
	eventually(t, "the override absent", func() bool { return overrideOnly(t, p).State == LayerAbsent })
	if !beta(p).Value {
		t.Error("beta is off with no override")
	}
	if lost := logs.Count("level=WARN"); lost != 0 {
		t.Errorf("an override file not there yet is a warning:\n%s", logs.String())
	}
	writeFile(t, over, betaOff)
	ev.expectChange("beta", "local")
	if beta(p).Value {
		t.Error("beta is on once the override appeared")
	}
	if n := logs.Count("override file absent"); n != 1 {
		t.Errorf("the absent file was said %d times, want once:\n%s", n, logs.String())
	}
}

// The kill switch during a sync server's outage: the provider is STALE,
// the override turns a flag off all the same, and says so, and the state
// stays the source's.
func TestOverrideDuringGRPCOutage(t *testing.T) {
	over := filepath.Join(t.TempDir(), "override.json")
	s := serve(t, syncserver.WithFlags([]byte(flagsV1)))
	p, ev := grpcProvider(t, append(defaults(s.Port()), WithOverrideFile(over), WithFilePollInterval(time.Second))...)
	s.Stop()
	ev.expect(openfeature.ProviderStale, 5*time.Second)
	start := time.Now()
	replaceFile(t, over, betaOff)
	ev.expectChange("beta", "local")
	t.Logf("the override applied %v after the write, with the server down", time.Since(start))
	if d := beta(p); d.Value || d.Reason != openfeature.StaticReason {
		t.Errorf("beta %v %s during the outage, want the override's", d.Value, d.Reason)
	}
	if st := p.SourceStatus(); st.State != SourceStale {
		t.Errorf("state %s after the override, want the source's: stale", st.State)
	}
	// Withdrawn while still down: the source's flag comes back.
	if err := os.Remove(over); err != nil {
		t.Fatal(err)
	}
	ev.expectChange("beta", "local")
	if !beta(p).Value {
		t.Error("beta is still off once the override was withdrawn")
	}
	if st := p.SourceStatus(); st.State != SourceStale {
		t.Errorf("state %s, want stale", st.State)
	}
}

// The kill switch while a URL answers 503, past the grace period: ERROR
// stays ERROR, and the override applies.
func TestOverrideDuringHTTPOutage(t *testing.T) {
	over := filepath.Join(t.TempDir(), "override.json")
	o := httporigin.New(httporigin.Document(flagsV1))
	p, _, ev, err := urlProvider(t, o, WithoutEnv(), WithRetryGracePeriod(100*time.Millisecond), WithOverrideFile(over))
	if err != nil {
		t.Fatalf("Init: %v", err)
	}
	o.Set(httporigin.Failing(http.StatusServiceUnavailable))
	ev.expect(openfeature.ProviderStale, 5*time.Second)
	ev.expect(openfeature.ProviderError, 5*time.Second)
	replaceFile(t, over, betaOff)
	ev.expectChange("beta", "local")
	if d := beta(p); d.Value || d.Reason != openfeature.StaticReason {
		t.Errorf("beta %v %s during the outage, want the override's", d.Value, d.Reason)
	}
	if st := p.SourceStatus(); st.State != SourceError {
		t.Errorf("state %s, want the source's: error", st.State)
	}
	// The origin back: READY, and the override still wins.
	o.Set(httporigin.Document(flagsV2))
	ev.expect(openfeature.ProviderReady, 5*time.Second)
	ev.expect(openfeature.ProviderConfigChange, 5*time.Second)
	if beta(p).Value || color(p) != "blue" {
		t.Errorf("beta %v, color %q after the recovery", beta(p).Value, color(p))
	}
}

// A $ref resolves in the document that defines the flag: an override that
// names the source's evaluator is refused, and says why.
func TestOverrideRefAcrossLayersRefused(t *testing.T) {
	const main = `{"$evaluators": {"gold": {"==": [{"var": "tier"}, "gold"]}},
  "flags": {"beta": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off",
    "targeting": {"if": [{"$ref": "gold"}, "on"]}}}}`
	const over = `{"flags": {"beta": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off",
    "targeting": {"if": [{"$ref": "gold"}, "off", "on"]}}}}`
	p, _, _ := onMemoryDoc(t, main, WithOverrideSource(source.NewMemory([]byte(over))))
	eventually(t, "the refusal", func() bool { return overrideOnly(t, p).State == LayerError })
	if l := overrideOnly(t, p); !strings.Contains(l.LastError, `$ref "gold"`) || !strings.Contains(l.LastError, "resolves in the document that defines the flag") {
		t.Errorf("last error %q", l.LastError)
	}
	if !beta(p).Value {
		t.Error("beta is not the source's")
	}
}

// Layers over memory, each a source of its own: a later one wins over an
// earlier one, and each flag keeps its own document's metadata.
func TestOverrideSourcesInOrder(t *testing.T) {
	const first = `{"metadata": {"team": "first"}, "flags": {
  "color": {"state": "ENABLED", "variants": {"red": "red", "blue": "blue", "green": "green"}, "defaultVariant": "green"},
  "size":  {"state": "ENABLED", "variants": {"s": "s"}, "defaultVariant": "s", "metadata": {"owner": "me"}}}}`
	a, b := source.NewMemory([]byte(first)), source.NewMemory([]byte(colorBlue))
	p, _, _ := onMemoryDoc(t, flagsV1, WithOverrideSource(a), WithOverrideSource(b))
	eventually(t, "both layered", func() bool {
		st := p.SourceStatus()
		return len(st.Overrides) == 2 && st.Overrides[0].State == LayerServing && st.Overrides[1].State == LayerServing
	})
	if color(p) != "blue" {
		t.Errorf("color %q, want the last override's blue", color(p))
	}
	d := p.StringEvaluation(context.Background(), "size", "", nil)
	if want := (openfeature.FlagMetadata{"team": "first", "owner": "me"}); !maps.Equal(d.FlagMetadata, want) {
		t.Errorf("size metadata %v, want its own document's under its own: %v", d.FlagMetadata, want)
	}
	if err := b.Set([]byte(`{"flags": {}}`)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the first override's color", func() bool { return color(p) == "green" })
}

// FLAGSNAP_OVERRIDE_FILE names an override, which an option replaces.
func TestOverrideFileFromEnv(t *testing.T) {
	dir := t.TempDir()
	main, fromEnv, fromOption := filepath.Join(dir, "flags.json"), filepath.Join(dir, "env.json"), filepath.Join(dir, "option.json")
	writeFile(t, main, flagsV1)
	writeFile(t, fromEnv, betaOff)
	writeFile(t, fromOption, colorBlue)
	t.Setenv(EnvOverrideFile, fromEnv)
	for _, tc := range []struct {
		name string
		opts []Option
		want []string
	}{
		{"the variable", nil, []string{fromEnv}},
		{"an option replaces it", []Option{WithOverrideFile(fromOption)}, []string{fromOption}},
		{"FromEnv last layers it on top", []Option{WithOverrideFile(fromOption), FromEnv()}, []string{fromOption, fromEnv}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _, err := fileProvider(t, main, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range p.SourceStatus().Overrides {
				got = append(got, l.Source)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("overrides %v, want %v", got, tc.want)
			}
		})
	}
	t.Setenv(EnvOverrideFile, "")
	if _, err := NewProvider(WithFile(main)); err == nil || !strings.Contains(err.Error(), EnvOverrideFile) {
		t.Errorf("an empty variable: %v", err)
	}
}

// Over a source of one's own, starting from the cache because the source
// sends nothing: the override is layered over the cached flags as over
// the source's, and the source's flags, when they come, stay under it.
func TestOverrideOverACustomSourceAndTheCache(t *testing.T) {
	dir := t.TempDir()
	cache, over := filepath.Join(dir, "cache.json"), filepath.Join(dir, "override.json")
	if err := writeCache(cache, update(flagsV1)); err != nil {
		t.Fatal(err)
	}
	writeFile(t, over, colorBlue)
	src := newFakeSource()
	p, err := NewProvider(WithoutEnv(), WithSource(src), WithCacheFile(cache), WithDeadline(300*time.Millisecond), WithOverrideFile(over))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Shutdown)
	if err := p.Init(openfeature.EvaluationContext{}); err != nil {
		t.Fatalf("Init with a cache: %v", err)
	}
	if c := color(p); c != "blue" {
		t.Errorf("color %q from the cache, want the override's blue", c)
	}
	// The source's color is red: only the override makes it blue.
	src.sink(t).Update(update(strings.Replace(flagsV2, `"defaultVariant": "blue"`, `"defaultVariant": "red"`, 1)))
	eventually(t, "the source's flags", func() bool { return p.SourceStatus().State == SourceServing })
	if c, limit := color(p), p.IntEvaluation(context.Background(), "limit", 0, nil).Value; c != "blue" || limit != 10 {
		t.Errorf("color %q, limit %d; want the override's blue over the source's flags", c, limit)
	}
	if by := p.SourceStatus().Overridden["color"]; by != over {
		t.Errorf("color overridden by %q, want %s", by, over)
	}
}

// An override that shadows many flags names the first 20 one by one, and
// counts the rest in one line.
func TestOverrideShadowingManyFlags(t *testing.T) {
	doc := func(variant string) string {
		var flags []string
		for i := range 25 {
			flags = append(flags, fmt.Sprintf(`"f%02d": {"state": "ENABLED", "variants": {"a": 1, "b": 2}, "defaultVariant": %q}`, i, variant))
		}
		return `{"flags": {` + strings.Join(flags, ",") + `}}`
	}
	var logs logtest.Buffer
	p, _, _ := onMemoryDoc(t, doc("a"), WithOverrideSource(source.NewMemory([]byte(doc("b")))),
		WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	eventually(t, "the override layered", func() bool { return len(p.SourceStatus().Overridden) == 25 })
	eventually(t, "the WARN lines", func() bool { return logs.Count("overrides shadow more flags of the source") == 1 })
	if n := logs.Count(`msg="override shadows a flag of the source"`); n != maxShadowLines {
		t.Errorf("%d flags named, want %d:\n%s", n, maxShadowLines, logs.String())
	}
	if !strings.Contains(logs.String(), "flag=f19 ") || strings.Contains(logs.String(), "flag=f20 ") || !strings.Contains(logs.String(), "more=5") {
		t.Errorf("want f00 to f19 named and 5 more:\n%s", logs.String())
	}
}

// An empty flag set from the source is worth a word the first time, as
// without overrides: the overrides' flags in force do not make a second
// empty set look like news.
func TestOverrideEmptySourceSetWarnedOnce(t *testing.T) {
	var logs logtest.Buffer
	main := source.NewMemory([]byte(`{"flags": {}}`))
	p, err := NewProvider(WithoutEnv(), WithSource(main), WithOverrideSource(source.NewMemory([]byte(colorBlue))),
		WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Shutdown)
	if err := p.Init(openfeature.EvaluationContext{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the override layered", func() bool { return color(p) == "blue" })
	if err := main.Set([]byte(`{"metadata": {"version": 2}, "flags": {}}`)); err != nil {
		t.Fatal(err)
	}
	if n := logs.Count("empty flag set"); n != 1 {
		t.Errorf("the empty set was warned of %d times, want once:\n%s", n, logs.String())
	}
}

// givingUpSource delivers one flag set, then stops for good with err.
type givingUpSource struct {
	doc string
	err error
}

func (g givingUpSource) Run(_ context.Context, s source.Sink) error {
	if err := s.Update(update(g.doc)); err != nil {
		return err
	}
	return g.err
}

// An override source that stops for good is an error, and its last good
// flags stay layered.
func TestOverrideSourceThatGivesUp(t *testing.T) {
	p, _, _ := onMemoryDoc(t, flagsV1, WithOverrideSource(givingUpSource{colorBlue, errors.New("the bucket is gone")}))
	eventually(t, "the failure", func() bool { return overrideOnly(t, p).State == LayerError })
	if st := overrideOnly(t, p); !strings.Contains(st.LastError, "the bucket is gone") || st.Flags != 1 {
		t.Errorf("override %+v, want its error and its one flag", st)
	}
	if c := color(p); c != "blue" {
		t.Errorf("color %q, want the override's blue, kept", c)
	}
}

func TestOverrideOptionsRefuseNothing(t *testing.T) {
	for want, opt := range map[string]Option{
		"WithOverrideFile: the path is empty":   WithOverrideFile(""),
		"WithOverrideSource: the source is nil": WithOverrideSource(nil),
	} {
		if _, err := NewProvider(WithoutEnv(), WithFlags([]byte(flagsV1)), opt); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("NewProvider: %v, want %q", err, want)
		}
	}
}

// An override file that cannot be read (here a directory) is an error,
// logged once with why, and the source's flags are served.
func TestOverrideFileUnreadable(t *testing.T) {
	var logs logtest.Buffer
	dir := t.TempDir()
	p, _, _ := onMemoryDoc(t, flagsV1, WithOverrideFile(dir), WithLogger(logs.Logger()))
	eventually(t, "the error", func() bool { return overrideOnly(t, p).State == LayerError })
	if st := overrideOnly(t, p); st.LastError == "" || st.Flags != 0 {
		t.Errorf("override %+v, want its error and no flags", st)
	}
	if c := color(p); c != "red" {
		t.Errorf("color %q, want the source's red", c)
	}
	if n := logs.Count("override unreadable"); n != 1 || !strings.Contains(logs.String(), "is a directory") {
		t.Errorf("%d error lines, want one saying why: %s", n, logs.String())
	}
}
