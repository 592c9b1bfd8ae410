package evaluator

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// stdDecode is what the fast decoder must agree with: encoding/json with
// UseNumber, one value and nothing after it. For a document it refuses, msg
// is its message and at the byte it stopped at.
func stdDecode(data []byte) (v any, msg string, at int) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			return nil, se.Error(), int(se.Offset) - 1
		case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
			return nil, "unexpected end of document", len(data) - 1
		}
		return nil, err.Error(), -1
	}
	end := int(dec.InputOffset())
	end += len(data[end:]) - len(bytes.TrimLeft(data[end:], " \t\r\n"))
	if end < len(data) {
		return nil, "unexpected data after the top-level value", end
	}
	return v, "", 0
}

// plainDecoded is what the fast decoder returned in encoding/json's form:
// a *flagList as the object or array it was read from, each definition
// as encoding/json reads the bytes kept of it (the last member of a key
// wins), an *op1 as its map.
func plainDecoded(x any) any {
	switch t := x.(type) {
	case *flagList:
		if t.array {
			a := make([]any, len(slices.Concat(t.chunks...)))
			for i, d := range slices.Concat(t.chunks...) {
				a[i], _, _ = stdDecode(d.span)
			}
			return a
		}
		m := make(map[string]any, len(slices.Concat(t.chunks...)))
		for _, d := range slices.Concat(t.chunks...) {
			m[d.key], _, _ = stdDecode(d.span)
		}
		return m
	case *op1:
		return map[string]any{t.key: plainDecoded(t.val)}
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, v := range t {
			m[k] = plainDecoded(v)
		}
		return m
	case []any:
		a := make([]any, len(t))
		for i, v := range t {
			a[i] = plainDecoded(v)
		}
		return a
	}
	return x
}

var jsonValid = []string{
	`{}`, `[]`, `{"a":1}`, ` { "a" : [ 1 , 2.5 , -0 , 1e3 , 1E-2 , -12.5e+7 ] } `,
	`{"s":"plain","e":"\"\\\/\b\f\n\r\t","u":"\u00e9\u4e2d","pair":"\ud83d\ude00","lone":"\ud800x","lone2":"\udc00","hi-lo-bad":"\ud800\u0041"}`,
	`{"utf8":"héllo 中文 😀","bad":"` + "\xff\xfe" + `","trunc":"` + "\xe4\xb8" + `"}`,
	`{"dup":1,"dup":2}`, `[true,false,null,{"$ref":"x"}]`, `"just a string"`, `0`, `-1.5`, `null`,
	`{"flags":{"f":{"state":"ENABLED","variants":{"on":true,"off":false},"defaultVariant":"on"}}}`,
	"\t\r\n[1]\n", `{"del":"` + "\x7f" + `"}`,
	`[` + strings.Repeat(`"long string value more than thirty-two bytes",`, 3) + `1]`,
}

var jsonInvalid = []string{
	``, ` `, `{`, `}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `[1 2]`, `{a:1}`, `{'a':1}`, `01`, `-`, `1.`, `.5`, `1e`, `1e+`,
	`+1`, `NaN`, `Infinity`, `tru`, `nul`, `"unterminated`, `"bad escape \x"`, `"\u12"`, `"\u12g4"`, "\"ctl\x01\"",
	`{} {}`, `[1] x`, `{"a":1}}`, `//c
{}`, `[1,,2]`, `[-x]`, `[1.x]`, `[1ex]`, `[1e+x]`, `[01]`, `[trux]`, `[fals]`, `[nulL]`, `{"a" 1}`, `{"a":1 "b":2}`,
	"[\"a\nb\"]", `["\q"]`, `["\u00"]`, "[1]\n\n ]", `{"a":[1}`, "[\xff]", `{"flags":{"a":1,}}`, `{"flags":[1 2]}`,
	"{\r\n\"a\": {}\r\n\"b\": 1}", `["a""b"]`, `[[] {}]`, `[1true]`, `[1 x]`, `{"a":1 {}}`, `["x"-1]`,
}

func TestDecodeAgreesWithEncodingJSON(t *testing.T) {
	for _, doc := range jsonValid {
		if _, msg, _ := stdDecode([]byte(doc)); msg != "" {
			t.Fatalf("test data: encoding/json rejects %q", doc)
		}
		checkDecode(t, []byte(doc))
	}
	for _, doc := range jsonInvalid {
		if _, msg, _ := stdDecode([]byte(doc)); msg == "" {
			t.Fatalf("test data: encoding/json accepts %q", doc)
		}
		checkDecode(t, []byte(doc))
	}
}

