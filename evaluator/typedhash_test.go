package evaluator

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flagsnap/flagsnap/fractional"
)

// bucketInput evaluates the bucketing expression expr of a fractional rule
// against ctx and returns the hash it buckets by, or false for none.
func bucketInput(t *testing.T, v fractional.Version, expr string, ctx map[string]any) (uint32, bool) {
	t.Helper()
	n, err := compileRule(decodeRule(t, `{"fractional": [`+expr+`, ["a", 1], ["b", 1]]}`))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	if n.x == nil || n.x.fraction == nil || n.x.fraction.by == nil {
		t.Fatalf("%s: compiled without a bucketing expression", expr)
	}
	e := evalState{fs: ruleSet(v), f: &flag{key: "test-flag", keyRef: "test-flag"}, ctx: ctx, cur: value{k: kRoot}}
	by := e.evaluate(n.x.fraction.by)
	if e.err != nil {
		t.Fatalf("%s: %v", expr, e.err)
	}
	return e.bucketHash(true, by)
}

type (
	hashAccount struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	}
	hashUserID int64
	hashLabel  string
)

// v3HashCase is a bucketing expression and a context, with the Go value
// whose hash v3 must bucket by.
type v3HashCase struct {
	name string
	expr string
	ctx  map[string]any
	want any // the Go value whose hash is expected
	// jsonDiffers marks values whose JSON form hashes differently: the
	// form flagd's engine, and this one before, bucketed by.
	jsonDiffers bool
}

