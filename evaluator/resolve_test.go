package evaluator

import (
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flagsnap/flagsnap/fractional"
)

// resolutionDoc has a flag for every row of the resolution table.
const resolutionDoc = `{"flags": {
  "static":        {"state": "ENABLED",  "variants": {"on": true, "off": false}, "defaultVariant": "on"},
  "empty-rule":    {"state": "ENABLED",  "variants": {"on": true, "off": false}, "defaultVariant": "off", "targeting": {}},
  "no-default":    {"state": "ENABLED",  "variants": {"on": true, "off": false}},
  "null-default":  {"state": "ENABLED",  "variants": {"on": true, "off": false}, "defaultVariant": null},
  "disabled":      {"state": "DISABLED", "variants": {"on": true, "off": false}, "defaultVariant": "on"},
  "match":         {"state": "ENABLED",  "variants": {"on": true, "off": false}, "defaultVariant": "off", "targeting": {"if": [true, "on"]}},
  "bool-result":   {"state": "ENABLED",  "variants": {"true": 1, "false": 2}, "defaultVariant": "false", "targeting": {"==": [1, 1]}},
  "null-result":   {"state": "ENABLED",  "variants": {"on": true, "off": false}, "defaultVariant": "off", "targeting": {"if": [false, "on", null]}},
  "null-no-default": {"state": "ENABLED", "variants": {"on": true, "off": false}, "targeting": {"if": [false, "on"]}},
  "unknown-name":  {"state": "ENABLED",  "variants": {"on": true, "off": false}, "defaultVariant": "off", "targeting": {"if": [true, "maybe"]}},
  "array-result":  {"state": "ENABLED",  "variants": {"on": true, "off": false}, "defaultVariant": "off", "targeting": {"merge": ["on"]}},
  "runtime-error": {"state": "ENABLED",  "variants": {"on": true, "off": false}, "defaultVariant": "off", "targeting": {"+": [{"var": "flag"}, 1]}},
  "broken":        {"state": "ENABLED",  "variants": {"on": true, "off": false}, "defaultVariant": "off", "targeting": {"nope": []}},
  "number-result": {"state": "ENABLED",  "variants": {"1": "one", "1.5": "one and a half", "1e+21": "big", "1e-7": "small", "0": "zero"},
                    "defaultVariant": "0", "targeting": {"var": "n"}},
  "nan-result":    {"state": "ENABLED",  "variants": {"on": true, "off": false}, "defaultVariant": "off", "targeting": {"/": [0, 0]}}
}}`

func TestResolutionTable(t *testing.T) {
	set := mustLoad(t, resolutionDoc)
	ctx := map[string]any{"flag": true}
	cases := []struct {
		key     string
		value   bool
		variant string
		reason  Reason
		code    ErrorCode
	}{
		{"missing", true, "", ReasonError, CodeFlagNotFound},
		{"static", true, "on", ReasonStatic, 0},
		{"empty-rule", false, "off", ReasonStatic, 0},
		{"no-default", true, "", ReasonDefault, 0},
		{"null-default", true, "", ReasonDefault, 0},
		{"disabled", true, "", ReasonDisabled, 0},
		{"match", true, "on", ReasonTargetingMatch, 0},
		{"null-result", false, "off", ReasonDefault, 0},
		{"null-no-default", true, "", ReasonDefault, 0},
		{"unknown-name", true, "", ReasonError, CodeGeneral},
		{"array-result", true, "", ReasonError, CodeGeneral},
		{"runtime-error", true, "", ReasonError, CodeParseError},
		{"broken", true, "", ReasonError, CodeParseError},
		{"nan-result", true, "", ReasonError, CodeParseError},
	}
	// With the caller's default true alone, a row that expects true could
	// not tell a variant's value from the default; so each row also runs
	// with false, which a row without a variant must then answer.
	for _, def := range []bool{true, false} {
		for _, c := range cases {
			want := c.value
			if c.variant == "" {
				want = def
			}
			r := set.ResolveBool(c.key, def, ctx)
			var code ErrorCode
			if r.Err != nil {
				code = r.Err.Code
			}
			if r.Value != want || r.Variant != c.variant || r.Reason != c.reason || code != c.code {
				t.Errorf("%s (default %v): got %v %q %v %v (%v), want %v %q %v %v", c.key, def, r.Value, r.Variant, r.Reason, code, r.Err, want, c.variant, c.reason, c.code)
			}
		}
	}
	// true and false name the variants "true" and "false".
	if r := set.ResolveInt("bool-result", 0, nil); r.Value != 1 || r.Variant != "true" || r.Reason != ReasonTargetingMatch {
		t.Errorf("bool-result: %+v", r)
	}
}

