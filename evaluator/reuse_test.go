package evaluator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/flagsnap/flagsnap/bench/flaggen"
	"github.com/flagsnap/flagsnap/fractional"
)

// A flag written as before is taken from the previous set; a changed one,
// one with a warning and every flag after a change of $evaluators or
// metadata are compiled again; and the set answers as one loaded afresh.
func TestWithPreviousReusesUnchangedFlags(t *testing.T) {
	for _, n := range []int{5, 3000} { // sequential and parallel loads
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			a, b := flaggen.Generate(n, 0), flaggen.Generate(n, 1)
			prev, err := Load(a)
			if err != nil {
				t.Fatal(err)
			}
			next, err := Load(b, WithPrevious(prev))
			if err != nil {
				t.Fatal(err)
			}
			fresh, err := Load(b)
			if err != nil {
				t.Fatal(err)
			}
			changedKey := fmt.Sprintf("flag_%d", n/2)
			reused := 0
			for _, key := range next.Keys() {
				if next.flag(key) == prev.flag(key) {
					reused++
					if key == changedKey {
						t.Errorf("%s changed but was reused", key)
					}
				}
				for _, ctx := range []map[string]any{nil, {"targetingKey": "u1", "version": "1.2.3", "attr_1": "value-1"}} {
					got, want := next.ResolveBool(key, false, ctx), fresh.ResolveBool(key, false, ctx)
					gs, ws := next.ResolveString(key, "", ctx), fresh.ResolveString(key, "", ctx)
					if fmt.Sprint(got, gs) != fmt.Sprint(want, ws) {
						t.Fatalf("%s: %v %v, loaded afresh %v %v", key, got, gs, want, ws)
					}
				}
			}
			if reused != n-1 {
				t.Errorf("%d flags reused, want %d", reused, n-1)
			}
			if _, _, changed := next.Changes(prev); len(changed) != 1 || changed[0] != changedKey {
				t.Errorf("changed %q, want %q", changed, changedKey)
			}
		})
	}

	doc := `{"metadata": {"team": "%s"}, "$evaluators": {"e": {"==": [{"var": "x"}, "%s"]}}, "flags": {
	  "plain": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "on"},
	  "ref": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off",
	    "targeting": {"if": [{"$ref": "e"}, "on", "off"]}},
	  "warned": {"state": "enabled", "variants": {"on": true}, "defaultVariant": "on"}}}`
	load := func(team, x string, prev *FlagSet) *FlagSet {
		t.Helper()
		set, err := Load(fmt.Appendf(nil, doc, team, x), WithPrevious(prev))
		if err != nil {
			t.Fatal(err)
		}
		return set
	}
	first := load("a", "1", nil)
	same := load("a", "1", first)
	if same.flag("plain") != first.flag("plain") || same.flag("ref") != first.flag("ref") {
		t.Error("flags written as before were compiled again")
	}
	if same.flag("warned") == first.flag("warned") {
		t.Error("a flag with a warning was reused: its warning would not be logged again")
	}
	for _, c := range []struct{ team, x, why string }{{"b", "1", "metadata"}, {"a", "2", "$evaluators"}} {
		other := load(c.team, c.x, first)
		if other.flag("plain") == first.flag("plain") || other.flag("ref") == first.flag("ref") {
			t.Errorf("%s changed, and flags were reused", c.why)
		}
		if got := other.ResolveBool("ref", false, map[string]any{"x": c.x}); !got.Value {
			t.Errorf("%s changed: ref answers %+v", c.why, got)
		}
	}
}