func TestDecodeDepth(t *testing.T) {
	deep := func(n int) []byte { return []byte(strings.Repeat("[", n) + strings.Repeat("]", n)) }
	for _, n := range []int{maxJSONDepth, maxJSONDepth + 1} {
		_, _, err := decodeJSON(deep(n), nil)
		_, msg, _ := stdDecode(deep(n))
		if (err == nil) != (msg == "") {
			t.Errorf("depth %d: fast error %v, encoding/json %q", n, err, msg)
		}
		checkDecode(t, deep(n))
	}
}

func TestDecodeSeesRefs(t *testing.T) {
	cases := map[string]bool{
		`{"flags":{}}`: false,
		`{"flags":{"f":{"targeting":{"if":[{"$ref":"x"},"a"]}}}}`:  true,
		`{"flags":{"f":{"variants":{"a":"$ref"}}}}`:                false,
		`{"flags":[{"key":"f","targeting":{"$ref":"x"}}]}`:         true,
		`{"flags":{"f":{"targeting":{"if":[{"\u0024ref":"x"}]}}}}`: true,
	}
	for doc, want := range cases {
		_, refs, err := decodeJSON([]byte(doc), nil)
		if err != nil || refs != want {
			t.Errorf("%s: refs %v (%v), want refs %v", doc, refs, err, want)
		}
	}
}

// Whatever the fast decoder accepts, encoding/json accepts as the same
// value; what it refuses, encoding/json refuses with the same message at
// the same place.
func FuzzDecodeFast(f *testing.F) {
	for _, s := range append(append([]string{}, jsonValid...), jsonInvalid...) {
		f.Add([]byte(s))
	}
	for _, s := range flagsDocs {
		f.Add([]byte(s))
	}
	f.Fuzz(checkDecode)
}

// checkDecode checks the fast decoder against encoding/json on data, and
// the bytes it kept of each flag's definition against the definition.
func checkDecode(t *testing.T, data []byte) {
	got, _, err := decodeJSON(data, nil)
	want, msg, at := stdDecode(data)
	if err != nil {
		if msg == "" {
			t.Fatalf("fast decoder refuses %q (%v), encoding/json does not", data, err)
		}
		if strings.Contains(msg, "after top-level value") {
			return // a top-level scalar, which no document is
		}
		if wantErr := wantSyntaxError(data, msg, at); !reflect.DeepEqual(err, wantErr) {
			t.Fatalf("%q: fast decoder says %v, encoding/json %v", data, err, wantErr)
		}
		return
	}
	if msg != "" {
		t.Fatalf("fast decoder accepts %q, encoding/json does not (%s)", data, msg)
	}
	if plain := plainDecoded(got); !reflect.DeepEqual(plain, want) {
		t.Fatalf("%q: fast %#v, encoding/json %#v", data, plain, want)
	}
	top, _ := got.(map[string]any)
	list, _ := top["flags"].(*flagList)
	if list == nil {
		return
	}
	for _, d := range slices.Concat(list.chunks...) {
		def, msg, _ := stdDecode(d.span)
		if msg != "" || !reflect.DeepEqual(fieldsAsDecoded(d), def) {
			t.Fatalf("%q: the definition of %q is written %q, decoded %#v", data, d.key, d.span, fieldsAsDecoded(d))
		}
	}
}

// wantSyntaxError is the error the fast decoder must give for data, which
// encoding/json refuses with msg at the byte at: encoding/json's message and
// place, but for a missing comma, which is reported where the comma goes.
// A comma is missing when the byte at is another member of an object, or
// another element of an array that is not a number or literal written
// right against the element before it ([01], [1true]).
func wantSyntaxError(data []byte, msg string, at int) *SyntaxError {
	closing := byte(0)
	switch {
	case strings.HasSuffix(msg, "after object key:value pair") && data[at] == '"':
		closing = '}'
	case strings.HasSuffix(msg, "after array element") && strings.IndexByte(`"{[`, data[at]) >= 0:
		closing = ']'
	case strings.HasSuffix(msg, "after array element") && strings.IndexByte("-tfn0123456789", data[at]) >= 0:
		if prev := data[at-1]; strings.IndexByte(" \t\r\n\"}]", prev) >= 0 {
			closing = ']'
		}
	}
	if closing == 0 {
		return syntaxErrorAt(data, at, msg)
	}
	end := len(bytes.TrimRight(data[:at], " \t\r\n"))
	lineStart := bytes.LastIndexByte(data[:end], '\n') + 1
	return &SyntaxError{Format: "JSON", Line: 1 + bytes.Count(data[:end], []byte("\n")), Column: end - lineStart + 1,
		Msg: "expected , or " + string(closing) + " after the value: add a comma"}
}