func TestDisabledAnswersDisabledForEveryType(t *testing.T) {
	set := mustLoad(t, resolutionDoc)
	if r := set.ResolveString("disabled", "d", nil); r.Value != "d" || r.Reason != ReasonDisabled || r.Err != nil {
		t.Errorf("string: %+v", r)
	}
	if r := set.ResolveInt("disabled", 7, nil); r.Value != 7 || r.Reason != ReasonDisabled || r.Err != nil {
		t.Errorf("int: %+v", r)
	}
	if r := set.ResolveFloat("disabled", 0.5, nil); r.Value != 0.5 || r.Reason != ReasonDisabled || r.Err != nil {
		t.Errorf("float: %+v", r)
	}
	if r := set.ResolveObject("disabled", "x", nil); r.Value != "x" || r.Reason != ReasonDisabled || r.Err != nil {
		t.Errorf("object: %+v", r)
	}
}

func TestNumericResultsNameVariantsLikeFlagd(t *testing.T) {
	set := mustLoad(t, resolutionDoc)
	cases := map[any]string{
		1:        "one",
		1.0:      "one",
		int64(1): "one",
		1.5:      "one and a half",
		1e21:     "big",
		1e-7:     "small",
		0:        "zero",
	}
	for n, want := range cases {
		r := set.ResolveString("number-result", "?", map[string]any{"n": n})
		if r.Value != want || r.Reason != ReasonTargetingMatch {
			t.Errorf("%v: %+v, want %s", n, r, want)
		}
	}
	// Negative zero prints as "-0" in JSON, so it does not name "0".
	for _, n := range []any{2, math.Copysign(0, -1)} {
		if r := set.ResolveString("number-result", "?", map[string]any{"n": n}); r.Err == nil || r.Err.Code != CodeGeneral {
			t.Errorf("%v: %+v, want GENERAL", n, r)
		}
	}
}

