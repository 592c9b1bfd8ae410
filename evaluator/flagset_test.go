package evaluator

import (
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/flagsnap/flagsnap/internal/logtest"
)

func mustLoad(t testing.TB, doc string, opts ...Option) *FlagSet {
	t.Helper()
	set, err := Load([]byte(doc), opts...)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return set
}

func TestLoadFlagsObjectArrayAndYAML(t *testing.T) {
	docs := map[string]string{
		"object": `{"$evaluators": {"isOne": {"==": [{"var": "k"}, 1]}}, "flags": {
			"a": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "on"},
			"b": {"state": "ENABLED", "variants": {"x": "X", "y": "Y"}, "defaultVariant": "y",
			      "targeting": {"if": [{"$ref": "isOne"}, "x"]}}}}`,
		"array": `{"flags": [
			{"key": "a", "state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "on"},
			{"key": "b", "state": "ENABLED", "variants": {"x": "X", "y": "Y"}, "defaultVariant": "y",
			 "targeting": {"if": [{"==": [{"var": "k"}, 1]}, "x"]}}]}`,
		"yaml": `
$evaluators:
  isOne: {"==": [{var: k}, 1]}
flags:
  a:
    state: ENABLED
    variants: {on: true, off: false}
    defaultVariant: "on"
  b:
    state: ENABLED
    variants:
      x: X
      y: Y
    defaultVariant: y
    targeting:
      if:
        - $ref: isOne
        - x
`,
		// YAML's flow style: it opens an object, but is not JSON.
		"yaml flow style": ` {$evaluators: {isOne: {"==": [{var: k}, 1]}}, flags: {
			a: {state: ENABLED, variants: {on: true, off: false}, defaultVariant: "on"},
			b: {state: ENABLED, variants: {x: X, y: Y}, defaultVariant: y, targeting: {if: [{$ref: isOne}, x]}}}}`,
	}
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			set := mustLoad(t, doc)
			if got := set.Keys(); !slices.Equal(got, []string{"a", "b"}) {
				t.Fatalf("keys %v", got)
			}
			if r := set.ResolveBool("a", false, nil); !r.Value || r.Reason != ReasonStatic {
				t.Errorf("a: %+v", r)
			}
			if r := set.ResolveString("b", "", map[string]any{"k": 1}); r.Value != "X" || r.Reason != ReasonTargetingMatch {
				t.Errorf("b matched: %+v", r)
			}
			if r := set.ResolveString("b", "", map[string]any{"k": 2}); r.Value != "Y" || r.Reason != ReasonDefault {
				t.Errorf("b default: %+v", r)
			}
		})
	}
}

func TestLoadRejectsDocumentsThatAreNotFlagSets(t *testing.T) {
	cases := []struct {
		name, doc string
		syntax    *SyntaxError // nil: expect a *DocumentError
	}{
		{"empty", "  \n", nil},
		{"no flags", `{"metadata": {}}`, nil},
		{"flags wrong type", `{"flags": "abc"}`, nil},
		{"top-level array", `[{"key": "a"}]`, nil},
		{"evaluators wrong type", `{"$evaluators": [], "flags": {}}`, nil},
		{"yaml scalar", `just text`, nil},
		{"bad JSON", "{\n  \"flags\": {\n    \"a\": {\"state\": \"ENABLED\",,}\n  }\n}", &SyntaxError{Format: "JSON", Line: 3, Column: 30}},
		{"truncated JSON", "{\"flags\": {\"a\": ", &SyntaxError{Format: "JSON", Line: 1, Column: 16}},
		{"trailing data", "{\"flags\": {}}\n}", &SyntaxError{Format: "JSON", Line: 2, Column: 1}},
		// The YAML parser's own line numbers are passed on as they are.
		{"bad YAML", "flags:\n  a: 1\n\tb: 2\n", &SyntaxError{Format: "YAML", Line: 2}},
		{"duplicate YAML key", "flags:\n  a: 1\n  a: 2\n", &SyntaxError{Format: "YAML"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			set, err := Load([]byte(c.doc))
			if set != nil || err == nil {
				t.Fatalf("loaded %v, want an error", set)
			}
			if c.syntax == nil {
				var de *DocumentError
				if !errors.As(err, &de) {
					t.Fatalf("got %T %v, want *DocumentError", err, err)
				}
				return
			}
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("got %T %v, want *SyntaxError", err, err)
			}
			if se.Format != c.syntax.Format || (c.syntax.Line != 0 && se.Line != c.syntax.Line) || (c.syntax.Column != 0 && se.Column != c.syntax.Column) {
				t.Errorf("got %s at %d:%d, want %s at %d:%d (%v)", se.Format, se.Line, se.Column, c.syntax.Format, c.syntax.Line, c.syntax.Column, err)
			}
			if c.syntax.Line != 0 && !strings.Contains(err.Error(), "line") {
				t.Errorf("message %q does not give the line", err)
			}
		})
	}
}

// brokenDoc has one good flag and one flag for each problem confined to a
// flag.
const brokenDoc = `{
  "$evaluators": {"staff": {"ends_with": [{"var": "email"}, "@example.com"]},
                  "outsider": {"!": [{"$ref": "staff"}]}},
  "flags": {
    "good": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "on",
             "targeting": {"if": [{"$ref": "staff"}, "off"]}},
    "unknown-ref": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on",
                    "targeting": {"if": [{"$ref": "nobody"}, "on"]}},
    "unknown-operator": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on",
                         "targeting": {"regex": [{"var": "email"}, ".*"]}},
    "bad-weights": {"state": "ENABLED", "variants": {"a": "a", "b": "b"}, "defaultVariant": "a",
                    "targeting": {"fractional": [["a", 50.5], ["b", 49.5]]}},
    "weights-too-large": {"state": "ENABLED", "variants": {"a": "a", "b": "b"}, "defaultVariant": "a",
                          "targeting": {"fractional": [["a", 2147483647], ["b", 1]]}},
    "bad-default": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "maybe"},
    "mixed-types": {"state": "ENABLED", "variants": {"on": true, "text": "yes"}, "defaultVariant": "on"},
    "no-variants": {"state": "ENABLED", "defaultVariant": "on"},
    "not-an-object": 42,
    "nested-ref": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on",
                   "targeting": {"$ref": "outsider"}},
    "bad-var": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on",
                "targeting": {"if": [{"var": [1]}, "on"]}}
  }
}`

func TestProblemsBreakOnlyTheirFlag(t *testing.T) {
	var logs logtest.Buffer
	set := mustLoad(t, brokenDoc, WithLogger(logs.Logger()))

	broken := map[string]bool{}
	for _, p := range set.Problems() {
		broken[p.Flag] = true
		if p.Err == nil {
			t.Errorf("%s: problem without a cause", p.Flag)
		}
		if n := logs.Count("flag=" + p.Flag + " "); n != 1 {
			t.Errorf("%s logged %d times, want once:\n%s", p.Flag, n, logs.String())
		}
	}
	want := []string{"bad-default", "bad-var", "bad-weights", "mixed-types", "nested-ref", "no-variants",
		"not-an-object", "unknown-operator", "unknown-ref", "weights-too-large"}
	if got := slices.Sorted(maps.Keys(broken)); !slices.Equal(got, want) {
		t.Fatalf("broken flags %v, want %v", got, want)
	}
	for _, key := range want {
		if key == "bad-weights" || key == "weights-too-large" {
			// flagd's fractional answers null for weights it cannot
			// use: the default variant.
			if r := set.ResolveString(key, "x", nil); r.Value != "a" || r.Reason != ReasonDefault || r.Err != nil {
				t.Errorf("%s: %+v, want the default variant", key, r)
			}
			continue
		}
		r := set.ResolveBool(key, true, nil)
		if r.Value != true || r.Reason != ReasonError || r.Err == nil || r.Err.Code != CodeParseError {
			t.Errorf("%s: %+v, want PARSE_ERROR with the default", key, r)
		}
	}
	if r := set.ResolveBool("good", true, map[string]any{"email": "ada@example.com"}); r.Value || r.Reason != ReasonTargetingMatch {
		t.Errorf("good flag: %+v", r)
	}
}

