package main

import "testing"

// TestIsJSON decides as the evaluator does (its TestStartsAsJSON), after
// a byte order mark and space.
func TestIsJSON(t *testing.T) {
	for doc, want := range map[string]bool{
		`{"flags": {}}`: true, "\xef\xbb\xbf \n{\"flags\": {}}": true, `{ }`: true, `[1]`: true,
		`{flags: {}}`: false, `{'flags': {}}`: false, "{\n  flags: {}}": false, "flags: {}": false, "": false, " ": false,
	} {
		if got := isJSON([]byte(doc)); got != want {
			t.Errorf("isJSON(%q) = %v, want %v", doc, got, want)
		}
	}
}
