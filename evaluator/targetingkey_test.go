package evaluator

import (
	"testing"

	"github.com/flagsnap/flagsnap/fractional"
)

// An empty targeting key is no targeting key: fractional without a
// bucketing value falls back to the default variant in every version, as
// the flagd daemon does, rather than bucketing on the flag key alone.
func TestFractionalEmptyTargetingKeyIsNone(t *testing.T) {
	doc := `{"flags": {"f": {"state": "ENABLED", "variants": {"a": "a", "b": "b", "fallback": "fallback"}, "defaultVariant": "fallback",
	  "targeting": {"fractional": [["a", 50], ["b", 50]]}}}}`
	for _, v := range []fractional.Version{fractional.V1, fractional.V2, fractional.V3} {
		set := mustLoad(t, doc, WithFractionalVersion(v))
		cases := []struct {
			ctx    map[string]any
			reason Reason
		}{
			{map[string]any{"targetingKey": ""}, ReasonDefault},
			{map[string]any{}, ReasonDefault},
			{map[string]any{"targetingKey": 7}, ReasonDefault},
			{map[string]any{"targetingKey": "user-1"}, ReasonTargetingMatch},
		}
		for _, c := range cases {
			r := set.ResolveString("f", "", c.ctx)
			if r.Reason != c.reason || (c.reason == ReasonDefault && r.Value != "fallback") {
				t.Errorf("%v %v: %+v, want reason %v", v, c.ctx, r, c.reason)
			}
		}
	}
}