func TestStrictModeRejectsTheDocument(t *testing.T) {
	_, err := Load([]byte(brokenDoc), WithStrict())
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("got %v, want *ValidationError", err)
	}
	if len(ve.Problems) != 10 || !strings.Contains(err.Error(), "unknown-ref") {
		t.Errorf("problems %d: %v", len(ve.Problems), err)
	}
	if _, err := Load([]byte(`{"flags": {"a": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on"}}}`), WithStrict()); err != nil {
		t.Errorf("strict mode rejected a valid document: %v", err)
	}
}

func TestRefIgnoresSpacing(t *testing.T) {
	doc := `{"$evaluators": {"is_ada": {"==": ["ada@example.com", {"var": ["email"]}]}},
	  "flags": {
	    "compact": {"state": "ENABLED", "variants": {"hi": "hi", "bye": "bye"}, "defaultVariant": "bye", "targeting": {"if": [{"$ref":"is_ada"}, "hi", "bye"]}},
	    "after": {"state": "ENABLED", "variants": {"hi": "hi", "bye": "bye"}, "defaultVariant": "bye", "targeting": {"if": [{"$ref": "is_ada"}, "hi", "bye"]}},
	    "around": {"state": "ENABLED", "variants": {"hi": "hi", "bye": "bye"}, "defaultVariant": "bye", "targeting": {"if": [{ "$ref" :  "is_ada" }, "hi", "bye"]}}}}`
	set := mustLoad(t, doc)
	for _, key := range set.Keys() {
		for email, want := range map[string]string{"ada@example.com": "hi", "bob@example.com": "bye"} {
			r := set.ResolveString(key, "fallback", map[string]any{"email": email})
			if r.Value != want || r.Reason != ReasonTargetingMatch {
				t.Errorf("%s, %s: %+v, want %s", key, email, r, want)
			}
		}
	}
}

// A $ref is substituted in variants, metadata, state and defaultVariant
// too, as flagd's substitution of the document's text does; there a name
// of no entry, or an object with members beside "$ref", stays as written.
func TestRefsInVariantsAndMetadata(t *testing.T) {
	docs := map[string]string{
		"JSON": `{"$evaluators": {"rule": {"==": [1, 1]}, "label": "blue", "on": "ENABLED", "second": "b"},
		  "metadata": {"set": {"$ref": "label"}},
		  "flags": {"f": {"state": "ENABLED", "defaultVariant": "a", "targeting": {"var": "pick"}, "metadata": {"own": {"$ref": "label"}},
		    "variants": {"a": {"$ref": "rule"}, "b": {"inner": [{"$ref": "rule"}]}, "c": {"$ref": "nobody"}, "d": {"$ref": "rule", "x": 1}}},
		    "g": {"state": {"$ref": "on"}, "defaultVariant": {"$ref": "second"}, "variants": {"a": 1, "b": 2}}}}`,
		"YAML": "$evaluators: {rule: {'==': [1, 1]}, label: blue, 'on': ENABLED, second: b}\nmetadata: {set: {$ref: label}}\nflags:\n  f:\n" +
			"    state: ENABLED\n    defaultVariant: a\n    targeting: {var: pick}\n    metadata: {own: {$ref: label}}\n" +
			"    variants: {a: {$ref: rule}, b: {inner: [{$ref: rule}]}, c: {$ref: nobody}, d: {$ref: rule, x: 1}}\n" +
			"  g: {state: {$ref: 'on'}, defaultVariant: {$ref: second}, variants: {a: 1, b: 2}}\n",
	}
	want := map[string]string{
		"a": `{"==":[1,1]}`, "b": `{"inner":[{"==":[1,1]}]}`, "c": `{"$ref":"nobody"}`, "d": `{"$ref":"rule","x":1}`,
	}
	for name, doc := range docs {
		var logs logtest.Buffer
		set := mustLoad(t, doc, WithLogger(logs.Logger()))
		if p := set.Problems(); len(p) > 0 || logs.String() != "" {
			t.Errorf("%s: problems %v, log %q", name, p, logs.String())
		}
		if r := set.ResolveInt("g", 0, nil); r.Value != 2 || r.Reason != ReasonStatic {
			t.Errorf("%s: g, its state and default variant a $ref each: %+v, want b's 2", name, r)
		}
		for pick, w := range want {
			r := set.ResolveObject("f", nil, map[string]any{"pick": pick})
			if got, _ := json.Marshal(r.Value); string(got) != w || r.Err != nil {
				t.Errorf("%s, variant %s: %s (%v), want %s", name, pick, got, r.Err, w)
			}
			if m := r.Metadata; m["set"] != "blue" || m["own"] != "blue" {
				t.Errorf("%s: metadata %v, want both entries substituted", name, m)
			}
		}
	}
}

