package ld

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/launchdarkly/go-sdk-common/v3/ldcontext"
	ldeval "github.com/launchdarkly/go-server-sdk-evaluation/v3"
	"github.com/launchdarkly/go-server-sdk-evaluation/v3/ldmodel"
	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap"
	"github.com/flagsnap/flagsnap/bench/flaggen"
)

// engines are both engines loaded from the benchmark's own files, so
// that what is compared is what was timed.
type engines struct {
	flags []flaggen.Flag
	fs    *flagsnap.Provider
	ld    ldeval.Evaluator
	ldSet map[string]Item
}

func load(t *testing.T, n int) *engines {
	flagdPath, ldPath := paths(t, n)
	p := loadFlagsnap(t, flagdPath)
	t.Cleanup(p.Shutdown)
	set := loadLD(t, ldPath)
	return &engines{flags: flaggen.Flags(n, 0), fs: p, ld: ldeval.NewEvaluator(dataProvider(set)), ldSet: set}
}

type dataProvider map[string]Item

func (d dataProvider) GetFeatureFlag(key string) *ldmodel.FeatureFlag { return Flag(d, key) }
func (d dataProvider) GetSegment(string) *ldmodel.Segment             { return nil }

// evalContext is one context in both engines' forms, built once: building
// a LaunchDarkly context of a hundred attributes costs more than
// evaluating with it.
type evalContext struct {
	fs   openfeature.FlattenedContext
	ld   ldcontext.Context
	desc string
}

func newContext(key string, strs map[string]string) evalContext {
	fs := openfeature.FlattenedContext{"targetingKey": key}
	b := ldcontext.NewBuilder(key)
	for k, v := range strs {
		fs[k] = v
		b.SetString(k, v)
	}
	return evalContext{fs: fs, ld: b.Build(), desc: fmt.Sprintf("%s %v", key, strs)}
}

func (e *engines) flagsnapVariant(t *testing.T, f *flaggen.Flag, c evalContext) string {
	t.Helper()
	var d openfeature.ProviderResolutionDetail
	if _, isBool := f.Variants[0].Value.(bool); isBool {
		d = e.fs.BooleanEvaluation(context.Background(), f.Key, false, c.fs).ProviderResolutionDetail
	} else {
		d = e.fs.StringEvaluation(context.Background(), f.Key, "", c.fs).ProviderResolutionDetail
	}
	if err := d.Error(); err != nil {
		t.Fatalf("flagsnap, %s: %v", f.Key, err)
	}
	return d.Variant
}

func (e *engines) ldVariant(t *testing.T, f *flaggen.Flag, c evalContext) string {
	t.Helper()
	lf := Flag(e.ldSet, f.Key)
	if lf == nil {
		t.Fatalf("LaunchDarkly has no %s", f.Key)
	}
	r := e.ld.Evaluate(lf, c.ld, nil)
	i, ok := r.Detail.VariationIndex.Get()
	if !ok || i < 0 || i >= len(f.Variants) {
		t.Fatalf("LaunchDarkly, %s: variation %v, reason %v", f.Key, r.Detail.VariationIndex, r.Detail.Reason)
	}
	return f.Variants[i].Name
}

