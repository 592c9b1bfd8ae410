package plainyaml

import (
	"encoding/json"
	"testing"
	"time"

	yaml "go.yaml.in/yaml/v3"
)

func TestPlain(t *testing.T) {
	for _, tc := range []struct{ yaml, json string }{
		{"a: 1\nb: [x, {1: y}]\n", `{"a":1,"b":["x",{"1":"y"}]}`},
		{"when: 2024-01-02T03:04:05Z\n", `{"when":"2024-01-02T03:04:05Z"}`},
		{"true: on\n", `{"true":"on"}`},
		{"~: x\n1.5: y\n", `{"1.5":"y","null":"x"}`},
	} {
		var raw any
		if err := yaml.Unmarshal([]byte(tc.yaml), &raw); err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(Plain(raw))
		if err != nil || string(b) != tc.json {
			t.Errorf("%q: %s (%v), want %s", tc.yaml, b, err, tc.json)
		}
	}
	if got := Plain(time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)); got != "2024-01-02T00:00:00Z" {
		t.Errorf("a timestamp: %v", got)
	}
}

// TestIsJSON: a document is JSON when it opens an array, or an object
// whose first member's name is quoted; YAML's flow style is YAML.
func TestIsJSON(t *testing.T) {
	for doc, want := range map[string]bool{
		`{"flags": {}}`: true, "\xef\xbb\xbf \n{\n  \"flags\": {}}": true, `{}`: true, `{ }`: true, `{`: true, `[1]`: true,
		`{flags: {}}`: false, `{'flags': {}}`: false, "{\n  flags: {}}": false, `{$evaluators: {}}`: false,
		"flags: {}": false, `"flags"`: false, "": false, " ": false,
	} {
		if got := IsJSON([]byte(doc)); got != want {
			t.Errorf("IsJSON(%q) = %v, want %v", doc, got, want)
		}
	}
}

// TrimBOM skips one byte order mark at the start, and only there.
func TestTrimBOM(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"\xef\xbb\xbf{}", "{}"},
		{"{}", "{}"},
		{"\xef\xbb\xbf\xef\xbb\xbfflags: {}", "\xef\xbb\xbfflags: {}"},
		{" \xef\xbb\xbf{}", " \xef\xbb\xbf{}"},
		{"", ""},
	} {
		if got := string(TrimBOM([]byte(tc.in))); got != tc.want {
			t.Errorf("TrimBOM(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