// A "variants", or a whole definition, that is one $ref is the entry it
// names, as in flagd, which is not searched again (no nested $ref): a
// $ref in the entry's variants stays as written, and one in its rule is a
// broken part. A name of no entry stays as written, which breaks the flag.
func TestWholeRefs(t *testing.T) {
	docs := map[string]string{
		"JSON": `{"$evaluators": {"onoff": {"on": true, "off": false}, "text": "x", "rule": {"var": "tier"}, "gold": {"==": [{"var": "tier"}, "gold"]}, "objs": {"x": {"$ref": "rule"}, "y": {"k": 1}},
		    "gate": {"state": "ENABLED", "variants": {"a": {"v": 1}, "b": {"$ref": "rule"}}, "defaultVariant": "a", "targeting": {"if": [{"==": [{"var": "tier"}, "gold"]}, "b"]}, "metadata": {"owner": "ops"}},
		    "nested": {"state": "ENABLED", "variants": {"a": 1}, "defaultVariant": "a", "targeting": {"if": [{"$ref": "gold"}, "a"]}}},
		  "metadata": {"flagSetId": "shop"},
		  "flags": {
		    "variants-ref": {"state": "ENABLED", "variants": {"$ref": "onoff"}, "defaultVariant": "on"},
		    "objs-ref": {"state": "ENABLED", "variants": {"$ref": "objs"}, "defaultVariant": "x"},
		    "flag-ref": {"$ref": "gate"},
		    "nested-ref": {"$ref": "nested"},
		    "to-a-string": {"$ref": "text"},
		    "to-nothing": {"$ref": "nobody"},
		    "variants-to-nothing": {"state": "ENABLED", "variants": {"$ref": "nobody"}, "defaultVariant": "on"},
		    "beside": {"$ref": "gate", "state": "ENABLED"}}}`,
		"YAML": "$evaluators:\n  onoff: {'on': true, 'off': false}\n  text: x\n  rule: {var: tier}\n  gold: {'==': [{var: tier}, gold]}\n  objs: {x: {$ref: rule}, y: {k: 1}}\n" +
			"  gate: {state: ENABLED, variants: {a: {v: 1}, b: {$ref: rule}}, defaultVariant: a, targeting: {if: [{'==': [{var: tier}, gold]}, b]}, metadata: {owner: ops}}\n" +
			"  nested: {state: ENABLED, variants: {a: 1}, defaultVariant: a, targeting: {if: [{$ref: gold}, a]}}\n" +
			"metadata: {flagSetId: shop}\nflags:\n" +
			"  variants-ref: {state: ENABLED, variants: {$ref: onoff}, defaultVariant: 'on'}\n" +
			"  objs-ref: {state: ENABLED, variants: {$ref: objs}, defaultVariant: x}\n" +
			"  flag-ref: {$ref: gate}\n  nested-ref: {$ref: nested}\n  to-a-string: {$ref: text}\n  to-nothing: {$ref: nobody}\n" +
			"  variants-to-nothing: {state: ENABLED, variants: {$ref: nobody}, defaultVariant: 'on'}\n" +
			"  beside: {$ref: gate, state: ENABLED}\n",
	}
	for name, doc := range docs {
		set := mustLoad(t, doc)
		if r := set.ResolveBool("variants-ref", false, nil); !r.Value || r.Variant != "on" || r.Reason != ReasonStatic {
			t.Errorf("%s: variants-ref %+v, want on", name, r)
		}
		if r := set.ResolveObject("objs-ref", nil, nil); r.Variant != "x" || !reflect.DeepEqual(r.Value, map[string]any{"$ref": "rule"}) {
			t.Errorf("%s: objs-ref %+v, want variant x, its $ref as written", name, r)
		}
		if r := set.ResolveObject("flag-ref", nil, nil); r.Variant != "a" || r.Reason != ReasonDefault || !reflect.DeepEqual(r.Value, map[string]any{"v": 1.0}) {
			t.Errorf("%s: flag-ref %+v, want the entry's default a", name, r)
		}
		if r := set.ResolveObject("flag-ref", nil, map[string]any{"tier": "gold"}); r.Variant != "b" || !reflect.DeepEqual(r.Value, map[string]any{"$ref": "rule"}) {
			t.Errorf("%s: flag-ref for gold %+v, want variant b, its $ref as written", name, r)
		}
		if m := set.ResolveObject("flag-ref", nil, nil).Metadata; m["owner"] != "ops" || m["flagSetId"] != "shop" {
			t.Errorf("%s: flag-ref's metadata %v, want its own over the set's", name, m)
		}
		broken := map[string]string{
			"to-a-string":         "definition is a string, not an object",
			"to-nothing":          `"variants" is missing`,
			"variants-to-nothing": `defaultVariant "on" is not one of the variants`,
			"beside":              `"variants" is missing`,
			"nested-ref":          `unknown operator "$ref"`,
		}
		for key, msg := range broken {
			if r := set.ResolveBool(key, false, nil); r.Err == nil || !strings.Contains(r.Err.Error(), msg) {
				t.Errorf("%s: %s %+v, want %q", name, key, r, msg)
			}
		}
	}
}

func TestMetadata(t *testing.T) {
	set := mustLoad(t, `{
	  "metadata": {"flagSetId": "shop", "team": "checkout", "version": 2, "weight": 2.5, "live": true, "nested": {"x": 1}},
	  "flags": {
	    "plain": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on"},
	    "own": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on",
	            "metadata": {"team": "growth", "ratio": 0.1, "count": 10, "bad": [1]}},
	    "off": {"state": "DISABLED", "variants": {"on": true}, "defaultVariant": "on", "metadata": {"why": "paused"}},
	    "broken": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "nope", "metadata": {"owner": "me"}}
	  }}`)
	setMeta := map[string]any{"flagSetId": "shop", "team": "checkout", "version": int64(2), "weight": 2.5, "live": true}
	if !maps.Equal(set.Metadata(), setMeta) {
		t.Errorf("flag-set metadata %v", set.Metadata())
	}
	cases := map[string]map[string]any{
		"plain":   setMeta,
		"own":     {"flagSetId": "shop", "team": "growth", "version": int64(2), "weight": 2.5, "live": true, "ratio": 0.1, "count": int64(10)},
		"off":     {"flagSetId": "shop", "team": "checkout", "version": int64(2), "weight": 2.5, "live": true, "why": "paused"},
		"broken":  {"flagSetId": "shop", "team": "checkout", "version": int64(2), "weight": 2.5, "live": true, "owner": "me"},
		"missing": setMeta,
	}
	for key, want := range cases {
		if got := set.ResolveBool(key, false, nil).Metadata; !maps.Equal(got, want) {
			t.Errorf("%s: metadata %v, want %v", key, got, want)
		}
		if got := set.ResolveString(key, "", nil).Metadata; !maps.Equal(got, want) {
			t.Errorf("%s (type mismatch): metadata %v, want %v", key, got, want)
		}
	}
	if m := mustLoad(t, `{"flags": {"a": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on"}}}`).ResolveBool("a", false, nil).Metadata; m != nil {
		t.Errorf("metadata %v, want none", m)
	}
}

// TestMetadataNumberSpelling pins that a metadata number keeps the type its
// spelling asks for, since OpenFeature's GetInt and GetFloat each accept only
// their own type.
func TestMetadataNumberSpelling(t *testing.T) {
	for _, tc := range []struct {
		json string
		want any
	}{
		{"10", int64(10)},
		{"-3", int64(-3)},
		{"0", int64(0)},
		{"9223372036854775807", int64(9223372036854775807)},
		{"9223372036854775808", 9223372036854775808.0},
		{"10.0", 10.0},
		{"1e3", 1000.0},
		{"2.5", 2.5},
		{"-0.0", 0.0},
	} {
		set := mustLoad(t, `{"metadata": {"n": `+tc.json+`}, "flags": {}}`)
		got, ok := set.Metadata()["n"]
		if !ok || got != tc.want {
			t.Errorf("%s: metadata %T %v, want %T %v", tc.json, got, got, tc.want, tc.want)
		}
	}
}

func TestChanges(t *testing.T) {
	base := `{"$evaluators": {"e": {"==": [1, 1]}}, "metadata": {"m": 1}, "flags": {
	  "a": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "on", "targeting": {"if": [{"$ref": "e"}, "off"]}},
	  "b": {"state": "ENABLED", "variants": {"n": 1.0}, "defaultVariant": "n"}}}`
	old := mustLoad(t, base)
	cases := []struct {
		name                    string
		doc                     string
		added, removed, changed []string
	}{
		{"identical", base, nil, nil, nil},
		{"reformatted", `{"flags": {"b": {"defaultVariant": "n", "variants": {"n": 1}, "state": "ENABLED"},
		  "a": {"targeting": {"if": [{"$ref":"e"}, "off"]}, "defaultVariant": "on", "variants": {"off": false, "on": true}, "state": "ENABLED"}},
		  "metadata": {"m": 1.0}, "$evaluators": {"e": {"==": [1, 1]}}}`, nil, nil, nil},
		{"state", strings.Replace(base, `"ENABLED", "variants": {"n"`, `"DISABLED", "variants": {"n"`, 1), nil, nil, []string{"b"}},
		{"variant value", strings.Replace(base, `"n": 1.0`, `"n": 2`, 1), nil, nil, []string{"b"}},
		{"default variant", strings.Replace(base, `"defaultVariant": "on"`, `"defaultVariant": "off"`, 1), nil, nil, []string{"a"}},
		{"evaluator behind a $ref", strings.Replace(base, `"e": {"==": [1, 1]}`, `"e": {"==": [1, 2]}`, 1), nil, nil, []string{"a"}},
		{"flag-set metadata", strings.Replace(base, `"m": 1`, `"m": 2`, 1), nil, nil, []string{"a", "b"}},
		{"added and removed", `{"flags": {
		  "a": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "on", "targeting": {"if": [{"==": [1, 1]}, "off"]}},
		  "c": {"state": "ENABLED", "variants": {"n": 1}, "defaultVariant": "n"}}, "metadata": {"m": 1}}`, []string{"c"}, []string{"b"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			added, removed, changed := mustLoad(t, c.doc).Changes(old)
			if !slices.Equal(added, c.added) || !slices.Equal(removed, c.removed) || !slices.Equal(changed, c.changed) {
				t.Errorf("got +%v -%v ~%v, want +%v -%v ~%v", added, removed, changed, c.added, c.removed, c.changed)
			}
		})
	}
	added, removed, changed := old.Changes(nil)
	if !slices.Equal(added, []string{"a", "b"}) || removed != nil || changed != nil {
		t.Errorf("from nothing: +%v -%v ~%v", added, removed, changed)
	}
}

