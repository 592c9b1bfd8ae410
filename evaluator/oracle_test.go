package evaluator

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	jsonlogic "github.com/diegoholiveira/jsonlogic/v3"

	"github.com/flagsnap/flagsnap/fractional"
)

// The reference engine, github.com/diegoholiveira/jsonlogic/v3, is flagd's
// own JsonLogic implementation. Tests run rules through it and through our
// engine and require the same answers. It keeps custom operators in a
// process-global registry, which is acceptable in tests only; our engine
// never touches it.

var (
	oracleOnce    sync.Once
	oracleMu      sync.Mutex // serialises oracle runs: the version is global
	oracleVersion fractional.Version
)

// registerOracle teaches the reference engine flagd's operators, using our
// implementations of them over the arguments it has already evaluated, as
// flagd does.
func registerOracle() {
	oracleOnce.Do(func() {
		jsonlogic.AddOperator("starts_with", func(values, _ any) any {
			list, isList := oracleArgs(values)
			return plainOf(affixOf(true, list, isList))
		})
		jsonlogic.AddOperator("ends_with", func(values, _ any) any {
			list, isList := oracleArgs(values)
			return plainOf(affixOf(false, list, isList))
		})
		jsonlogic.AddOperator("sem_ver", func(values, _ any) any {
			list, isList := oracleArgs(values)
			return plainOf(semverOf(list, isList, nil))
		})
		jsonlogic.AddOperator("fractional", func(values, data any) any {
			return oracleFractional(values, data)
		})
		jsonlogic.AddOperator(legacyFractional, func(values, data any) any {
			// The legacy spelling names a property; flagd resolves it the
			// way var does.
			list, ok := values.([]any)
			if !ok || len(list) == 0 {
				return nil
			}
			name, ok := list[0].(string)
			if !ok {
				return nil
			}
			e := evalState{}
			v, _ := e.getVar(strVal(name), fromAny(data))
			return oracleFractional(append([]any{plainOf(v)}, list[1:]...), data)
		})
	})
}

// oracleFractional runs fractional for the reference engine. The flag key
// and targeting key come from the top-level data, as in our engine.
func oracleFractional(values, data any) any {
	list, isList := oracleArgs(values)
	root, _ := data.(map[string]any)
	flagd, _ := root[flagdKey].(map[string]any)
	key, _ := flagd["flagKey"].(string)
	e := evalState{fs: ruleSet(oracleVersion), f: &flag{key: key, keyRef: key}, ctx: root, cur: value{k: kRoot}}
	return e.plain(e.fractionalOf(list, isList))
}

func oracleArgs(values any) ([]value, bool) {
	list, ok := values.([]any)
	if !ok {
		return nil, false
	}
	out := make([]value, len(list))
	for i, x := range list {
		out[i] = fromAny(x)
	}
	return out, true
}

func plainOf(v value) any {
	var e evalState
	return e.plain(v)
}

// oracleEval runs a rule through the reference engine for flag flagKey,
// with the data flagd would give it: the context after a JSON round trip,
// plus $flagd. A panic of the engine (its way of failing) is an error.
func oracleEval(rule any, ctx map[string]any, flagKey string, v fractional.Version) (result any, err error) {
	registerOracle()
	oracleMu.Lock()
	defer oracleMu.Unlock()
	oracleVersion = v

	data := make(map[string]any, len(ctx)+1)
	maps.Copy(data, ctx)
	data[flagdKey] = map[string]any{"flagKey": flagKey, "timestamp": testNow.Unix()}
	b, err := json.Marshal(data)
	if err != nil {
		return nil, fmt.Errorf("context cannot be encoded: %w", err)
	}
	var decoded any
	if err := json.Unmarshal(b, &decoded); err != nil {
		return nil, err
	}
	plainRule, err := plainJSON(rule)
	if err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("reference engine panicked: %v", r)
		}
	}()
	return jsonlogic.ApplyInterface(plainRule, decoded)
}

