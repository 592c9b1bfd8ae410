package flagsnap

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/flagsnap/flagsnap/evaluator"
)

// FuzzDebugContext checks the reading of a context given to the debug
// handler against encoding/json: whatever the text, it answers an object
// or an error without panicking; it takes every JSON object within the
// depth bound and nothing that is not JSON.
func FuzzDebugContext(f *testing.F) {
	for _, seed := range []string{
		``, ` `, `{}`, `{"targetingKey": "u-1", "n": 12345678901234567890, "x": [1, {"y": null}]}`,
		`[1]`, `null`, `"s"`, `{"a": "[[[\"{"}`, `{}{}`, `{} `, `{"a":`, strings.Repeat(`{"a":`, 40) + `1` + strings.Repeat(`}`, 40),
		`{"a": "<script>alert(1)</script>"}`, "\f{}", "\f",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		ctx, err := debugContext(text)
		blank := strings.TrimSpace(text) == ""
		var obj map[string]any
		isObject := json.Valid([]byte(text)) && json.Unmarshal([]byte(text), &obj) == nil && obj != nil
		switch {
		case err != nil && blank:
			t.Fatalf("blank text refused: %v", err)
		case err != nil && isObject && jsonDepth(text) <= maxContextDepth:
			t.Fatalf("%q refused: %v", text, err)
		case err == nil && ctx == nil:
			t.Fatalf("%q: no error and no context", text)
		case err == nil && !blank && !isObject:
			t.Fatalf("%q taken as %v", text, ctx)
		case err == nil && jsonDepth(text) > maxContextDepth:
			t.Fatalf("%q taken at depth %d", text, jsonDepth(text))
		}
	})
}

// FuzzDebugDefinitions checks /flags's reading of flag definitions against
// the evaluator: of every document the evaluator takes, it finds a
// definition for each flag of the set.
func FuzzDebugDefinitions(f *testing.F) {
	for _, seed := range []string{
		debugFlags, debugOverride,
		`{"flags": [{"key": "a", "state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on"}, {"state": "ENABLED"}, {"key": "a"}, 1]}`,
		`{"flags": {"a": null, "a": {"state": "DISABLED"}}, "$evaluators": {"e": true}}`,
		"\xef\xbb\xbfflags:\n  1: {state: ENABLED, variants: {on: true}, defaultVariant: on}\n",
		"flags:\n- key: a\n- {key: 2}\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		set, err := evaluator.Load([]byte(doc))
		if err != nil {
			return
		}
		defs, err := definitionsOf([]byte(doc))
		if err != nil {
			t.Fatalf("%q: the evaluator took it, definitionsOf: %v", doc, err)
		}
		for _, key := range set.Keys() {
			if defs[key] == nil {
				t.Fatalf("%q: no definition of %q among %d", doc, key, len(defs))
			}
		}
	})
}