// The warning quotes the rule to paste, an operation in a bucket as it is
// written.
func TestLegacyFractionalWarningQuotesTheRule(t *testing.T) {
	var logs logtest.Buffer
	mustLoad(t, `{"flags": {"legacy": {"state": "ENABLED", "variants": {"a": "a", "b": "b"}, "defaultVariant": "a",
	  "targeting": {"fractionalEvaluation": ["email", [{"cat": ["a"]}, 50], ["b", 50]]}}}}`,
		WithLogger(logs.Logger()))
	want := `use \"fractional\": {\"fractional\":[{\"var\":\"email\"},[{\"cat\":[\"a\"]},50],[\"b\",50]]}`
	if !strings.Contains(logs.String(), want) {
		t.Errorf("the warning does not quote the rule %s: %q", want, logs.String())
	}
}

func TestLegacyFractionalWarnsAndWorks(t *testing.T) {
	var logs logtest.Buffer
	set := mustLoad(t, `{"flags": {"legacy": {"state": "ENABLED", "variants": {"a": "a", "b": "b"}, "defaultVariant": "a",
	  "targeting": {"fractionalEvaluation": ["email", ["a", 50], ["b", 50]]}}}}`,
		WithLogger(logs.Logger()))
	if !strings.Contains(logs.String(), "deprecated") || logs.Count("fractionalEvaluation") != 1 {
		t.Errorf("deprecation warning: %q", logs.String())
	}
	// The legacy form buckets by the named property: the same input as
	// {"fractional": [{"var": "email"}, …]}.
	modern := mustLoad(t, `{"flags": {"legacy": {"state": "ENABLED", "variants": {"a": "a", "b": "b"}, "defaultVariant": "a",
	  "targeting": {"fractional": [{"var": "email"}, ["a", 50], ["b", 50]]}}}}`)
	// The emails land in both buckets: were they all in the default
	// variant's, a legacy form that never bucketed would pass as well.
	seen := map[string]bool{}
	for _, email := range []string{"ada@example.com", "bob@example.com", "cy@example.com", "di@example.com", "eve@example.com", "gus@example.com"} {
		ctx := map[string]any{"email": email}
		got := set.ResolveString("legacy", "", ctx)
		if want := modern.ResolveString("legacy", "", ctx).Value; got.Value != want {
			t.Errorf("%s: legacy %s, fractional %s", email, got.Value, want)
		}
		if got.Reason != ReasonTargetingMatch {
			t.Errorf("%s: legacy %+v, want TARGETING_MATCH", email, got)
		}
		seen[got.Value] = true
	}
	if !seen["a"] || !seen["b"] {
		t.Errorf("the emails only reached variants %v", seen)
	}
}

func TestUnknownStateIsEnabledWithAWarning(t *testing.T) {
	var logs logtest.Buffer
	set := mustLoad(t, `{"flags": {"a": {"variants": {"on": true}, "defaultVariant": "on"}}}`,
		WithLogger(logs.Logger()))
	if r := set.ResolveBool("a", false, nil); !r.Value || r.Reason != ReasonStatic {
		t.Errorf("%+v", r)
	}
	if !strings.Contains(logs.String(), "state") {
		t.Errorf("no warning about the state: %q", logs.String())
	}
}

// TestFlagsArrayProblems: an entry without a key is a problem; of a key
// defined twice the last definition counts, as in flagd, with a warning.
func TestFlagsArrayProblems(t *testing.T) {
	var logs logtest.Buffer
	set := mustLoad(t, `{"flags": [
	  {"key": "twice", "state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on"},
	  {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on"},
	  {"key": "twice", "state": "ENABLED", "variants": {"on": false}, "defaultVariant": "on"},
	  {"key": "fine", "state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on"}]}`, WithLogger(logs.Logger()))
	if got := set.Keys(); !slices.Equal(got, []string{"fine", "twice"}) {
		t.Errorf("keys %v", got)
	}
	if r := set.ResolveBool("twice", true, nil); r.Err != nil || r.Value {
		t.Errorf("a key defined twice: %+v, want the last definition's false", r)
	}
	if w := logs.String(); !strings.Contains(w, "defined more than once") || !strings.Contains(w, "pointer=/flags/0") {
		t.Errorf("no warning at the first definition of the key: %q", w)
	}
	if len(set.Problems()) != 1 || set.Problems()[0].Flag != "flags[1]" {
		t.Errorf("problems %v", set.Problems())
	}
	if r := set.ResolveBool("fine", false, nil); !r.Value {
		t.Errorf("fine: %+v", r)
	}
}

// TestFlagdReencodedFlagSet loads a flag set the way the flagd daemon sends
// it over flagd.sync.v1 (defaultVariant "" for none, a "source" per flag,
// $evaluators substituted, no flag-set metadata) and requires every
// resolution to match the file it came from, with nothing logged.
func TestFlagdReencodedFlagSet(t *testing.T) {
	file := `{"$evaluators": {"adult": {">=": [{"var": "age"}, 18]}}, "flags": {
	  "no-default": {"state": "ENABLED", "variants": {"on": true, "off": false}},
	  "null-default": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": null,
	    "targeting": {"if": [{"$ref": "adult"}, "on"]}},
	  "static": {"state": "ENABLED", "variants": {"a": "A", "b": "B"}, "defaultVariant": "b"},
	  "disabled": {"state": "DISABLED", "variants": {"a": "A"}}}}`
	flagd := `{"flags": {
	  "no-default": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "", "source": "file:flags.json"},
	  "null-default": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "",
	    "targeting": {"if": [{">=": [{"var": "age"}, 18]}, "on"]}, "source": "file:flags.json"},
	  "static": {"state": "ENABLED", "variants": {"a": "A", "b": "B"}, "defaultVariant": "b", "source": "file:flags.json"},
	  "disabled": {"state": "DISABLED", "variants": {"a": "A"}, "defaultVariant": "", "source": "file:flags.json"}}}`
	var logs logtest.Buffer
	want := mustLoad(t, file)
	got := mustLoad(t, flagd, WithLogger(logs.Logger()))
	if logs.String() != "" {
		t.Errorf("loading flagd's form logged %q", logs.String())
	}
	cases := []struct {
		flag       string
		ctx        map[string]any
		wantReason Reason
	}{
		{"no-default", nil, ReasonDefault},
		{"null-default", map[string]any{"age": 30}, ReasonTargetingMatch},
		{"null-default", map[string]any{"age": 3}, ReasonDefault},
		{"disabled", nil, ReasonDisabled},
	}
	for _, c := range cases {
		w, g := want.ResolveBool(c.flag, false, c.ctx), got.ResolveBool(c.flag, false, c.ctx)
		if c.flag == "disabled" {
			w, g = want.ResolveBool(c.flag, true, c.ctx), got.ResolveBool(c.flag, true, c.ctx)
		}
		if g.Reason != c.wantReason || g.Value != w.Value || g.Variant != w.Variant || g.Reason != w.Reason || (g.Err == nil) != (w.Err == nil) {
			t.Errorf("%s %v: flagd form %+v, file %+v, want reason %s", c.flag, c.ctx, g, w, c.wantReason)
		}
	}
	if g := got.ResolveString("static", "", nil); g.Value != "B" || g.Reason != ReasonStatic {
		t.Errorf("static: %+v", g)
	}
	// Going from the file to flagd's form of it is no change.
	if added, removed, changed := got.Changes(want); added != nil || removed != nil || changed != nil {
		t.Errorf("file → flagd form: +%v -%v ~%v", added, removed, changed)
	}
}

