package evaluator

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/murmur3"

	"github.com/flagsnap/flagsnap/fractional"
)

// Buckets whose variant is an expression and whose weight is a constant
// are prepared at load; they must answer exactly what the general form
// answers, which is what a weight written as an expression still takes.
func TestFractionalComputedVariantsMatchTheGeneralForm(t *testing.T) {
	for _, v := range []fractional.Version{fractional.V1, fractional.V2, fractional.V3} {
		for _, r := range computedVariantRules {
			prepared := mustLoad(t, computedVariantDoc(r.prepared), WithFractionalVersion(v))
			if x := prepared.flag("f").rule.x; x == nil || x.fraction == nil {
				t.Fatalf("%s: the rule was not prepared at load", r.name)
			}
			general := mustLoad(t, computedVariantDoc(r.general), WithFractionalVersion(v))
			if x := general.flag("f").rule.x; x != nil && x.fraction != nil {
				t.Fatalf("%s: the comparison rule should take the general path", r.name)
			}
			seen := map[string]bool{}
			for i := range computedVariantUsers {
				ctx := computedVariantContext(i)
				got, want := prepared.ResolveString("f", "", ctx), general.ResolveString("f", "", ctx)
				if got.Value != want.Value || got.Reason != want.Reason || (got.Err == nil) != (want.Err == nil) {
					t.Fatalf("%s %v %v: prepared %+v, general %+v", r.name, v, ctx, got, want)
				}
				seen[got.Value] = true
			}
			if len(seen) < 2 {
				t.Errorf("%s %v: every user got %v; the comparison proves little", r.name, v, seen)
			}
		}
	}
}

// computedVariantRules are fractional rules with variants that are
// expressions, each prepared at load and in a general form that is not.
var computedVariantRules = []struct{ name, prepared, general string }{
	{"standard benchmark form", `[[{"var": "targetingKey"}], ["control", 50], ["treatment", 50]]`,
		`[[{"var": "targetingKey"}], ["control", {"+": [50, 0]}], ["treatment", 50]]`},
	{"nested if", `[{"var": "targetingKey"}, [{"if": [{"==": [{"var": "tier"}, "premium"]}, "premium", "standard"]}, 50], ["standard", 50]]`,
		`[{"var": "targetingKey"}, [{"if": [{"==": [{"var": "tier"}, "premium"]}, "premium", "standard"]}, {"+": [50, 0]}], ["standard", 50]]`},
	{"var variant, null weight", `[[{"var": "color"}, null], ["blue", 3]]`,
		`[[{"var": "color"}, null], ["blue", {"+": [3, 0]}]]`},
	{"object variant", `[[{"var": "obj"}, 1], ["blue", 1]]`,
		`[[{"var": "obj"}, {"+": [1, 0]}], ["blue", 1]]`},
}

// computedVariantDoc is the flag "f" with rule as the fractional's
// arguments.
func computedVariantDoc(rule string) string {
	return `{"flags": {"f": {"state": "ENABLED", "defaultVariant": "fallback",
	  "variants": {"fallback": "fallback", "control": "control", "treatment": "treatment", "premium": "premium",
	    "standard": "standard", "blue": "blue", "red": "red", "user-7": "user-7"},
	  "targeting": {"fractional": ` + rule + `}}}}`
}

// computedVariantUsers is how many users computedVariantContext makes.
const computedVariantUsers = 300

// computedVariantContext is user i, of either tier, with an object
// attribute two in three times.
func computedVariantContext(i int) map[string]any {
	ctx := map[string]any{"targetingKey": fmt.Sprintf("user-%d", i), "tier": []string{"premium", "free"}[i%2],
		"color": "red", "obj": map[string]any{"a": 1}}
	if i%3 == 0 {
		delete(ctx, "obj")
	}
	return ctx
}

// fracCase is one fractional evaluation of the evaluator's tests: the
// flag key of doc (every flag when key is ""), evaluated for ctx.
type fracCase struct {
	name     string
	doc      string
	key      string
	ctx      map[string]any
	versions []fractional.Version // nil: every version
	// input is what the case says the fractional hashes: a Go value,
	// hashed as fractional.HashValue hashes it, defaultInput for the flag
	// key and the targeting key, noInput for nothing; nil when it does
	// not say.
	input any
}

// fracInput marks the inputs of a fracCase that are no Go value.
type fracInput int

const (
	defaultInput fracInput = iota + 1
	noInput
)

var (
	v1v2 = []fractional.Version{fractional.V1, fractional.V2}
	v3   = []fractional.Version{fractional.V3}
)

