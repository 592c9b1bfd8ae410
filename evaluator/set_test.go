package evaluator

import (
	"fmt"
	"testing"
)

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

func TestInfo(t *testing.T) {
	set := mustLoad(t, `{"flags": {
	  "static":   {"state": "ENABLED", "variants": {"b": 2, "a": 1}, "defaultVariant": "b"},
	  "ruled":    {"state": "ENABLED", "variants": {"on": true, "off": false}, "targeting": {"if": [{"var": "x"}, "on", "off"]}},
	  "empty":    {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on", "targeting": {}},
	  "off":      {"state": "DISABLED", "variants": {"on": true}, "defaultVariant": "on"},
	  "broken":   {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "nope", "targeting": {"var": "x"}}
	}}`)
	for _, tt := range []struct {
		key                 string
		disabled, targeting bool
		variants            string
		defaultVariant      string
		broken              bool
	}{
		{"static", false, false, "[a b]", "b", false},
		{"ruled", false, true, "[off on]", "", false},
		{"empty", false, false, "[on]", "on", false},
		{"off", true, false, "[on]", "on", false},
		{"broken", false, false, "[on]", "", true},
	} {
		x, ok := set.Info(tt.key)
		if !ok {
			t.Fatalf("Info(%q): not found", tt.key)
		}
		if x.Key != tt.key || x.Disabled != tt.disabled || x.Targeting != tt.targeting || fmt.Sprint(x.Variants) != tt.variants ||
			x.DefaultVariant != tt.defaultVariant || (x.Broken != nil) != tt.broken {
			t.Errorf("Info(%q) = %+v", tt.key, x)
		}
		for j, name := range x.Variants {
			if got := set.VariantName(set.Index(tt.key), j); got != name {
				t.Errorf("%s: variant %d is %q, VariantName says %q", tt.key, j, name, got)
			}
		}
	}
	if _, ok := set.Info("absent"); ok {
		t.Error("Info(absent) found a flag")
	}
}
