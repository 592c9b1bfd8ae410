package flagsnap

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap/internal/logtest"
	"github.com/flagsnap/flagsnap/source"
)

// usageFlags has a flag of every kind of outcome: a rule with two
// variants, a static string, an integer, a number, an object, a disabled
// flag and a broken one.
const usageFlags = `{"flags": {
  "hot":    {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off",
             "targeting": {"if": [{"==": [{"var": "tier"}, "gold"]}, "on"]}},
  "color":  {"state": "ENABLED", "variants": {"red": "red", "blue": "blue"}, "defaultVariant": "red"},
  "limit":  {"state": "ENABLED", "variants": {"low": 10, "high": 100}, "defaultVariant": "low"},
  "ratio":  {"state": "ENABLED", "variants": {"half": 0.5}, "defaultVariant": "half"},
  "config": {"state": "ENABLED", "variants": {"a": {"x": 1}}, "defaultVariant": "a"},
  "off":    {"state": "DISABLED", "variants": {"on": true}, "defaultVariant": "on"},
  "broken": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "nope"}
}}`

// usageFlagsRetargeted is usageFlags with hot's rule and color's default
// changed, the variants of every flag the same.
var usageFlagsRetargeted = strings.Replace(strings.Replace(usageFlags, `"gold"]}, "on"]`, `"silver"]}, "on"]`, 1),
	`"defaultVariant": "red"`, `"defaultVariant": "blue"`, 1)

// tally is what a test saw its evaluations answer.
type tally struct {
	flags   map[string]*FlagUsage
	missing map[string]uint64
}

func newTally() *tally { return &tally{flags: map[string]*FlagUsage{}, missing: map[string]uint64{}} }

func (t *tally) add(flag, variant string, err openfeature.ResolutionError) {
	if strings.HasPrefix(err.Error(), string(openfeature.FlagNotFoundCode)) {
		t.missing[flag]++
		return
	}
	u := t.flags[flag]
	if u == nil {
		u = &FlagUsage{}
		t.flags[flag] = u
	}
	u.Evaluations++
	switch {
	case err != (openfeature.ResolutionError{}):
		u.Errors++
		if u.ErrorCodes == nil {
			u.ErrorCodes = map[string]uint64{}
		}
		code, _, _ := strings.Cut(err.Error(), ":")
		u.ErrorCodes[code]++
	case variant != "":
		if u.Variants == nil {
			u.Variants = map[string]uint64{}
		}
		u.Variants[variant]++
	}
}

func (t *tally) merge(o *tally) {
	for k, u := range o.flags {
		mine := t.flags[k]
		if mine == nil {
			mine = &FlagUsage{}
			t.flags[k] = mine
		}
		mine.Evaluations += u.Evaluations
		mine.Errors += u.Errors
		for c, n := range u.ErrorCodes {
			if mine.ErrorCodes == nil {
				mine.ErrorCodes = map[string]uint64{}
			}
			mine.ErrorCodes[c] += n
		}
		for v, n := range u.Variants {
			if mine.Variants == nil {
				mine.Variants = map[string]uint64{}
			}
			mine.Variants[v] += n
		}
	}
	for k, n := range o.missing {
		t.missing[k] += n
	}
}