func TestTypedAccessorsAndCoercion(t *testing.T) {
	set := mustLoad(t, `{"flags": {
	  "int":      {"state": "ENABLED", "variants": {"v": 10}, "defaultVariant": "v"},
	  "whole":    {"state": "ENABLED", "variants": {"v": 10.0}, "defaultVariant": "v"},
	  "exp":      {"state": "ENABLED", "variants": {"v": 1e3}, "defaultVariant": "v"},
	  "frac":     {"state": "ENABLED", "variants": {"v": 3.14}, "defaultVariant": "v"},
	  "huge":     {"state": "ENABLED", "variants": {"v": 9223372036854775808}, "defaultVariant": "v"},
	  "maxint":   {"state": "ENABLED", "variants": {"v": 9223372036854775807}, "defaultVariant": "v"},
	  "exact":    {"state": "ENABLED", "variants": {"v": 9007199254740993}, "defaultVariant": "v"},
	  "even":     {"state": "ENABLED", "variants": {"v": 9007199254740994}, "defaultVariant": "v"},
	  "pow60":    {"state": "ENABLED", "variants": {"v": 1152921504606846976}, "defaultVariant": "v"},
	  "pow60flagd": {"state": "ENABLED", "variants": {"v": 1152921504606847000}, "defaultVariant": "v"},
	  "minint":   {"state": "ENABLED", "variants": {"v": -9223372036854775808}, "defaultVariant": "v"},
	  "negzero":  {"state": "ENABLED", "variants": {"v": -0.0}, "defaultVariant": "v"},
	  "str":      {"state": "ENABLED", "variants": {"v": "text", "w": ""}, "defaultVariant": "w"},
	  "obj":      {"state": "ENABLED", "variants": {"v": {"a": [1, {"b": true}]}}, "defaultVariant": "v"},
	  "arr":      {"state": "ENABLED", "variants": {"v": [1, "x"]}, "defaultVariant": "v"}
	}}`)
	// Integers past 2^53 that a 64-bit float holds exactly read as
	// written, as in flagd, and so does flagd's own spelling of such a
	// float, which a flag set it re-encodes carries.
	ints := map[string]int64{"int": 10, "whole": 10, "exp": 1000, "even": 9007199254740994, "pow60": 1 << 60, "pow60flagd": 1 << 60, "minint": math.MinInt64, "negzero": 0}
	for key, want := range ints {
		if r := set.ResolveInt(key, -1, nil); r.Value != want || r.Err != nil || r.Reason != ReasonStatic {
			t.Errorf("int %s: %+v, want %d", key, r, want)
		}
	}
	// The others flagd reads as another number than the one written: the
	// flag is refused at load, with the number flagd would answer.
	for key, flagd := range map[string]string{"maxint": "9223372036854776000", "exact": "9007199254740992"} {
		r := set.ResolveInt(key, -1, nil)
		if r.Value != -1 || r.Err == nil || r.Err.Code != CodeParseError || !strings.Contains(r.Err.Error(), "flagd reads it as "+flagd) {
			t.Errorf("int %s: %+v, want PARSE_ERROR saying flagd reads %s", key, r, flagd)
		}
	}
	for _, key := range []string{"frac", "huge"} {
		r := set.ResolveInt(key, -1, nil)
		if r.Value != -1 || r.Reason != ReasonError || r.Err == nil || r.Err.Code != CodeTypeMismatch || r.Variant != "v" {
			t.Errorf("int %s: %+v, want TYPE_MISMATCH naming variant v", key, r)
		}
		if !strings.Contains(r.Err.Error(), `"v"`) || !strings.Contains(r.Err.Error(), key) {
			t.Errorf("int %s: message %q names neither flag nor variant", key, r.Err)
		}
	}
	// A whole number reads as a float too, exactly.
	floats := map[string]float64{"int": 10, "whole": 10, "exp": 1000, "frac": 3.14, "huge": 9223372036854775808,
		"even": 9007199254740994, "pow60flagd": 1 << 60, "minint": math.MinInt64, "negzero": 0}
	for key, want := range floats {
		if r := set.ResolveFloat(key, -1, nil); r.Value != want || r.Err != nil {
			t.Errorf("float %s: %+v, want %v", key, r, want)
		}
	}
	// A whole number is kept as an int64, which has no negative zero:
	// -0.0 reads as 0, as Value gives it (== alone cannot tell them apart).
	if r := set.ResolveFloat("negzero", -1, nil); math.Signbit(r.Value) {
		t.Errorf("float negzero: %v, want 0", r.Value)
	}
	if r := set.ResolveString("str", "d", nil); r.Value != "" || r.Variant != "w" || r.Err != nil {
		t.Errorf("empty string variant: %+v", r)
	}
	if r := set.ResolveBool("str", true, nil); !r.Value || r.Err == nil || r.Err.Code != CodeTypeMismatch || r.Variant != "w" {
		t.Errorf("bool of a string flag: %+v", r)
	}
	obj := set.ResolveObject("obj", nil, nil)
	want := map[string]any{"a": []any{1.0, map[string]any{"b": true}}}
	if !reflect.DeepEqual(obj.Value, want) || obj.Err != nil {
		t.Fatalf("object: %+v", obj)
	}
	// The caller may change what it got without changing the flag.
	obj.Value.(map[string]any)["a"] = "changed"
	if again := set.ResolveObject("obj", nil, nil); !reflect.DeepEqual(again.Value, want) {
		t.Errorf("object changed by a caller: %v", again.Value)
	}
	if arr := set.ResolveObject("arr", nil, nil); !reflect.DeepEqual(arr.Value, []any{1.0, "x"}) {
		t.Errorf("array: %+v", arr)
	}
	if r := set.ResolveObject("str", "d", nil); r.Value != "d" || r.Err == nil || r.Err.Code != CodeTypeMismatch {
		t.Errorf("object of a string flag: %+v", r)
	}
}

