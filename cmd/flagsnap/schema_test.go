package main

import (
	"slices"
	"strings"
	"testing"
)

// TestSchemaChecksRulesOnTheirOwn checks the rules apart from the flags and
// each different rule once, and reports every flag's violations where they
// are, a rule shared or not; it does not follow a rule nested too deep,
// and still checks the rest of its flag.
func TestSchemaChecksRulesOnTheirOwn(t *testing.T) {
	deep := strings.Repeat("[", maxSchemaDepth) + strings.Repeat("]", maxSchemaDepth)
	doc, err := schemaInstance([]byte(`{
	  "$evaluators": {"r": {"in": 3}, "ok": {"==": [1, 1]}},
	  "flags": {
	    "a": {"state": "ENABLED", "variants": {"x": true}, "targeting": {"if": [{"startswith": [1]}, "x"]}},
	    "b": {"state": "ENABLED", "variants": {"x": true}, "targeting": {"if": [{"startswith": [1]}, "x"]}},
	    "c": {"state": "ON", "variants": {"x": true}, "targeting": ` + deep + `},
	    "d": {"state": "ENABLED", "variants": {"x": true}, "targeting": [` + deep + `]},
	    "e": {"state": "ENABLED", "variants": {"x": 1, "y": "s"}, "defaultVariant": 3}
	  }}`))
	if err != nil {
		t.Fatal(err)
	}
	violations, skipped, err := checkSchema(doc)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range violations {
		got = append(got, v.pointer+": "+v.msg)
	}
	want := []string{
		"/$evaluators/r/in: got number, want array",
		"/flags/a/targeting/if/0: additional properties 'startswith' not allowed",
		"/flags/b/targeting/if/0: additional properties 'startswith' not allowed",
		"/flags/c/state: value must be one of 'ENABLED', 'DISABLED'",
		"/flags/c/targeting: got array, want object", // as deep as it is checked
		"/flags/e/defaultVariant: got number, want null or string",
		"/flags/e/variants/y: got string, want number",
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if want := []string{"/flags/d/targeting"}; !slices.Equal(skipped, want) {
		t.Errorf("skipped %q, want %q", skipped, want)
	}
}
