package usage

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// set is a flag set as the counter sees it: keys by index, with their
// variants.
type set struct {
	keys     []string
	variants [][]string
}

func newSet(flags ...any) *set {
	s := &set{}
	for i := 0; i < len(flags); i += 2 {
		s.keys = append(s.keys, flags[i].(string))
		s.variants = append(s.variants, flags[i+1].([]string))
	}
	return s
}

func (s *set) Len() int                    { return len(s.keys) }
func (s *set) FlagKey(i int) string        { return s.keys[i] }
func (s *set) VariantCount(i int) int      { return len(s.variants[i]) }
func (s *set) VariantName(i, j int) string { return s.variants[i][j] }
func (s *set) Index(key string) int {
	return slices.Index(s.keys, key)
}

var onOff = []string{"on", "off"}

func attach(c *Counter, s *set) *Table {
	t := c.NewTable(s)
	c.Attach(t)
	return t
}

func TestAttachCarriesCountsByKeyAndVariants(t *testing.T) {
	c := NewCounter(time.Now())
	v1 := attach(c, newSet("b", onOff, "r", onOff))
	v1.Served(0, 0)
	v1.Served(1, 0)
	v1.Failed(0, TypeMismatch)
	var nope tally
	nope.miss(v1, "nope")
	// An evaluation still running on v1 when v2 replaces it counts with v2's.
	v2 := attach(c, newSet("r", onOff, "b", onOff))
	v1.Served(1, 1)
	v2.Served(0, 1)
	if removed, unused := c.Attach(v2); removed != nil || unused != 0 {
		t.Errorf("attached again: removed %v and %d others", removed, unused)
	}
	u := c.Snapshot(time.Now())
	if b := u.Flags["b"]; b.Evaluations != 2 || b.Errors != 1 || !maps.Equal(b.Variants, map[string]uint64{"on": 1}) ||
		!maps.Equal(b.ErrorCodes, map[string]uint64{"TYPE_MISMATCH": 1}) {
		t.Errorf("b: %+v", b)
	}
	if r := u.Flags["r"]; r.Evaluations != 3 || !maps.Equal(r.Variants, map[string]uint64{"on": 1, "off": 2}) {
		t.Errorf("r: %+v", r)
	}
	if !maps.Equal(u.Missing, map[string]uint64{"nope": 1}) {
		t.Errorf("missing: %v", u.Missing)
	}
}

func TestAttachReportsRemovedFlags(t *testing.T) {
	c := NewCounter(time.Now())
	v1 := attach(c, newSet("b", onOff, "r", onOff, "x", onOff))
	v1.Served(0, 0)
	v1.Unserved(2)
	removed, unused := c.Attach(c.NewTable(newSet("x", onOff)))
	if len(removed) != 1 || removed["b"].Evaluations != 1 || unused != 1 {
		t.Errorf("removed %+v and %d others", removed, unused)
	}
	if _, ok := c.Snapshot(time.Now()).Flags["b"]; ok {
		t.Error("b is still counted")
	}
}

