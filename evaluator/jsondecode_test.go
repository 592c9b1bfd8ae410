package evaluator

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"
)

// stdDecode is what the fast decoder must agree with: encoding/json with
// UseNumber, one value and nothing after it.
func stdDecode(data []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return v, true
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
{}`, `[1,,2]`,
}

func TestDecodeFastAgreesWithEncodingJSON(t *testing.T) {
	for _, doc := range jsonValid {
		got, _, ok := decodeFast([]byte(doc))
		want, wantOK := stdDecode([]byte(doc))
		if !wantOK {
			t.Fatalf("test data: encoding/json rejects %q", doc)
		}
		if !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("%q: fast %#v (ok %v), encoding/json %#v", doc, got, ok, want)
		}
	}
	for _, doc := range jsonInvalid {
		if _, ok := stdDecode([]byte(doc)); ok {
			t.Fatalf("test data: encoding/json accepts %q", doc)
		}
		if v, _, ok := decodeFast([]byte(doc)); ok {
			t.Errorf("%q: fast decoder accepted it as %#v", doc, v)
		}
	}
}

func TestDecodeFastDepth(t *testing.T) {
	deep := func(n int) []byte { return []byte(strings.Repeat("[", n) + strings.Repeat("]", n)) }
	for _, n := range []int{maxJSONDepth, maxJSONDepth + 1} {
		_, _, ok := decodeFast(deep(n))
		_, wantOK := stdDecode(deep(n))
		if ok != wantOK {
			t.Errorf("depth %d: fast ok=%v, encoding/json ok=%v", n, ok, wantOK)
		}
	}
}

func TestDecodeFastSeesRefs(t *testing.T) {
	cases := map[string]bool{
		`{"flags":{}}`: false,
		`{"flags":{"f":{"targeting":{"if":[{"$ref":"x"},"a"]}}}}`: true,
		`{"flags":{"f":{"variants":{"a":"$ref"}}}}`:               false,
	}
	for doc, want := range cases {
		_, refs, ok := decodeFast([]byte(doc))
		if !ok || refs != want {
			t.Errorf("%s: refs %v ok %v, want refs %v", doc, refs, ok, want)
		}
	}
}

// Whatever the fast decoder accepts, encoding/json accepts as the same
// value; what it refuses goes to encoding/json anyway.
func FuzzDecodeFast(f *testing.F) {
	for _, s := range append(append([]string{}, jsonValid...), jsonInvalid...) {
		f.Add([]byte(s))
	}
	for _, s := range wideDocs {
		f.Add([]byte(s))
	}
	f.Fuzz(checkDecodeFast)
}

// checkDecodeFast checks the fast decoder, sequential and with a "flags"
// object of any size decoded in parallel, against encoding/json.
func checkDecodeFast(t *testing.T, data []byte) {
	got, refs, ok := decodeFast(data)
	wide, wideRefs, wideOK := decodeFastWide(data, 0, 3)
	want, wantOK := stdDecode(data)
	if ok {
		if !wantOK {
			t.Fatalf("fast decoder accepts %q, encoding/json does not", data)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: fast %#v, encoding/json %#v", data, got, want)
		}
	}
	if wideOK {
		if !wantOK {
			t.Fatalf("parallel decoding accepts %q, encoding/json does not", data)
		}
		if !reflect.DeepEqual(wide, want) {
			t.Fatalf("%q: parallel %#v, encoding/json %#v", data, wide, want)
		}
	}
	if ok && wideOK && refs != wideRefs {
		t.Fatalf("%q: $ref seen %v sequentially, %v in parallel", data, refs, wideRefs)
	}
	if ok != wideOK {
		t.Fatalf("%q: accepted %v sequentially, %v in parallel", data, ok, wideOK)
	}
}

// wideDocs are documents whose "flags" object is split into runs, with
// what could mislead the split: braces, commas and quotes inside strings,
// escaped keys, a $ref, a repeated key in different runs, members after
// "flags", and malformed objects.
var wideDocs = []string{
	`{"flags": {"a": 1, "b": {"x": [1, 2, {"y": "}"}]}, "c\"d": ",", "e": "\\", "f": {"$ref": "r"}, "a": 2}, "metadata": {"k": 1}}`,
	`{"flags": {}, "x": 1}`,
	`{"flags": { "a" : { } , "b" : [ ] , "c" : "{[" , "d" : null }}`,
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
}

func TestParallelDecoding(t *testing.T) {
	for _, s := range wideDocs {
		checkDecodeFast(t, []byte(s))
	}
	// A document of thousands of flags, in every number of runs.
	doc := bigDocument(3000, "object")
	want, _ := stdDecode(doc)
	open := bytes.Index(doc, []byte(`"flags": {`)) + len(`"flags": `)
	if splits, _, ok := splitMembers(doc, open, 3); !ok || len(splits) != 3 {
		t.Fatalf("the flags are split into %d runs (%v), want 3", len(splits), ok)
	}
	for workers := 2; workers <= 5; workers++ {
		got, refs, ok := decodeFastWide(doc, 0, workers)
		if !ok || !refs || !reflect.DeepEqual(got, want) {
			t.Fatalf("%d runs: ok %v, $ref seen %v, same value %v", workers, ok, refs, reflect.DeepEqual(got, want))
		}
	}
}