// TestProblemPaths checks where each kind of problem is said to be written.
// The keys hold '.', '/', '~', '[' and "" so that the path cannot be read
// back from a message, as tools once had to.
func TestProblemPaths(t *testing.T) {
	const ok = `"state": "ENABLED", "variants": {"a": "a", "b": "b"}, "defaultVariant": "a"`
	tests := []struct {
		name, doc string
		flag      string
		want      []string
		pointer   string
	}{
		{"default variant", `{"flags": {"f": {"variants": {"a": 1}, "defaultVariant": "z"}}}`,
			"f", []string{"flags", "f", "defaultVariant"}, "/flags/f/defaultVariant"},
		{"default variant of a flag key with / and ~", `{"flags": {"team/a~b": {"variants": {"a": 1}, "defaultVariant": 3}}}`,
			"team/a~b", []string{"flags", "team/a~b", "defaultVariant"}, "/flags/team~1a~0b/defaultVariant"},
		{"variants of mixed types: the first that differs", `{"flags": {"f": {"variants": {"a": 1, "b \"x\"": "s", "c": true}}}}`,
			"f", []string{"flags", "f", "variants", `b "x"`}, `/flags/f/variants/b "x"`},
		{"a variant named \"\"", `{"flags": {"f": {"variants": {"": 1e999}}}}`,
			"f", []string{"flags", "f", "variants", ""}, "/flags/f/variants/"},
		{"variants missing", `{"flags": {"f": {"state": "ENABLED"}}}`,
			"f", []string{"flags", "f", "variants"}, "/flags/f/variants"},
		{"variants empty", `{"flags": {"f": {"variants": {}}}}`,
			"f", []string{"flags", "f", "variants"}, "/flags/f/variants"},
		{"definition not an object", `{"flags": {"f": [1]}}`,
			"f", []string{"flags", "f"}, "/flags/f"},
		{"unknown operator with a dot", `{"flags": {"f": {` + ok + `, "targeting": {"if": [{"a.b[0]": [1]}, "a"]}}}}`,
			"f", []string{"flags", "f", "targeting", "if", "0", "a.b[0]"}, "/flags/f/targeting/if/0/a.b[0]"},
		{"operator named \"\"", `{"flags": {"f": {` + ok + `, "targeting": {"": [1]}}}}`,
			"f", []string{"flags", "f", "targeting", ""}, "/flags/f/targeting/"},
		{"constant out of range", `{"flags": {"f": {` + ok + `, "targeting": {"if": [{"==": [{"var": "x"}, 1e999]}, "b"]}}}}`,
			"f", []string{"flags", "f", "targeting", "if", "0", "==", "1"}, "/flags/f/targeting/if/0/==/1"},
		{"var of a number", `{"flags": {"f": {` + ok + `, "targeting": {"var": [1]}}}}`,
			"f", []string{"flags", "f", "targeting", "var"}, "/flags/f/targeting/var"},
		{"fractional bucket", `{"flags": {"f": {` + ok + `, "targeting": {"fractional": [{"var": "email"}, ["a", 50], "b"]}}}}`,
			"f", []string{"flags", "f", "targeting", "fractional", "2"}, "/flags/f/targeting/fractional/2"},
		{"$ref to no evaluator", `{"flags": {"f": {` + ok + `, "targeting": {"if": [{"$ref": "nobody"}, "b"]}}}}`,
			"f", []string{"flags", "f", "targeting", "if", "0", "$ref"}, "/flags/f/targeting/if/0/$ref"},
		{"$ref to no evaluator as the whole rule", `{"flags": {"f": {` + ok + `, "targeting": {"$ref": "nobody"}}}}`,
			"f", []string{"flags", "f", "targeting", "$ref"}, "/flags/f/targeting/$ref"},
		{"inside a substituted $ref", `{"$evaluators": {"e": {"nope": [1]}}, "flags": {"f": {` + ok + `, "targeting": {"if": [{"$ref": "e"}, "b"]}}}}`,
			"f", []string{"flags", "f", "targeting", "if", "0", "nope"}, "/flags/f/targeting/if/0/nope"},
		{"array: by index", `{"flags": [{"key": "a", ` + ok + `}, {"key": "f", "variants": {"a": 1}, "defaultVariant": "z"}]}`,
			"f", []string{"flags", "1", "defaultVariant"}, "/flags/1/defaultVariant"},
		{"array: entry without a key", `{"flags": [{"key": "a", ` + ok + `}, {` + ok + `}]}`,
			"flags[1]", []string{"flags", "1"}, "/flags/1"},
		{"YAML", "flags:\n  f:\n    variants: {a: 1}\n    targeting: {if: [{nope: 1}, a]}\n",
			"f", []string{"flags", "f", "targeting", "if", "0", "nope"}, "/flags/f/targeting/if/0/nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := mustLoad(t, tt.doc)
			problems := set.Problems()
			if len(problems) == 0 {
				t.Fatal("no problem")
			}
			p := problems[0] // the one the flag answers; TestEveryProblemOfAFlag has the others
			if p.Flag != tt.flag || !slices.Equal(p.Path, tt.want) || p.Pointer() != tt.pointer {
				t.Errorf("flag %q at %q (%s), want %q at %q (%s); %v", p.Flag, p.Path, p.Pointer(), tt.flag, tt.want, tt.pointer, p.Err)
			}
		})
	}
}