// Changes from the set flags were taken from finds the flags added,
// removed and changed as a comparison of every flag does.
func TestChangesFromPrevious(t *testing.T) {
	def := `{"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "%s"}`
	doc := func(flags map[string]string) []byte {
		var b strings.Builder
		b.WriteString(`{"flags": {`)
		i := 0
		for k, v := range flags {
			if i++; i > 1 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `"%s": `+def, k, v)
		}
		b.WriteString("}}")
		return []byte(b.String())
	}
	prev, err := Load(doc(map[string]string{"a": "on", "b": "on", "c": "on", "d": "on"}))
	if err != nil {
		t.Fatal(err)
	}
	next, err := Load(doc(map[string]string{"a": "on", "b": "off", "d": "on", "e": "on"}), WithPrevious(prev))
	if err != nil {
		t.Fatal(err)
	}
	if next.from != prev.id || next.reused != 2 {
		t.Fatalf("from %d (want %d), %d reused (want 2)", next.from, prev.id, next.reused)
	}
	added, removed, changed := next.Changes(prev)
	if fmt.Sprint(added, removed, changed) != "[e] [c] [b]" {
		t.Errorf("added %q, removed %q, changed %q", added, removed, changed)
	}
	other, _ := Load(doc(map[string]string{"a": "off"}))
	added, removed, changed = next.Changes(other)
	if fmt.Sprint(added, removed, changed) != "[b d e] [] [a]" {
		t.Errorf("from another set: added %q, removed %q, changed %q", added, removed, changed)
	}
}

// A definition that is not JSON makes the document's error the one
// encoding/json reports, wherever the definition is.
func TestDefinitionNotJSON(t *testing.T) {
	for _, doc := range []string{
		`{"flags": {"a": {"state": tru}}}`,
		`{"flags": {"a": {"state": "ENABLED",}}}`,
		`{"flags": {"a": {]}}`,
		`{"flags": {"a": 1x}}`,
	} {
		_, err := Load([]byte(doc))
		if err == nil || !strings.Contains(err.Error(), "line") {
			t.Errorf("%s: %v, want a syntax error with its place", doc, err)
		}
	}
}

// A rule decoded with its operations as *op1, as Load decodes the rules of
// JSON documents, compiles to what the rule decoded into maps
// does: the same problems, the same fingerprint and the same answers, on
// the differential tests' generated rules and seeds.
func TestOp1RulesAsMaps(t *testing.T) {
	g := newDiffGen(rand.New(rand.NewPCG(0x0b1, 1)))
	texts := slices.Clone(diffSeedRules)
	ctxs := []map[string]any{nil}
	for range 3000 {
		rule, ctx := g.next()
		b, err := json.Marshal(rule)
		if err != nil {
			continue
		}
		texts = append(texts, string(b))
		if len(ctxs) < 50 {
			ctxs = append(ctxs, ctx)
		}
	}
	set := ruleSet(fractional.V2)
	for _, text := range texts {
		d := fastDecoder{data: []byte(text), interned: newInterned(0), single: true}
		asOp1, ok := d.value()
		if !ok {
			continue
		}
		asMap := decodeRule(t, text)
		if a, b := canonicalAppend(nil, asOp1), canonicalAppend(nil, asMap); !bytes.Equal(a, b) {
			t.Fatalf("%s: canonical forms differ", text)
		}
		var c1, c2 compiler
		n1, _ := c1.compile(asOp1, nil)
		n2, _ := c2.compile(asMap, nil)
		if fmt.Sprint(c1.errs, c1.whole, c1.legacy) != fmt.Sprint(c2.errs, c2.whole, c2.legacy) {
			t.Fatalf("%s: problems %v, as maps %v", text, c1.errs, c2.errs)
		}
		if legacyWarning(c1.legacy) != legacyWarning(c2.legacy) {
			t.Fatalf("%s: legacy warning %q, as maps %q", text, legacyWarning(c1.legacy), legacyWarning(c2.legacy))
		}
		for _, ctx := range ctxs {
			v1, e1 := runRule(set, n1, "f", ctx)
			v2, e2 := runRule(set, n2, "f", ctx)
			if fmt.Sprint(v1, e1) != fmt.Sprint(v2, e2) {
				t.Fatalf("%s with %v: %v %v, as maps %v %v", text, ctx, v1, e1, v2, e2)
			}
		}
	}
}