// evaluateAll evaluates every flag of usageFlags once, a few of them as
// the wrong type, and two missing keys, and tallies the answers.
func evaluateAll(p *Provider, t *tally, i int) {
	ctx := context.Background()
	tier := map[string]any{"tier": []string{"gold", "silver", "bronze"}[i%3]}
	b := p.BooleanEvaluation(ctx, "hot", false, tier)
	t.add("hot", b.Variant, b.ResolutionError)
	s := p.StringEvaluation(ctx, "color", "", nil)
	t.add("color", s.Variant, s.ResolutionError)
	n := p.IntEvaluation(ctx, "limit", 0, nil)
	t.add("limit", n.Variant, n.ResolutionError)
	f := p.FloatEvaluation(ctx, "ratio", 0, nil)
	t.add("ratio", f.Variant, f.ResolutionError)
	o := p.ObjectEvaluation(ctx, "config", nil, nil)
	t.add("config", o.Variant, o.ResolutionError)
	b = p.BooleanEvaluation(ctx, "off", false, nil)
	t.add("off", b.Variant, b.ResolutionError)
	b = p.BooleanEvaluation(ctx, "broken", false, nil)
	t.add("broken", b.Variant, b.ResolutionError)
	// A type mismatch is an error of the flag.
	b = p.BooleanEvaluation(ctx, "color", false, nil)
	t.add("color", b.Variant, b.ResolutionError)
	b = p.BooleanEvaluation(ctx, "missing-a", false, nil)
	t.add("missing-a", b.Variant, b.ResolutionError)
	// A key built at run time has new bytes every time.
	key := fmt.Sprintf("missing-%d", i%4)
	s = p.StringEvaluation(ctx, key, "", nil)
	t.add(key, s.Variant, s.ResolutionError)
}

// wantUsage compares a snapshot with a tally, the last evaluations aside.
func wantUsage(t *testing.T, got Usage, want *tally) {
	t.Helper()
	for k, w := range want.flags {
		g := got.Flags[k]
		g.LastEvaluated = time.Time{}
		if !reflect.DeepEqual(g, *w) {
			t.Errorf("flag %s: got %+v, want %+v", k, g, *w)
		}
	}
	for k, g := range got.Flags {
		if _, ok := want.flags[k]; !ok && g.Evaluations != 0 {
			t.Errorf("flag %s: %+v, and it was not evaluated", k, g)
		}
	}
	if !maps.Equal(got.Missing, want.missing) {
		t.Errorf("missing: got %v, want %v", got.Missing, want.missing)
	}
}

// consistent reports what is wrong with one flag's counts, which must add
// up in any snapshot.
func consistent(u FlagUsage) string {
	var byCode uint64
	for _, n := range u.ErrorCodes {
		byCode += n
	}
	if byCode != u.Errors {
		return fmt.Sprintf("errors by code add up to %d, not %d", byCode, u.Errors)
	}
	sum := u.Errors
	for _, n := range u.Variants {
		sum += n
	}
	if sum > u.Evaluations {
		return fmt.Sprintf("variants and errors add up to %d, over %d evaluations", sum, u.Evaluations)
	}
	if u.Evaluations > 0 && u.LastEvaluated.IsZero() {
		return "evaluated, but never"
	}
	return ""
}

// notBelow reports a count of now that is below the same count in before:
// counts only grow between resets.
func notBelow(before, now Usage) string {
	for k, b := range before.Flags {
		n, ok := now.Flags[k]
		if !ok {
			return "flag " + k + " left"
		}
		if n.Evaluations < b.Evaluations || n.Errors < b.Errors {
			return fmt.Sprintf("flag %s went from %+v to %+v", k, b, n)
		}
		for v, c := range b.Variants {
			if n.Variants[v] < c {
				return fmt.Sprintf("flag %s variant %s went from %d to %d", k, v, c, n.Variants[v])
			}
		}
	}
	for k, c := range before.Missing {
		if now.Missing[k] < c {
			return fmt.Sprintf("missing %s went from %d to %d", k, c, now.Missing[k])
		}
	}
	return ""
}