func TestFlagdPropertiesAndEnrichment(t *testing.T) {
	clock := func() time.Time { return time.Unix(1700000000, 0) }
	set := mustLoad(t, `{"flags": {
	  "time": {"state": "ENABLED", "variants": {"past": "past", "future": "future"}, "defaultVariant": "future",
	           "targeting": {"if": [{">": [{"var": "$flagd.timestamp"}, {"var": "when"}]}, "past", "future"]}},
	  "key":  {"state": "ENABLED", "variants": {"time": "t", "key": "k"}, "defaultVariant": "time",
	           "targeting": {"var": "$flagd.flagKey"}},
	  "who":  {"state": "ENABLED", "variants": {"user": "u", "sync": "s"}, "defaultVariant": "user",
	           "targeting": {"var": "source"}}
	}}`, withClock(clock))
	if r := set.ResolveString("time", "", map[string]any{"when": 1699999999}); r.Value != "past" {
		t.Errorf("timestamp after: %+v", r)
	}
	if r := set.ResolveString("time", "", map[string]any{"when": 1700000000}); r.Value != "future" {
		t.Errorf("timestamp equal: %+v", r)
	}
	// $flagd belongs to the engine: a caller's $flagd does not show through.
	if r := set.ResolveString("key", "", map[string]any{"$flagd": map[string]any{"flagKey": "time"}}); r.Value != "k" {
		t.Errorf("flag key: %+v", r)
	}
	enriched := set.WithEnrichment(map[string]any{"source": "sync"})
	if r := enriched.ResolveString("who", "", map[string]any{"source": "user"}); r.Value != "s" {
		t.Errorf("enrichment does not win over the caller's context: %+v", r)
	}
	if r := set.ResolveString("who", "", map[string]any{"source": "user"}); r.Value != "u" {
		t.Errorf("enrichment leaked into the original flag set: %+v", r)
	}
	if r := enriched.ResolveString("who", "", nil); r.Value != "s" {
		t.Errorf("enrichment alone: %+v", r)
	}
}

type account struct {
	Plan  string `json:"plan"`
	Seats int    `json:"seats"`
}

func TestContextValuesReadAsFlagdSeesThem(t *testing.T) {
	cases := []struct {
		name string
		rule string
		ctx  map[string]any
		want any
	}{
		{"int", `{"+": [{"var": "x"}, 1]}`, map[string]any{"x": int32(41)}, 42.0},
		{"uint", `{"+": [{"var": "x"}, 1]}`, map[string]any{"x": uint16(41)}, 42.0},
		{"float32 like JSON", `{"var": "x"}`, map[string]any{"x": float32(0.1)}, 0.1},
		{"json.Number", `{"*": [{"var": "x"}, 2]}`, map[string]any{"x": json.Number("2.5")}, 5.0},
		{"[]string", `{"in": ["b", {"var": "x"}]}`, map[string]any{"x": []string{"a", "b"}}, true},
		{"[]int", `{"reduce": [{"var": "x"}, {"+": [{"var": "current"}, {"var": "accumulator"}]}, 0]}`, map[string]any{"x": []int{1, 2, 3}}, 6.0},
		{"map[string]string", `{"var": "x.k"}`, map[string]any{"x": map[string]string{"k": "v"}}, "v"},
		{"struct via JSON", `{"var": "x.plan"}`, map[string]any{"x": account{Plan: "pro", Seats: 3}}, "pro"},
		{"pointer", `{"var": "x.seats"}`, map[string]any{"x": &account{Seats: 3}}, 3.0},
		{"time via JSON", `{"var": "x"}`, map[string]any{"x": time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}, "2026-01-02T03:04:05Z"},
		{"[]byte via JSON", `{"var": "x"}`, map[string]any{"x": []byte("hi")}, "aGk="},
		{"typed map", `{"var": "x.b"}`, map[string]any{"x": map[string]int{"b": 2}}, 2.0},
		{"nested slice of maps", `{"var": "x.1.k"}`, map[string]any{"x": []map[string]any{{"k": 1}, {"k": 2}}}, 2.0},
	}
	for _, c := range cases {
		got, err := evalRule(t, c.rule, c.ctx)
		if err != nil || !sameJSON(got, c.want) {
			t.Errorf("%s: got %#v (%v), want %#v", c.name, got, err, c.want)
		}
	}
}