// TestDecodeMissingComma: a missing comma is reported after the value
// before it, where the comma goes, not at the member or element after it,
// which encoding/json names; the other faults after a value keep
// encoding/json's message and place.
func TestDecodeMissingComma(t *testing.T) {
	const (
		inObject = "expected , or } after the value: add a comma"
		inArray  = "expected , or ] after the value: add a comma"
	)
	tests := []struct {
		name, doc    string
		line, column int
		msg          string
	}{
		{"number", "{\n  \"a\": 1\n  \"b\": 2\n}", 2, 9, inObject},
		{"number, CRLF", "{\r\n  \"a\": 1\r\n  \"b\": 2\r\n}", 2, 9, inObject},
		{"string", "{\n  \"a\": \"on\"\n  \"b\": 2\n}", 2, 12, inObject},
		{"string, CRLF", "{\r\n  \"a\": \"on\"\r\n  \"b\": 2\r\n}", 2, 12, inObject},
		{"object", "{\n  \"a\": {\"x\": 1}\n  \"b\": 2\n}", 2, 16, inObject},
		{"object, CRLF", "{\r\n  \"a\": {\"x\": 1}\r\n  \"b\": 2\r\n}", 2, 16, inObject},
		{"array", "{\n  \"a\": [1, 2]\n  \"b\": 2\n}", 2, 14, inObject},
		{"array, CRLF", "{\r\n  \"a\": [1, 2]\r\n  \"b\": 2\r\n}", 2, 14, inObject},
		{"literal, blank line between", "{\n  \"a\": true\n\n  \"b\": 2\n}", 2, 12, inObject},
		{"on one line", `{"a": 1 "b": 2}`, 1, 8, inObject},
		{"no space", `{"a":"x""b":2}`, 1, 9, inObject},
		{"columns in bytes", `{"a": "é" "b": 1}`, 1, 11, inObject},
		{"elements", "[\n  1\n  2\n]", 2, 4, inArray},
		{"elements, CRLF", "[\r\n  1\r\n  2\r\n]", 2, 4, inArray},
		{"objects, CRLF", "[\r\n  {\"a\": 1}\r\n  {\"b\": 2}\r\n]", 2, 11, inArray},
		{"arrays", `[[1] [2]]`, 1, 5, inArray},
		{"strings", `["a" "b"]`, 1, 5, inArray},
		{"string then number", `["a"1]`, 1, 5, inArray},
		{"number then string", `[1"a"]`, 1, 3, inArray},
		{"literals", `[true false]`, 1, 6, inArray},
		{"negative number", `[1 -2]`, 1, 3, inArray},
		{"flags", "{\n  \"flags\": {\n    \"a\": {\"state\": \"ENABLED\"}\n    \"b\": {}\n  }\n}", 3, 30, inObject},
		{"flags as an array", "{\"flags\": [\n  {\"key\": \"a\"}\n  {\"key\": \"b\"}\n]}", 2, 15, inArray},
		{"definition", "{\"flags\": {\"a\": {\n  \"state\": \"ENABLED\"\n  \"variants\": {}\n}}}", 2, 21, inObject},
		{"variants", "{\"flags\": {\"a\": {\"variants\": {\n  \"on\": true\n  \"off\": false\n}}}}", 2, 13, inObject},
		{"rule", "{\"flags\": {\"a\": {\"targeting\": {\"if\": [\n  {\"var\": \"x\"}\n  \"on\"\n]}}}}", 2, 15, inArray},

		// Not a missing comma: encoding/json's message, at the byte.
		{"leading zero", `[01]`, 1, 3, `invalid character '1' after array element`},
		{"literal against a number", `[1true]`, 1, 3, `invalid character 't' after array element`},
		{"not a value", `[1 x]`, 1, 4, `invalid character 'x' after array element`},
		{"unquoted key", "{\n  \"a\": 1\n  b: 2\n}", 3, 3, `invalid character 'b' after object key:value pair`},
		{"object after a member", `{"a": 1 {}}`, 1, 9, `invalid character '{' after object key:value pair`},
		{"missing colon", `{"a" 1}`, 1, 6, `invalid character '1' after object key`},
		{"trailing comma", `{"a": 1,}`, 1, 9, `invalid character '}' looking for beginning of object key string`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := decodeJSON([]byte(tt.doc), nil)
			want := &SyntaxError{Format: "JSON", Line: tt.line, Column: tt.column, Msg: tt.msg}
			if !reflect.DeepEqual(err, want) {
				t.Errorf("%q:\ngot  %v\nwant %v", tt.doc, err, want)
			}
			checkDecode(t, []byte(tt.doc))
		})
	}
}