// Eight goroutines evaluate every kind of flag and missing keys while the
// flag set is replaced again and again and snapshots are taken: every
// snapshot adds up, no count goes back, and once the evaluations stop the
// counts are exactly those of the answers.
func TestUsageIsExactUnderConcurrency(t *testing.T) {
	m := source.NewMemory([]byte(usageFlags))
	p, err := NewProvider(WithSource(m))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown()
	if err := p.Init(openfeature.EvaluationContext{}); err != nil {
		t.Fatal(err)
	}
	const workers, rounds = 8, 3000
	var (
		wg      sync.WaitGroup
		running atomic.Int32
		tallies [workers]*tally
	)
	running.Store(workers)
	for w := range workers {
		tallies[w] = newTally()
		wg.Go(func() {
			defer running.Add(-1)
			for i := range rounds {
				evaluateAll(p, tallies[w], i+w)
				// The hot flag, as a hot path evaluates it.
				for range 4 {
					b := p.BooleanEvaluation(context.Background(), "hot", false, nil)
					tallies[w].add("hot", b.Variant, b.ResolutionError)
				}
			}
		})
	}
	var side sync.WaitGroup
	side.Go(func() {
		docs := []string{usageFlagsRetargeted, usageFlags}
		for i := 0; running.Load() > 0; i++ {
			if err := m.Set([]byte(docs[i%2])); err != nil {
				t.Error(err)
				return
			}
		}
	})
	side.Go(func() {
		var before Usage
		for snaps := 0; running.Load() > 0; snaps++ {
			u := p.Usage()
			for k, f := range u.Flags {
				if msg := consistent(f); msg != "" {
					t.Errorf("snapshot %d, flag %s: %s", snaps, k, msg)
					return
				}
			}
			if msg := notBelow(before, u); msg != "" {
				t.Errorf("snapshot %d: %s", snaps, msg)
				return
			}
			before = u
		}
	})
	wg.Wait()
	side.Wait()
	want := newTally()
	for _, tl := range tallies {
		want.merge(tl)
	}
	got := p.Usage()
	wantUsage(t, got, want)
	if len(got.Flags) != 7 {
		t.Errorf("%d flags, want 7: %v", len(got.Flags), slicesOfKeys(got.Flags))
	}
}

func slicesOfKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestUsageCountsEveryOutcome(t *testing.T) {
	p, _, _ := onMemoryDoc(t, usageFlags)
	if u := p.Usage(); len(u.Flags) != 7 || len(u.Missing) != 0 || u.Since.IsZero() {
		t.Fatalf("before any evaluation: %+v", u)
	}
	want := newTally()
	begin := time.Now().Add(-time.Second)
	for i := range 6 {
		evaluateAll(p, want, i)
	}
	got := p.Usage()
	wantUsage(t, got, want)
	for k, f := range got.Flags {
		if f.LastEvaluated.Before(begin.Truncate(time.Second)) || f.LastEvaluated.After(time.Now()) {
			t.Errorf("flag %s last evaluated at %v, between %v and now", k, f.LastEvaluated, begin)
		}
		if f.LastEvaluated.Location() != time.UTC {
			t.Errorf("flag %s last evaluated in %v", k, f.LastEvaluated.Location())
		}
	}
	// Served no variant without an error: in Evaluations alone.
	if off := got.Flags["off"]; off.Evaluations != 6 || off.Errors != 0 || off.Variants != nil {
		t.Errorf("disabled flag: %+v", off)
	}
	if c := got.Flags["color"]; c.Errors != 6 || c.Variants["red"] != 6 || c.Evaluations != 12 ||
		!maps.Equal(c.ErrorCodes, map[string]uint64{"TYPE_MISMATCH": 6}) {
		t.Errorf("color, half of it type mismatches: %+v", c)
	}
	if b := got.Flags["broken"]; b.Errors != 6 || !maps.Equal(b.ErrorCodes, map[string]uint64{"PARSE_ERROR": 6}) {
		t.Errorf("broken flag: %+v", b)
	}
}

// Each failure counts under the OpenFeature code the evaluation answered.
func TestUsageCountsErrorsByCode(t *testing.T) {
	p, _, _ := onMemoryDoc(t, `{"flags": {
	  "nowhere": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on", "targeting": {"if": [true, "elsewhere"]}},
	  "broken":  {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "nope"},
	  "name":    {"state": "ENABLED", "variants": {"a": "a"}, "defaultVariant": "a"}}}`)
	ctx := context.Background()
	want := newTally()
	for range 2 {
		b := p.BooleanEvaluation(ctx, "nowhere", false, nil)
		want.add("nowhere", b.Variant, b.ResolutionError)
		b = p.BooleanEvaluation(ctx, "broken", false, nil)
		want.add("broken", b.Variant, b.ResolutionError)
		b = p.BooleanEvaluation(ctx, "name", false, nil)
		want.add("name", b.Variant, b.ResolutionError)
	}
	got := p.Usage()
	wantUsage(t, got, want)
	for flag, code := range map[string]string{"nowhere": "GENERAL", "broken": "PARSE_ERROR", "name": "TYPE_MISMATCH"} {
		if f := got.Flags[flag]; f.Errors != 2 || !maps.Equal(f.ErrorCodes, map[string]uint64{code: 2}) {
			t.Errorf("%s: %+v, want 2 errors %s", flag, f, code)
		}
	}
}