// Flags that leave never evaluated are only counted: listing their
// variants, as reporting an evaluated one does, would allocate at every
// change of the flags.
func TestAttachCountsUnusedFlagsWithoutAllocating(t *testing.T) {
	c := NewCounter(time.Now())
	a := c.NewTable(newSet("a", onOff, "b", onOff))
	b := c.NewTable(newSet("c", onOff, "d", onOff))
	next := map[*Table]*Table{a: b, b: a}
	c.Attach(a)
	cur := a
	allocs := testing.AllocsPerRun(100, func() {
		cur = next[cur]
		if removed, unused := c.Attach(cur); removed != nil || unused != 2 {
			t.Fatalf("removed %+v and %d others", removed, unused)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations an Attach", allocs)
	}
}

// changedVariants is a counter whose flag f served "on" of on/off once,
// then "no" once after a set changed its variants to yes/no; v1 is the
// replaced set, of on/off.
func changedVariants() (c *Counter, v1 *Table) {
	c = NewCounter(time.Now())
	v1 = attach(c, newSet("f", onOff))
	v1.Served(0, 0)
	attach(c, newSet("f", []string{"yes", "no"})).Served(0, 1)
	return c, v1
}

// A flag whose variants change starts new counts, and the counts of its
// former variants stay with the key; going back to the former variants
// takes their counts up again.
func TestChangedVariants(t *testing.T) {
	c, v1 := changedVariants()
	v1.Served(0, 1) // late, on the replaced set
	want := map[string]uint64{"on": 1, "off": 1, "no": 1}
	if u := c.Snapshot(time.Now()).Flags["f"]; u.Evaluations != 3 || !maps.Equal(u.Variants, want) {
		t.Errorf("f: %+v, want variants %v", u, want)
	}
	v3 := attach(c, newSet("f", onOff))
	v3.Served(0, 0)
	want["on"]++
	if u := c.Snapshot(time.Now()).Flags["f"]; u.Evaluations != 4 || !maps.Equal(u.Variants, want) {
		t.Errorf("f back to on/off: %+v, want variants %v", u, want)
	}
}

// Reset zeroes the counts of a key's former variants too, and an
// evaluation on the replaced set then counts in them afresh.
func TestResetZeroesFormerVariants(t *testing.T) {
	c, v1 := changedVariants()
	c.Reset(time.Now())
	if u := c.Snapshot(time.Now()).Flags["f"]; u.Evaluations != 0 || len(u.Variants) != 0 {
		t.Errorf("after Reset: %+v", u)
	}
	v1.Served(0, 1) // late, on the replaced set
	if u := c.Snapshot(time.Now()).Flags["f"]; u.Evaluations != 1 || !maps.Equal(u.Variants, map[string]uint64{"off": 1}) {
		t.Errorf("a late evaluation after Reset: %+v", u)
	}
}

// A key that leaves takes the counts of its former variants with it: it
// is reported removed with them, and starts afresh when it comes back.
func TestAKeyThatLeavesTakesItsFormerVariants(t *testing.T) {
	c, _ := changedVariants()
	removed, unused := c.Attach(c.NewTable(newSet("g", onOff)))
	want := map[string]uint64{"on": 1, "no": 1}
	if f := removed["f"]; len(removed) != 1 || unused != 0 || f.Evaluations != 2 || !maps.Equal(f.Variants, want) {
		t.Errorf("removed %+v and %d others, want f with variants %v", removed, unused, want)
	}
	if len(c.retired) != 0 {
		t.Errorf("retired cells of keys no longer in force: %v", c.retired)
	}
	v4 := attach(c, newSet("f", onOff))
	v4.Served(0, 1)
	if u := c.Snapshot(time.Now()).Flags["f"]; u.Evaluations != 1 || !maps.Equal(u.Variants, map[string]uint64{"off": 1}) {
		t.Errorf("f back: %+v, want one evaluation, off", u)
	}
}

// A flag evaluated for the first time on a set that has been replaced by
// one where its variants differ counts with the key's former variants.
func TestFirstEvaluationOnAReplacedSet(t *testing.T) {
	c := NewCounter(time.Now())
	v0 := attach(c, newSet("b", onOff))
	v1 := attach(c, newSet("b", onOff))
	attach(c, newSet("b", []string{"yes", "no"}))
	v1.Served(0, 0)
	v1.Served(0, 0)
	if u := c.Snapshot(time.Now()).Flags["b"]; u.Evaluations != 2 || !maps.Equal(u.Variants, map[string]uint64{"on": 2}) {
		t.Errorf("b: %+v", u)
	}
	// Another replaced set with the same variants counts with it.
	v0.Served(0, 1)
	if u := c.Snapshot(time.Now()).Flags["b"]; u.Evaluations != 3 || !maps.Equal(u.Variants, map[string]uint64{"on": 2, "off": 1}) {
		t.Errorf("b, evaluated on an older set too: %+v", u)
	}
	// A key the set in force no longer has is not counted.
	attach(c, newSet("other", onOff))
	v1.Served(0, 0)
	if u := c.Snapshot(time.Now()); len(u.Flags) != 1 || u.Flags["other"].Evaluations != 0 {
		t.Errorf("after b left: %+v", u.Flags)
	}
}

// Failures count by code, each its own counter, and add up to Errors.
func TestErrorsByCode(t *testing.T) {
	for _, tc := range []struct {
		name  string
		codes []ErrorCode
		want  map[string]uint64
	}{
		{"none", nil, nil},
		{"one of each", []ErrorCode{ParseError, TypeMismatch, General}, map[string]uint64{"PARSE_ERROR": 1, "TYPE_MISMATCH": 1, "GENERAL": 1}},
		{"type mismatches", []ErrorCode{TypeMismatch, TypeMismatch, TypeMismatch}, map[string]uint64{"TYPE_MISMATCH": 3}},
		{"a code out of range counts as general", []ErrorCode{numErrorCodes, 200, General}, map[string]uint64{"GENERAL": 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCounter(time.Now())
			tb := attach(c, newSet("f", onOff))
			tb.Served(0, 1)
			for _, code := range tc.codes {
				tb.Failed(0, code)
			}
			u := c.Snapshot(time.Now()).Flags["f"]
			n := uint64(len(tc.codes))
			if u.Evaluations != n+1 || u.Errors != n || !maps.Equal(u.ErrorCodes, tc.want) || u.Variants["off"] != 1 {
				t.Errorf("f: %+v, want %d errors %v", u, n, tc.want)
			}
			c.Reset(time.Now())
			if u := c.Snapshot(time.Now()).Flags["f"]; u.Errors != 0 || u.ErrorCodes != nil {
				t.Errorf("after Reset: %+v", u)
			}
		})
	}
}

// Counting a failure by its code allocates nothing, as counting a variant
// does not (BenchmarkServedNoAlloc).
func TestFailedDoesNotAllocate(t *testing.T) {
	c := NewCounter(time.Now())
	tb := attach(c, newSet("f", onOff))
	tb.Failed(0, General) // the flag's first evaluation makes its counts
	if n := testing.AllocsPerRun(1000, func() { tb.Failed(0, TypeMismatch) }); n != 0 {
		t.Errorf("Failed allocates %v times", n)
	}
}

func TestManyVariants(t *testing.T) {
	names := make([]string, 300)
	for i := range names {
		names[i] = fmt.Sprintf("v%03d", i)
	}
	c := NewCounter(time.Now())
	tb := attach(c, newSet("many", names))
	tb.Served(0, 299)
	tb.Served(0, 0)
	want := map[string]uint64{"v299": 1, "v000": 1}
	if u := c.Snapshot(time.Now()).Flags["many"]; u.Evaluations != 2 || !maps.Equal(u.Variants, want) {
		t.Errorf("many: %+v", u)
	}
}

func TestMissingKeysUnderConcurrency(t *testing.T) {
	c := NewCounter(time.Now())
	tb := attach(c, newSet("b", onOff))
	var gone tally
	others := make([]tally, 3)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 1000 {
				gone.miss(tb, "gone")
				others[(i+w)%3].miss(tb, fmt.Sprint("gone-", (i+w)%3))
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			c.Snapshot(time.Now())
		}
	})
	wg.Wait()
	want := map[string]uint64{"gone": 4000, "gone-0": 1334, "gone-1": 1333, "gone-2": 1333}
	if got := c.Snapshot(time.Now()).Missing; !maps.Equal(got, want) {
		t.Errorf("missing %v, want %v", got, want)
	}
}