// TestEveryProblemOfAFlag lists the problems of flags that have several,
// which flagsnap validate reports at once; the flag still answers the first
// of them, the one the loader used to stop at.
func TestEveryProblemOfAFlag(t *testing.T) {
	const vars = `"state": "ENABLED", "variants": {"a": "a", "b": "b"}`
	type want struct{ pointer, msg string }
	tests := []struct {
		name, def string
		want      []want
	}{
		{"a default naming no variant and a malformed fractional",
			`{` + vars + `, "defaultVariant": "c", "targeting": {"fractional": [["a", 50.5], ["b", 50]]}}`,
			[]want{
				{"/flags/f/defaultVariant", `defaultVariant "c" is not one of the variants`},
				{"/flags/f/targeting/fractional", "/flags/f/targeting/fractional: invalid weights: bucket 0: fractional: weight is not a whole number: 50.5"},
			}},
		{"two unknown operators and a var of a boolean",
			`{` + vars + `, "defaultVariant": "a", "targeting": {"if": [{"startswith": [{"var": "email"}, "x"]}, {"nope": 1}, {"var": true}]}}`,
			[]want{
				{"/flags/f/targeting/if/0/startswith", `/flags/f/targeting/if/0/startswith: unknown operator "startswith"; did you mean "starts_with"?`},
				{"/flags/f/targeting/if/1/nope", `/flags/f/targeting/if/1/nope: unknown operator "nope"`},
				{"/flags/f/targeting/if/2/var", "/flags/f/targeting/if/2/var: var path must be a string, a number or [path, default]"},
			}},
		{"every variant of another type than the first, and one out of range",
			`{"variants": {"a": 1, "b": "s", "c": 2, "d": 1e999, "e": true}}`,
			[]want{
				{"/flags/f/variants/b", `variants mix types: "a" is a number, "b" is a string`},
				{"/flags/f/variants/d", `variant "d": number 1e999 is out of range`},
				{"/flags/f/variants/e", `variants mix types: "a" is a number, "e" is a boolean`},
			}},
		{"the first variant out of range: the types are the next one's",
			`{"variants": {"a": 1e999, "b": "s", "c": 2}}`,
			[]want{
				{"/flags/f/variants/a", `variant "a": number 1e999 is out of range`},
				{"/flags/f/variants/c", `variants mix types: "b" is a string, "c" is a number`},
			}},
		{"$refs to nothing, each where it is, and the rule around them checked",
			`{` + vars + `, "defaultVariant": "a", "targeting": {"if": [{"$ref": "y"}, {"in": 5}, {"$ref": "x"}]}}`,
			[]want{
				{"/flags/f/targeting/if/0/$ref", `/flags/f/targeting/if/0/$ref: $ref "y" names no entry of $evaluators`},
				{"/flags/f/targeting/if/2/$ref", `/flags/f/targeting/if/2/$ref: $ref "x" names no entry of $evaluators`},
				{"/flags/f/targeting/if/1/in", "/flags/f/targeting/if/1/in: in needs an array of arguments"},
			}},
		{"a $ref to nothing as an operator's arguments is no problem of the operator",
			`{` + vars + `, "defaultVariant": "a", "targeting": {"if": {"$ref": "x"}, "fractional": [{"$ref": "x"}, ["a", 1]]}}`,
			[]want{
				{"/flags/f/targeting/fractional/0/$ref", `/flags/f/targeting/fractional/0/$ref: $ref "x" names no entry of $evaluators`},
				{"/flags/f/targeting/if/$ref", `/flags/f/targeting/if/$ref: $ref "x" names no entry of $evaluators`},
			}},
		{"a $ref to nothing inside data that has a problem too",
			`{` + vars + `, "defaultVariant": "a", "targeting": {"in": [{"var": "x"}, [1, {"$ref": "x"}]], "k": 1e999}}`,
			[]want{
				{"/flags/f/targeting/in/1/1/$ref", `/flags/f/targeting/in/1/1/$ref: $ref "x" names no entry of $evaluators`},
				{"/flags/f/targeting", "/flags/f/targeting: number 1e999 is out of range"},
			}},
		{"a $ref to nothing inside data",
			`{` + vars + `, "defaultVariant": "a", "targeting": {"in": [{"var": "x"}, [1, {"$ref": "x"}]], "k": 1}}`,
			[]want{{"/flags/f/targeting/in/1/1/$ref", `/flags/f/targeting/in/1/1/$ref: $ref "x" names no entry of $evaluators`}}},
		{"no variants: a default is not also said to name none",
			`{"defaultVariant": "on", "targeting": {"nope": 1}}`,
			[]want{
				{"/flags/f/variants", `"variants" is missing`},
				{"/flags/f/targeting/nope", `/flags/f/targeting/nope: unknown operator "nope"`},
			}},
		{"no variants and a default of the wrong type",
			`{"variants": {}, "defaultVariant": 3}`,
			[]want{
				{"/flags/f/variants", `"variants" is empty`},
				{"/flags/f/defaultVariant", "defaultVariant is a number, not a string"},
			}},
		{"a default naming a variant that has a problem names a variant",
			`{"variants": {"a": 1e999}, "defaultVariant": "a"}`,
			[]want{{"/flags/f/variants/a", `variant "a": number 1e999 is out of range`}}},
		{"an argument with a problem is not taken for a constant by the operation's checks",
			`{` + vars + `, "defaultVariant": "a", "targeting": {"substr": {"var": [true]}}}`,
			[]want{{"/flags/f/targeting/substr/var", "/flags/f/targeting/substr/var: var path must be a string"}}},
		{"nested problems, inner first",
			`{` + vars + `, "defaultVariant": "a", "targeting": {"merge": [{"<": 1}, {"missing": {"fractionalEvaluation": 1}}]}}`,
			[]want{
				{"/flags/f/targeting/merge/0/<", "/flags/f/targeting/merge/0/<: < needs an array of arguments"},
				{"/flags/f/targeting/merge/1/missing/fractionalEvaluation", "/flags/f/targeting/merge/1/missing/fractionalEvaluation: fractionalEvaluation needs a property name and buckets"},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs logtest.Buffer
			doc := `{"flags": {"f": ` + tt.def + `, "g": {` + vars + `, "defaultVariant": "a"}}}`
			set, err := Load([]byte(doc), WithLogger(logs.Logger()))
			if err != nil {
				t.Fatal(err)
			}
			var got []want
			for _, p := range set.Problems() {
				if p.Flag != "f" {
					t.Errorf("a problem of %q: %v", p.Flag, p)
				}
				got = append(got, want{p.Pointer(), p.Err.Error()})
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("problems\n%q\nwant\n%q", got, tt.want)
			}
			// Problems in parts of the rule leave the rest of the flag
			// answering, as flagd does: one warning for the flag, and an
			// evaluation that reaches a part answers PARSE_ERROR. Any
			// other problem breaks the flag: an error for each.
			lazy := true
			for _, p := range set.Problems() {
				lazy = lazy && p.WhenReached
			}
			r := set.ResolveString("f", "default", nil)
			if lazy {
				if n := logs.Count(`level=WARN msg="a part of the flag's rule cannot be evaluated`); n != 1 {
					t.Errorf("%d warnings logged, want 1:\n%s", n, logs.String())
				}
				if r.Err == nil || r.Err.Code != CodeParseError || !strings.HasPrefix(r.Err.Error(), `flag "f": /flags/f/targeting`) || r.Value != "default" {
					t.Errorf("the flag answers %+v, want PARSE_ERROR for a part it reached", r)
				}
			} else {
				if n := logs.Count(`msg="flag cannot be evaluated" flag=f `); n != len(tt.want) {
					t.Errorf("%d problems logged, want %d:\n%s", n, len(tt.want), logs.String())
				}
				if r.Err == nil || r.Err.Code != CodeParseError || r.Err.Error() != `flag "f": `+tt.want[0].msg || r.Value != "default" {
					t.Errorf("the flag answers %+v, want PARSE_ERROR for its first problem", r)
				}
			}
			if r := set.ResolveString("g", "", nil); r.Err != nil {
				t.Errorf("another flag: %v", r.Err)
			}
			_, err = Load([]byte(doc), WithStrict())
			if err == nil || !strings.HasPrefix(err.Error(), "1 invalid flag(s): ") {
				t.Errorf("strict: %v, want one invalid flag", err)
			}
		})
	}
}

func TestStrictProblemsHavePaths(t *testing.T) {
	_, err := Load([]byte(brokenDoc), WithStrict())
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("got %v, want *ValidationError", err)
	}
	for _, p := range ve.Problems {
		if len(p.Path) < 2 || p.Path[0] != "flags" || p.Path[1] != p.Flag {
			t.Errorf("%s: path %q is not inside the flag", p.Flag, p.Path)
		}
	}
}

func TestDocumentErrorPaths(t *testing.T) {
	tests := []struct {
		name, doc string
		want      []string
	}{
		{"flags missing", `{"metadata": {}}`, nil},
		{"flags of the wrong type", `{"flags": 3}`, []string{"flags"}},
		{"$evaluators of the wrong type", `{"$evaluators": [], "flags": {}}`, []string{"$evaluators"}},
		{"metadata a string", `{"metadata": "team", "flags": {}}`, []string{"metadata"}},
		{"metadata an array, in YAML", "metadata: [a]\nflags: {}\n", []string{"metadata"}},
		{"empty", " \n", nil},
		{"YAML infinity in the set's metadata", "metadata: {n: .inf}\nflags: {}\n", []string{"metadata", "n"}},
		{"YAML NaN in an evaluator", "$evaluators: {e: [1, .nan]}\nflags: {}\n", []string{"$evaluators", "e", "1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load([]byte(tt.doc))
			var de *DocumentError
			if !errors.As(err, &de) {
				t.Fatalf("got %v, want *DocumentError", err)
			}
			if !slices.Equal(de.Path, tt.want) {
				t.Errorf("path %q, want %q (%v)", de.Path, tt.want, err)
			}
		})
	}
}

