package evaluator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/flagsnap/flagsnap/fractional"
)

// testNow is the clock of rule tests: $flagd.timestamp is 1700000000.
var testNow = time.Unix(1700000000, 0)

// ruleSet is a flag set that only exists to give rules an evaluation
// environment (clock, fractional version).
func ruleSet(v fractional.Version) *FlagSet {
	return &FlagSet{version: v, clock: func() time.Time { return testNow }}
}

// decodeRule parses a rule written as JSON the way the loader does.
func decodeRule(t testing.TB, text string) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(text)))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		t.Fatalf("rule %s: %v", text, err)
	}
	return raw
}

// compileRule compiles a decoded rule; callers name the fractional version
// it will run with, which compiling does not need.
func compileRule(raw any) (*node, error) {
	var c compiler
	return c.compile(raw, nil)
}

// runRule evaluates a compiled rule for flag flagKey against ctx and
// returns its value in plain JSON form, or the runtime error.
func runRule(set *FlagSet, n *node, flagKey string, ctx map[string]any) (any, error) {
	f := &flag{key: flagKey, keyRef: flagKey}
	e := evalState{fs: set, f: f, ctx: ctx, cur: value{k: kRoot}}
	r := e.evaluate(n)
	if e.err != nil {
		return nil, e.err
	}
	return e.plain(r), nil
}

// evalRule compiles and runs a rule written as JSON, with fractional v2.
func evalRule(t testing.TB, text string, ctx map[string]any) (any, error) {
	t.Helper()
	n, err := compileRule(decodeRule(t, text))
	if err != nil {
		return nil, err
	}
	return runRule(ruleSet(fractional.V2), n, "test-flag", ctx)
}

// sameJSON compares two results in plain JSON form; NaN equals NaN, and
// the integer zero the reference engine returns from "-" and "/" without
// arguments equals 0. Zero does not equal negative zero: a result names
// its variant by its JSON text, and that is "-0" for negative zero.
func sameJSON(a, b any) bool {
	switch x := a.(type) {
	case int:
		return sameJSON(float64(x), b)
	case float64:
		switch y := b.(type) {
		case int:
			return sameJSON(x, float64(y))
		case float64:
			return (x == y && math.Signbit(x) == math.Signbit(y)) || (math.IsNaN(x) && math.IsNaN(y))
		}
		return false
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !sameJSON(v, w) {
				return false
			}
		}
		return true
	}
	if _, ok := b.(int); ok {
		return sameJSON(b, a)
	}
	return reflect.DeepEqual(a, b)
}

func TestSameJSON(t *testing.T) {
	cases := []struct {
		a, b any
		want bool
	}{
		{math.NaN(), math.NaN(), true},
		{0, 0.0, true},
		{0.0, math.Copysign(0, -1), false},
		{0, math.Copysign(0, -1), false},
		{math.Copysign(0, -1), 0, false},
		{[]any{math.Copysign(0, -1)}, []any{math.Copysign(0, -1)}, true},
		{1.0, 2.0, false},
		{[]any{1.0, "x"}, []any{1.0, "x"}, true},
		{[]any{1.0}, []any{1.0, 2.0}, false},
		{map[string]any{"a": nil}, map[string]any{"a": nil}, true},
		{map[string]any{"a": nil}, map[string]any{"b": nil}, false},
		{"1", 1.0, false},
		{nil, false, false},
	}
	for _, c := range cases {
		if got := sameJSON(c.a, c.b); got != c.want {
			t.Errorf("sameJSON(%#v, %#v) = %v", c.a, c.b, got)
		}
	}
}

// describeErr is for failure messages.
func describeErr(err error) string {
	var ee *evalError
	var ce *CompileError
	switch {
	case err == nil:
		return "no error"
	case errors.As(err, &ee):
		return "runtime error: " + err.Error()
	case errors.As(err, &ce):
		return "compile error: " + err.Error()
	}
	return fmt.Sprintf("%T: %v", err, err)
}

// plain converts a result into pure JSON form (nil, bool, float64, string,
// []any, map[string]any) all the way down, as the reference engine's
// results are, for comparing the two. It copies containers.
func (e *evalState) plain(v value) any {
	switch v.k {
	case kArr:
		n := arrLen(v)
		out := make([]any, n)
		for i := range n {
			out[i] = e.plain(arrAt(v, i))
		}
		return out
	case kObj:
		switch t := v.ref.(type) {
		case map[string]any:
			out := make(map[string]any, len(t))
			for k, x := range t {
				out[jsonText(k)] = e.plain(fromAny(x))
			}
			return out
		case map[string]string:
			out := make(map[string]any, len(t))
			for k, s := range t {
				out[jsonText(k)] = jsonText(s)
			}
			return out
		}
		return map[string]any{}
	case kRoot, kFlagd, kReduce:
		return e.plain(fromAny(e.toAny(v)))
	case kNum:
		return v.n
	}
	return e.toAny(v)
}
