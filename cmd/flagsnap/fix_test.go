package main

import "testing"

// TestFixes gives the fix of each problem that has an obvious one, and
// none where the document does not show what was meant.
func TestFixes(t *testing.T) {
	const vars = `"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "on"`
	tests := []struct {
		name, doc, path, fix string
	}{
		{"default naming no variant, a typo", `{"flags": {"f": {"state": "ENABLED", "variants": {"enabled": true, "disabled": false}, "defaultVariant": "disabeld"}}}`,
			"/flags/f/defaultVariant", `did you mean "disabled"?`},
		{"default naming no variant", `{"flags": {"f": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "yes"}}}`,
			"/flags/f/defaultVariant", `use one of the variants: "off", "on"`},
		{"default not a string", `{"flags": {"f": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": true}}}`,
			"/flags/f/defaultVariant", `write the name of a variant as a string, e.g. "on"`},
		{"variants missing", `{"flags": {"f": {"state": "ENABLED"}}}`,
			"/flags/f/variants", `add "variants", e.g. "variants": {"on": true, "off": false}`},
		{"variants not an object", `{"flags": {"f": {"state": "ENABLED", "variants": [true]}}}`,
			"/flags/f/variants", `write "variants" as an object of names and values, e.g. {"on": true, "off": false}`},
		{"variants empty", `{"flags": {"f": {"state": "ENABLED", "variants": {}}}}`,
			"/flags/f/variants", `add a variant, e.g. "on": true`},
		{"variants of several types", `{"flags": {"f": {"state": "ENABLED", "variants": {"a": 1, "b": "x", "c": "y"}}}}`,
			"/flags/f/variants/b", "give every variant the same type (now 2 strings, 1 number)"},
		{"a variant out of range", `{"flags": {"f": {"state": "ENABLED", "variants": {"a": 1e999}}}}`,
			"/flags/f/variants/a", "write a number within ±1.7976931348623157e308"},
		{"definition not an object", `{"flags": {"f": true}}`,
			"/flags/f", `write the flag as an object with "state", "variants" and "defaultVariant"`},
		{"entry without a key", `{"flags": [{"state": "ENABLED", "variants": {"on": true}}]}`,
			"/flags/0", `give the entry a "key", the flag's name`},
		{"key not a string", `{"flags": {"f": {"key": 5, ` + vars + `}}}`,
			"/flags/f/key", `write "key" as a string, the flag's name`},
		{"entry whose key is not a string", `{"flags": [{"key": true, ` + vars + `}]}`,
			"/flags/0/key", `write "key" as a string, the flag's name`},
		{"source not a string", `{"flags": {"f": {"source": ["x"], ` + vars + `}}}`,
			"/flags/f/source", `write "source" as a string, or leave it out`},
		{"a YAML infinity", "flags:\n  f: {state: ENABLED, variants: {a: .inf, b: 1}, defaultVariant: b}\n",
			"/flags/f/variants/a", "write a number within ±1.7976931348623157e308"},
		{"key defined twice", `{"flags": [{"key": "a", ` + vars + `}, {"key": "b", ` + vars + `}, {"key": "a", ` + vars + `}]}`,
			"/flags/0", `rename or remove one of the flags "a": the other is /flags/2`},
		{"operator misspelt", `{"flags": {"f": {` + vars + `, "targeting": {"if": [{"endsWith": [{"var": "email"}, "@x"]}, "on"]}}}}`,
			"/flags/f/targeting/if/0/endsWith", `did you mean "ends_with"?`},
		{"operator with a typo", `{"flags": {"f": {` + vars + `, "targeting": {"fractinal": [["on", 1]]}}}}`,
			"/flags/f/targeting/fractinal", `did you mean "fractional"?`},
		{"operator that is another word", `{"flags": {"f": {` + vars + `, "targeting": {"nope": [1]}}}}`,
			"/flags/f/targeting/nope", ""},
		{"$ref misspelt", `{"$evaluators": {"staff": {"==": [1, 1]}}, "flags": {"f": {` + vars + `, "targeting": {"if": [{"$ref": "stuff"}, "on"]}}}}`,
			"/flags/f/targeting/if/0/$ref", `did you mean "staff"?`},
		{"$ref to nothing", `{"flags": {"f": {` + vars + `, "targeting": {"$ref": "beta-users"}}}}`,
			"/flags/f/targeting/$ref", `add "beta-users" to "$evaluators"`},
		{"weights in tenths", `{"flags": {"f": {` + vars + `, "targeting": {"fractional": [["on", 12.5], ["off", 87.5]]}}}}`,
			"/flags/f/targeting/fractional", "use whole numbers in the same proportions: 25, 175 (×2)"},
		{"weights in thousandths", `{"flags": {"f": {` + vars + `, "targeting": {"fractional": [{"var": "id"}, ["on", 0.333], ["off", 0.667]]}}}}`,
			"/flags/f/targeting/fractional", "use whole numbers in the same proportions: 333, 667 (×1000)"},
		{"weights too large", `{"flags": {"f": {` + vars + `, "targeting": {"fractional": [["on", 2000000000], ["off", 2000000000]]}}}}`,
			"/flags/f/targeting/fractional", "use smaller weights in the same proportions: 1, 1 (÷2000000000)"},
		{"weights too large, prime", `{"flags": {"f": {` + vars + `, "targeting": {"fractional": [["on", 2147483647], ["off", 1]]}}}}`,
			"/flags/f/targeting/fractional", "use smaller weights: only their proportions count, and they may add up to 2147483647 at most"},
		{"a bucket that is a name", `{"flags": {"f": {` + vars + `, "targeting": {"fractional": [["on", 50], "off"]}}}}`,
			"/flags/f/targeting/fractional/1", `write the bucket as ["off", weight]`},
		{"a weight that is a string", `{"flags": {"f": {` + vars + `, "targeting": {"fractional": [["on", 50], ["off", "50"]]}}}}`,
			"/flags/f/targeting/fractional/1", "write the weight as a number"},
		{"var of a boolean", `{"flags": {"f": {` + vars + `, "targeting": {"if": [{"var": true}, "on"]}}}}`,
			"/flags/f/targeting/if/0/var", `name the context property with a string, e.g. {"var": "email"}`},
		{"state", `{"flags": {"f": {"state": "on", "variants": {"on": true}, "defaultVariant": "on"}}}`,
			"/flags/f/state", `set "state" to "ENABLED" or "DISABLED"`},
		{"metadata", `{"flags": {"f": {` + vars + `, "metadata": {"tags": ["a"]}}}}`,
			"/flags/f/metadata", "keep strings, numbers and booleans only: other metadata is dropped"},
		{"metadata that is not an object", `{"flags": {"f": {` + vars + `, "metadata": "team-a"}}}`,
			"/flags/f/metadata", `write "metadata" as an object of names and values, e.g. {"owner": "team-a"}`},
		{"in YAML", "flags:\n  f:\n    state: ENABLED\n    variants: {on: true, off: false}\n    defaultVariant: onn\n",
			"/flags/f/defaultVariant", `use one of the variants: "off", "on"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			problems, _ := checkDocument([]byte(tt.doc))
			var found []string
			for _, p := range problems {
				if p.Source != "flagsnap" {
					continue
				}
				found = append(found, p.Path)
				if p.Path == tt.path {
					if p.Fix != tt.fix {
						t.Errorf("fix %q, want %q (%s)", p.Fix, tt.fix, p.Message)
					}
					return
				}
			}
			t.Errorf("no problem at %s, only at %q", tt.path, found)
		})
	}
}