// v3HashCases are the cases of TestV3HashesTheCallersValue, shared with
// TestFractionalExplainAgreesWithEvaluation.
func v3HashCases() []v3HashCase {
	big := int64(math.MaxInt64)
	newYear := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	half := newYear.Add(500 * time.Millisecond)
	return []v3HashCase{
		{"int64 beyond 2^53", `{"var": "h"}`, map[string]any{"h": big}, big, true},
		{"uint64", `{"var": "h"}`, map[string]any{"h": uint64(math.MaxUint64)}, uint64(math.MaxUint64), true},
		{"int", `{"var": "h"}`, map[string]any{"h": 1<<53 + 1}, 1<<53 + 1, true},
		{"int8", `{"var": "h"}`, map[string]any{"h": int8(-7)}, int8(-7), false},
		{"float32", `{"var": "h"}`, map[string]any{"h": float32(272180.5625)}, float32(272180.5625), true},
		{"float64", `{"var": "h"}`, map[string]any{"h": 0.1}, 0.1, false},
		{"json.Number integer", `{"var": "h"}`, map[string]any{"h": json.Number("9223372036854775807")}, big, true},
		{"json.Number fraction", `{"var": "h"}`, map[string]any{"h": json.Number("0.1")}, 0.1, false},
		{"named int64", `{"var": "h"}`, map[string]any{"h": hashUserID(1<<53 + 1)}, int64(1<<53 + 1), true},
		{"named string", `{"var": "h"}`, map[string]any{"h": hashLabel("ada")}, "ada", false},
		{"bool", `{"var": "h"}`, map[string]any{"h": true}, true, false},
		{"time", `{"var": "h"}`, map[string]any{"h": newYear}, newYear, true},
		{"time with a fraction of a second", `{"var": "h"}`, map[string]any{"h": half}, half, true},
		{"time pointer", `{"var": "h"}`, map[string]any{"h": &half}, half, true},
		{"struct as its JSON form", `{"var": "h"}`, map[string]any{"h": hashAccount{ID: big, Name: "x"}},
			map[string]any{"id": big, "name": "x"}, true},
		{"struct pointer", `{"var": "h"}`, map[string]any{"h": &hashAccount{ID: big}},
			map[string]any{"id": big, "name": ""}, true},
		{"map", `{"var": "h"}`, map[string]any{"h": map[string]any{
			"id": big, "seen": newYear, "r": float32(0.1), "tags": []string{"a"}, "n": json.Number("9007199254740993"),
		}}, map[string]any{"id": big, "seen": newYear, "r": float32(0.1), "tags": []any{"a"}, "n": int64(9007199254740993)}, true},
		{"typed map", `{"var": "h"}`, map[string]any{"h": map[string]int64{"id": big}}, map[string]any{"id": big}, true},
		{"map in a list in a map", `{"var": "h"}`, map[string]any{"h": map[string]any{"l": []any{map[string]any{"t": &newYear}}}},
			map[string]any{"l": []any{map[string]any{"t": newYear}}}, true},
		{"invalid UTF-8 in a map", `{"var": "h"}`, map[string]any{"h": map[string]any{"\xff": "a\xfe"}},
			map[string]any{"\ufffd": "a\ufffd"}, false},

		// Values reached by a path.
		{"path into a map", `{"var": "u.id"}`, map[string]any{"u": map[string]any{"id": big}}, big, true},
		{"path into a list", `{"var": "u.ids.1"}`, map[string]any{"u": map[string]any{"ids": []any{1, uint64(math.MaxUint64)}}},
			uint64(math.MaxUint64), true},
		{"path into an int64 slice", `{"var": "ids.0"}`, map[string]any{"ids": []int64{big}}, big, true},
		{"path into an int slice", `{"var": "ids.1"}`, map[string]any{"ids": []int{1, 1<<53 + 1}}, 1<<53 + 1, true},
		{"small int in an int slice", `{"var": "ids.0"}`, map[string]any{"ids": []int{12}}, 12, false},
		{"path into a struct", `{"var": "acct.id"}`, map[string]any{"acct": hashAccount{ID: big}}, big, true},
		{"path to a time in a map", `{"var": "u.seen"}`, map[string]any{"u": map[string]any{"seen": newYear}}, newYear, true},
		{"path to a time in a typed map", `{"var": "u.seen"}`, map[string]any{"u": map[string]time.Time{"seen": half}}, half, true},
		{"path to a float32 in a typed slice", `{"var": "u.1"}`, map[string]any{"u": []float32{1, 0.1}}, float32(0.1), true},

		// Operators that hand a value on keep it; operators that compute
		// one work in float64.
		{"through if", `{"if": [true, {"var": "h"}, null]}`, map[string]any{"h": big}, big, true},
		{"through or", `{"or": [false, {"var": "h"}]}`, map[string]any{"h": float32(0.1)}, float32(0.1), true},
		{"a default written in the rule", `{"var": ["nope", 9007199254740993]}`, nil, float64(1 << 53), false},
		{"arithmetic", `{"+": [{"var": "h"}, 0]}`, map[string]any{"h": big}, float64(big), false},
		{"cat", `{"cat": [{"var": "h"}]}`, map[string]any{"h": big}, "9223372036854776000", false},
	}
}

// In v3 the value a var takes from the context is hashed as the caller's
// Go value, exactly as fractional.HashValue hashes it, at any depth;
// values a rule computes are hashed in the targeting language's model.
func TestV3HashesTheCallersValue(t *testing.T) {
	for _, c := range v3HashCases() {
		t.Run(c.name, func(t *testing.T) {
			got, ok := bucketInput(t, fractional.V3, c.expr, c.ctx)
			if !ok {
				t.Fatalf("%s over %v: no bucketing value", c.expr, c.ctx)
			}
			want, err := fractional.HashValue(fractional.V3, c.want)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				enc, _ := fractional.AppendCBOR(nil, c.want)
				t.Errorf("%s over %#v: hash %#x, want %#x, the hash of %x", c.expr, c.ctx, got, want, enc)
			}
			viaJSON, err := fractional.HashValue(fractional.V3, jsonRoundTrip(t, c.want))
			if err != nil {
				t.Fatal(err)
			}
			if differs := viaJSON != want; differs != c.jsonDiffers {
				t.Errorf("the JSON form of %#v hashes differently: %v, want %v", c.want, differs, c.jsonDiffers)
			}
		})
	}
}