// A missing comma, as Load reports it.
func TestLoadMissingComma(t *testing.T) {
	doc := "{\r\n  \"flags\": {\r\n    \"new-checkout\": {\r\n      \"state\": \"ENABLED\",\r\n" +
		"      \"variants\": {\"on\": true, \"off\": false}\r\n      \"defaultVariant\": \"off\"\r\n    }\r\n  }\r\n}\r\n"
	_, err := Load([]byte(doc))
	const want = "invalid JSON at line 5, column 45: expected , or } after the value: add a comma"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// fieldsAsDecoded is a definition of a flagList as encoding/json would
// decode it: from its fields, those of def's members that they keep.
func fieldsAsDecoded(d flagDef) any {
	if d.fields == nil {
		return plainDecoded(d.raw)
	}
	f := d.fields
	decoded, _, _ := stdDecode(d.span)
	written, _ := decoded.(map[string]any)
	out := map[string]any{}
	if key, _ := written["key"].(string); d.index >= 0 && key != d.key {
		return nil // an entry of an array of flags has the key it carries
	}
	for k, v := range map[string]any{"state": f.state, "defaultVariant": f.defaultVariant,
		"targeting": f.targeting, "metadata": f.metadata, "variants": f.variants} {
		if _, ok := written[k]; ok {
			out[k] = plainDecoded(v)
		}
	}
	if f.variantMembers != nil {
		vs := map[string]any{}
		for _, m := range f.variantMembers {
			vs[m.name] = plainDecoded(m.val) // the last of a name wins
		}
		out["variants"] = vs
	}
	for k := range written {
		if _, kept := out[k]; !kept {
			out[k] = written[k] // not kept: taken as written
		}
	}
	return plainDecoded(out)
}

// flagsDocs are documents whose "flags" is decoded as a *flagList, with
// what could mislead the spans of its definitions: braces, commas and
// quotes inside strings, escaped keys, a $ref, a repeated key, members
// after "flags", and malformed objects.
var flagsDocs = []string{
	`{"flags": {"a": 1, "b": {"x": [1, 2, {"y": "}"}]}, "c\"d": ",", "e": "\\", "f": {"$ref": "r"}, "a": 2}, "metadata": {"k": 1}}`,
	`{"flags": {}, "x": 1}`,
	`{"flags": { "a" : { } , "b" : [ ] , "c" : "{[" , "d" : null }}`,
	`{"flags": [ {"key": "a", "targeting": {"if": [{"var": "x"}, 1, 2]}} , 3 , "s" ]}`,
	`{"flags": {"a": 1,}}`,
	`{"flags": {"a": 1, "b": 2, "c": 3,}}`,
	`{"flags": {"a": 1, "b": "2`,
	`{"flags": {"a": 1, "b": "2\`,
	`{"flags": {, "a": 1}}`,
	`{"flags": {"a": 1 "b": 2}}`,
	`{"flags": {"a": 1, "b": 2}`,
	`{"flags": {]"a": 1}}`,
	`{"flags": {"a": }, "b": 1}}`,
	`{"flags": {"a": 1}, "flags": {"b": 2, "c": 3, "d": 4}}`,
	`{"flags": 7}`,
	`{"x": {"flags": {"a": {"targeting": {"var": "x"}}}}}`,
	`{"flags": {"0123456789abcd\\": {"v": "x\"0123456789abcd\\\"", "w": 1}, "b": {"v": "0123456789abcdef\"}, \"c\": {"}}}`,
	`{"flags": {"0123456789abcde\\": {"v": "0123456789abcdefghij\\\"k", "w": [1]}, "b": {"v": "0123456789abcdefghijklmnopq\\"}}}`,
	`{"flags": {"a": {"v": "\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\"}\""}, "b": {"v": "012345678901234\\"}}}`,
}

func TestFlagsDecoded(t *testing.T) {
	for _, s := range flagsDocs {
		checkDecode(t, []byte(s))
	}
	checkDecode(t, bigDocument(3000, "object"))
	checkDecode(t, bigDocument(3000, "array"))
}