// Flags that stay keep their counts across updates; a flag whose variants
// change keeps the counts of its former ones.
func TestUsageSurvivesUpdates(t *testing.T) {
	p, m, _ := onMemoryDoc(t, usageFlags)
	ctx := context.Background()
	gold := map[string]any{"tier": "gold"}
	for range 3 {
		p.BooleanEvaluation(ctx, "hot", false, gold)
		p.StringEvaluation(ctx, "color", "", nil)
	}
	if err := m.Set([]byte(usageFlagsRetargeted)); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		p.BooleanEvaluation(ctx, "hot", false, gold) // off: the rule wants silver now
		p.StringEvaluation(ctx, "color", "", nil)    // blue
	}
	u := p.Usage()
	if h := u.Flags["hot"]; h.Evaluations != 5 || !maps.Equal(h.Variants, map[string]uint64{"on": 3, "off": 2}) {
		t.Errorf("hot: %+v", h)
	}
	if c := u.Flags["color"]; c.Evaluations != 5 || !maps.Equal(c.Variants, map[string]uint64{"red": 3, "blue": 2}) {
		t.Errorf("color: %+v", c)
	}

	// New variants for color: red is gone, and its count stays.
	if err := m.Set([]byte(strings.Replace(usageFlagsRetargeted, `{"red": "red", "blue": "blue"}`, `{"blue": "blue", "green": "green"}`, 1))); err != nil {
		t.Fatal(err)
	}
	p.StringEvaluation(ctx, "color", "", nil)
	if c := p.Usage().Flags["color"]; c.Evaluations != 6 || !maps.Equal(c.Variants, map[string]uint64{"red": 3, "blue": 3}) {
		t.Errorf("color with other variants: %+v", c)
	}
	// Back to the first variants: their counts, not new ones.
	if err := m.Set([]byte(usageFlags)); err != nil {
		t.Fatal(err)
	}
	p.StringEvaluation(ctx, "color", "", nil)
	if c := p.Usage().Flags["color"]; c.Evaluations != 7 || !maps.Equal(c.Variants, map[string]uint64{"red": 4, "blue": 3}) {
		t.Errorf("color with its first variants again: %+v", c)
	}
}

// A flag that an update removes leaves Usage, its counts said once in the
// log; added again, it counts from zero.
func TestUsageOfARemovedFlag(t *testing.T) {
	var log logtest.Buffer
	p, m, _ := onMemoryDoc(t, usageFlags, WithLogger(log.Logger()))
	ctx := context.Background()
	for range 4 {
		p.StringEvaluation(ctx, "color", "", nil)
	}
	without := strings.Replace(usageFlags, `"color":  {"state": "ENABLED", "variants": {"red": "red", "blue": "blue"}, "defaultVariant": "red"},`, "", 1)
	if err := m.Set([]byte(without)); err != nil {
		t.Fatal(err)
	}
	u := p.Usage()
	if _, ok := u.Flags["color"]; ok || len(u.Flags) != 6 {
		t.Errorf("color is still in %v", slicesOfKeys(u.Flags))
	}
	if n := log.Count("flag removed"); n != 1 || !strings.Contains(log.String(), "flag=color evaluations=4") || !strings.Contains(log.String(), "level=INFO") {
		t.Errorf("log:\n%s", log.String())
	}
	// Asked for now, color is a missing key.
	p.StringEvaluation(ctx, "color", "", nil)
	if err := m.Set([]byte(usageFlags)); err != nil {
		t.Fatal(err)
	}
	u = p.Usage()
	if c, ok := u.Flags["color"]; !ok || c.Evaluations != 0 || u.Missing["color"] != 1 {
		t.Errorf("color added again: %+v, missing %v", c, u.Missing)
	}
	if err := m.Set([]byte(without)); err != nil {
		t.Fatal(err)
	}
	if n := log.Count("flag removed"); n != 1 {
		t.Errorf("a flag removed without evaluations is logged:\n%s", log.String())
	}
	if !strings.Contains(log.String(), `msg="flags removed" flags=1 notLogged=1 neverEvaluated=1`) {
		t.Errorf("the flag removed without evaluations is not counted:\n%s", log.String())
	}
}