// fracRuleDoc is the flag "f" with rule as its targeting, and a variant
// for every string the rule holds, so that a fractional's answer names
// one; "fallback" is the default.
func fracRuleDoc(rule string) string {
	variants := map[string]any{"fallback": "fallback"}
	var walk func(x any)
	walk = func(x any) {
		switch x := x.(type) {
		case string:
			variants[x] = x
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	var raw any
	if err := json.Unmarshal([]byte(rule), &raw); err != nil {
		panic(fmt.Sprintf("rule %s: %v", rule, err))
	}
	walk(raw)
	names, err := json.Marshal(variants)
	if err != nil {
		panic(err)
	}
	return `{"flags": {"f": {"state": "ENABLED", "defaultVariant": "fallback", "variants": ` + string(names) +
		`, "targeting": ` + rule + `}}}`
}

// fracRuleCase is a fracCase for a rule of the flag "f".
func fracRuleCase(name, rule string, ctx map[string]any, versions []fractional.Version, input any) fracCase {
	return fracCase{name: name, doc: fracRuleDoc(rule), key: "f", ctx: ctx, versions: versions, input: input}
}

// fractionalCases are the fractional evaluations of the evaluator's tests:
// the tables of the tests in this file, explain_test.go and
// typedhash_test.go, and the fractional rules of the other tests, taken
// from their package-level tables or, where a test keeps its rules to
// itself, written again here.
func fractionalCases() []fracCase {
	var cases []fracCase
	for _, ctx := range explainContexts {
		cases = append(cases, fracCase{name: "explainDoc", doc: explainDoc, ctx: ctx})
	}
	for _, c := range explainFractionalCases {
		cases = append(cases, fracCase{name: c.name, doc: explainDoc, key: c.key, ctx: c.ctx, versions: []fractional.Version{c.version}})
	}
	for _, r := range computedVariantRules {
		for i := range computedVariantUsers {
			for _, rule := range []string{r.prepared, r.general} {
				cases = append(cases, fracCase{name: r.name, doc: computedVariantDoc(rule), key: "f", ctx: computedVariantContext(i)})
			}
		}
	}
	cases = append(cases, typedHashFracCases()...)
	cases = append(cases, otherFracCases()...)
	return append(cases, differentialFracCases()...)
}

// typedHashFracCases are the cases of typedhash_test.go.
func typedHashFracCases() []fracCase {
	var cases []fracCase
	for _, c := range v3HashCases() {
		rule := `{"fractional": [` + c.expr + `, ["a", 1], ["b", 1]]}`
		cases = append(cases, fracRuleCase(c.name, rule, c.ctx, v3, c.want), fracRuleCase(c.name, rule, c.ctx, v1v2, nil))
	}
	byH := `{"fractional": [{"var": "h"}, ["a", 1], ["b", 1]]}`
	for _, x := range v3NullForms {
		cases = append(cases, fracRuleCase("null form", byH, map[string]any{"h": x}, v3, noInput))
	}
	for _, c := range textHashCases() {
		cases = append(cases, fracRuleCase("text", byH, map[string]any{"h": c.x}, v1v2, c.text))
	}
	for _, x := range textUnhashable {
		cases = append(cases, fracRuleCase("no text", byH, map[string]any{"h": x}, v1v2, noInput))
	}
	for _, x := range typedHashValues {
		for _, key := range []string{"top", "nested"} {
			cases = append(cases, fracCase{name: "typed " + key, doc: typedHashDoc, key: key, ctx: typedHashContext(x), versions: v3, input: x})
		}
	}
	for _, x := range oracleV3Values {
		cases = append(cases, fracRuleCase("oracle v3", oracleV3Rule(), map[string]any{"targetingKey": "u", "x": x}, v3, x))
	}
	return cases
}

// otherFracCases are the fractional rules of resolve_test.go,
// targetingkey_test.go, flagset_test.go, bench_test.go and
// example_test.go.
func otherFracCases() []fracCase {
	// resolve_test.go, TestResolveEdgeCases's fractional flags.
	resolveRules := []string{
		`{"fractional": [{"var": "targetingKey"}, ["one", 0], ["two", 0]]}`,
		`{"fractional": [{"var": "targetingKey"}, ["one", -50], ["two", 100]]}`,
		`{"fractional": [{"var": "missing_key"}, ["one", 50], ["two", 50]]}`,
		`{"if": [{"fractional": [[false, 0], [true, 100]]}, "big", "small"]}`,
		`{"fractional": [{"var": "targetingKey"}, [{"var": "color"}, 50], ["blue", 50]]}`,
		`{"fractional": [{"var": "targetingKey"}, ["red", {"if": [{"==": [{"var": "tier"}, "premium"]}, 100, 0]}], ["blue", 10]]}`,
		// TestSharedVariantNames and TestFractionalSharesTargetingKey.
		`{"fractional": [{"var": "k"}, ["a", 50], ["b", 50]]}`,
		`{"fractional": [[{"var": "targetingKey"}], ["a", 50], ["b", 50]]}`,
		`{"fractional": [[{"var": "other"}], ["a", 50], ["b", 50]]}`,
		// flagset_test.go: weights rejected at load, and the legacy form.
		`{"fractional": [["a", 50.5], ["b", 49.5]]}`,
		`{"fractional": [["a", 2147483647], ["b", 1]]}`,
		`{"fractionalEvaluation": ["email", ["a", 50], ["b", 50]]}`,
		`{"fractional": [{"var": "email"}, ["a", 50], ["b", 50]]}`,
		// example_test.go.
		`{"if": [{"==": [{"var": "country"}, "NL"]}, "blue", {"fractional": [["red", 50], ["blue", 50]]}]}`,
	}
	var cases []fracCase
	for _, rule := range resolveRules {
		for i := range 20 {
			ctx := map[string]any{"targetingKey": "user-" + strconv.Itoa(i), "color": "red", "tier": []string{"premium", "free"}[i%2],
				"k": strconv.Itoa(i), "other": "o-" + strconv.Itoa(i), "email": strconv.Itoa(i) + "@example.com", "country": "FR"}
			cases = append(cases, fracRuleCase(rule, rule, ctx, nil, nil))
		}
	}
	// targetingkey_test.go: an empty targeting key is none.
	byKey := `{"fractional": [["a", 50], ["b", 50]]}`
	for _, tk := range []any{"", nil, 7} {
		cases = append(cases, fracRuleCase("no targeting key", byKey, map[string]any{"targetingKey": tk}, nil, noInput))
	}
	cases = append(cases, fracRuleCase("targeting key", byKey, map[string]any{"targetingKey": "user-1"}, nil, defaultInput),
		fracRuleCase("legacy", `{"fractionalEvaluation": ["email", ["a", 50], ["b", 50]]}`, map[string]any{"email": "ada@example.com"}, nil, "ada@example.com"))
	for _, ctx := range benchContexts() {
		cases = append(cases, fracCase{name: "benchDoc", doc: benchDoc, ctx: ctx})
	}
	return cases
}

// differentialFracCases are the fractional rules of differential_test.go
// and oracle_test.go.
func differentialFracCases() []fracCase {
	// oracle_test.go, TestOracleAgreesOnExamples.
	ctx := map[string]any{"targetingKey": "user-7", "email": "ada@example.com", "age": 36, "score": 4.5,
		"tags": []string{"beta", "eu"}, "nums": []any{1, 2, 3, nil, "4"}, "user": map[string]any{"name": "ada", "langs": []any{"go", "c"}},
		"empty": "", "flag": true}
	rules := []string{
		`{"fractional": [["a", 50], ["b", 50]]}`,
		`{"fractional": [{"var": "email"}, ["a", 1], ["b", 1], ["c", 0]]}`,
		`{"fractional": [{"var": "nope"}, ["a", 1], ["b", 1]]}`,
		`{"fractional": {"merge": [[{"var": "email"}], [["a", 1], ["b", 1]]]}}`,
		// differential_test.go, TestDifferentialKnownDifferences and
		// TestDifferentialGuards.
		`{"map": [[1, 2], {"fractional": [["a", 1], ["b", 1]]}]}`,
		`{"map": [[1, 2], {"fractionalEvaluation": ["targetingKey", ["a", 1], ["b", 1]]}]}`,
		`{"all": [[1], {"fractional": [["a", 1]]}]}`,
		`{"all": [[1], {"fractional": [{"var": "x"}, ["a", 1]]}]}`,
		`{"all": [[1], {"fractional": ["k", ["a", 1]]}]}`,
		`{"all": [[1], {"fractional": [{"cat": ["k"]}, ["a", 1]]}]}`,
		`{"some": [[1], {"fractionalEvaluation": ["k", ["a", 1]]}]}`,
	}
	for _, r := range diffSeedRules {
		if strings.Contains(r, "fractional") {
			rules = append(rules, r)
		}
	}
	var cases []fracCase
	for _, rule := range rules {
		cases = append(cases, fracRuleCase(rule, rule, ctx, nil, nil))
	}
	// TestDifferentialFlagdCases: invalid UTF-8, hashed as U+FFFD.
	quarters := `["a", 1], ["b", 1], ["c", 1], ["d", 1]]}`
	cases = append(cases,
		fracRuleCase("invalid targeting key", `{"fractional": [["a", 50], ["b", 50]]}`, map[string]any{"targetingKey": "\xff"}, nil, nil),
		fracRuleCase("invalid value", `{"fractional": [{"var": "labels"}, `+quarters, map[string]any{"labels": map[string]string{"a": "\xff"}}, v3, map[string]any{"a": "\ufffd"}),
		fracRuleCase("invalid key", `{"fractional": [{"var": "labels"}, `+quarters, map[string]any{"labels": map[string]string{"\xff": "a"}}, v3, map[string]any{"\ufffd": "a"}),
		fracRuleCase("invalid object key", `{"fractional": [{"var": "obj"}, `+quarters, map[string]any{"obj": map[string]any{"\xff": 1.0}}, v3, map[string]any{"\ufffd": 1.0}),
		// The whole context, with $flagd's properties: no input stated.
		fracRuleCase("invalid top-level key", `{"fractional": [{"var": ""}, `+quarters, map[string]any{"targetingKey": "u", "\xff": 1.0}, v3, nil),
	)
	for _, doc := range diffLoadSeeds {
		if strings.Contains(doc, "fractional") {
			cases = append(cases, fracCase{name: "load seed", doc: doc, ctx: map[string]any{"targetingKey": "u", "email": "e"}})
		}
	}
	return cases
}

// Explain reports the bucketing that evaluation did: for every fractional
// case of the evaluator's tests, in every version it runs in, the
// explanation answers what Resolve answers, the numbers it shows are those
// of hashing the recorded input and choosing by the package's own
// arithmetic, and where a case says what is hashed, evaluation and
// explanation both chose the bucket that input falls in.
func TestFractionalExplainAgreesWithEvaluation(t *testing.T) {
	sets := map[string]*FlagSet{}
	load := func(doc string, v fractional.Version) *FlagSet {
		id := v.String() + doc
		if sets[id] == nil {
			// A fixed clock keeps $flagd.timestamp, which a rule may hash,
			// the same for Explain and Resolve.
			set, err := Load([]byte(doc), WithFractionalVersion(v), withClock(func() time.Time { return testNow }))
			if err != nil {
				t.Fatalf("%s: %v", doc, err)
			}
			sets[id] = set
		}
		return sets[id]
	}
	explained := 0
	for _, c := range fractionalCases() {
		versions := c.versions
		if versions == nil {
			versions = []fractional.Version{fractional.V1, fractional.V2, fractional.V3}
		}
		for _, v := range versions {
			set := load(c.doc, v)
			keys := []string{c.key}
			if c.key == "" {
				keys = set.Keys()
			}
			for _, key := range keys {
				explained += checkExplainedBucketing(t, set, c, key)
			}
		}
	}
	if explained < 7000 {
		t.Errorf("%d fractional operations explained; the cases have gone missing", explained)
	}
}

// checkExplainedBucketing checks one case against one flag, and returns
// how many fractional operations the explanation holds.
func checkExplainedBucketing(t *testing.T, set *FlagSet, c fracCase, key string) int {
	t.Helper()
	where := fmt.Sprintf("%s, %s %s, %v", c.name, set.version, key, c.ctx)
	x, err := set.Explain(key, c.ctx)
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	r := set.ResolveObject(key, nil, c.ctx)
	if x.Variant != r.Variant || !sameOutcome(x, r) {
		t.Errorf("%s: explained %q %v %v, resolved %q %v %v", where, x.Variant, x.Reason, x.Err, r.Variant, r.Reason, r.Err)
	}
	var steps []*Step
	var walk func(s *Step)
	walk = func(s *Step) {
		if s.Bucketing != nil {
			steps = append(steps, s)
		}
		for i := range s.Args {
			walk(&s.Args[i])
		}
	}
	if x.Rule != nil {
		walk(x.Rule)
	}
	for _, s := range steps {
		checkBucketing(t, where, set.version, s)
	}
	if c.input != nil {
		if len(steps) != 1 {
			t.Fatalf("%s: %d fractional operations, want the one whose input the case states", where, len(steps))
		}
		checkStatedInput(t, where, set.version, key, c, steps[0])
	}
	if len(steps) == 1 && steps[0] == x.Rule && r.Err == nil {
		// The fractional is the whole rule: the variant Resolve answers is
		// the selected bucket's.
		b := steps[0].Bucketing
		switch name, isName := steps[0].Result.(string); {
		case b.Selected < 0 && r.Reason != ReasonDefault:
			t.Errorf("%s: no bucket selected, resolved %q %v", where, r.Variant, r.Reason)
		case b.Selected >= 0 && isName && r.Variant != name:
			t.Errorf("%s: bucket %d (%v) selected, resolved %q", where, b.Selected, b.Buckets[b.Selected].Variant, r.Variant)
		}
	}
	return len(steps)
}

// sameOutcome reports whether x and r agree on the reason and the error.
// Explain answers a variant of any type, where ResolveObject reports a
// variant that is no object as a type mismatch.
func sameOutcome(x Explanation, r Resolution[any]) bool {
	if r.Err != nil && r.Err.Code == CodeTypeMismatch {
		return x.Err == nil
	}
	if (x.Err == nil) != (r.Err == nil) || (x.Err != nil && x.Err.Code != r.Err.Code) {
		return false
	}
	return x.Reason == r.Reason
}

// checkBucketing checks that the numbers a fractional step shows are those
// of hashing its recorded input and choosing by fractional.Choose, and
// that the step answered the variant of the bucket shown selected.
func checkBucketing(t *testing.T, where string, v fractional.Version, s *Step) {
	t.Helper()
	b := s.Bucketing
	if b.Version != v {
		t.Errorf("%s: bucketing version %v", where, b.Version)
	}
	if b.NoInput != "" {
		if b.Selected != -1 || len(b.Bytes) != 0 || s.Result != nil {
			t.Errorf("%s: nothing hashed (%s), yet bucket %d, bytes %s, result %v", where, b.NoInput, b.Selected, b.Bytes, s.Result)
		}
		return
	}
	if h := murmur3.Sum32(b.Bytes); h != b.Hash {
		t.Errorf("%s: hash %#x, but the bytes shown, %s, hash to %#x", where, b.Hash, b.Bytes, h)
	}
	var h uint32
	var err error
	if b.Default {
		tk, _ := b.TargetingKey.(string)
		h = fractional.HashDefault(v, b.FlagKey, tk)
	} else {
		h, err = fractional.HashValue(v, b.Value)
	}
	if err != nil || h != b.Hash {
		t.Errorf("%s: hash %#x, but the input shown hashes to %#x (%v)", where, b.Hash, h, err)
	}
	want := fractional.Choose(v, b.Hash, bucketWeights(b), b.Total)
	if b.Bucket != want.Bucket || b.Selected != want.Index {
		t.Errorf("%s: bucket %v, selected %d; the hash chooses %+v", where, b.Bucket, b.Selected, want)
	}
	if b.Selected < 0 {
		if s.Result != nil {
			t.Errorf("%s: no bucket selected, yet the result is %v", where, s.Result)
		}
		return
	}
	sel := b.Buckets[b.Selected]
	if b.Bucket < sel.Start || b.Bucket >= sel.End {
		t.Errorf("%s: bucket %v outside the selected [%v, %v)", where, b.Bucket, sel.Start, sel.End)
	}
	if !sameJSON(sel.Variant, s.Result) {
		t.Errorf("%s: selected variant %v, result %v", where, sel.Variant, s.Result)
	}
}

// checkStatedInput checks the one fractional step of a case that states
// its input against the bucket that input falls in.
func checkStatedInput(t *testing.T, where string, v fractional.Version, key string, c fracCase, s *Step) {
	t.Helper()
	b := s.Bucketing
	var h uint32
	switch in := c.input.(type) {
	case fracInput:
		if in == noInput {
			if b.NoInput == "" {
				t.Errorf("%s: hashed %s, want nothing hashed", where, b.Bytes)
			}
			return
		}
		tk, _ := c.ctx[targetingKeyKey].(string)
		h = fractional.HashDefault(v, key, tk)
	default:
		var err error
		if h, err = fractional.HashValue(v, in); err != nil {
			t.Fatalf("%s: the stated input %#v: %v", where, in, err)
		}
	}
	if b.NoInput != "" || b.Hash != h || b.Default != (c.input == defaultInput) {
		t.Errorf("%s: hash %#x (default %v, %s), want %#x, the hash of %#v", where, b.Hash, b.Default, b.NoInput, h, c.input)
		return
	}
	want := fractional.Choose(v, h, bucketWeights(b), b.Total)
	if b.Selected != want.Index || b.Bucket != want.Bucket {
		t.Errorf("%s: bucket %v, selected %d, want %+v", where, b.Bucket, b.Selected, want)
	}
}

func bucketWeights(b *Bucketing) []uint32 {
	w := make([]uint32, len(b.Buckets))
	for i, c := range b.Buckets {
		w[i] = c.Weight
	}
	return w
}