// A document without "flags" names the members it has, where the typo
// usually is.
func TestMissingFlagsNamesTheMembers(t *testing.T) {
	tests := []struct{ doc, want string }{
		{`{}`, `"flags" is missing`},
		{`{"flag": {}, "$schema": "s"}`, `"flags" is missing; the document has "$schema", "flag"`},
		{`{flags": {"f": {}}}`, `"flags" is missing; the document has "flags\""`},
		{"Flags: {}\n", `"flags" is missing; the document has "Flags"`},
		{`{"a": 1, "b": 1, "c": 1, "d": 1, "e": 1, "f": 1}`, `"flags" is missing; the document has "a", "b", "c", "d", "e", …`},
	}
	for _, tt := range tests {
		_, err := Load([]byte(tt.doc))
		var de *DocumentError
		if !errors.As(err, &de) || de.Msg != tt.want {
			t.Errorf("%s: got %v, want %s", tt.doc, err, tt.want)
		}
	}
}

func TestWarningsNameTheirPointer(t *testing.T) {
	var logs logtest.Buffer
	mustLoad(t, `{"metadata": {"owner": ["x"]}, "flags": {
	  "a/b": {"state": "ON", "variants": {"x": "x"}, "defaultVariant": "x", "metadata": {"team": null}},
	  "legacy": {"state": "ENABLED", "variants": {"a": "a"}, "defaultVariant": "a",
	    "targeting": {"fractionalEvaluation": ["email", ["a", 100]]}}}}`, WithLogger(logs.Logger()))
	for _, want := range []string{
		`msg="metadata \"owner\" is an array; only strings, numbers and booleans are kept" pointer=/metadata` + "\n",
		`flag=a/b pointer=/flags/a~1b/state` + "\n",
		`flag=a/b pointer=/flags/a~1b/metadata` + "\n",
		`flag=legacy pointer=/flags/legacy/targeting` + "\n",
	} {
		if logs.Count(want) != 1 {
			t.Errorf("no warning ending %q in\n%s", want, logs.String())
		}
	}
}