func TestResetUsage(t *testing.T) {
	p, _, _ := onMemoryDoc(t, usageFlags)
	for i := range 3 {
		evaluateAll(p, newTally(), i)
	}
	before := p.Usage()
	time.Sleep(time.Millisecond)
	p.ResetUsage()
	u := p.Usage()
	if !u.Since.After(before.Since) || len(u.Flags) != 7 || len(u.Missing) != 0 {
		t.Errorf("after ResetUsage: %+v", u)
	}
	for k, f := range u.Flags {
		if !reflect.DeepEqual(f, FlagUsage{}) {
			t.Errorf("flag %s after ResetUsage: %+v", k, f)
		}
	}
	want := newTally()
	evaluateAll(p, want, 0)
	wantUsage(t, p.Usage(), want)
	// Twice, so that the window before the last is let go.
	p.ResetUsage()
	p.ResetUsage()
	want = newTally()
	evaluateAll(p, want, 1)
	wantUsage(t, p.Usage(), want)
}

func TestUsageKeepsAThousandMissingKeys(t *testing.T) {
	p, _, _ := onMemoryDoc(t, usageFlags)
	ctx := context.Background()
	for round := range 2 {
		for i := range MaxMissingKeys + 5 {
			p.BooleanEvaluation(ctx, fmt.Sprintf("nope-%04d", i), false, nil)
		}
		u := p.Usage()
		if len(u.Missing) != MaxMissingKeys || u.MissingDropped != 5 {
			t.Errorf("round %d: %d missing keys kept, %d dropped; want %d and 5", round, len(u.Missing), u.MissingDropped, MaxMissingKeys)
		}
		if u.Missing["nope-0000"] != uint64(round+1) {
			t.Errorf("round %d: nope-0000 counted %d times", round, u.Missing["nope-0000"])
		}
	}
	// Many more: an estimate, close. The estimate's standard deviation
	// here is about 58 keys, and its seed is new in each window: ±400 is
	// seven of them, so that the test fails only when the estimate is wrong.
	for i := range 20000 {
		p.BooleanEvaluation(ctx, fmt.Sprintf("more-%d", i), false, nil)
	}
	if d := p.Usage().MissingDropped; d < 20005-400 || d > 20005+400 {
		t.Errorf("%d dropped, want about 20005", d)
	}
	p.ResetUsage()
	p.BooleanEvaluation(ctx, "more-1", false, nil)
	if u := p.Usage(); u.MissingDropped != 0 || u.Missing["more-1"] != 1 {
		t.Errorf("after ResetUsage: %d keys, %d dropped", len(u.Missing), u.MissingDropped)
	}
}

func TestWithoutUsage(t *testing.T) {
	// Providers of other tests may still run: only the difference counts.
	clocks := goroutinesIn("startUsage.func")
	p, _, _ := onMemoryDoc(t, usageFlags, WithoutUsage())
	for i := range 3 {
		evaluateAll(p, newTally(), i)
	}
	if u := p.Usage(); len(u.Flags) != 0 || len(u.Missing) != 0 || !u.Since.IsZero() {
		t.Errorf("WithoutUsage: %+v", u)
	}
	p.ResetUsage()
	if n := goroutinesIn("startUsage.func") - clocks; n != 0 {
		t.Errorf("%d usage clocks run", n)
	}
	// And with usage, one, until Shutdown.
	q, _, _ := onMemoryDoc(t, usageFlags)
	if n := goroutinesIn("startUsage.func") - clocks; n != 1 {
		t.Errorf("%d usage clocks run, want 1", n)
	}
	q.Shutdown()
	if n := goroutinesIn("startUsage.func") - clocks; n != 0 {
		t.Errorf("%d usage clocks run after Shutdown", n)
	}
}

