package evaluator

import (
	"maps"
	"strings"
	"testing"

	"github.com/flagsnap/flagsnap/fractional"
)

const evaluateDoc = `{"metadata": {"team": "shop"}, "flags": {
  "static":   {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "on", "metadata": {"v": 2}},
  "rule":     {"state": "ENABLED", "variants": {"a": "A", "b": "B"}, "defaultVariant": "a",
               "targeting": {"if": [{"==": [{"var": "tier"}, "gold"]}, "b", null]}},
  "nodef":    {"state": "ENABLED", "variants": {"x": 1}},
  "off":      {"state": "DISABLED", "variants": {"on": true}, "defaultVariant": "on"},
  "broken":   {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "nope"},
  "badname":  {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on", "targeting": {"var": "name"}}
}}`

// Evaluate reports the flag's index, the variant served, the reason, the
// error and the metadata; the index and variant index name the flag and
// variant through the set's accessors.
func TestEvaluate(t *testing.T) {
	set, err := Load([]byte(evaluateDoc))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		key     string
		ctx     map[string]any
		variant string
		reason  Reason
		code    ErrorCode
		meta    map[string]any
	}{
		{"static", nil, "on", ReasonStatic, 0, map[string]any{"team": "shop", "v": int64(2)}},
		{"rule", map[string]any{"tier": "gold"}, "b", ReasonTargetingMatch, 0, map[string]any{"team": "shop"}},
		{"rule", map[string]any{"tier": "iron"}, "a", ReasonDefault, 0, map[string]any{"team": "shop"}},
		{"nodef", nil, "", ReasonDefault, 0, map[string]any{"team": "shop"}},
		{"off", nil, "", ReasonDisabled, 0, map[string]any{"team": "shop"}},
		{"broken", nil, "", ReasonError, CodeParseError, map[string]any{"team": "shop"}},
		{"badname", map[string]any{"name": "zzz"}, "", ReasonError, CodeGeneral, map[string]any{"team": "shop"}},
		{"missing", nil, "", ReasonError, CodeFlagNotFound, map[string]any{"team": "shop"}},
	}
	for _, tt := range tests {
		e := set.Evaluate(tt.key, tt.ctx)
		var code ErrorCode
		if e.Err() != nil {
			code = e.Err().Code
		}
		if e.Variant() != tt.variant || e.Reason() != tt.reason || code != tt.code || !maps.Equal(e.Metadata(), tt.meta) {
			t.Errorf("%s: variant %q, reason %v, code %v, metadata %v; want %q, %v, %v, %v",
				tt.key, e.Variant(), e.Reason(), code, e.Metadata(), tt.variant, tt.reason, tt.code, tt.meta)
		}
		if tt.key == "missing" {
			if e.Index() != -1 || set.Index(tt.key) != -1 {
				t.Errorf("missing: index %d, set index %d", e.Index(), set.Index(tt.key))
			}
			continue
		}
		if e.Index() != set.Index(tt.key) || set.FlagKey(e.Index()) != tt.key {
			t.Errorf("%s: index %d names %q; the set's index is %d", tt.key, e.Index(), set.FlagKey(e.Index()), set.Index(tt.key))
		}
		if j := e.VariantIndex(); (j >= 0) != (tt.variant != "") || j >= 0 && set.VariantName(e.Index(), j) != tt.variant {
			t.Errorf("%s: variant index %d", tt.key, j)
		}
	}
}

// The typed readers answer the caller's default and turn the evaluation
// into a TYPE_MISMATCH only when a variant of another type was served.
func TestEvaluationReadAsAnotherType(t *testing.T) {
	set, err := Load([]byte(evaluateDoc))
	if err != nil {
		t.Fatal(err)
	}
	e := set.Evaluate("static", nil)
	if s := e.String("dflt"); s != "dflt" || e.Err() == nil || e.Err().Code != CodeTypeMismatch || e.Reason() != ReasonError || e.Variant() != "on" {
		t.Errorf("static read as a string: %q, %+v", s, e)
	}
	e = set.Evaluate("off", nil)
	if s := e.String("dflt"); s != "dflt" || e.Err() != nil || e.Reason() != ReasonDisabled {
		t.Errorf("disabled read as a string: %q, %+v", s, e)
	}
	e = set.Evaluate("nodef", nil)
	if n := e.Int(7); n != 7 || e.Err() != nil || e.Reason() != ReasonDefault {
		t.Errorf("no default variant read as an integer: %d, %+v", n, e)
	}
	e = set.Evaluate("static", nil)
	if b := e.Bool(false); !b || e.Err() != nil {
		t.Errorf("static read as a boolean: %v, %+v", b, e)
	}
}

// Every index below Len holds a flag of the set, each a different one.
func TestIndexes(t *testing.T) {
	set, err := Load([]byte(evaluateDoc))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i := range set.Len() {
		key := set.FlagKey(i)
		seen[key] = true
		if set.Index(key) != i {
			t.Errorf("%s at %d, Index says %d", key, i, set.Index(key))
		}
	}
	if len(seen) != set.Len() {
		t.Errorf("%d flags by index, %d in the set", len(seen), set.Len())
	}
}

// EvaluateAt is Evaluate by the flag's index; an index out of range
// answers as a key the set does not define.
func TestEvaluateAt(t *testing.T) {
	set := mustLoad(t, `{"flags": {
		"a": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off",
		      "targeting": {"if": [{"==": [{"var": "k"}, 1]}, "on"]}},
		"b": {"state": "ENABLED", "variants": {"x": "X"}, "defaultVariant": "x"}}}`)
	ctx := map[string]any{"k": 1}
	for i := range set.Len() {
		at, byKey := set.EvaluateAt(i, ctx), set.Evaluate(set.FlagKey(i), ctx)
		if at.Index() != i || at.Variant() != byKey.Variant() || at.Reason() != byKey.Reason() || at.Err() != nil {
			t.Errorf("%d (%s): %s %v %v, by key %s %v", i, set.FlagKey(i), at.Variant(), at.Reason(), at.Err(), byKey.Variant(), byKey.Reason())
		}
	}
	for _, i := range []int{-1, set.Len()} {
		e := set.EvaluateAt(i, ctx)
		if err := e.Err(); e.Index() != -1 || err == nil || err.Code != CodeFlagNotFound {
			t.Errorf("index %d: index %d, error %v; want FLAG_NOT_FOUND", i, e.Index(), err)
		}
	}
}

func TestLoadRefusesAnUnknownFractionalVersion(t *testing.T) {
	_, err := Load([]byte(`{"flags": {}}`), WithFractionalVersion(fractional.Version(9)))
	if err == nil || !strings.Contains(err.Error(), "invalid fractional version") {
		t.Errorf("Load: %v", err)
	}
}
