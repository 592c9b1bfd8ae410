package evaluator

import (
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

const usageDoc = `{"flags": {
  "b": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "on"},
  "r": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off",
        "targeting": {"if": [{"==": [{"var": "tier"}, "gold"]}, "on"]}}
}}`

func attached(t *testing.T, c *UsageCounter, doc string, old *FlagSet) *FlagSet {
	t.Helper()
	set, err := Load([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	c.Attach(set, old)
	return set
}

// The header a flag gains fits the size class a flag had without it.
func TestFlagStaysInItsSizeClass(t *testing.T) {
	if n := unsafe.Sizeof(flag{}); n > 128 {
		t.Errorf("a flag is %d bytes", n)
	}
}

// Each stripe of a chunk starts a cache line, so that two stripes never
// share one.
func TestStripesHaveLinesOfTheirOwn(t *testing.T) {
	c := newUsageCounter(time.Now(), 4)
	for range 50 {
		p := c.alloc(5)
		for s := range c.stripes {
			a := uintptr(p) + uintptr(s)*stripeBytes
			start, end := uintptr(c.chunk)+uintptr(s)*stripeBytes, uintptr(c.chunk)+uintptr(s+1)*stripeBytes
			if uintptr(c.chunk)%64 != 0 || a < start || a+5*8 > end {
				t.Fatalf("stripe %d of a region at %#x, its stripe at [%#x, %#x)", s, a, start, end)
			}
		}
	}
}

// A stripe that goroutines of different stack buckets take turns at is
// noticed, and the bucket that noticed moves; nothing is lost meanwhile.
func TestSharedStripesAreSeparated(t *testing.T) {
	c := newUsageCounter(time.Now(), 2)
	for b := range c.remap {
		c.remap[b] = 0 // every bucket on stripe 0
	}
	set := attached(t, c, usageDoc, nil)
	const rounds = 1000
	for range rounds {
		// Frames at seven depths, each in another bucket; seven, so that
		// the samples (one in 64 evaluations) go round them.
		for d := range 7 {
			atDepth(d, func() { set.ResolveBool("b", false, nil) })
		}
	}
	moved := 0
	for b := range c.remap {
		if c.remap[b] != 0 {
			moved++
		}
	}
	if moved == 0 {
		t.Error("no bucket moved off the shared stripe")
	}
	if u := c.Snapshot().Flags["b"]; u.Evaluations != 7*rounds || u.Variants["on"] != 7*rounds {
		t.Errorf("b: %+v", u)
	}
}

// atDepth calls fn d frames of 4 KiB below its own: in another stack
// bucket at each depth.
//
//go:noinline
func atDepth(d int, fn func()) {
	var pad [4096]byte
	pad[d] = byte(d)
	if d == 0 {
		fn()
	} else {
		atDepth(d-1, fn)
	}
	padSink += pad[(d*7)%len(pad)]
}

var padSink byte

// Counters freed with a flag go to another only after the quarantine, and
// zeroed.
func TestFreedCountersWaitAndComeBackZero(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	c := newUsageCounter(start, 2)
	p := c.alloc(4)
	(*atomic.Uint64)(unsafe.Add(p, stripeBytes+8)).Store(7)
	c.release(p, 4)
	if q := c.alloc(4); q == p {
		t.Fatal("freed counters reused at once")
	}
	c.Tick(start.Add(quarantineSeconds * time.Second))
	if q := c.alloc(4); q != p {
		t.Fatal("freed counters not reused after the quarantine")
	}
	if n := c.sum(p, 1); n != 0 {
		t.Errorf("reused counters hold %d", n)
	}
}

func TestAttachCarriesCountsByKeyAndVariants(t *testing.T) {
	c := newUsageCounter(time.Now(), 2)
	v1 := attached(t, c, usageDoc, nil)
	v1.ResolveBool("b", false, nil)
	v1.ResolveBool("r", false, map[string]any{"tier": "gold"})
	v1.ResolveString("b", "", nil) // a type mismatch
	v1.ResolveBool("nope", false, nil)
	// An evaluation still running on v1 when v2 replaces it counts with v2's.
	v2 := attached(t, c, strings.Replace(usageDoc, `"gold"`, `"silver"`, 1), v1)
	v1.ResolveBool("r", false, nil)
	v2.ResolveBool("r", false, nil)
	c.Attach(v2, v1) // again: nothing changes
	s := c.Snapshot()
	if b := s.Flags["b"]; b.Evaluations != 2 || b.Errors != 1 || !maps.Equal(b.Variants, map[string]uint64{"on": 1}) {
		t.Errorf("b: %+v", b)
	}
	if r := s.Flags["r"]; r.Evaluations != 3 || !maps.Equal(r.Variants, map[string]uint64{"on": 1, "off": 2}) {
		t.Errorf("r: %+v", r)
	}
	if !maps.Equal(s.Missing, map[string]uint64{"nope": 1}) {
		t.Errorf("missing: %v", s.Missing)
	}
	// A set with r alone: b leaves, with its counts.
	v3 := attached(t, c, `{"flags": {"r": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off"}}}`, v2)
	removed, _ := c.Attach(v3, v2)
	if removed != nil {
		t.Errorf("attached twice, removed %v", removed)
	}
	if _, ok := c.Snapshot().Flags["b"]; ok {
		t.Error("b is still counted")
	}
}

func TestAttachReportsRemovedFlags(t *testing.T) {
	c := newUsageCounter(time.Now(), 2)
	v1 := attached(t, c, usageDoc, nil)
	v1.ResolveBool("b", false, nil)
	v2, err := Load([]byte(`{"flags": {}}`))
	if err != nil {
		t.Fatal(err)
	}
	removed, unused := c.Attach(v2, v1)
	if len(removed) != 1 || removed["b"].Evaluations != 1 || unused != 1 {
		t.Errorf("removed %+v and %d others", removed, unused)
	}
}

// Variants past what a stripe holds are counted, as serving none.
func TestManyVariants(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"flags": {"many": {"state": "ENABLED", "defaultVariant": "v299", "variants": {`)
	for i := range 300 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"v%03d": %d`, i, i)
	}
	b.WriteString(`}}}}`)
	c := newUsageCounter(time.Now(), 2)
	set := attached(t, c, b.String(), nil)
	set.ResolveInt("many", 0, nil)
	set.ResolveInt("many", 0, map[string]any{})
	if u := c.Snapshot().Flags["many"]; u.Evaluations != 2 || u.Variants != nil {
		t.Errorf("many: %+v", u)
	}
}

func TestMissingKeysUnderConcurrency(t *testing.T) {
	c := newUsageCounter(time.Now(), 2)
	set := attached(t, c, usageDoc, nil)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 1000 {
				set.ResolveBool("gone", false, nil)
				set.ResolveBool(fmt.Sprint("gone-", (i+w)%3), false, nil)
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			c.Snapshot()
		}
	})
	wg.Wait()
	want := map[string]uint64{"gone": 4000, "gone-0": 1334, "gone-1": 1333, "gone-2": 1333}
	if got := c.Snapshot().Missing; !maps.Equal(got, want) {
		t.Errorf("missing %v, want %v", got, want)
	}
}

// A flag evaluated for the first time on a set that has been replaced by
// one where its variants differ counts with the key's former variants.
func TestFirstEvaluationOnAReplacedSet(t *testing.T) {
	c := newUsageCounter(time.Now(), 2)
	v1 := attached(t, c, usageDoc, nil)
	attached(t, c, strings.Replace(usageDoc, `{"on": true, "off": false}, "defaultVariant": "on"`, `{"yes": true, "no": false}, "defaultVariant": "yes"`, 1), v1)
	v1.ResolveBool("b", false, nil)
	v1.ResolveBool("b", false, nil)
	if u := c.Snapshot().Flags["b"]; u.Evaluations != 2 || !maps.Equal(u.Variants, map[string]uint64{"on": 2}) {
		t.Errorf("b: %+v", u)
	}
}

// When a flag was last evaluated is the second of the first Tick, or
// Snapshot, that sees its counts changed.
func TestLastEvaluatedIsStampedBySecond(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	c := newUsageCounter(start, 2)
	set := attached(t, c, usageDoc, nil)
	set.ResolveBool("b", false, nil)
	c.Tick(start.Add(time.Second))
	c.Tick(start.Add(5 * time.Second)) // nothing evaluated since
	s := c.Snapshot()
	if got := s.Flags["b"].LastEvaluated; !got.Equal(start.Add(time.Second)) || got.Location() != time.UTC {
		t.Errorf("b last evaluated at %v, want %v", got, start.Add(time.Second))
	}
	if got := s.Flags["r"].LastEvaluated; !got.IsZero() {
		t.Errorf("r, never evaluated, last evaluated at %v", got)
	}
	set.ResolveBool("b", false, nil)
	if got := c.Snapshot().Flags["b"].LastEvaluated; time.Since(got) > 2*time.Second {
		t.Errorf("b evaluated again, last at %v", got)
	}
	c.Reset(time.Now())
	if got := c.Snapshot().Flags["b"].LastEvaluated; !got.IsZero() {
		t.Errorf("after Reset, b last evaluated at %v", got)
	}
}