// goroutinesIn counts the goroutines with fn in their stack.
func goroutinesIn(fn string) int {
	// A dump cut short would miss goroutines: the buffer grows until the
	// dump fits.
	buf := make([]byte, 1<<20)
	for n := runtime.Stack(buf, true); ; n = runtime.Stack(buf, true) {
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	n := 0
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, fn) {
			n++
		}
	}
	return n
}

func TestUsageJSON(t *testing.T) {
	p, _, _ := onMemoryDoc(t, usageFlags)
	for i := range 3 {
		evaluateAll(p, newTally(), i)
	}
	for _, u := range []Usage{p.Usage(), {Flags: map[string]FlagUsage{}, Missing: map[string]uint64{}}} {
		b, err := json.Marshal(u)
		if err != nil {
			t.Fatal(err)
		}
		var back Usage
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, u) {
			t.Errorf("JSON %s\nreads back as %+v\nnot %+v", b, back, u)
		}
	}
	b, _ := json.Marshal(p.Usage())
	for _, want := range []string{`"since":"`, `"hot":{"evaluations":3,"variants":{`, `"lastEvaluated":"`, `"off":{"evaluations":3,"lastEvaluated"`, `"missing-a":3`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON %s\nhas no %s", b, want)
		}
	}
}

// Init after Shutdown goes on counting, from the same start.
func TestUsageAcrossShutdown(t *testing.T) {
	p, err := NewProvider(WithFlags([]byte(usageFlags)))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown()
	for range 2 {
		if err := p.Init(openfeature.EvaluationContext{}); err != nil {
			t.Fatal(err)
		}
		p.StringEvaluation(context.Background(), "color", "", nil)
		p.Shutdown()
	}
	if c := p.Usage().Flags["color"]; c.Evaluations != 2 {
		t.Errorf("color: %+v", c)
	}
}

// The line for Init's flags, at INFO, says where they come from and how,
// and counts no changes, which a first load does not compute; the line for
// an update, at INFO too, names the changed keys.
func TestFlagsLoadedLine(t *testing.T) {
	var log logtest.Buffer
	_, m, _ := onMemoryDoc(t, usageFlags, WithLogger(log.Logger()))
	// The line follows READY, which Init returns on.
	eventually(t, "Init's line", func() bool { return log.Count(`msg="flags loaded"`) == 1 })
	if n := log.Count(`level=INFO msg="flags loaded" origin=memory flags=7 resolver=memory source=memory`); n != 1 {
		t.Errorf("Init's line:\n%s", log.String())
	}
	without := strings.Replace(usageFlags, `"color":  {"state": "ENABLED", "variants": {"red": "red", "blue": "blue"}, "defaultVariant": "red"},`, "", 1)
	if err := m.Set([]byte(without)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the update's line", func() bool { return log.Count(`msg="flags changed"`) == 1 })
	if n := log.Count(`level=INFO msg="flags changed" origin=memory flags=6 changed=1 keys=color`); n != 1 {
		t.Errorf("the update's line:\n%s", log.String())
	}
}

// A change of many flags names the first 20 and counts the others.
func TestFlagsChangedLineNamesTwentyKeys(t *testing.T) {
	var log logtest.Buffer
	_, m, _ := onMemoryDoc(t, string(manyFlags(30)), WithLogger(log.Logger()))
	if err := m.Set([]byte(strings.ReplaceAll(string(manyFlags(30)), `"defaultVariant":"on"`, `"defaultVariant":"off"`))); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the update's line", func() bool { return log.Count(`msg="flags changed"`) == 1 })
	var keys []string
	for i := range 20 {
		keys = append(keys, fmt.Sprintf("flag-%07d", i))
	}
	if n := log.Count(`level=INFO msg="flags changed" origin=memory flags=30 changed=30 keys=` + strings.Join(keys, ",") + ` more=10`); n != 1 {
		t.Errorf("the update's line:\n%s", log.String())
	}
}
