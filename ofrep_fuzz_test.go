package flagsnap

import (
	"encoding/json"
	"testing"
)

// Whatever a request's body is, parseContext answers in bounded time with
// a context or a clear error: what it accepts is a JSON object whose
// targetingKey, if any, is a string, nested no deeper than the bound.
func FuzzOFREPContext(f *testing.F) {
	for _, seed := range []string{``, `{}`, `{"context": null}`, `{"context": {"targetingKey": "u"}}`,
		`{"context": {"targetingKey": 1}}`, `{"context": [1]}`, `{"context": {"a": [[[{"b": "\"]["}]]]}}`, `[`, `{"context": {"a": "\u2028"}}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		ctx, bad := parseContext(body)
		if bad != nil {
			if bad.status != 400 || bad.failure.code != "INVALID_CONTEXT" || bad.failure.details == "" {
				t.Fatalf("%q: %+v", body, bad)
			}
			return
		}
		if ctx == nil {
			return
		}
		if tk, ok := ctx["targetingKey"]; ok {
			if _, isString := tk.(string); !isString {
				t.Fatalf("%q: targetingKey %v taken", body, tk)
			}
		}
		if !json.Valid(body) || jsonDepth(string(body)) > maxContextDepth {
			t.Fatalf("%q taken", body)
		}
	})
}

// appendJSONString writes every string as JSON that reads back as the
// same string, invalid UTF-8 aside.
func FuzzAppendJSONString(f *testing.F) {
	for _, seed := range []string{"", "plain", "quote\" back\\ slash", "\x00\x1f\n\t", "\u2028\u2029", "\xff", "é日本"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := appendJSONString(nil, s)
		var back string
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%q wrote %s: %v", s, b, err)
		}
		want, _ := json.Marshal(s)
		var wantBack string
		_ = json.Unmarshal(want, &wantBack)
		if back != wantBack {
			t.Fatalf("%q wrote %s, read back %q, want %q", s, b, back, wantBack)
		}
	})
}
