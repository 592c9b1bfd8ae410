package evaluator

import (
	"fmt"
	"testing"

	"github.com/flagsnap/flagsnap/fractional"
)

// Buckets whose variant is an expression and whose weight is a constant
// are prepared at load; they must answer exactly what the general form
// answers, which is what a weight written as an expression still takes.
func TestFractionalComputedVariantsMatchTheGeneralForm(t *testing.T) {
	rules := []struct{ name, prepared, general string }{
		{"standard benchmark form", `[[{"var": "targetingKey"}], ["control", 50], ["treatment", 50]]`,
			`[[{"var": "targetingKey"}], ["control", {"+": [50, 0]}], ["treatment", 50]]`},
		{"nested if", `[{"var": "targetingKey"}, [{"if": [{"==": [{"var": "tier"}, "premium"]}, "premium", "standard"]}, 50], ["standard", 50]]`,
			`[{"var": "targetingKey"}, [{"if": [{"==": [{"var": "tier"}, "premium"]}, "premium", "standard"]}, {"+": [50, 0]}], ["standard", 50]]`},
		{"var variant, null weight", `[[{"var": "color"}, null], ["blue", 3]]`,
			`[[{"var": "color"}, null], ["blue", {"+": [3, 0]}]]`},
		{"object variant", `[[{"var": "obj"}, 1], ["blue", 1]]`,
			`[[{"var": "obj"}, {"+": [1, 0]}], ["blue", 1]]`},
	}
	doc := func(rule string) string {
		return `{"flags": {"f": {"state": "ENABLED", "defaultVariant": "fallback",
		  "variants": {"fallback": "fallback", "control": "control", "treatment": "treatment", "premium": "premium",
		    "standard": "standard", "blue": "blue", "red": "red", "user-7": "user-7"},
		  "targeting": {"fractional": ` + rule + `}}}}`
	}
	for _, v := range []fractional.Version{fractional.V1, fractional.V2, fractional.V3} {
		for _, r := range rules {
			prepared := mustLoad(t, doc(r.prepared), WithFractionalVersion(v))
			if prepared.flags["f"].rule.frac == nil {
				t.Fatalf("%s: the rule was not prepared at load", r.name)
			}
			general := mustLoad(t, doc(r.general), WithFractionalVersion(v))
			if general.flags["f"].rule.frac != nil {
				t.Fatalf("%s: the comparison rule should take the general path", r.name)
			}
			seen := map[string]bool{}
			for i := range 300 {
				ctx := map[string]any{"targetingKey": fmt.Sprintf("user-%d", i), "tier": []string{"premium", "free"}[i%2],
					"color": "red", "obj": map[string]any{"a": 1}}
				if i%3 == 0 {
					delete(ctx, "obj")
				}
				got, want := prepared.ResolveString("f", "", ctx), general.ResolveString("f", "", ctx)
				if got.Value != want.Value || got.Reason != want.Reason || (got.Err == nil) != (want.Err == nil) {
					t.Fatalf("%s %v %v: prepared %+v, general %+v", r.name, v, ctx, got, want)
				}
				seen[got.Value] = true
			}
			if len(seen) < 2 {
				t.Errorf("%s %v: every user got %v; the comparison proves little", r.name, v, seen)
			}
		}
	}
}
