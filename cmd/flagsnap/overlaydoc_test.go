package main

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/flagsnap/flagsnap/evaluator"
)

// overlayBase is a served file: a $ref of its own, flag-set metadata, a
// fractional split, a disabled flag.
const overlayBase = `{
  "metadata": {"flagSetId": "shop", "team": "checkout"},
  "$evaluators": {"vip": {"in": [{"var": "email"}, ["ada@example.com"]]}},
  "flags": {
    "checkout": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off",
      "targeting": {"if": [{"$ref": "vip"}, "on"]}, "metadata": {"owner": "payments"}},
    "color": {"state": "ENABLED", "variants": {"red": "red", "blue": "blue"}, "defaultVariant": "red",
      "targeting": {"fractional": [["red", 50], ["blue", 50]]}},
    "limit": {"state": "ENABLED", "variants": {"few": 10, "many": 50}, "defaultVariant": "few",
      "targeting": {"if": [{"$ref": "vip"}, "many"]}},
    "legacy": {"state": "DISABLED", "variants": {"on": true}, "defaultVariant": "on"}
  }
}`

// overlayBaseYAML is overlayBase's flags as YAML, in the array form.
const overlayBaseYAML = `metadata: {flagSetId: shop, team: checkout}
$evaluators:
  vip: {in: [{var: email}, [ada@example.com]]}
flags:
  - key: checkout
    state: ENABLED
    variants: {on: true, off: false}
    defaultVariant: "off"
    targeting: {if: [{$ref: vip}, "on"]}
    metadata: {owner: payments}
  - key: color
    state: ENABLED
    variants: {red: red, blue: blue}
    defaultVariant: red
    targeting: {fractional: [[red, 50], [blue, 50]]}
  - key: limit
    state: ENABLED
    variants: {few: 10, many: 50}
    defaultVariant: few
    targeting: {if: [{$ref: vip}, many]}
`

// overlayFirst has a "vip" of its own that means something else than the
// file's, and a "$ref" beside other members, which is data, not a
// reference, and is served as written. Its $refs in a variant and in
// metadata resolve in its own $evaluators too, or stay as written, and
// so do a "variants" and a whole definition that are one $ref each, whose
// entries are not searched again.
const overlayFirst = `{
  "metadata": {"flagSetId": "ops", "incident": "INC-7", "note": {"$ref": "label"}},
  "$evaluators": {"vip": {"in": [{"var": "tier"}, ["gold"]]}, "label": "incident banner",
    "sizes": {"s": "S", "l": "L"},
    "gate": {"state": "ENABLED", "variants": {"on": {"$ref": "label"}, "off": {"v": 1}}, "defaultVariant": "off", "targeting": {"if": [{"var": "tier"}, "on"]}}},
  "flags": {
    "size": {"state": "ENABLED", "variants": {"$ref": "sizes"}, "defaultVariant": "l", "targeting": {"if": [{"$ref": "vip"}, "s"]}},
    "gate": {"$ref": "gate"},
    "banner": {"state": "ENABLED", "variants": {"rule": {"$ref": "vip"}, "none": {"$ref": "nobody"}}, "defaultVariant": "rule",
      "targeting": {"if": [{"var": "none"}, "none"]}, "metadata": {"label": {"$ref": "label"}}},
    "checkout": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off",
      "targeting": {"if": [{"$ref": "vip"}, "on"]}},
    "limit": {"state": "ENABLED", "variants": {"few": 1, "many": 99}, "defaultVariant": "few",
      "targeting": {"if": [{"$ref": "vip", "in": ["never", []]}, "many"]}, "metadata": {"team": "ops"}},
    "promo": {"state": "ENABLED", "variants": {"a": "a", "b": "b"}, "defaultVariant": "a",
      "targeting": {"fractional": [{"var": "email"}, ["a", 30], ["b", 70]]}}
  }
}`

// overlaySecond is a later override, in the array form, of a flag of the
// first and of one only the file has.
const overlaySecond = `{"flags": [
  {"key": "promo", "state": "DISABLED", "variants": {"a": "a"}, "defaultVariant": "a"},
  {"key": "color", "state": "ENABLED", "variants": {"green": "green"}, "defaultVariant": "green", "metadata": {"flagSetId": "web"}}
]}`