// TestFlagdTargetingFacts pins facts of flagd's conformance scenarios
// (inputs and expected variants), with rules of the same shape.
func TestFlagdTargetingFacts(t *testing.T) {
	set := mustLoad(t, `{"flags": {
	  "starts-ends": {"state": "ENABLED", "variants": {"prefix": "prefix", "postfix": "postfix", "none": "none"}, "defaultVariant": "none",
	    "targeting": {"if": [{"starts_with": [{"var": "id"}, "abc"]}, "prefix",
	                  {"if": [{"ends_with": [{"var": "id"}, "xyz"]}, "postfix",
	                          {"if": [{"ends_with": [{"var": "id"}, 3]}, "fail", "none"]}]}]}},
	  "semver": {"state": "ENABLED", "variants": {"equal": "equal", "greater": "greater", "lesser": "lesser", "none": "none"}, "defaultVariant": "none",
	    "targeting": {"if": [{"sem_ver": [{"var": "version"}, "=", "2.0.0"]}, "equal",
	                  {"if": [{"sem_ver": [{"var": "version"}, ">", "2.0.0"]}, "greater",
	                          {"if": [{"sem_ver": [{"var": "version"}, "<", "2.0.0"]}, "lesser",
	                                  {"if": [{"sem_ver": [{"var": "version"}, "=", "2.0.0.0"]}, "fail", "none"]}]}]}]}},
	  "major-minor": {"state": "ENABLED", "variants": {"minor": "minor", "major": "major", "none": "none"}, "defaultVariant": "none",
	    "targeting": {"if": [{"sem_ver": [{"var": "version"}, "~", "3.0.0"]}, "minor",
	                  {"if": [{"sem_ver": [{"var": "version"}, "^", "3.0.0"]}, "major", "none"]}]}},
	  "v-prefix": {"state": "ENABLED", "variants": {"match": "match", "no-match": "no-match"}, "defaultVariant": "no-match",
	    "targeting": {"if": [{"sem_ver": [{"var": "version"}, "=", "v1.0.0"]}, "match", "no-match"]}},
	  "partial": {"state": "ENABLED", "variants": {"match": "match", "no-match": "no-match"}, "defaultVariant": "no-match",
	    "targeting": {"if": [{"sem_ver": [{"var": "version"}, "^", "1"]}, "match", "no-match"]}},
	  "numeric": {"state": "ENABLED", "variants": {"match": "match", "no-match": "no-match"}, "defaultVariant": "no-match",
	    "targeting": {"if": [{"sem_ver": [{"var": "version"}, ">", "1.1"]}, "match", "no-match"]}},
	  "build": {"state": "ENABLED", "variants": {"match": "match", "no-match": "no-match"}, "defaultVariant": "no-match",
	    "targeting": {"if": [{"sem_ver": [{"var": "version"}, "=", "1.0.0+build"]}, "match", "no-match"]}},
	  "bad-version": {"state": "ENABLED", "variants": {"true": "true", "false": "false", "fallback": "fallback"}, "defaultVariant": "fallback",
	    "targeting": {"sem_ver": [{"var": "version"}, "=", "1.0.0"]}},
	  "bad-operator": {"state": "ENABLED", "variants": {"true": "true", "false": "false", "fallback": "fallback"}, "defaultVariant": "fallback",
	    "targeting": {"sem_ver": [{"var": "version"}, "===", "1.0.0"]}},
	  "semver-args": {"state": "ENABLED", "variants": {"true": "true", "false": "false", "fallback": "fallback"}, "defaultVariant": "fallback",
	    "targeting": {"sem_ver": [{"var": "version"}, "="]}},
	  "starts-non-string": {"state": "ENABLED", "variants": {"true": "true", "false": "false", "fallback": "fallback"}, "defaultVariant": "fallback",
	    "targeting": {"starts_with": [{"var": "num"}, "abc"]}},
	  "ends-args": {"state": "ENABLED", "variants": {"true": "true", "false": "false", "fallback": "fallback"}, "defaultVariant": "fallback",
	    "targeting": {"ends_with": ["xyz"]}},
	  "zero-weights": {"state": "ENABLED", "variants": {"one": "one", "two": "two", "fallback": "fallback"}, "defaultVariant": "fallback",
	    "targeting": {"fractional": [{"var": "targetingKey"}, ["one", 0], ["two", 0]]}},
	  "negative-weight": {"state": "ENABLED", "variants": {"one": "one", "two": "two", "fallback": "fallback"}, "defaultVariant": "fallback",
	    "targeting": {"fractional": [{"var": "targetingKey"}, ["one", -50], ["two", 100]]}},
	  "missing-bucket-key": {"state": "ENABLED", "variants": {"one": "one", "two": "two", "fallback": "fallback"}, "defaultVariant": "fallback",
	    "targeting": {"fractional": [{"var": "missing_key"}, ["one", 50], ["two", 50]]}},
	  "as-condition": {"state": "ENABLED", "variants": {"big": "hundreds", "small": "ones", "fallback": "zero"}, "defaultVariant": "fallback",
	    "targeting": {"if": [{"fractional": [[false, 0], [true, 100]]}, "big", "small"]}},
	  "nested-var": {"state": "ENABLED", "variants": {"red": "red", "green": "green", "blue": "blue", "fallback": "fallback"}, "defaultVariant": "fallback",
	    "targeting": {"fractional": [{"var": "targetingKey"}, [{"var": "color"}, 50], ["blue", 50]]}},
	  "nested-weight": {"state": "ENABLED", "variants": {"red": "red", "blue": "blue", "fallback": "fallback"}, "defaultVariant": "fallback",
	    "targeting": {"fractional": [{"var": "targetingKey"}, ["red", {"if": [{"==": [{"var": "tier"}, "premium"]}, 100, 0]}], ["blue", 10]]}}
	}}`)
	cases := []struct {
		key  string
		ctx  map[string]any
		want string
		why  Reason
	}{
		{"starts-ends", map[string]any{"id": "abcdef"}, "prefix", ReasonTargetingMatch},
		{"starts-ends", map[string]any{"id": "uvwxyz"}, "postfix", ReasonTargetingMatch},
		{"starts-ends", map[string]any{"id": "abcxyz"}, "prefix", ReasonTargetingMatch},
		{"starts-ends", map[string]any{"id": "lmnopq"}, "none", ReasonTargetingMatch},
		{"starts-ends", map[string]any{"id": "3"}, "none", ReasonTargetingMatch},
		{"semver", map[string]any{"version": "2.0.0"}, "equal", ReasonTargetingMatch},
		{"semver", map[string]any{"version": "2.1.0"}, "greater", ReasonTargetingMatch},
		{"semver", map[string]any{"version": "1.9.0"}, "lesser", ReasonTargetingMatch},
		{"semver", map[string]any{"version": "2.0.0-alpha"}, "lesser", ReasonTargetingMatch},
		{"semver", map[string]any{"version": "2.0.0.0"}, "none", ReasonTargetingMatch},
		{"major-minor", map[string]any{"version": "3.0.1"}, "minor", ReasonTargetingMatch},
		{"major-minor", map[string]any{"version": "3.1.0"}, "major", ReasonTargetingMatch},
		{"major-minor", map[string]any{"version": "4.0.0"}, "none", ReasonTargetingMatch},
		{"v-prefix", map[string]any{"version": "1.0.0"}, "match", ReasonTargetingMatch},
		{"v-prefix", map[string]any{"version": "v1.0.0"}, "match", ReasonTargetingMatch},
		{"v-prefix", map[string]any{"version": "V1.0.0"}, "match", ReasonTargetingMatch},
		{"v-prefix", map[string]any{"version": "2.0.0"}, "no-match", ReasonTargetingMatch},
		{"partial", map[string]any{"version": "1.5.0"}, "match", ReasonTargetingMatch},
		{"partial", map[string]any{"version": "1.0"}, "match", ReasonTargetingMatch},
		{"partial", map[string]any{"version": "1"}, "match", ReasonTargetingMatch},
		{"partial", map[string]any{"version": int64(1)}, "match", ReasonTargetingMatch},
		{"partial", map[string]any{"version": 1.0}, "match", ReasonTargetingMatch},
		{"partial", map[string]any{"version": 1.2}, "match", ReasonTargetingMatch},
		{"partial", map[string]any{"version": "2.0.0"}, "no-match", ReasonTargetingMatch},
		{"numeric", map[string]any{"version": 1.2}, "match", ReasonTargetingMatch},
		{"numeric", map[string]any{"version": 1.1}, "no-match", ReasonTargetingMatch},
		{"numeric", map[string]any{"version": int64(2)}, "match", ReasonTargetingMatch},
		{"numeric", map[string]any{"version": int64(1)}, "no-match", ReasonTargetingMatch},
		{"numeric", map[string]any{"version": "1.2"}, "match", ReasonTargetingMatch},
		{"build", map[string]any{"version": "1.0.0+other"}, "match", ReasonTargetingMatch},
		{"build", map[string]any{"version": "2.0.0"}, "no-match", ReasonTargetingMatch},
		{"bad-version", map[string]any{"version": "not-a-version"}, "fallback", ReasonDefault},
		{"bad-operator", map[string]any{"version": "1.0.0"}, "fallback", ReasonDefault},
		{"semver-args", map[string]any{"version": "1.0.0"}, "fallback", ReasonDefault},
		{"starts-non-string", map[string]any{"num": 123}, "fallback", ReasonDefault},
		{"ends-args", nil, "fallback", ReasonDefault},
		{"zero-weights", map[string]any{"targetingKey": "any-user"}, "fallback", ReasonDefault},
		{"negative-weight", map[string]any{"targetingKey": "any-user"}, "two", ReasonTargetingMatch},
		{"missing-bucket-key", nil, "fallback", ReasonDefault},
		{"as-condition", map[string]any{"targetingKey": "some-targeting-key"}, "hundreds", ReasonTargetingMatch},
		{"nested-var", map[string]any{"targetingKey": "jon@company.com", "color": "red"}, "red", ReasonTargetingMatch},
		{"nested-var", map[string]any{"targetingKey": "jon@company.com", "color": "green"}, "green", ReasonTargetingMatch},
		{"nested-var", map[string]any{"targetingKey": "user1", "color": "red"}, "blue", ReasonTargetingMatch},
		{"nested-var", map[string]any{"targetingKey": "jon@company.com", "color": "yellow"}, "wrong", ReasonError},
		{"nested-var", map[string]any{"targetingKey": "jon@company.com"}, "fallback", ReasonDefault},
		{"nested-weight", map[string]any{"targetingKey": "jon@company.com", "tier": "premium"}, "red", ReasonTargetingMatch},
		{"nested-weight", map[string]any{"targetingKey": "user1", "tier": "basic"}, "blue", ReasonTargetingMatch},
	}
	for _, c := range cases {
		r := set.ResolveString(c.key, "wrong", c.ctx)
		if r.Value != c.want || r.Reason != c.why {
			t.Errorf("%s %v: %q %v (%v), want %q %v", c.key, c.ctx, r.Value, r.Reason, r.Err, c.want, c.why)
		}
	}
}

