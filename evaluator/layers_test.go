package evaluator

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

const (
	layerBase = `{"metadata": {"team": "base"}, "$evaluators": {"gold": {"==": [{"var": "tier"}, "gold"]}},
  "flags": {
    "color": {"state": "ENABLED", "variants": {"red": "red", "blue": "blue"}, "defaultVariant": "red",
              "targeting": {"if": [{"$ref": "gold"}, "blue"]}},
    "size":  {"state": "ENABLED", "variants": {"s": "s", "l": "l"}, "defaultVariant": "s"},
    "gone":  {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on"}}}`
	// layerOver defines gold its own way: silver is gold here.
	layerOver = `{"metadata": {"team": "over"}, "$evaluators": {"gold": {"==": [{"var": "tier"}, "silver"]}},
  "flags": {
    "color": {"state": "ENABLED", "variants": {"red": "red", "blue": "blue"}, "defaultVariant": "red",
              "targeting": {"if": [{"$ref": "gold"}, "blue"]}, "metadata": {"owner": "ops"}},
    "extra": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on"}}}`
	layerTop = `{"flags": {"size": {"state": "ENABLED", "variants": {"s": "s", "l": "l"}, "defaultVariant": "l"},
    "extra": {"state": "DISABLED", "variants": {"on": true}, "defaultVariant": "on"}}}`
)

func TestLayered(t *testing.T) {
	base, over, top := mustLoad(t, layerBase), mustLoad(t, layerOver), mustLoad(t, layerTop)
	set := Layered(Layer{"base", base}, Layer{"over", over}, Layer{"top", top})
	if got := set.Keys(); !slices.Equal(got, []string{"color", "extra", "gone", "size"}) {
		t.Fatalf("keys %v", got)
	}
	for _, tc := range []struct {
		key     string
		ctx     map[string]any
		variant string
		reason  Reason
		layer   int
	}{
		// Each flag's $ref resolves in its own document: over's gold.
		{"color", map[string]any{"tier": "silver"}, "blue", ReasonTargetingMatch, 1},
		{"color", map[string]any{"tier": "gold"}, "red", ReasonDefault, 1},
		{"size", nil, "l", ReasonStatic, 2},
		{"extra", nil, "", ReasonDisabled, 2},
		{"gone", nil, "on", ReasonStatic, 0},
	} {
		e := set.Evaluate(tc.key, tc.ctx)
		if e.Variant() != tc.variant || e.Reason() != tc.reason || set.Layer(tc.key) != tc.layer {
			t.Errorf("%s %v: %q %v layer %d, want %q %v layer %d", tc.key, tc.ctx, e.Variant(), e.Reason(), set.Layer(tc.key), tc.variant, tc.reason, tc.layer)
		}
	}
	// Metadata: a flag's over its own document's.
	color, gone := set.Evaluate("color", nil), set.Evaluate("gone", nil)
	if md := color.Metadata(); !maps.Equal(md, map[string]any{"team": "over", "owner": "ops"}) {
		t.Errorf("color's metadata %v", md)
	}
	if md := gone.Metadata(); !maps.Equal(md, map[string]any{"team": "base"}) {
		t.Errorf("gone's metadata %v", md)
	}
	if md := set.Metadata(); !maps.Equal(md, map[string]any{"team": "base"}) {
		t.Errorf("the set's metadata %v, want the first layer's", md)
	}
	if nope := set.Evaluate("nope", nil); nope.Err() == nil || !maps.Equal(nope.Metadata(), map[string]any{"team": "base"}) {
		t.Errorf("a key no layer defines: metadata %v (%v), want the first layer's", nope.Metadata(), nope.Err())
	}
	if want := map[string]int{"color": 1, "extra": 2, "size": 2}; !maps.Equal(set.Overridden(), want) {
		t.Errorf("overridden %v, want %v", set.Overridden(), want)
	}
	// Overridden is the caller's to change.
	set.Overridden()["color"] = 0
	if set.Layer("color") != 1 {
		t.Error("changing Overridden's map changed the set")
	}
	if !slices.Equal(set.Layers(), []string{"base", "over", "top"}) || set.Layer("nope") != -1 {
		t.Errorf("layers %v, nope %d", set.Layers(), set.Layer("nope"))
	}
	x, err := set.Explain("size", nil)
	if err != nil || x.Layer != "top" || !containsLine(x.String(), "defined by top") {
		t.Errorf("explanation %q (%v)", x.String(), err)
	}
	if x, _ := base.Explain("size", nil); x.Layer != "" {
		t.Errorf("a set of one document names a layer: %q", x.Layer)
	}
	// Withdrawing the top layer changes exactly its keys.
	added, removed, changed := Layered(Layer{"base", base}, Layer{"over", over}).Changes(set)
	if len(added)+len(removed) != 0 || !slices.Equal(changed, []string{"extra", "size"}) {
		t.Errorf("changes %v %v %v", added, removed, changed)
	}
	if Layered(Layer{"base", base}) != base {
		t.Error("one layer is not the set itself")
	}
}

// The flags of a layered set are those its layers compiled: nothing is
// compiled again.
func TestLayeredSharesTheFlags(t *testing.T) {
	base, over := mustLoad(t, layerBase), mustLoad(t, layerOver)
	set := Layered(Layer{"base", base}, Layer{"over", over})
	if set.index.get("gone") != base.index.get("gone") || set.index.get("color") != over.index.get("color") {
		t.Error("a layered set holds flags of its own")
	}
}

func containsLine(text, line string) bool {
	return slices.Contains(strings.Split(text, "\n"), line)
}

// A $ref that names no entry of its document's $evaluators is a problem
// errors.Is tells apart, in a strict load's error as in the set's
// problems; another problem of a $ref is not.
func TestUnresolvedRefIsTold(t *testing.T) {
	const flag = `{"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off", "targeting": %s}`
	for _, tc := range []struct {
		rule string
		want bool
	}{
		{`{"if": [{"$ref": "gold"}, "on"]}`, true},
		{`{"if": {"$ref": "gold"}}`, true}, // the operation's whole argument
		// With another member beside it, "$ref" is data, as in flagd.
		{`{"if": [{"$ref": "gold", "x": 1}, "on"]}`, false},
		{`{"if": [{"==": [{"var": "tier"}, "gold"]}, "on"]}`, false},
		{`{"if": [{"nope": 1}, "on"]}`, false},
	} {
		doc := fmt.Sprintf(`{"$evaluators": {"silver": {"==": [1, 1]}}, "flags": {"beta": `+flag+`}}`, tc.rule)
		_, err := Load([]byte(doc), WithStrict())
		if got := errors.Is(err, ErrUnresolvedRef); got != tc.want {
			t.Errorf("%s: errors.Is(%v, ErrUnresolvedRef) = %v, want %v", tc.rule, err, got, tc.want)
		}
		if set, _ := Load([]byte(doc)); tc.want && (len(set.Problems()) == 0 || !errors.Is(set.Problems()[0], ErrUnresolvedRef)) {
			t.Errorf("%s: the set's problems %v do not tell it", tc.rule, set.Problems())
		}
	}
}