// compareWithOracle evaluates text with both engines; ok is false when
// they disagree, and when our engine rejects the rule at load: a written
// rule that stopped compiling must not pass as agreed.
func compareWithOracle(t testing.TB, text string, ctx map[string]any, v fractional.Version) (ours, theirs any, ourErr, theirErr error, ok bool) {
	t.Helper()
	if v == fractional.V3 && strings.Contains(text, "fractional") {
		// v3 hashes the caller's Go value exactly, flagd what JSON carries
		// of it (see TestOracleV3SeesJSONNumbers).
		c, _ := jsonNumbers(ctx)
		ctx = c.(map[string]any)
	}
	raw := decodeRule(t, text)
	theirs, theirErr = oracleEval(raw, ctx, "test-flag", v)
	n, ourErr := compileRule(raw)
	if ourErr != nil {
		return nil, theirs, ourErr, theirErr, false
	}
	ours, ourErr = runRule(ruleSet(v), n, "test-flag", ctx)
	switch {
	case ourErr != nil || theirErr != nil:
		ok = ourErr != nil && theirErr != nil
	default:
		ok = sameJSON(ours, theirs)
	}
	return ours, theirs, ourErr, theirErr, ok
}

func TestOracleAgreesOnExamples(t *testing.T) {
	ctx := map[string]any{
		"targetingKey": "user-7",
		"email":        "ada@example.com",
		"age":          36,
		"score":        4.5,
		"tags":         []string{"beta", "eu"},
		"nums":         []any{1, 2, 3, nil, "4"},
		"user":         map[string]any{"name": "ada", "langs": []any{"go", "c"}},
		"empty":        "",
		"flag":         true,
	}
	rules := []string{
		`{"==": [{"var": "email"}, "ada@example.com"]}`,
		`{"==": ["1", 1]}`,
		`{"==": [null, 0]}`,
		`{"==": [true, 1]}`,
		`{"===": [1, 1.0]}`,
		`{"!==": ["1", 1]}`,
		`{"<": [1, {"var": "age"}, 40]}`,
		`{"<=": ["a", "b"]}`,
		`{">": ["10", 9]}`,
		`{">=": [{"var": "score"}, "4.5"]}`,
		`{"and": [true, {"var": "age"}, "x"]}`,
		`{"or": [false, 0, ""]}`,
		`{"!": [[]]}`,
		`{"!!": ["0"]}`,
		`{"if": [false, 1, null, 2, 3]}`,
		`{"?:": [{"var": "flag"}, "yes", "no"]}`,
		`{"+": [1, "2", 3.5]}`,
		`{"+": "7"}`,
		`{"-": [10, 3, 2]}`,
		`{"-": [4]}`,
		`{"-": []}`,
		`{"*": [2, "3"]}`,
		`{"/": [1, 0]}`,
		`{"%": [7, 3]}`,
		`{"min": [3, 1, "2"]}`,
		`{"max": []}`,
		`{"abs": -4}`,
		`{"cat": ["a", 1, null, " b "]}`,
		`{"cat": [" x "]}`,
		`{"substr": ["jsonlogic", -5, 3]}`,
		`{"substr": ["jsonlogic", 4]}`,
		`{"substr": ["jsonlogic", 2, -2]}`,
		`{"in": ["log", "jsonlogic"]}`,
		`{"in": [{"var": "age"}, [[30, 40]]]}`,
		`{"in": ["beta", {"var": "tags"}]}`,
		`{"in": [3, ["3", "4"]]}`,
		`{"merge": [1, [2, 3], [[4]]]}`,
		`{"map": [{"var": "nums"}, {"*": [{"var": ""}, 2]}]}`,
		`{"filter": [[1, 2, 3, 4], {">": [{"var": ""}, 2]}]}`,
		`{"reduce": [[1, 2, 3], {"+": [{"var": "current"}, {"var": "accumulator"}]}, 10]}`,
		`{"reduce": [["a", "b"], {"cat": [{"var": "accumulator"}, {"var": "current"}]}, ""]}`,
		`{"all": [[1, 2], {">": [{"var": ""}, 0]}]}`,
		`{"some": [{"var": "user.langs"}, {"==": [{"var": ""}, "go"]}]}`,
		`{"none": [[], {"var": ""}]}`,
		`{"some": [[{"id": 1, "x": 2}], {"==": [{"var": "id"}, {"var": "age"}]}]}`,
		`{"filter": [[{"age": 1, "b": 2}, {"age": 2, "b": 3}], {"==": [{"var": "age"}, 36]}]}`,
		`{"missing": ["email", "nope", "user.name"]}`,
		`{"missing_some": [1, ["nope", "email"]]}`,
		`{"missing_some": [2, ["nope", "email"]]}`,
		`{"var": ["nope", "fallback"]}`,
		`{"var": "user.langs.1"}`,
		`{"var": "nums.x"}`,
		`{"var": 1}`,
		`{"var": ""}`,
		`{"var": "$flagd.flagKey"}`,
		`{"set": [{"var": "user"}, "name", "bob"]}`,
		`{"contains_all": [{"var": "tags"}, ["eu"]]}`,
		`{"contains_any": [[1, 2], [3, 2.0]]}`,
		`{"contains_none": [["a"], ["b"]]}`,
		`{"starts_with": [{"var": "email"}, "ada"]}`,
		`{"ends_with": [{"var": "age"}, "6"]}`,
		`{"sem_ver": ["1.2.3", "^", "1.9.0"]}`,
		`{"sem_ver": [{"var": "score"}, ">", "4.4"]}`,
		`{"fractional": [["a", 50], ["b", 50]]}`,
		`{"fractional": [{"var": "email"}, ["a", 1], ["b", 1], ["c", 0]]}`,
		`{"fractional": [{"var": "nope"}, ["a", 1], ["b", 1]]}`,
		`{"fractionalEvaluation": ["email", ["a", 50], ["b", 50]]}`,
		`{"in": [1, "abc"]}`,
		`{"+": [true, 1]}`,
		`{"cat": [[1]]}`,
		`{"map": [{"var": "email"}, 1]}`,
		`{"substr": ["abc", 2, -2]}`,
		// Scopes: inside some, none and filter a var resolves against the
		// outer data first; inside all and map against the element.
		`{"some": [[{"age": 1, "b": 2}], {"==": [{"var": "age"}, 36]}]}`,
		`{"all": [[{"age": 1, "b": 2}], {"==": [{"var": "age"}, 1]}]}`,
		`{"none": [[{"age": 1, "b": 2}], {"==": [{"var": "age"}, 36]}]}`,
		`{"map": [[{"age": 1, "b": 2}], {"var": "age"}]}`,
		`{"filter": [[[1, 2], [3, 4]], {"some": [{"var": ""}, {"==": [{"var": ""}, 3]}]}]}`,
		`{"some": [[{"x": 1, "y": 2}], {"var": ["missing", true]}]}`,
		`{"all": [[{"x": true, "y": 2}], {"var": "x"}]}`,
		`{"none": [[{"x": true, "y": 2}], {"var": "x"}]}`,
		`{"some": [[1, 2], {"in": [{"var": ".x"}, [1]]}]}`,
		`{"reduce": [[1, 2], {"+": [{"var": "current"}, {"var": "age"}]}, 0]}`,
		`{"map": [[1, 2], {"var": ["age", 0]}]}`,
		`{"filter": [{"var": "nums"}, {"var": ["email", false]}]}`,
		// Argument lists that are the value of an expression.
		`{"cat": {"var": "tags"}}`,
		`{"max": {"var": "nums"}}`,
		`{"in": {"merge": ["go", [{"var": "user.langs"}]]}}`,
		`{"==": {"if": [{"var": "flag"}, [1, "1"], [1, 2]]}}`,
		`{"missing": {"merge": [["email"], ["nope"]]}}`,
		`{"fractional": {"merge": [[{"var": "email"}], [["a", 1], ["b", 1]]]}}`,
	}
	for _, v := range []fractional.Version{fractional.V1, fractional.V2, fractional.V3} {
		for _, rule := range rules {
			ours, theirs, ourErr, theirErr, ok := compareWithOracle(t, rule, ctx, v)
			if !ok {
				t.Errorf("%v %s:\n  ours:      %#v (%s)\n  reference: %#v (%s)", v, rule, ours, describeErr(ourErr), theirs, describeErr(theirErr))
			}
		}
	}
}