// The merged document evaluates as evaluator.Layered of the documents
// loaded one by one, each flag as its own document compiled it, for every
// flag and context. An override's flag carries the file's flag-set
// metadata under its own: the one difference, by design.
func TestOverlayEvaluatesAsLayered(t *testing.T) {
	contexts := []map[string]any{
		{},
		{"targetingKey": "user-1", "email": "ada@example.com"},
		{"targetingKey": "user-2", "email": "bob@example.com", "tier": "gold"},
		{"targetingKey": "user-3", "tier": "silver"},
		{"targetingKey": "user-4", "email": "cy@example.com"},
	}
	tests := []struct {
		name      string
		base      string
		overrides []string
	}{
		{"one override", overlayBase, []string{overlayFirst}},
		{"two overrides", overlayBase, []string{overlayFirst, overlaySecond}},
		{"the later first", overlayBase, []string{overlaySecond, overlayFirst}},
		{"a YAML file of flags in an array", overlayBaseYAML, []string{overlayFirst, overlaySecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, err := evaluator.Load([]byte(tt.base))
			if err != nil {
				t.Fatal(err)
			}
			layers := []evaluator.Layer{{Name: "base", Set: base}}
			var docs []overrideDoc
			for i, doc := range tt.overrides {
				name := "override" + string(rune('1'+i))
				o, err := readyOverride(name, []byte(doc))
				if err != nil {
					t.Fatal(err)
				}
				docs = append(docs, o)
				set, err := evaluator.Load([]byte(doc), evaluator.WithStrict())
				if err != nil {
					t.Fatal(err)
				}
				layers = append(layers, evaluator.Layer{Name: name, Set: set})
			}
			layered := evaluator.Layered(layers...)
			doc, err := overlay([]byte(tt.base), overlayFlags(docs))
			if err != nil {
				t.Fatal(err)
			}
			merged, err := evaluator.Load(doc)
			if err != nil {
				t.Fatalf("merged document: %v\n%s", err, doc)
			}
			if p := merged.Problems(); len(p) > 0 {
				t.Errorf("merged document has problems: %v", p)
			}
			if !slices.Equal(merged.Keys(), layered.Keys()) {
				t.Fatalf("keys %v, want %v", merged.Keys(), layered.Keys())
			}
			overridden := layered.Overridden()
			for _, key := range append(layered.Keys(), "missing") {
				for _, ctx := range contexts {
					want := resolveAny(layered, key, ctx)
					if _, over := overridden[key]; over {
						want.Metadata = underMetadata(base.Metadata(), want.Metadata)
					}
					if got := resolveAny(merged, key, ctx); !reflect.DeepEqual(got, want) {
						t.Errorf("%s for %v:\n got  %+v\n want %+v", key, ctx, got, want)
					}
				}
			}
		})
	}
}

// underMetadata is own over set, as a flag's metadata is its set's with
// its own over it.
func underMetadata(set, own map[string]any) map[string]any {
	out := maps.Clone(set)
	maps.Copy(out, own)
	return out
}

// The flags layered are those of the override, and the file's others: a
// spot check of what the comparison above relies on.
func TestOverlayValues(t *testing.T) {
	first, err := readyOverride("first", []byte(overlayFirst))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := overlay([]byte(overlayBase), overlayFlags([]overrideDoc{first}))
	if err != nil {
		t.Fatal(err)
	}
	set, err := evaluator.Load(doc)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		key     string
		ctx     map[string]any
		variant string
		meta    map[string]any
	}{
		// The override's "vip" is by tier; the file's is by email. Its
		// metadata's $ref resolves in its own $evaluators.
		{"checkout", map[string]any{"tier": "gold"}, "on", map[string]any{"flagSetId": "ops", "incident": "INC-7", "note": "incident banner", "team": "checkout"}},
		{"checkout", map[string]any{"email": "ada@example.com"}, "off", map[string]any{"flagSetId": "ops", "incident": "INC-7", "note": "incident banner", "team": "checkout"}},
		{"limit", map[string]any{"tier": "gold"}, "many", map[string]any{"flagSetId": "ops", "incident": "INC-7", "note": "incident banner", "team": "ops"}},
		// The file's own flag, answered as the file alone answers it.
		{"color", map[string]any{"targetingKey": "user-3"}, "blue", map[string]any{"flagSetId": "shop", "team": "checkout"}},
	}
	for _, tt := range tests {
		r := resolveAny(set, tt.key, tt.ctx)
		if r.Variant != tt.variant {
			t.Errorf("%s for %v: variant %q, want %q", tt.key, tt.ctx, r.Variant, tt.variant)
		}
		if !reflect.DeepEqual(r.Metadata, tt.meta) {
			t.Errorf("%s: metadata %v, want %v", tt.key, r.Metadata, tt.meta)
		}
	}
}

