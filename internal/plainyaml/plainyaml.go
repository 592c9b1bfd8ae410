package plainyaml

import (
	"bytes"
	"fmt"
	"time"
)

// Plain turns what the YAML decoder makes into what encoding/json encodes
// alike: mapping keys become strings and timestamps RFC 3339 text. Maps
// and slices are converted in place.
func Plain(x any) any {
	switch t := x.(type) {
	case map[string]any:
		for k, v := range t {
			t[k] = Plain(v)
		}
		return t
	case map[any]any:
		out := make(map[string]any, len(t))
		for k, v := range t {
			out[KeyText(k)] = Plain(v)
		}
		return out
	case []any:
		for i, v := range t {
			t[i] = Plain(v)
		}
		return t
	case time.Time:
		return t.Format(time.RFC3339Nano)
	}
	return x
}

// KeyText is a mapping key that is not a string (1, true, ~) as the
// string it becomes: its text, and null for ~.
func KeyText(k any) string {
	if k == nil {
		return "null"
	}
	return fmt.Sprint(k)
}

// TrimBOM is doc without the UTF-8 byte order mark that may open it,
// which every reader of a flag document here skips.
func TrimBOM(doc []byte) []byte { return bytes.TrimPrefix(doc, []byte("\xef\xbb\xbf")) }

// IsJSON tells whether a flag document is JSON, as every reader of one
// here decides: after a byte order mark and space, an array, or an object
// whose first member's name is quoted. Anything else is YAML, among it an
// object in YAML's flow style, {flags: …}, which flagd reads from a .yaml
// file.
func IsJSON(doc []byte) bool {
	t := bytes.TrimLeft(TrimBOM(doc), " \t\r\n")
	if len(t) == 0 || t[0] != '{' {
		return len(t) > 0 && t[0] == '['
	}
	rest := bytes.TrimLeft(t[1:], " \t\r\n")
	return len(rest) == 0 || rest[0] == '"' || rest[0] == '}'
}