// TestInConstantListsAgree checks "in" against a written list of strings,
// which is compiled into a set (a map once the list is long), against
// the reference engine, for the needle read straight from the context and
// through an expression.
func TestInConstantListsAgree(t *testing.T) {
	needles := []any{"a", "b", "", "1", "1.0", "01", "1e0", " 1", "-0", "é", 1.0, 1.5, 0.0, math.Copysign(0, -1), 2.0, true, false, nil, []any{"a"}, map[string]any{"a": 1.0, "b": 2.0}}
	haystacks := []string{
		`[]`,
		`["a", "1", "1.5"]`,
		`["x", "a", "", "1e0", "-0", "b c", "é", "0", "2", "1.5"]`,
		`["k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "1"]`,
		`["NaN", "inf", "-Infinity", "1e400", "x"]`,
	}
	for _, h := range haystacks {
		for _, rule := range []string{`{"in": [{"var": "x"}, ` + h + `]}`, `{"in": [{"if": [true, {"var": "x"}]}, ` + h + `]}`} {
			for _, x := range needles {
				ctx := map[string]any{"targetingKey": "u", "x": x}
				ours, theirs, ourErr, theirErr, ok := compareWithOracle(t, rule, ctx, fractional.V2)
				if !ok {
					t.Errorf("%s with x = %s:\n  ours:      %#v (%s)\n  reference: %#v (%s)", rule, diffShow(x), ours, describeErr(ourErr), theirs, describeErr(theirErr))
				}
			}
		}
	}
}

