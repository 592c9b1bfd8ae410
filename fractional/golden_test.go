package fractional

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
)

// The vectors below are the fractional examples of flagd's conformance
// suite (targeting.feature with the flags of custom-ops.json and
// edge-case-flags.json), restated as input -> expected bucket facts.

var suits = []string{"clubs", "diamonds", "hearts", "spades"}

func mustTable(t testing.TB, weights ...float64) *Table {
	t.Helper()
	tb, err := NewTable(weights)
	if err != nil {
		t.Fatalf("NewTable(%v): %v", weights, err)
	}
	return tb
}

func variantOf(names []string, idx int) string {
	if idx < 0 || idx >= len(names) {
		return "<none:" + strconv.Itoa(idx) + ">"
	}
	return names[idx]
}

// Flag fractional-flag: bucketBy = cat($flagd.flagKey, user.name), four
// buckets of 25.
func TestGoldenFractionalFlag(t *testing.T) {
	tb := mustTable(t, 25, 25, 25, 25)
	tests := []struct {
		v    Version
		name string
		want string
	}{
		{V1, "jack", "spades"},
		{V1, "queen", "clubs"},
		{V1, "ten", "diamonds"},
		{V1, "nine", "hearts"},
		{V1, "3", "diamonds"},
		{V2, "jack", "hearts"},
		{V2, "queen", "spades"},
		{V2, "ten", "clubs"},
		{V2, "nine", "diamonds"},
		{V2, "3", "clubs"},
		{V3, "jack", "diamonds"},
		{V3, "queen", "diamonds"},
		{V3, "ten", "clubs"},
		{V3, "nine", "clubs"},
		{V3, "3", "spades"},
	}
	for _, tc := range tests {
		t.Run(tc.v.String()+"/"+tc.name, func(t *testing.T) {
			in := "fractional-flag" + tc.name
			h := HashString(tc.v, in)
			if hv, err := HashValue(tc.v, in); err != nil || hv != h {
				t.Fatalf("HashValue = %#x, %v; HashString = %#x", hv, err, h)
			}
			if got := variantOf(suits, tb.Pick(tc.v, h)); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

// Flag fractional-flag-shorthand: no bucketBy, buckets ["heads"] (weight
// defaults to 1) and ["tails", 1].
func TestGoldenShorthand(t *testing.T) {
	const flagKey = "fractional-flag-shorthand"
	names := []string{"heads", "tails"}
	tb := mustTable(t, 1, 1)
	tests := []struct {
		v    Version
		key  string
		want string
	}{
		{V1, "jon@company.com", "heads"},
		{V1, "jane@company.com", "tails"},
		{V2, "jon@company.com", "heads"},
		{V2, "jane@company.com", "tails"},
		{V3, "jon@company.com", "tails"},
		{V3, "jane@company.com", "tails"},
		{V3, "user-1", "heads"},
		{V3, "user-2", "tails"},
		{V3, "user-3", "heads"},
	}
	for _, tc := range tests {
		t.Run(tc.v.String()+"/"+tc.key, func(t *testing.T) {
			if got := variantOf(names, tb.Pick(tc.v, HashDefault(tc.v, flagKey, tc.key))); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

// Flags fractional-flag-A-shared-seed and fractional-flag-B-shared-seed share
// the seed "shared-seed" and therefore bucket identically; only the variant
// values differ.
func TestGoldenSharedSeed(t *testing.T) {
	tb := mustTable(t, 25, 25, 25, 25)
	tests := []struct {
		v     Version
		name  string
		wantA string
		wantB string
	}{
		{V1, "jack", "hearts", "ace-of-hearts"},
		{V1, "queen", "spades", "ace-of-spades"},
		{V1, "ten", "hearts", "ace-of-hearts"},
		{V1, "nine", "diamonds", "ace-of-diamonds"},
		{V2, "seven", "hearts", "ace-of-hearts"},
		{V2, "eight", "diamonds", "ace-of-diamonds"},
		{V2, "nine", "clubs", "ace-of-clubs"},
		{V2, "two", "spades", "ace-of-spades"},
		{V3, "seven", "hearts", "ace-of-hearts"},
		{V3, "eight", "hearts", "ace-of-hearts"},
		{V3, "nine", "diamonds", "ace-of-diamonds"},
		{V3, "two", "diamonds", "ace-of-diamonds"},
	}
	for _, tc := range tests {
		t.Run(tc.v.String()+"/"+tc.name, func(t *testing.T) {
			idx := tb.Pick(tc.v, HashString(tc.v, "shared-seed"+tc.name))
			if got := variantOf(suits, idx); got != tc.wantA {
				t.Errorf("flag A: got %s, want %s", got, tc.wantA)
			}
			if got := "ace-of-" + variantOf(suits, idx); got != tc.wantB {
				t.Errorf("flag B: got %s, want %s", got, tc.wantB)
			}
		})
	}
}

// Flag fractional-hash-edge-flag (V2): bucketBy = targetingKey, lower/upper
// 50/50. The keys are preimages of the hashes at the bucketing boundaries.
func TestGoldenHashEdges(t *testing.T) {
	tb := mustTable(t, 50, 50)
	names := []string{"lower", "upper"}
	tests := []struct {
		key  string
		hash uint32
		want string
	}{
		{"ejOoVL", 0, "lower"},
		{"bY9fO-", 1, "lower"},
		{"SI7p-", 2147483647, "lower"},
		{"6LvT0", 2147483648, "upper"},
		{"ceQdGm", 4294967295, "upper"},
	}
	for _, tc := range tests {
		t.Run(tc.key, func(t *testing.T) {
			h := HashString(V2, tc.key)
			if h != tc.hash {
				t.Fatalf("hash = %d, want %d", h, tc.hash)
			}
			if h1 := HashString(V1, tc.key); h1 != h {
				t.Errorf("V1 hash %d differs from V2 hash %d", h1, h)
			}
			if got := variantOf(names, tb.Pick(V2, h)); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

// The boundary hashes expose V1's legacy arithmetic: abs(int32) reaches
// MaxInt32 (or MaxInt32+1), the percentage reaches 100 and no bucket ends
// beyond it.
func TestV1BoundaryHashes(t *testing.T) {
	tb := mustTable(t, 50, 50)
	tests := []struct {
		hash uint32
		want int
	}{
		{0, 0},
		{1, 0},
		{0x3fffffff, 0},
		{0x40000000, 1},
		{0x7ffffffe, 1},
		{0x7fffffff, -1},
		{0x80000000, -1},
		{0x80000001, -1},
		{0x80000002, 1},
		{0xc0000000, 1},
		{0xc0000001, 0},
		{0xffffffff, 0},
	}
	for _, tc := range tests {
		if got := tb.Pick(V1, tc.hash); got != tc.want {
			t.Errorf("Pick(V1, %#x) = %d, want %d", tc.hash, got, tc.want)
		}
	}
}

// The nested-expression scenarios (fractional-nested-if-flag,
// fractional-nested-var-flag, fractional-nested-weight-flag) bucket by the
// targeting key over two buckets; their expectations need jon@company.com in
// the first bucket and user1 in the second. That holds for V2 and V3 only:
// V1 swaps the two keys.
func TestGoldenNestedSeeds(t *testing.T) {
	even := mustTable(t, 50, 50)
	tests := []struct {
		v         Version
		key       string
		wantEven  int
		wantFirst int // weights 100/0: the nested "if" chose premium
		wantLast  int // weights 0/10: the nested "if" chose basic
	}{
		{V1, "jon@company.com", 1, 0, 1},
		{V1, "user1", 0, 0, 1},
		{V2, "jon@company.com", 0, 0, 1},
		{V2, "user1", 1, 0, 1},
		{V3, "jon@company.com", 0, 0, 1},
		{V3, "user1", 1, 0, 1},
	}
	first := mustTable(t, 100, 0)
	last := mustTable(t, 0, 10)
	for _, tc := range tests {
		h := HashString(tc.v, tc.key)
		if got := even.Pick(tc.v, h); got != tc.wantEven {
			t.Errorf("%s %s 50/50: got %d, want %d", tc.v, tc.key, got, tc.wantEven)
		}
		if got := first.Pick(tc.v, h); got != tc.wantFirst {
			t.Errorf("%s %s 100/0: got %d, want %d", tc.v, tc.key, got, tc.wantFirst)
		}
		if got := last.Pick(tc.v, h); got != tc.wantLast {
			t.Errorf("%s %s 0/10: got %d, want %d", tc.v, tc.key, got, tc.wantLast)
		}
	}
}

// Flags with degenerate weights: fractional-single-entry-flag,
// fractional-as-condition(-false)-flag, fractional-negative-weight-flag and
// fractional-zero-weights-flag.
func TestGoldenWeightEdges(t *testing.T) {
	for _, v := range []Version{V1, V2, V3} {
		single := mustTable(t, 1)
		if got := single.Pick(v, HashDefault(v, "fractional-single-entry-flag", "some-targeting-key")); got != 0 {
			t.Errorf("%s single entry: got %d, want 0", v, got)
		}
		cond := mustTable(t, 0, 100)
		if got := cond.Pick(v, HashDefault(v, "fractional-as-condition-flag", "some-targeting-key")); got != 1 {
			t.Errorf("%s as-condition: got %d, want 1 (true)", v, got)
		}
		condFalse := mustTable(t, 100, 0)
		if got := condFalse.Pick(v, HashDefault(v, "fractional-as-condition-false-flag", "some-targeting-key")); got != 0 {
			t.Errorf("%s as-condition-false: got %d, want 0 (false)", v, got)
		}
		neg := mustTable(t, -50, 100)
		if got := neg.Pick(v, HashString(v, "any-user")); got != 1 {
			t.Errorf("%s negative weight: got %d, want 1 (two)", v, got)
		}
	}
	if _, err := NewTable([]float64{0, 0}); !errors.Is(err, ErrNoWeight) {
		t.Errorf("zero weights: err = %v, want ErrNoWeight", err)
	}
}

// Flag fractional-basic-flag (V3 only): bucketBy = var hashing_input over 25
// buckets of weight 4. typ is the context value type of the scenario.
func TestGoldenTypedV3(t *testing.T) {
	w := make([]float64, 25)
	for i := range w {
		w[i] = 4
	}
	tb := mustTable(t, w...)
	tests := []struct {
		typ  string
		in   string
		want int // bucketN
	}{
		// Basic types.
		{"Boolean", "true", 5},
		{"Boolean", "false", 1},
		{"String", "user1", 22},
		{"String", "user2", 16},
		{"Integer", "123", 20},
		{"Integer", "456", 12},
		{"Float", "1.23", 14},
		{"Float", "4.56", 18},
		{"String", "123", 22},
		{"String", "true", 24},
		{"String", "false", 1},
		{"String", "null", 8},
		{"String", "1.23", 4},
		{"Integer", "0", 8},

		// Float mapping: whole floats hash as integers.
		{"Float", "1.0", 23},
		{"Integer", "1", 23},
		{"Float", "1.0000000000000001", 23},
		{"Float", "-2.0", 12},
		{"Integer", "-2", 12},
		{"Float", "9007199254740992.0", 10},
		{"Integer", "9007199254740992", 10},

		// Zero values.
		{"Float", "0.0", 8},
		{"Float", "-0.0", 8},
		{"Integer", "0", 8},

		// Integer limits: every CBOR argument width.
		{"Integer", "2147483647", 10},
		{"Integer", "2147483648", 25},
		{"Integer", "-2147483648", 8},
		{"Integer", "-2147483649", 18},
		{"Integer", "9007199254740991", 2},
		{"Integer", "23", 21},
		{"Integer", "24", 11},
		{"Integer", "255", 13},
		{"Integer", "256", 13},
		{"Integer", "65535", 4},
		{"Integer", "65536", 11},
		{"Integer", "4294967295", 14},
		{"Integer", "4294967296", 19},
		{"Integer", "-24", 4},
		{"Integer", "-25", 16},

		// Float limits: float16, float32 and float64 boundaries.
		{"Float", "1e20", 19},
		{"Float", "-1e20", 25},
		{"Float", "65504.0", 16},
		{"Float", "-65504.0", 9},
		{"Float", "0.00006103515625", 22},
		{"Float", "0.000000059604644775390625", 23},
		{"Float", "65505.0", 17},
		{"Float", "-65505.0", 17},
		{"Float", "3.4028234663852886e+38", 10},
		{"Float", "-3.4028234663852886e+38", 3},
		{"Float", "1.1754943508222875e-38", 24},
		{"Float", "3.5e+38", 1},
		{"Float", "-3.5e+38", 6},
		{"Float", "1.7976931348623157e+308", 17},
		{"Float", "-1.7976931348623157e+308", 9},
		{"Float", "2.2250738585072014e-308", 11},
		{"Float", "4.9406564584124654e-324", 2},

		// Map key ordering.
		{"Object", `{"a": 1, "b": 2}`, 23},
		{"Object", `{"b": 2, "a": 1}`, 23},
		{"Object", `{"a": 1, "b": 2, "c": 3}`, 18},
		{"Object", `{"c": 3, "a": 1, "b": 2}`, 18},
		{"Object", `{"z": 1, "aa": 2}`, 21},
		{"Object", `{"aa": 2, "z": 1}`, 21},
		{"Object", `{"a": {"b": 1}, "b": 2}`, 9},
		{"Object", `{"b": 2, "a": {"b": 1}}`, 9},
		{"Object", `{"a": true, "bbb": 1, "c": "text", "dddd": 2.5}`, 25},
		{"Object", `{"c": "text", "bbb": 1, "a": true, "dddd": 2.5}`, 25},
		{"Object", `{"aaa": 1, "ÿ": 2}`, 12},
		{"Object", `{"ÿ": 2, "aaa": 1}`, 12},
		{"Object", `{"": 2, "abc": 1}`, 25},
		{"Object", `{"key": -0.0}`, 10},
		{"Object", `{"key": 0}`, 10},
		{"Object", `{"key": 0.0}`, 10},
		{"Object", `{"b": -0.0, "a": {"b": 1}, "c": 0.0}`, 8},
		{"Object", `{"c": 0.0, "b": -0.0, "a": {"b": 1}}`, 8},
		{"Object", `{"café": "façade", "b": {"résumé": {"ÿ": true}}}`, 22},

		// Advanced structures; duplicate keys keep the last value.
		{"Object", `{}`, 3},
		{"Object", `{"a": {} }`, 20},
		{"Object", `{"b": 2, "a": {} }`, 20},
		{"Object", `{"a": {}, "b": {}}`, 21},
		{"Object", `{"a": {}, "b": []}`, 7},
		{"Object", `{"c": 0.0, "a": []}`, 18},
		{"Object", `{"c": 0.0, "b": -0.0, "a": {"b": []}}`, 9},
		{"Object", `{"a": [] }`, 12},
		{"Object", `{"a": [1, [], 3], "b": null}`, 3},
		{"Object", `{"a": ["a", "b", {}], "b": [1, null, 2]}`, 23},
		{"Object", `{"a": [1, "two", true, [], null]}`, 23},
		{"Object", `{"a": [false, 2.5, ""], "b": [], "c": [{}], "c": null}`, 15},
		{"Object", `{"x": [{"a": 1}, {"b": 2}, {"b": null}]}`, 3},
		{"Object", `{"x": [{"a": {"b": []}}] }`, 16},
		{"Object", `{"x": [{"a": {"b": null}}] }`, 6},
		{"Object", `{"x": [{"a": {"b": {}}}] }`, 2},
		{"Object", `{"": "", "": [], "": {}, "": null}`, 25},
		{"Object", `{"": {"": ""}, "": ["", {"": ""}], "": {"": {"": ""}}}`, 11},
		{"Object", `{"a": [[[[[]]]]] }`, 15},
		{"Object", `{"a": [[[[null]]]] }`, 7},
		{"Object", `{"a": {"b": {"c": {"d": {}}} } }`, 21},
		{"Object", `{"a": {"b": {"c": {"d": null}} } }`, 19},

		// String length boundaries: CBOR text heads switch at 24 and 256
		// bytes.
		{"String", "", 4},
		{"String", "a", 6},
		{"String", "12345678901234567890123", 4},
		{"String", "123456789012345678901234", 14},
		{"String", strings.Repeat("a", 255), 18},
		{"String", strings.Repeat("a", 256), 7},

		// Well-formed UTF-8 across languages. The \u rows are the literal
		// backslash text: the conformance suite passes table cells through
		// without JSON unescaping (unescaped, they would land in buckets 14,
		// 16 and 1).
		{"String", "あいうえおかき", 17},
		{"String", "あいうえおかきく", 16},
		{"String", "ééééééééééé", 16},
		{"String", "éééééééééééé", 19},
		{"String", "café façade résumé café", 9},
		{"String", `A\u0000B`, 15},
		{"String", `e\u0301`, 7},
		{"String", `\uD83D\uDE00`, 23},
	}
	for _, tc := range tests {
		name := tc.typ + "/" + tc.in
		if len(name) > 60 {
			name = name[:60]
		}
		t.Run(name, func(t *testing.T) {
			x := typedValue(t, tc.typ, tc.in)
			h, err := HashValue(V3, x)
			if err != nil {
				t.Fatalf("HashValue(%#v): %v", x, err)
			}
			if got := tb.Pick(V3, h) + 1; got != tc.want {
				t.Errorf("got bucket%d, want bucket%d", got, tc.want)
			}
		})
	}
}

// typedValue converts a scenario cell the way a context of the given type
// carries it.
func typedValue(t *testing.T, typ, s string) any {
	t.Helper()
	switch typ {
	case "String":
		return s
	case "Boolean":
		return s == "true"
	case "Integer":
		i, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return i
	case "Float":
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatal(err)
		}
		return f
	case "Object":
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	t.Fatalf("unknown type %q", typ)
	return nil
}

// The \u rows above are sensitive to the interpretation of the cell; this
// pins down that the unescaped strings really are different inputs.
func TestGoldenUnescapedStringsDiffer(t *testing.T) {
	w := make([]float64, 25)
	for i := range w {
		w[i] = 4
	}
	tb := mustTable(t, w...)
	tests := []struct {
		in   string
		want int
	}{
		{"A\u0000B", 14},
		{"e\u0301", 16},
		{"\U0001F600", 1},
	}
	for _, tc := range tests {
		if got := tb.Pick(V3, HashString(V3, tc.in)) + 1; got != tc.want {
			t.Errorf("%+q: got bucket%d, want bucket%d", tc.in, got, tc.want)
		}
	}
}

// V3 invalid implicit inputs (missing or non-string targeting key) and the
// null bucketing values of fractional-null-bucket-key-flag and
// targeting-null-flag are rejected by callers before hashing; the hashing
// side must report null distinctly so they can.
func TestGoldenNullInput(t *testing.T) {
	for _, v := range []Version{V1, V2, V3} {
		if _, err := HashValue(v, nil); !errors.Is(err, ErrNullInput) {
			t.Errorf("%s: HashValue(nil) err = %v, want ErrNullInput", v, err)
		}
	}
	for _, x := range []any{int64(12345), true} {
		for _, v := range []Version{V1, V2} {
			if _, err := HashValue(v, x); !errors.Is(err, ErrUnsupportedInput) {
				t.Errorf("%s: HashValue(%v) err = %v, want ErrUnsupportedInput", v, x, err)
			}
		}
	}
}
