package evaluator

import (
	"bytes"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"testing"
)

// A large flag set compiled on several goroutines is the flag set compiled
// on one: the same flags, problems and warnings in the same order, and the
// same answers. Both document forms are checked, since a flags array keeps
// its problems and warnings in document order rather than sorted.
func TestParallelLoadIsSequentialLoad(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	defer func(n int) { parallelLoadMin = n }(parallelLoadMin)
	for _, form := range []string{"object", "array"} {
		doc := bigDocument(3000, form)
		load := func(min int) (*FlagSet, string) {
			parallelLoadMin = min
			var log bytes.Buffer
			set, err := Load(doc, WithLogger(slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{
				ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
					if a.Key == slog.TimeKey {
						return slog.Attr{}
					}
					return a
				},
			}))))
			if err != nil {
				t.Fatalf("%s: %v", form, err)
			}
			return set, log.String()
		}
		seq, seqLog := load(1 << 30)
		par, parLog := load(16)
		if seqLog != parLog {
			t.Errorf("%s: logs differ:\n%s\n---\n%s", form, seqLog, parLog)
		}
		deprecated := 0
		for i := range 3000 {
			if i%11 == 0 && i%7 != 0 {
				deprecated++
			}
		}
		if n := strings.Count(parLog, "deprecated"); n != deprecated {
			t.Errorf("%s: %d deprecation warnings, want %d", form, n, deprecated)
		}
		problems := 3000/7 + 1
		for i := range 3000 {
			if form == "array" && wholeRef(i) {
				problems++ // no variants: the $ref is data beside the key
			}
		}
		if fmt.Sprint(seq.Problems()) != fmt.Sprint(par.Problems()) || len(par.Problems()) != problems {
			t.Errorf("%s: problems differ or are not all there: %d and %d", form, len(seq.Problems()), len(par.Problems()))
		}
		if fmt.Sprint(seq.Keys()) != fmt.Sprint(par.Keys()) || par.Len() != 3000 {
			t.Fatalf("%s: keys differ", form)
		}
		for _, key := range par.Keys() {
			if seq.flag(key).fingerprint != par.flag(key).fingerprint {
				t.Fatalf("%s: %s has another fingerprint", form, key)
			}
			for _, ctx := range []map[string]any{{"targetingKey": "u1", "x": "a"}, {"targetingKey": "u2", "x": "b"}} {
				a, b := seq.ResolveString(key, "d", ctx), par.ResolveString(key, "d", ctx)
				if a.Value != b.Value || a.Variant != b.Variant || a.Reason != b.Reason || (a.Err == nil) != (b.Err == nil) {
					t.Fatalf("%s: %s: %+v, sequentially %+v", form, key, b, a)
				}
			}
		}
	}
}

// bigDocument has n flags of several kinds: broken ones, ones that use the
// deprecated fractionalEvaluation, ones with a $ref (in the rule, for the
// variants, for the whole definition), fractional and plain rules.
func bigDocument(n int, form string) []byte {
	var b strings.Builder
	b.WriteString(`{"$evaluators": {"isA": {"==": [{"var": "x"}, "a"]}, "ab": {"a": "A", "b": "B"},
	  "whole": {"state": "ENABLED", "defaultVariant": "b", "variants": {"a": "A", "b": "B"}, "targeting": {"if": [{"==": [{"var": "x"}, "a"]}, "a", "b"]}}}, "flags": `)
	if form == "object" {
		b.WriteString("{")
	} else {
		b.WriteString("[")
	}
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		var rule string
		switch {
		case i%7 == 0:
			rule = `{"nope": []}`
		case i%11 == 0:
			rule = `{"fractionalEvaluation": ["x", ["a", 50], ["b", 50]]}`
		case i%3 == 0:
			rule = `{"if": [{"$ref": "isA"}, "a", "b"]}`
		case i%2 == 0:
			rule = `{"fractional": [["a", 50], ["b", 50]]}`
		default:
			rule = `{"if": [{"in": [{"var": "x"}, ["b", "c"]]}, "b", "a"]}`
		}
		def := fmt.Sprintf(`{"state": "ENABLED", "defaultVariant": "a", "variants": {"a": "A%d", "b": "B"}, "targeting": %s}`, i, rule)
		switch {
		case wholeRef(i):
			def = `{"$ref": "whole"}` // in an array, with its key beside it, data
		case i%17 == 0:
			def = fmt.Sprintf(`{"state": "ENABLED", "defaultVariant": "a", "variants": {"$ref": "ab"}, "targeting": %s}`, rule)
		}
		if form == "object" {
			fmt.Fprintf(&b, `"f%04d": %s`, n-i, def)
		} else {
			fmt.Fprintf(&b, `%s, "key": "f%04d"}`, strings.TrimSuffix(def, "}"), n-i)
		}
	}
	if form == "object" {
		b.WriteString("}}")
	} else {
		b.WriteString("]}")
	}
	return []byte(b.String())
}