func TestMissingKeysPastTheLimit(t *testing.T) {
	c := NewCounter(time.Now())
	tb := attach(c, newSet())
	ts := make([]tally, MaxMissingKeys+10)
	for i := range ts {
		ts[i].miss(tb, fmt.Sprint("k", i))
	}
	ts[MaxMissingKeys].miss(tb, fmt.Sprint("k", MaxMissingKeys)) // dropped already
	tb.Missing("untallied")                                      // a key the set names no more
	u := c.Snapshot(time.Now())
	if len(u.Missing) != MaxMissingKeys || u.MissingDropped != 11 {
		t.Errorf("%d keys kept, %d dropped; want %d and 11", len(u.Missing), u.MissingDropped, MaxMissingKeys)
	}
	c.Reset(time.Now())
	if u := c.Snapshot(time.Now()); len(u.Missing) != 0 || u.MissingDropped != 0 {
		t.Errorf("after Reset: %d keys, %d dropped", len(u.Missing), u.MissingDropped)
	}
	ts[MaxMissingKeys].miss(tb, fmt.Sprint("k", MaxMissingKeys)) // room again
	if u := c.Snapshot(time.Now()); len(u.Missing) != 1 {
		t.Errorf("after Reset, a dropped key: %v", u.Missing)
	}
}