// Without an override's flags, the file goes out as it was written.
func TestOverlayWithoutOverrides(t *testing.T) {
	empty, err := readyOverride("empty", []byte(`{"flags": {}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, overrides := range [][]overrideDoc{nil, {{path: "gone"}}, {empty}} {
		doc, err := overlay([]byte(overlayBase), overlayFlags(overrides))
		if err != nil || string(doc) != overlayBase {
			t.Errorf("%v: %v\n%s", overrides, err, doc)
		}
	}
}

// An override whose $ref would resolve only in another document is
// refused, saying where a $ref resolves; one whose $ref sits where no
// $ref is read is refused for that alone.
func TestReadyOverrideRefuses(t *testing.T) {
	const flag = `"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off"`
	tests := []struct {
		name, doc string
		want      []string
	}{
		{"a $ref to no evaluator of its own",
			`{"flags": {"f": {` + flag + `, "targeting": {"if": [{"$ref": "vip"}, "on"]}}}}`,
			[]string{"override o.json refused", `$ref "vip" names no entry of $evaluators`, refHint}},
		{"a $ref inside an evaluator",
			`{"$evaluators": {"a": {"!": {"$ref": "b"}}, "b": true}, "flags": {"f": {` + flag + `, "targeting": {"if": [{"$ref": "a"}, "on"]}}}}`,
			[]string{"override o.json refused", `unknown operator "$ref"`}},
		{"a broken flag beside a good one",
			`{"flags": {"f": {` + flag + `}, "g": {"state": "ENABLED", "variants": {"x": 1}, "defaultVariant": "y"}}}`,
			[]string{"override o.json refused", `flag "g"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readyOverride("o.json", []byte(tt.doc))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v does not say %q", err, w)
				}
			}
		})
	}
}

// standAloneFlag refuses a rule that would still hold a $ref once its own
// evaluators are in: the loader's strictness makes this a second guard,
// tested on its own.
func TestStandAloneFlagLeavesNoRef(t *testing.T) {
	f := overlayFlag{key: "f", def: map[string]any{"targeting": map[string]any{"if": []any{map[string]any{"$ref": "a"}, "on"}}}}
	evs := map[string]any{"a": map[string]any{"!": map[string]any{"$ref": "b"}}}
	if _, err := standAloneFlag(f, evs, nil); err == nil || !strings.Contains(err.Error(), "a $ref is left") {
		t.Errorf("nested $ref: %v", err)
	}
	if _, err := standAloneFlag(f, nil, nil); err == nil || !strings.Contains(err.Error(), `$ref "a" names no entry`) {
		t.Errorf("unknown $ref: %v", err)
	}
}

// Metadata that is one $ref may stand for a value that is no object: it is
// then no metadata, as the loader reads it, and the flag's own stays.
func TestStandAloneMetadataRef(t *testing.T) {
	for _, tt := range []struct {
		setMeta string
		want    map[string]any
	}{
		{`{"$ref": "s"}`, map[string]any{"owner": "x"}},
		{`{"$ref": "m"}`, map[string]any{"team": "ops", "owner": "x"}},
		// A name of no entry stays: an entry named "$ref", as in flagd.
		{`{"$ref": "none"}`, map[string]any{"$ref": "none", "owner": "x"}},
	} {
		doc := `{"$evaluators": {"s": "text", "m": {"team": "ops"}}, "metadata": ` + tt.setMeta + `,
		  "flags": {"f": {"variants": {"on": true}, "metadata": {"owner": "x"}}}}`
		defs, err := standAlone([]byte(doc))
		if err != nil || len(defs) != 1 || !reflect.DeepEqual(defs[0].def["metadata"], tt.want) {
			t.Errorf("set metadata %s: %v (%v), want %v", tt.setMeta, defs, err, tt.want)
		}
	}
}

// A null "flags" is an override without flags, as the loader reads it.
func TestStandAloneNullFlags(t *testing.T) {
	for _, doc := range []string{`{"flags": null}`, "flags:\n"} {
		if defs, err := standAlone([]byte(doc)); err != nil || len(defs) != 0 {
			t.Errorf("%q: %v, %v; want no flags", doc, defs, err)
		}
	}
}