// wholeRef tells whether bigDocument's flag i is one $ref, in place of one
// that would be neither broken nor deprecated.
func wholeRef(i int) bool { return i%13 == 0 && i%7 != 0 && i%11 != 0 }

// A key defined twice, once among the definitions compiled while the
// document is decoded and once after, loads as it does when every flag is
// compiled after: in an object the last definition stands, in an array the
// key is a problem.
func TestKeyDefinedTwiceInALargeSet(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	defer func(n int) { parallelLoadMin = n }(parallelLoadMin)
	answers := map[string]string{}
	for _, form := range []string{"object", "array"} {
		doc := string(bigDocument(3000, form))
		doc = strings.Replace(doc, `"f0002"`, `"f2999"`, 1) // f2999 is written first, f0002 last
		load := func(min int) *FlagSet {
			parallelLoadMin = min
			set, err := Load([]byte(doc))
			if err != nil {
				t.Fatalf("%s: %v", form, err)
			}
			return set
		}
		seq, par := load(1<<30), load(16)
		if fmt.Sprint(seq.Keys()) != fmt.Sprint(par.Keys()) || fmt.Sprint(seq.Problems()) != fmt.Sprint(par.Problems()) {
			t.Fatalf("%s: keys or problems differ", form)
		}
		a, b := seq.ResolveString("f2999", "d", nil), par.ResolveString("f2999", "d", nil)
		if fmt.Sprint(a) != fmt.Sprint(b) || b.Err != nil {
			t.Errorf("%s: f2999 answers %+v, sequentially %+v", form, b, a)
		}
		answers[form] = fmt.Sprint(b)
	}
	if answers["object"] != answers["array"] {
		t.Errorf("the last definition of f2999 answers %s in an object, %s in an array", answers["object"], answers["array"])
	}
}

// checkEarly checks, for FuzzLoad, that doc loads the same when its flags
// are compiled while it is decoded, from the first chunk on, and when
// they are compiled after.
func checkEarly(t *testing.T, doc []byte, opts []Option, want *FlagSet, wantErr error) {
	defer func(n int) { parallelLoadMin = n }(parallelLoadMin)
	parallelLoadMin = 1
	got, err := Load(doc, opts...)
	if fmt.Sprint(err) != fmt.Sprint(wantErr) {
		t.Fatalf("compiled early: error %v, after decoding %v", err, wantErr)
	}
	if err != nil {
		return
	}
	if g, w := fmt.Sprint(got.Keys(), got.Problems()), fmt.Sprint(want.Keys(), want.Problems()); g != w {
		t.Fatalf("compiled early\n%s\nafter decoding\n%s", g, w)
	}
	for _, key := range want.Keys() {
		if got.flag(key).fingerprint != want.flag(key).fingerprint {
			t.Fatalf("%q: fingerprints differ", key)
		}
		ctx := map[string]any{"targetingKey": "u1"}
		if g, w := fmt.Sprint(got.ResolveObject(key, "d", ctx)), fmt.Sprint(want.ResolveObject(key, "d", ctx)); g != w {
			t.Fatalf("%q answers %s compiled early, %s after decoding", key, g, w)
		}
	}
}