func TestResolvingDoesNotAllocate(t *testing.T) {
	set := mustLoad(t, benchDoc)
	ctx := benchContexts()["small"]
	// Each flag must resolve the way its rule intends, or the measure
	// would be of a failing or short-cut resolution.
	for _, key := range []string{"static", "simple", "complex", "startswith"} {
		if r := set.ResolveBool(key, false, ctx); !r.Value || r.Err != nil {
			t.Errorf("%s: %+v, want true", key, r)
		}
		if n := testing.AllocsPerRun(200, func() { set.ResolveBool(key, false, ctx) }); n != 0 {
			t.Errorf("%s: %v allocations per resolution", key, n)
		}
	}
	for _, key := range []string{"semver", "fractional2", "fractional8"} {
		if r := set.ResolveString(key, "", ctx); r.Value == "" || r.Reason != ReasonTargetingMatch || r.Err != nil {
			t.Errorf("%s: %+v, want a targeting match", key, r)
		}
		if n := testing.AllocsPerRun(200, func() { set.ResolveString(key, "", ctx) }); n != 0 {
			t.Errorf("%s: %v allocations per resolution", key, n)
		}
	}
}

// A var whose path is computed splits it once, not on every evaluation,
// and follows a path that changes.
func TestComputedVarPath(t *testing.T) {
	set := mustLoad(t, `{"flags": {"f": {"state": "ENABLED", "defaultVariant": "off",
	  "variants": {"on": "on", "off": "off"},
	  "targeting": {"if": [{"==": [{"var": {"var": "field"}}, "gold"]}, "on", "off"]}}}}`)
	gold := map[string]any{"field": "user.tier", "user": map[string]any{"tier": "gold", "plan": "free"}}
	free := map[string]any{"field": "user.plan", "user": map[string]any{"tier": "gold", "plan": "free"}}
	for range 3 {
		for _, c := range []struct {
			ctx  map[string]any
			want string
		}{{gold, "on"}, {free, "off"}, {gold, "on"}} {
			if r := set.ResolveString("f", "", c.ctx); r.Value != c.want || r.Err != nil {
				t.Fatalf("%v: %+v, want %q", c.ctx, r, c.want)
			}
		}
	}
	if n := testing.AllocsPerRun(200, func() { set.ResolveString("f", "", gold) }); n != 0 {
		t.Errorf("%v allocations per resolution", n)
	}
}

