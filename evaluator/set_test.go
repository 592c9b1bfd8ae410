package evaluator

import "testing"

func TestBrokenFlags(t *testing.T) {
	const ok = `{"state": "ENABLED", "variants": {"a": "a", "b": "b"}, "defaultVariant": "a"}`
	const noDefault = `{"state": "ENABLED", "variants": {"a": "a"}, "defaultVariant": "z"}`
	const mixed = `{"state": "ENABLED", "variants": {"a": "a", "b": 1}, "defaultVariant": "a"}`
	const unknownOp = `{"state": "ENABLED", "variants": {"a": "a"}, "defaultVariant": "a", "targeting": {"if": [{"nope": 1}, "a", null]}}`
	const twoParts = `{"state": "ENABLED", "variants": {"a": "a"}, "defaultVariant": "a", "targeting": {"if": [{"nope": 1}, {"$ref": "x"}, null]}}`
	for _, tt := range []struct {
		name          string
		flags         string
		whole, partly int
	}{
		{"none", `"a": ` + ok, 0, 0},
		{"one broken whole", `"a": ` + ok + `, "b": ` + noDefault, 1, 0},
		{"one broken in part", `"a": ` + ok + `, "b": ` + unknownOp, 0, 1},
		{"two parts of one flag", `"b": ` + twoParts, 0, 1},
		{"a flag broken whole with a broken part too", `"b": {"state": "ENABLED", "variants": {"a": "a"}, "defaultVariant": "z", "targeting": {"nope": 1}}`, 1, 0},
		{"each kind", `"a": ` + ok + `, "b": ` + noDefault + `, "c": ` + mixed + `, "d": ` + unknownOp + `, "e": ` + twoParts, 2, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			set := mustLoad(t, `{"flags": {`+tt.flags+`}}`)
			if whole, partly := set.BrokenFlags(); whole != tt.whole || partly != tt.partly {
				t.Errorf("BrokenFlags() = %d, %d; want %d, %d", whole, partly, tt.whole, tt.partly)
			}
			rich := set.WithEnrichment(map[string]any{"k": "v"})
			if whole, partly := rich.BrokenFlags(); whole != tt.whole || partly != tt.partly {
				t.Errorf("WithEnrichment: %d, %d", whole, partly)
			}
		})
	}
}