// Evaluations on every core of one flag add up exactly.
func TestCountsAreExactUnderConcurrency(t *testing.T) {
	c := NewCounter(time.Now())
	tb := attach(c, newSet("hot", onOff))
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range 5000 {
				tb.Served(0, i%2)
			}
		})
	}
	wg.Wait()
	u := c.Snapshot(time.Now()).Flags["hot"]
	if u.Evaluations != 40000 || !maps.Equal(u.Variants, map[string]uint64{"on": 20000, "off": 20000}) {
		t.Errorf("hot: %+v", u)
	}
}

// Each shard of a hot flag's counts has cache lines of its own.
func TestShardsAreALineApart(t *testing.T) {
	for _, k := range []int{1, 5, 7, 8, 9, 305} {
		s := newShardSet(4, k, nil)
		if s.stride%lineWords != 0 || s.stride < k || len(s.words) != 4*s.stride {
			t.Errorf("%d outcomes: stride %d, %d words", k, s.stride, len(s.words))
		}
	}
}

// When a flag was last evaluated is the second of the first Tick, or
// Snapshot, that sees its counts changed.
func TestLastEvaluatedIsStampedBySecond(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	c := NewCounter(start)
	tb := attach(c, newSet("b", onOff, "r", onOff))
	tb.Served(0, 0)
	c.Tick(start.Add(time.Second))
	c.Tick(start.Add(5 * time.Second)) // nothing evaluated since
	u := c.Snapshot(start.Add(6 * time.Second))
	if got := u.Flags["b"].LastEvaluated; !got.Equal(start.Add(time.Second)) || got.Location() != time.UTC {
		t.Errorf("b last evaluated at %v, want %v", got, start.Add(time.Second))
	}
	if got := u.Flags["r"].LastEvaluated; !got.IsZero() {
		t.Errorf("r, never evaluated, last evaluated at %v", got)
	}
	tb.Served(0, 0)
	if got := c.Snapshot(start.Add(7 * time.Second)).Flags["b"].LastEvaluated; !got.Equal(start.Add(7 * time.Second)) {
		t.Errorf("b evaluated again, last at %v", got)
	}
	c.Reset(start.Add(8 * time.Second))
	if got := c.Snapshot(start.Add(9 * time.Second)).Flags["b"]; !got.LastEvaluated.IsZero() || got.Evaluations != 0 {
		t.Errorf("after Reset, b: %+v", got)
	}
}

// BenchmarkOneAtomicAdd is one atomic add on a word no other core
// writes, in a loop of nothing else: what the instruction of an exact
// count costs alone on the machine (bench/README.md, "What counting
// costs", compares it with what counting adds to an evaluation).
func BenchmarkOneAtomicAdd(b *testing.B) {
	var n atomic.Uint64
	b.ReportAllocs()
	for b.Loop() {
		n.Add(1)
	}
}

func BenchmarkServedNoAlloc(b *testing.B) {
	c := NewCounter(time.Now())
	tb := attach(c, newSet("hot", onOff))
	tb.Served(0, 0)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			tb.Served(0, 0)
		}
	})
}

// Counts past what a packed count holds move to wide counters, exactly.
func TestCountsPastThePackedWord(t *testing.T) {
	c := NewCounter(time.Now())
	tb := attach(c, newSet("f", []string{"a", "b", "c", "d", "e"}))
	const many = 3*spillAt + 7
	for i := range many {
		tb.Served(0, i%2) // a and b spill, more than once
	}
	tb.Served(0, 4) // past the packed word's four outcomes
	tb.Unserved(0)
	tb.Bulk([]int32{0, 0})
	u := c.Snapshot(time.Now()).Flags["f"]
	want := map[string]uint64{"a": many/2 + 1, "b": many / 2, "e": 1}
	if u.Evaluations != many+2 || u.Bulk != 2 || !maps.Equal(u.Variants, want) {
		t.Errorf("f: %+v, want variants %v", u, want)
	}
	c.Reset(time.Now())
	if u := c.Snapshot(time.Now()).Flags["f"]; u.Evaluations != 0 || u.Bulk != 0 {
		t.Errorf("after Reset: %+v", u)
	}
}