// TestYAMLThatJSONCannotHold: a YAML key that is not a string, or an
// infinity or NaN, which flagd cannot convert to JSON and refuses the whole
// document over, breaks the flag that holds it (the first by path is told)
// and refuses the document outside any flag.
func TestYAMLThatJSONCannotHold(t *testing.T) {
	const ok = "  ok: {state: ENABLED, variants: {'on': true}, defaultVariant: 'on'}\n"
	tests := []struct {
		name, doc string
		flag      string // the broken flag; "" for a document error
		want, at  string // the problem, and where it is
	}{
		{"a flag key", "flags:\n  1: {state: ENABLED, variants: {'on': true}, defaultVariant: 'on'}\n" + ok, "1", "YAML key 1 is not a string", "/flags/1"},
		{"a boolean flag key", "flags:\n  true: {state: ENABLED, variants: {'on': true}, defaultVariant: 'on'}\n" + ok, "true", "YAML key true is not a string", "/flags/true"},
		{"variant names", "flags:\n  v: {state: ENABLED, variants: {3: a, 2: b, x: c}, defaultVariant: x}\n" + ok, "v", "YAML key 2 is not a string", "/flags/v/variants/2"},
		{"a null key in a rule", "flags:\n  r: {state: ENABLED, variants: {'on': true}, defaultVariant: 'on', targeting: {~: 1}}\n" + ok, "r", "YAML key null is not a string", "/flags/r/targeting/null"},
		{"flag metadata", "flags:\n  m: {state: ENABLED, variants: {'on': true}, defaultVariant: 'on', metadata: {1.5: x}}\n" + ok, "m", "YAML key 1.5 is not a string", "/flags/m/metadata/1.5"},
		{"an entry of an array", "flags:\n  - {key: a, state: ENABLED, variants: {2: true}, defaultVariant: '2'}\n  - {key: ok, state: ENABLED, variants: {'on': true}, defaultVariant: 'on'}\n", "a", "YAML key 2 is not a string", "/flags/0/variants/2"},
		{"an infinity in a variant", "flags:\n  f: {state: ENABLED, variants: {x: .inf, y: 1}, defaultVariant: y}\n" + ok, "f", "+Inf is not a JSON number", "/flags/f/variants/x"},
		{"NaN in an entry of an array", "flags:\n  - {key: a, state: ENABLED, variants: {x: [1, .nan]}, defaultVariant: x}\n  - {key: ok, state: ENABLED, variants: {'on': true}, defaultVariant: 'on'}\n", "a", "NaN is not a JSON number", "/flags/0/variants/x/1"},
		{"set metadata", "metadata: {1: x}\nflags:\n" + ok, "", "YAML key 1 is not a string", "/metadata/1"},
		{"an evaluator's name", "$evaluators: {1: {var: x}}\nflags:\n" + ok, "", "YAML key 1 is not a string", "/$evaluators/1"},
		{"a top-level key", "7: x\nflags:\n" + ok, "", "YAML key 7 is not a string", "/7"},
	}
	for _, tt := range tests {
		set, err := Load([]byte(tt.doc))
		if tt.flag == "" {
			var de *DocumentError
			if !errors.As(err, &de) || jsonPointer(de.Path) != tt.at || de.Msg != tt.want {
				t.Errorf("%s: %v, want a document error at %s, %q", tt.name, err, tt.at, tt.want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if r := set.ResolveBool(tt.flag, false, nil); r.Err == nil || r.Err.Code != CodeParseError || !strings.Contains(r.Err.Error(), tt.want) {
			t.Errorf("%s: %+v, want PARSE_ERROR %q", tt.name, r, tt.want)
		}
		if ps := set.Problems(); len(ps) != 1 || ps[0].Pointer() != tt.at || ps[0].Err.Error() != tt.want {
			t.Errorf("%s: problems %v, want one at %s", tt.name, ps, tt.at)
		}
		if r := set.ResolveBool("ok", false, nil); !r.Value {
			t.Errorf("%s: the other flag %+v", tt.name, r)
		}
	}
}

// TestNullFlagsIsNoFlags: a "flags" that is null (in YAML, "flags:" and
// nothing under it) is a set without flags, with a warning, as flagd reads
// it; a missing one still refuses the document.
func TestNullFlagsIsNoFlags(t *testing.T) {
	for _, doc := range []string{`{"metadata": {"team": "a"}, "flags": null}`, "metadata: {team: a}\nflags:\n"} {
		var logs logtest.Buffer
		set := mustLoad(t, doc, WithLogger(logs.Logger()))
		if set.Len() != 0 || len(set.Problems()) != 0 {
			t.Errorf("%q: %d flags, problems %v; want none", doc, set.Len(), set.Problems())
		}
		if r := set.ResolveBool("f", false, nil); r.Err == nil || r.Err.Code != CodeFlagNotFound || r.Metadata["team"] != "a" {
			t.Errorf("%q: %+v, want FLAG_NOT_FOUND with the set's metadata", doc, r)
		}
		if want := `msg="\"flags\" is null: the set has no flags" pointer=/flags` + "\n"; logs.Count(want) != 1 {
			t.Errorf("%q: no warning ending %q in\n%s", doc, want, logs.String())
		}
	}
}

// TestEmptyEvaluatorWarns: flagd refuses a document with an $evaluators
// entry written in fewer than three characters; flagsnap loads it and
// warns at the entry, and at no other.
func TestEmptyEvaluatorWarns(t *testing.T) {
	for _, tc := range []struct {
		evaluator string
		warns     bool
	}{
		{`{}`, true}, {`[]`, true}, {`""`, true}, {`7`, true}, {`42`, true}, {`-1`, true},
		{`100`, false}, {`1.5`, false}, {`"a"`, false}, {`true`, false}, {`null`, false},
		{`{"==": [1, 1]}`, false}, {`[1]`, false},
	} {
		for _, doc := range []string{
			`{"$evaluators": {"short": ` + tc.evaluator + `, "fine": {"var": "x"}}, "flags": {}}`,
			"$evaluators:\n  short: " + tc.evaluator + "\n  fine: {var: x}\nflags: {}\n",
		} {
			var logs logtest.Buffer
			mustLoad(t, doc, WithLogger(logs.Logger()))
			w := logs.String()
			if got := strings.Contains(w, "pointer=/$evaluators/short"); got != tc.warns {
				t.Errorf("%s: warned %v, want %v: %q", doc, got, tc.warns, w)
			}
			if strings.Contains(w, "/$evaluators/fine") {
				t.Errorf("%s: a warning for the fine evaluator: %q", doc, w)
			}
		}
	}
}

// A flag whose "state" is not a string, or whose "metadata" is not an
// object, is broken: flagd refuses the whole document over either, as
// WithStrict does. A state string other than ENABLED and DISABLED, and
// null, are served as enabled, with a warning, as in flagd.
// TestKeyAndSourceTypes: a flag's "key" or "source" that is neither a
// string nor null breaks that flag, in either form of "flags" and in an
// entry a whole flag's $ref names, as flagd refuses a whole document over
// it; the strict load refuses the document.
func TestKeyAndSourceTypes(t *testing.T) {
	ok := `{"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on"`
	tests := []struct {
		name, doc string
		flag      string // the flag asked for
		problem   string // "" when the flag is served
		at        string // where the problem is
	}{
		{"object, key a string", `{"flags": {"f": {"key": "else", "source": "x", ` + ok[1:] + `}}}`, "f", "", ""},
		{"object, both null", `{"flags": {"f": {"key": null, "source": null, ` + ok[1:] + `}}}`, "f", "", ""},
		{"object, key a number", `{"flags": {"f": {"key": 5, ` + ok[1:] + `}}}`, "f", `"key" is a number, not a string`, "/flags/f/key"},
		{"object, source a boolean", `{"flags": {"f": {"source": true, ` + ok[1:] + `}}}`, "f", `"source" is a boolean, not a string`, "/flags/f/source"},
		{"object, source after the rest", `{"flags": {"f": ` + ok + `, "source": {"uri": "x"}}}}`, "f", `"source" is an object, not a string`, "/flags/f/source"},
		{"array, source an array", `{"flags": [{"key": "f", "source": ["x"], ` + ok[1:] + `}]}`, "f", `"source" is an array, not a string`, "/flags/0/source"},
		{"array, key a number", `{"flags": [{"key": 5, ` + ok[1:] + `}]}`, "", `"key" is a number, not a string`, "/flags/0/key"},
		{"a whole-flag $ref to an entry whose key is a number", `{"$evaluators": {"e": {"key": 5, ` + ok[1:] + `}}, "flags": {"f": {"$ref": "e"}}}`, "f", `"key" is a number, not a string`, "/flags/f"},
		{"object, key written twice, the last a string", `{"flags": {"f": {"key": 5, "key": "x", ` + ok[1:] + `}}}`, "f", "", ""},
		{"object, source written twice, the last an object", `{"flags": {"f": {"source": "x", ` + ok[1:] + `, "source": {}}}}`, "f", `"source" is an object, not a string`, "/flags/f/source"},
		{"array, key written twice, the last a string", `{"flags": [{"key": 5, "key": "f", ` + ok[1:] + `}]}`, "f", "", ""},
		{"YAML, key a number", "flags:\n  f: {key: 5, state: ENABLED, variants: {'on': true}, defaultVariant: 'on'}\n", "f", `"key" is a number, not a string`, "/flags/f/key"},
		{"YAML, source a list", "flags:\n  - {key: f, source: [x], state: ENABLED, variants: {'on': true}, defaultVariant: 'on'}\n", "f", `"source" is an array, not a string`, "/flags/0/source"},
	}
	for _, tt := range tests {
		set := mustLoad(t, tt.doc)
		problems := set.Problems()
		if tt.problem == "" {
			if r := set.ResolveBool(tt.flag, false, nil); r.Err != nil || !r.Value || len(problems) > 0 {
				t.Errorf("%s: %+v, problems %v; want it served", tt.name, r, problems)
			}
			continue
		}
		if len(problems) != 1 || problems[0].Err.Error() != tt.problem || problems[0].Pointer() != tt.at {
			t.Errorf("%s: problems %v, want one, %q at %s", tt.name, problems, tt.problem, tt.at)
		}
		if tt.flag != "" {
			if r := set.ResolveBool(tt.flag, false, nil); r.Err == nil || r.Err.Code != CodeParseError || !strings.Contains(r.Err.Error(), tt.problem) {
				t.Errorf("%s: %+v, want PARSE_ERROR %q", tt.name, r, tt.problem)
			}
		}
		var ve *ValidationError
		if _, err := Load([]byte(tt.doc), WithStrict()); !errors.As(err, &ve) {
			t.Errorf("%s: strict load gave %v, want a *ValidationError", tt.name, err)
		}
	}
}

func TestStateAndMetadataTypes(t *testing.T) {
	tests := []struct {
		state, metadata string
		problem         string // "" when the flag is served
	}{
		{`"ENABLED"`, `{"team": "a"}`, ""},
		{`"enabled"`, `null`, ""},
		{`null`, `{}`, ""},
		{`1`, `{}`, `"state" is a number, not a string`},
		{`true`, `{}`, `"state" is a boolean, not a string`},
		{`{"a": 1}`, `{}`, `"state" is an object, not a string`},
		{`["ENABLED"]`, `{}`, `"state" is an array, not a string`},
		{`"ENABLED"`, `"team"`, `"metadata" is a string, not an object`},
		{`"ENABLED"`, `[1]`, `"metadata" is an array, not an object`},
		{`"ENABLED"`, `7`, `"metadata" is a number, not an object`},
	}
	for _, tt := range tests {
		doc := `{"flags": {"ok": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on"},
		  "f": {"state": ` + tt.state + `, "variants": {"on": true}, "defaultVariant": "on", "metadata": ` + tt.metadata + `}}}`
		set := mustLoad(t, doc)
		r := set.ResolveBool("f", false, nil)
		if tt.problem == "" {
			if r.Err != nil || !r.Value || len(set.Problems()) > 0 {
				t.Errorf("state %s, metadata %s: %+v, problems %v; want it served", tt.state, tt.metadata, r, set.Problems())
			}
			continue
		}
		if r.Err == nil || r.Err.Code != CodeParseError || !strings.Contains(r.Err.Error(), tt.problem) {
			t.Errorf("state %s, metadata %s: %+v, want PARSE_ERROR %q", tt.state, tt.metadata, r, tt.problem)
		}
		if ok := set.ResolveBool("ok", false, nil); !ok.Value {
			t.Errorf("state %s, metadata %s: the other flag %+v", tt.state, tt.metadata, ok)
		}
		var ve *ValidationError
		if _, err := Load([]byte(doc), WithStrict()); !errors.As(err, &ve) {
			t.Errorf("state %s, metadata %s: strict load gave %v, want a *ValidationError", tt.state, tt.metadata, err)
		}
	}
}