// TestSameVariants evaluates the flags whose outcome does not depend on a
// hash (all but fractional) in both engines, for contexts drawn at random
// and for contexts made to satisfy each rule, and wants the same variant
// every time, and every rule kind seen both matching and not.
func TestSameVariants(t *testing.T) {
	const n = 10_000
	e := load(t, n)
	rng := rand.New(rand.NewPCG(7, 7))
	var checked []*flaggen.Flag
	for i := range e.flags {
		if e.flags[i].Kind != flaggen.Fractional {
			checked = append(checked, &e.flags[i])
		}
	}
	seen := map[flaggen.Kind]map[string]int{}
	compare := func(f *flaggen.Flag, c evalContext) {
		want, got := e.flagsnapVariant(t, f, c), e.ldVariant(t, f, c)
		if got != want {
			t.Fatalf("%s (%v) for %s: LaunchDarkly serves %q, flagsnap %q", f.Key, f.Kind, c.desc, got, want)
		}
		if seen[f.Kind] == nil {
			seen[f.Kind] = map[string]int{}
		}
		seen[f.Kind][want]++
	}

	// Random contexts: most attributes set, to the value some rule wants
	// or to one it does not, and a version around the rules' versions.
	shared := []evalContext{newContext("user-empty", nil)}
	for i := range 30 {
		strs := map[string]string{}
		for a := range 100 {
			switch r := rng.IntN(10); {
			case r < 3:
			case r < 6:
				strs["attr_"+strconv.Itoa(a)] = "value-" + strconv.Itoa(a)
			case r < 9:
				strs["attr_"+strconv.Itoa(a)] = "value-" + strconv.Itoa(rng.IntN(5))
			default:
				strs["attr_"+strconv.Itoa(a)] = []string{"a", "b", "x"}[rng.IntN(3)]
			}
		}
		if rng.IntN(5) != 0 {
			strs[flaggen.SemVerAttribute] = fmt.Sprintf("%d.%d.%d", rng.IntN(6), rng.IntN(11), rng.IntN(3))
		}
		shared = append(shared, newContext("user-"+strconv.Itoa(i), strs))
	}
	for _, c := range shared {
		for _, f := range checked {
			compare(f, c)
		}
	}

	// A context made for each and of each rule, where one exists, and
	// each sem_ver flag's own version, where >= and = meet.
	for _, f := range checked {
		for _, and := range f.Rule {
			strs := map[string]string{}
			ok := true
			for _, cond := range and {
				v := cond.Values[len(cond.Values)-1]
				if old, dup := strs[cond.Attribute]; dup && old != v {
					ok = false
				}
				strs[cond.Attribute] = v
			}
			if ok {
				compare(f, newContext("user-"+f.Key, strs))
			}
		}
		if f.Kind == flaggen.SemVer {
			compare(f, newContext("user-"+f.Key, map[string]string{flaggen.SemVerAttribute: f.SemVer}))
		}
	}

	for _, k := range []flaggen.Kind{flaggen.Equals, flaggen.In, flaggen.AndOr, flaggen.SemVer} {
		if seen[k]["on"] == 0 || seen[k]["off"] == 0 {
			t.Errorf("%v: outcomes %v, want both on and off", k, seen[k])
		}
	}
	t.Logf("%d flags, same variants: %v", len(checked), seen)
}

// TestFractionalShares checks the one translation that cannot give the
// same variants, fractional: each engine hashes the targeting key its own
// way, but both must split the keys in the flag's proportions.
func TestFractionalShares(t *testing.T) {
	const n, keys = 10_000, 2000
	e := load(t, n)
	tested := 0
	for i := range e.flags {
		f := &e.flags[i]
		if f.Kind != flaggen.Fractional {
			continue
		}
		want := float64(f.Buckets[0].Weight) / float64(f.Buckets[0].Weight+f.Buckets[1].Weight)
		var fsOn, ldOn int
		for k := range keys {
			c := newContext("user-"+strconv.Itoa(k), nil)
			if e.flagsnapVariant(t, f, c) == f.Buckets[0].Variant {
				fsOn++
			}
			if e.ldVariant(t, f, c) == f.Buckets[0].Variant {
				ldOn++
			}
		}
		// 4.5 standard deviations of a share of 2,000 at worst (p = ½).
		const tolerance = 0.05
		for name, on := range map[string]int{"flagsnap": fsOn, "LaunchDarkly": ldOn} {
			if got := float64(on) / keys; math.Abs(got-want) > tolerance {
				t.Errorf("%s, %s: %.3f of the keys get %q, want %.3f", name, f.Key, got, f.Buckets[0].Variant, want)
			}
		}
		if tested++; tested == 10 {
			break
		}
	}
	if tested == 0 {
		t.Fatal("no fractional flag")
	}
}