func jsonRoundTrip(t *testing.T, x any) any {
	t.Helper()
	b, err := json.Marshal(x)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// v3NullForms are null in the Go forms a context may hold it in.
var v3NullForms = []any{nil, []any(nil), map[string]any(nil), []string(nil), (*time.Time)(nil), (*hashAccount)(nil)}

// Null, in whatever Go form, is no bucketing value in v3.
func TestV3NullFormsAreNoValue(t *testing.T) {
	for _, x := range v3NullForms {
		if h, ok := bucketInput(t, fractional.V3, `{"var": "h"}`, map[string]any{"h": x}); ok {
			t.Errorf("%#v: bucketed by %#x", x, h)
		}
	}
}

// textHashCase is a context value and the text v1 and v2 hash for it.
type textHashCase struct {
	x    any
	text string
}

func textHashCases() []textHashCase {
	newYear := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	return []textHashCase{
		{newYear, "2024-01-01T00:00:00Z"},
		{&newYear, "2024-01-01T00:00:00Z"},
		{hashLabel("ada"), "ada"},
		{"a\xff", "a\ufffd"},
	}
}

// textUnhashable are context values that are no bucketing value before v3.
var textUnhashable = []any{int64(math.MaxInt64), float32(0.5), json.Number("1"), true, map[string]any{"a": "b"}}

// Before v3 only strings are hashed; a time is its JSON text, as flagd's
// engine reads it, and numbers are no bucketing value.
func TestV1V2HashText(t *testing.T) {
	for _, v := range []fractional.Version{fractional.V1, fractional.V2} {
		for _, c := range textHashCases() {
			got, ok := bucketInput(t, v, `{"var": "h"}`, map[string]any{"h": c.x})
			if want := fractional.HashString(v, c.text); !ok || got != want {
				t.Errorf("%v %#v: %#x %v, want %#x, the hash of %q", v, c.x, got, ok, want, c.text)
			}
		}
		for _, x := range textUnhashable {
			if h, ok := bucketInput(t, v, `{"var": "h"}`, map[string]any{"h": x}); ok {
				t.Errorf("%v %#v: bucketed by %#x, want no value", v, x, h)
			}
		}
	}
}

// The comparison operators keep their float64 model whatever the Go type:
// the exact value is for hashing only.
func TestExactValuesCompareAsBefore(t *testing.T) {
	cases := []struct {
		rule string
		x    any
		want any
	}{
		{`{"==": [{"var": "x"}, 9223372036854775807]}`, int64(math.MaxInt64), true},
		{`{"==": [{"var": "x"}, 9223372036854775806]}`, int64(math.MaxInt64), true},
		{`{"==": [{"var": "x"}, 0.1]}`, float32(0.1), true},
		{`{"===": [{"var": "x"}, 0.1]}`, json.Number("0.1"), true},
		{`{"<": [{"var": "x"}, 272180.57]}`, float32(272180.5625), true},
		{`{"in": [{"var": "x"}, [9007199254740992]]}`, hashUserID(1<<53 + 1), true},
		{`{"==": [{"var": "x"}, "2024-01-01T00:00:00Z"]}`, time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), true},
		{`{"cat": [{"var": "x"}]}`, time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), "2024-01-01T00:00:00Z"},
		{`{"var": "x.1"}`, []int64{0, math.MaxInt64}, float64(math.MaxInt64)},
	}
	for _, c := range cases {
		got, err := evalRule(t, c.rule, map[string]any{"x": c.x})
		if err != nil || !sameJSON(got, c.want) {
			t.Errorf("%s with x = %#v: %#v (%v), want %#v", c.rule, c.x, got, err, c.want)
		}
	}
}

// typedHashDoc buckets by a context value at the top level ("top") and in a
// map ("nested"), typedHashContext(x) holding x in both places.
const typedHashDoc = `{"flags": {
  "top": {"state": "ENABLED", "variants": {"a": "a", "b": "b"}, "defaultVariant": "a",
    "targeting": {"fractional": [{"var": "n"}, ["a", 1], ["b", 1]]}},
  "nested": {"state": "ENABLED", "variants": {"a": "a", "b": "b"}, "defaultVariant": "a",
    "targeting": {"fractional": [{"var": "user.n"}, ["a", 1], ["b", 1]]}}
}}`