// A rule that reads the same attributes more than once, in comparisons of
// each kind, answers as each comparison says.
func TestRepeatedAttributes(t *testing.T) {
	set := mustLoad(t, `{"flags": {"f": {"state": "ENABLED", "defaultVariant": "off",
	  "variants": {"on": "on", "off": "off", "mid": "mid"},
	  "targeting": {"if": [
	    {"and": [
	      {"==": [{"var": "tier"}, "gold"]},
	      {"ends_with": [{"var": "tier"}, "ld"]},
	      {"starts_with": [{"var": "tier"}, "go"]},
	      {"in": [{"var": "a"}, ["x"]]}, {"in": [{"var": "a"}, ["x", "y"]]},
	      {"==": [{"var": "b"}, 1]}, {">=": [{"var": "b"}, 1]},
	      {"==": [{"var": "c"}, 2]}, {"<=": [{"var": "c"}, 2]},
	      {"==": [{"var": "d.e"}, 3]}, {"!!": [{"var": "d"}]}]},
	    "on",
	    {"==": [{"var": "tier"}, "bronze"]}, "mid",
	    "off"]}}}}`)
	for _, c := range []struct {
		ctx  map[string]any
		want string
	}{
		{map[string]any{"tier": "gold", "a": "x", "b": 1, "c": 2, "d": map[string]any{"e": 3}}, "on"},
		{map[string]any{"tier": "bronze"}, "mid"},
		{map[string]any{"tier": "gold", "a": "y", "b": 1, "c": 2, "d": map[string]any{"e": 3}}, "off"},
		{map[string]any{"tier": "gold", "a": "x", "b": 1, "c": 2, "d": map[string]any{"e": 4}}, "off"},
		{map[string]any{"tier": "silver"}, "off"},
	} {
		if got := set.ResolveString("f", "", c.ctx); got.Value != c.want {
			t.Errorf("%v: %q (%v), want %q", c.ctx, got.Value, got.Err, c.want)
		}
	}
}