// jsonNumbers is x with every number that JSON cannot carry exactly (an
// integer beyond 2^53, a float32 whose shortest text is another float64)
// replaced by the float64 that flagd reads back; changed reports whether
// there was any. Containers are copied only then.
func jsonNumbers(x any) (out any, changed bool) {
	switch t := x.(type) {
	case int:
		return jsonInt(int64(t), x)
	case int64:
		return jsonInt(t, x)
	case uint64:
		if f := float64(t); f >= 0x1p64 || uint64(f) != t {
			return f, true
		}
	case float32:
		if f := float32AsJSON(t); f != float64(t) {
			return f, true
		}
	case []int:
		return jsonInts(t)
	case []int64:
		return jsonInts(t)
	case []any:
		var c []any
		for i, e := range t {
			if n, ok := jsonNumbers(e); ok {
				if c == nil {
					c = slices.Clone(t)
				}
				c[i] = n
			}
		}
		if c != nil {
			return c, true
		}
	case map[string]any:
		var c map[string]any
		for k, e := range t {
			if n, ok := jsonNumbers(e); ok {
				if c == nil {
					c = maps.Clone(t)
				}
				c[k] = n
			}
		}
		if c != nil {
			return c, true
		}
	}
	return x, false
}

func jsonInt(i int64, x any) (any, bool) {
	if f := float64(i); f >= 0x1p63 || int64(f) != i {
		return f, true
	}
	return x, false
}

func jsonInts[I int | int64](t []I) (any, bool) {
	for _, i := range t {
		if _, inexact := jsonInt(int64(i), nil); inexact {
			out := make([]float64, len(t))
			for j, i := range t {
				out[j] = float64(i)
			}
			return out, true
		}
	}
	return t, false
}
