package flagsnap

import (
	"encoding/json"
	"strings"
	"testing"
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