// A fractional without a bucketing expression buckets by the flag key and
// the targeting key: into the bucket fractional.HashDefault picks, and,
// before v3 (which hashes the two as a CBOR array, not one string), as an
// expression that joins the flag key to another attribute holding the key.
func TestFractionalBucketsByTargetingKey(t *testing.T) {
	doc := func(by string) string {
		return `{"flags": {"f": {"state": "ENABLED", "defaultVariant": "a",
		  "variants": {"a": "a", "b": "b"},
		  "targeting": {"fractional": [` + by + `["a", 50], ["b", 50]]}}}}`
	}
	table, err := fractional.NewTable([]float64{50, 50})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []fractional.Version{fractional.V1, fractional.V2, fractional.V3} {
		shared := mustLoad(t, doc(""), WithFractionalVersion(v))
		apart := mustLoad(t, doc(`{"cat": [{"var": "$flagd.flagKey"}, {"var": "other"}]}, `), WithFractionalVersion(v))
		seen := map[string]bool{}
		for i := range 400 {
			key := "user-" + strconv.Itoa(i)
			got := shared.ResolveString("f", "", map[string]any{"targetingKey": key})
			want := []string{"a", "b"}[table.Pick(v, fractional.HashDefault(v, "f", key))]
			if got.Value != want || got.Variant != want || got.Err != nil {
				t.Fatalf("%v %s: %+v, want %q", v, key, got, want)
			}
			if v != fractional.V3 {
				// The targeting key is another's: only other buckets.
				byExpr := apart.ResolveString("f", "", map[string]any{"targetingKey": "someone-else", "other": key})
				if byExpr.Value != got.Value || byExpr.Variant != got.Variant || byExpr.Err != nil {
					t.Fatalf("%v %s: by an expression %+v, by the targeting key %+v", v, key, byExpr, got)
				}
			}
			seen[got.Variant] = true
		}
		if !seen["a"] || !seen["b"] {
			t.Errorf("%v: variants chosen: %v, want a and b", v, seen)
		}
	}
}