func typedHashContext(x any) map[string]any {
	return map[string]any{"targetingKey": "k", "n": x, "user": map[string]any{"n": x}}
}

// typedHashValues are hashed in v3 without an allocation.
var typedHashValues = []any{"user-1", int64(math.MaxInt64), uint64(math.MaxUint64), 42, float32(272180.5625), 0.1,
	json.Number("9223372036854775807"), json.Number("2.5"), true}

// Numbers and strings from the context reach the v3 hash without an
// allocation, at the top level and inside a map.
func TestTypedHashingDoesNotAllocate(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation changes allocation counts")
	}
	set := mustLoad(t, typedHashDoc, WithFractionalVersion(fractional.V3))
	for _, x := range typedHashValues {
		ctx := typedHashContext(x)
		for _, key := range []string{"top", "nested"} {
			if r := set.ResolveString(key, "", ctx); r.Reason != ReasonTargetingMatch {
				t.Fatalf("%s %#v: %+v", key, x, r)
			}
			if n := testing.AllocsPerRun(100, func() { set.ResolveString(key, "", ctx) }); n != 0 {
				t.Errorf("%s %T %v: %v allocations per resolution", key, x, x, n)
			}
		}
	}
}

// oracleV3Rule buckets by the context's x into 64 buckets, b0 to b63, fine
// enough that a value that hashes differently rarely lands in the same one.
func oracleV3Rule() string {
	buckets := make([]string, 64)
	for i := range buckets {
		buckets[i] = `["b` + strconv.Itoa(i) + `", 1]`
	}
	return `{"fractional": [{"var": "x"}, ` + strings.Join(buckets, ", ") + `]}`
}

// oracleV3Values are values that JSON cannot carry exactly.
var oracleV3Values = []any{
	int64(math.MaxInt64),
	float32(272180.5625),
	map[string]any{"ids": []int64{1<<53 + 1}},
	map[string]any{"l": []any{nil, map[string]any{"r": float32(0.1), "s": "x"}}},
}

// The reference engine sees the context after a JSON round trip, so in v3
// it buckets by another value than ours wherever JSON cannot carry the
// caller's number exactly; compareWithOracle gives both engines the JSON
// form then. Should the engines agree on these without that, the
// substitution hides nothing and can go.
func TestOracleV3SeesJSONNumbers(t *testing.T) {
	rule := oracleV3Rule()
	for _, x := range oracleV3Values {
		ctx := map[string]any{"targetingKey": "u", "x": x}
		if _, ok := jsonNumbers(ctx); !ok {
			t.Errorf("%#v: jsonNumbers finds nothing to replace", x)
		}
		raw := decodeRule(t, rule)
		theirs, theirErr := oracleEval(raw, ctx, "test-flag", fractional.V3)
		n, err := compileRule(raw)
		if err != nil {
			t.Fatal(err)
		}
		ours, ourErr := runRule(ruleSet(fractional.V3), n, "test-flag", ctx)
		if ourErr == nil && theirErr == nil && sameJSON(ours, theirs) {
			t.Errorf("%#v: the engines agree (%v) without the JSON form", x, ours)
		}
		if _, _, ourErr, theirErr, ok := compareWithOracle(t, rule, ctx, fractional.V3); !ok {
			t.Errorf("%#v: the engines disagree on the JSON form (%v, %v)", x, ourErr, theirErr)
		}
	}
	// Numbers JSON carries exactly are left alone.
	for _, x := range []any{int64(1 << 53), float32(0.5), []int{1, 2}, map[string]any{"a": uint64(7)}} {
		if _, ok := jsonNumbers(map[string]any{"x": x}); ok {
			t.Errorf("%#v: jsonNumbers replaces a number JSON carries exactly", x)
		}
	}
}