// A flag evaluated once costs one cell of 24 bytes, and no more.
func TestAFlagEvaluatedOnceCostsOneCell(t *testing.T) {
	c := NewCounter(time.Now())
	tb := attach(c, newSet("f", onOff, "g", onOff))
	if n := testing.AllocsPerRun(1, func() { tb.cells[0].Store(nil); tb.Served(0, 1) }); n != 1 {
		t.Errorf("a first evaluation allocates %v times, want once (its cell)", n)
	}
	if size := reflect.TypeFor[cell]().Size(); size != 24 {
		t.Errorf("a cell is %d bytes", size)
	}
}

// Evaluations that collide make the flag's cell hot: its wide counters,
// one shard at first, double while they still collide, up to maxShards,
// and keep every count.
func TestCollisionsMakeACellHot(t *testing.T) {
	c := NewCounter(time.Now())
	tb := attach(c, newSet("hot", onOff))
	tb.Served(0, 0)
	k := tb.cells[0].Load()
	s := k.widen(tb, 0)
	if s.n != 1 || len(s.words) != outcomes(2) {
		t.Fatalf("wide counters %+v, want one shard of %d words", s, outcomes(2))
	}
	for s.n < maxShards() {
		grown := s.n
		for range hotAfter {
			s.collided(k)
		}
		if s = k.wide.Load(); s.n != 2*grown || s.prev == nil || s.stride%lineWords != 0 {
			t.Fatalf("shards grew from %d to %d, stride %d", grown, s.n, s.stride)
		}
	}
	for range 2 * hotAfter {
		s.collided(k)
	}
	if k.wide.Load() != s {
		t.Errorf("shards grew past maxShards, %d", maxShards())
	}
	for range 1000 {
		tb.Served(0, 0) // into shards at random, old and new
	}
	tb.Served(0, 1)
	u := c.Snapshot(time.Now()).Flags["hot"]
	if u.Variants["off"] != 1 || u.Variants["on"] != 1001 || u.Evaluations != 1002 {
		t.Errorf("hot: %+v", u)
	}
}

// Sixteen goroutines hammering one flag lose no count, whatever the cell
// becomes meanwhile.
func TestSixteenGoroutinesOnOneFlag(t *testing.T) {
	c := NewCounter(time.Now())
	tb := attach(c, newSet("hot", onOff))
	var wg sync.WaitGroup
	const each = 40000
	for g := range 16 {
		wg.Go(func() {
			for i := range each {
				tb.Served(0, (i+g)%2)
				if i%1000 == 0 {
					tb.Failed(0, ParseError)
				}
			}
		})
	}
	wg.Go(func() {
		for range 50 {
			c.Snapshot(time.Now())
		}
	})
	wg.Wait()
	u := c.Snapshot(time.Now()).Flags["hot"]
	if u.Evaluations != 16*each+16*each/1000 || !maps.Equal(u.Variants, map[string]uint64{"on": 8 * each, "off": 8 * each}) || u.Errors != 16*each/1000 {
		t.Errorf("hot: %+v", u)
	}
}

// A missing key counted in the tallies that flag sets keep with its error
// adds up with the key's other counts, across sets and windows.
func TestMissingKeysTallied(t *testing.T) {
	c := NewCounter(time.Now())
	tb := attach(c, newSet("b", onOff))
	var count1, window1, count2, window2 atomic.Uint64 // two sets' tallies of "gone"
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 1000 {
				tb.MissingTallied("gone", &count1, &window1)
				tb.MissingTallied("gone", &count2, &window2)
			}
		})
	}
	wg.Wait()
	tb.Missing("other") // from a set that names no more keys
	u := c.Snapshot(time.Now())
	if got := u.Missing; !maps.Equal(got, map[string]uint64{"gone": 8000}) || u.MissingDropped != 1 {
		t.Errorf("missing %v", got)
	}
	c.Reset(time.Now())
	tb.MissingTallied("gone", &count1, &window1)
	if got := c.Snapshot(time.Now()).Missing; !maps.Equal(got, map[string]uint64{"gone": 1}) {
		t.Errorf("after Reset: missing %v", got)
	}
}

// tally stands for the tally a flag set keeps with its error for a key.
type tally struct{ count, window atomic.Uint64 }

func (ts *tally) miss(tb *Table, key string) { tb.MissingTallied(key, &ts.count, &ts.window) }
