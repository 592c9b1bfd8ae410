package evaluator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flagsnap/flagsnap/internal/flaggen"
)

// streamDocs are documents for the streamed load, and whether it takes
// them (the others are loaded after a scan, as before).
func streamDocs(t *testing.T) []struct {
	name string
	doc  []byte
	ok   bool
} {
	gen := flaggen.Generate(600, 3)
	var indented bytes.Buffer
	if err := json.Indent(&indented, gen, "", "  "); err != nil {
		t.Fatal(err)
	}
	var mixed strings.Builder
	mixed.WriteString(`{"$schema": "https://flagd.dev/schema/v0/flags.json", "metadata": {"team": "a", "v": 2}, "flags": {`)
	for i := range 300 {
		if i > 0 {
			mixed.WriteString(",\n")
		}
		switch i % 7 {
		case 0: // a string that looks like the gap between two flags
			fmt.Fprintf(&mixed, `"f%d": {"state": "ENABLED", "variants": {"a": "x},", "b": "}, "}, "defaultVariant": "a"}`, i)
		case 1: // objects nested in variants and metadata
			fmt.Fprintf(&mixed, `"f%d": {"variants": {"o": {"k": [1, {"n": null}]}, "p": {"q": {}}}, "state": "ENABLED", "defaultVariant": "o", "metadata": {"owner": "x", "n": %d}}`, i, i)
		case 2: // a rule with a problem in a part
			fmt.Fprintf(&mixed, `"f%d": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off", "targeting": {"if": [{"==": [{"var": "k"}, "v"]}, "on", {"nope": [1]}]}}`, i)
		case 3: // broken as a whole, and a warning
			fmt.Fprintf(&mixed, `"f%d": {"state": "MAYBE", "variants": {"a": 1, "b": "s"}, "defaultVariant": "c"}`, i)
		case 4: // not an object
			fmt.Fprintf(&mixed, `"f%d": [%d, {"a": {}}]`, i, i)
		case 6: // a warning only
			fmt.Fprintf(&mixed, `"f%d": {"state": "weird", "variants": {"on": true}, "defaultVariant": "on"}`, i)
		case 5:
			fmt.Fprintf(&mixed, `"f%d": {"state": "DISABLED", "variants": {"on": 1.5, "off": 2}, "defaultVariant": "on", "targeting": {"fractional": [{"var": "k"}, ["on", 50], ["off", 50]]}}`, i)
		}
	}
	mixed.WriteString(`}, "$evaluators": {"unused": {"in": ["a", "b"]}}}`)
	m := mixed.String()
	return []struct {
		name string
		doc  []byte
		ok   bool
	}{
		{"generated", gen, true},
		{"indented", indented.Bytes(), true},
		{"mixed", []byte(m), true},
		{"metadata after flags", []byte(strings.Replace(m, `"metadata": {"team": "a", "v": 2}, "flags"`, `"flags"`, 1)[:len(m)-len(`"metadata": {"team": "a", "v": 2}, `)-1] + `, "metadata": {"team": "b"}}`), false},
		{"a key twice", []byte(strings.Replace(m, `"f7": `, `"f6": `, 1)), false},
		{"an escape", []byte(strings.Replace(m, `"f7": `, `"f\u0037": `, 1)), false},
		{"a $ref", []byte(strings.Replace(m, `"unused": {"in"`, `"unused": {"$ref"`, 1)), false},
		{"flags twice", []byte(`{"flags": {"a": {}}, ` + m[1:]), false},
		{"not JSON after the flags", []byte(m[:len(m)-1] + `,}`), false},
		{"a definition not JSON", []byte(strings.Replace(m, `"defaultVariant": "c"}`, `"defaultVariant": c}`, 1)), false},
		{"an array of flags", []byte(`{"flags": [` + strings.Repeat(`{"key": "x", "state": "ENABLED"}, `, 10) + `{}]}`), false},
		{"empty flags", []byte(`{"flags": {}, "x": "` + strings.Repeat("y", 100) + `"}`), false},
		{"not an object", []byte(`["flags"]`), false},
	}
}

// TestStreamLoadAsScanned checks that the streamed load makes the flag
// set that loading after a scan makes, with the same problems and
// warnings, on several goroutines; and that it takes the documents it
// should, and leaves the others.
func TestStreamLoadAsScanned(t *testing.T) {
	cfg := config{version: 2, clock: func() time.Time { return testNow }}
	ctxs := []map[string]any{nil, {"targetingKey": "u1", "k": "v"}, {"targetingKey": "u2", "k": "w", "attr_3": "value-3"}}
	for _, c := range streamDocs(t) {
		want, wantL, wantErr := scanLoad(c.doc, cfg)
		// A document left to the scan for what it says, not for being
		// broken by the making of the case.
		if notJSON := strings.HasPrefix(c.name, "not ") || strings.Contains(c.name, "not JSON"); wantErr != nil && !notJSON {
			t.Fatalf("%s: %v", c.name, wantErr)
		}
		if c.name == "metadata after flags" && want.Metadata()["team"] != "b" {
			t.Fatalf("%s: flag-set metadata %v", c.name, want.Metadata())
		}
		for _, workers := range []int{2, 3, 4} {
			got, gotL, ok := streamLoad(c.doc, cfg, workers)
			if ok != c.ok {
				t.Fatalf("%s, %d goroutines: streamed %v, want %v", c.name, workers, ok, c.ok)
			}
			if !ok {
				continue
			}
			if wantErr != nil {
				t.Fatalf("%s: streamed, but after a scan: %v", c.name, wantErr)
			}
			if g, w := fmt.Sprint(got.Keys()), fmt.Sprint(want.Keys()); g != w {
				t.Fatalf("%s, %d goroutines: keys %s, want %s", c.name, workers, g, w)
			}
			if g, w := fmt.Sprint(got.Problems()), fmt.Sprint(want.Problems()); g != w {
				t.Errorf("%s, %d goroutines: problems\n%s\nwant\n%s", c.name, workers, g, w)
			}
			if g, w := fmt.Sprint(gotL.warnings), fmt.Sprint(wantL.warnings); g != w {
				t.Errorf("%s, %d goroutines: warnings\n%s\nwant\n%s", c.name, workers, g, w)
			}
			if fmt.Sprint(got.metadata) != fmt.Sprint(want.metadata) || got.reuseKey != want.reuseKey {
				t.Errorf("%s: flag-set metadata %v, want %v", c.name, got.metadata, want.metadata)
			}
			for _, key := range want.Keys() {
				g, w := got.flag(key), want.flag(key)
				if g.fingerprint != w.fingerprint || g.written != w.written || g.reusable != w.reusable {
					t.Errorf("%s: %q: fingerprint, hash as written or reusability differ", c.name, key)
				}
				for _, ctx := range ctxs {
					if g, w := fmt.Sprint(got.ResolveObject(key, "d", ctx)), fmt.Sprint(want.ResolveObject(key, "d", ctx)); g != w {
						t.Errorf("%s: %q answers %s, want %s", c.name, key, g, w)
					}
				}
			}
		}
	}
}

// TestStreamRunsJoin checks that the goroutines of a streamed load each
// compile a part of the flags and that the runs join, whether a guess
// falls between two flags or inside one, rather than the first goroutine
// compiling them all.
func TestStreamRunsJoin(t *testing.T) {
	doc := flaggen.Generate(2000, 1)
	first := bytes.Index(doc, []byte(`"flags":{`)) + len(`"flags":{`)
	cfg := config{version: 2, clock: time.Now}
	for _, workers := range []int{2, 3, 4} {
		chain := compileStream(doc, first, nil, cfg, workers)
		if chain == nil {
			t.Fatalf("%d goroutines: no chain", workers)
		}
		runs, total := 0, 0
		for r := chain; r != nil; r = r.next {
			runs++
			total += len(r.flags)
			if r.next == nil && r.end == 0 {
				t.Errorf("%d goroutines: the last run has no end", workers)
			}
		}
		if runs != workers || total != 2000 {
			t.Errorf("%d goroutines: %d runs of %d flags, want %d runs of 2000", workers, runs, total, workers)
		}
	}
}

// TestMemberGuess checks where guesses fall.
func TestMemberGuess(t *testing.T) {
	for _, c := range []struct {
		doc  string
		from int
		want int
	}{
		{`{"a": {}, "b": {}}`, 0, 10},
		{`{"a": {} ,` + "\n" + ` "b": {}}`, 0, 12},
		{`{"a": {}, "b": {}}`, 11, -1},
		{`{"a": [], "b": {}}`, 0, -1},
		{`{"a": {}}`, 0, -1},
	} {
		if got := memberGuess([]byte(c.doc), c.from); got != c.want {
			t.Errorf("memberGuess(%q, %d) = %d, want %d", c.doc, c.from, got, c.want)
		}
	}
}

// TestStreamGuessAnywhere starts the second goroutine's guesses at every
// byte of a stretch of a document: between flags, inside a definition,
// inside strings that look like the gap between two flags. Whatever the
// guess, the chain holds every flag once, in order, and the runs still
// join after a guess or two.
func TestStreamGuessAnywhere(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"flags": {`)
	for i := range 40 {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `"f%d": {"state": "ENABLED", "variants": {"a": "x},", "b": "}, "}, "defaultVariant": "a", `+
			`"targeting": {"if": [{"in": [{"var": "k"}, ["}", "},\"", "}, \"q"]]}, "b", {"cat": [{}, "a"]}]}, "metadata": {"m": "}"}}`, i)
	}
	b.WriteString(`}}`)
	doc := []byte(b.String())
	first := len(`{"flags": {`)
	cfg := config{version: 2, clock: time.Now}
	one := compileStreamFrom(doc, []int{first}, nil, cfg)
	if one == nil || len(one.flags) != 40 {
		t.Fatal("one goroutine did not read the 40 flags")
	}
	joined := 0
	mid := len(doc) / 2
	for from := mid - 400; from < mid+400; from++ {
		chain := compileStreamFrom(doc, []int{first, from}, nil, cfg)
		if chain == nil {
			t.Fatalf("from %d: no chain", from)
		}
		var keys []string
		for r := chain; r != nil; r = r.next {
			for _, f := range r.flags {
				keys = append(keys, f.key)
			}
			if r != chain {
				joined++
			}
		}
		if len(keys) != 40 {
			t.Fatalf("from %d: %d flags", from, len(keys))
		}
		for i, k := range keys {
			if k != one.flags[i].key {
				t.Fatalf("from %d: flag %d is %q, want %q", from, i, k, one.flags[i].key)
			}
		}
	}
	if joined < 700 {
		t.Errorf("the runs joined from %d of 800 guesses", joined)
	}
}

// checkStreamed checks, for FuzzLoad, that a document the streamed load
// takes makes the flag set that loading after a scan makes.
func checkStreamed(t *testing.T, doc []byte, opts []Option) {
	cfg := config{version: 2, clock: time.Now}
	for _, o := range opts {
		o(&cfg)
	}
	got, gotL, ok := streamLoad(doc, cfg, 2)
	if !ok {
		return
	}
	want, wantL, err := scanLoad(doc, cfg)
	if err != nil {
		t.Fatalf("streamed, but after a scan: %v", err)
	}
	if g, w := fmt.Sprint(got.Keys(), got.Problems(), gotL.warnings), fmt.Sprint(want.Keys(), want.Problems(), wantL.warnings); g != w {
		t.Fatalf("streamed\n%s\nafter a scan\n%s", g, w)
	}
	for _, key := range want.Keys() {
		g, w := got.flag(key), want.flag(key)
		if g.fingerprint != w.fingerprint || g.reusable != w.reusable {
			t.Fatalf("%q: fingerprint or reusability differ", key)
		}
		ctx := map[string]any{"targetingKey": "u1"}
		if g, w := fmt.Sprint(got.ResolveObject(key, "d", ctx)), fmt.Sprint(want.ResolveObject(key, "d", ctx)); g != w {
			t.Fatalf("%q answers %s streamed, %s after a scan", key, g, w)
		}
	}
}

// TestStreamUpdateAsScanned checks the streamed load of a document that
// replaces another (WithPrevious) against loading it after a scan: the
// same flags taken from the previous set and compiled anew, and the same
// changes; and that a document whose $evaluators changed after its flags
// takes none.
func TestStreamUpdateAsScanned(t *testing.T) {
	base := string(flaggen.Generate(800, 5))
	edited := strings.Replace(base, `"flag_7":{"state":"ENABLED"`, `"flag_7":{"state":"DISABLED"`, 1)
	edited = strings.Replace(edited, `"flag_600":`, `"flag_600b":`, 1)
	if edited == base {
		t.Fatal("the edit did not apply")
	}
	withEv := base[:len(base)-1] + `,"$evaluators":{"e":{"in":["a"]}}}`
	cfg := config{version: 2, clock: time.Now}
	prev, err := Load([]byte(base))
	if err != nil {
		t.Fatal(err)
	}
	prevEv, err := Load([]byte(withEv))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name       string
		prev       *FlagSet
		doc        string
		ok, reuses bool
	}{
		{"two flags edited", prev, edited, true, true},
		{"the same flags", prev, base, true, true},
		{"$evaluators added after the flags", prev, withEv, false, false},
		{"$evaluators as before", prevEv, strings.Replace(withEv, `"flag_7":{"state":"ENABLED"`, `"flag_7":{"state":"DISABLED"`, 1), true, true},
	} {
		cfg.prev = c.prev
		want, _, err := scanLoad([]byte(c.doc), cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, workers := range []int{2, 3} {
			got, _, ok := streamLoad([]byte(c.doc), cfg, workers)
			if ok != c.ok {
				t.Fatalf("%s, %d goroutines: streamed %v, want %v", c.name, workers, ok, c.ok)
			}
			if !ok {
				continue
			}
			if (got.reused > 0) != c.reuses || got.reused != want.reused || len(got.fresh) != len(want.fresh) {
				t.Errorf("%s: %d taken and %d compiled, want %d and %d", c.name, got.reused, len(got.fresh), want.reused, len(want.fresh))
			}
			ga, gr, gc := got.Changes(c.prev)
			wa, wr, wc := want.Changes(c.prev)
			if fmt.Sprint(ga, gr, gc) != fmt.Sprint(wa, wr, wc) {
				t.Errorf("%s: changes %v %v %v, want %v %v %v", c.name, ga, gr, gc, wa, wr, wc)
			}
			for _, key := range want.Keys() {
				if g, w := got.flag(key), want.flag(key); g.fingerprint != w.fingerprint || g.reusable != w.reusable {
					t.Errorf("%s: %q differs", c.name, key)
				}
			}
		}
	}
}

// FuzzStreamGuess starts the second goroutine of a streamed load at any
// byte of any document: the chain of runs must be the one the first
// goroutine reads alone, whatever the guess, or no chain when that one
// reads none.
func FuzzStreamGuess(f *testing.F) {
	f.Add([]byte(string(flaggen.Generate(20, 2))), uint16(300))
	f.Add([]byte(`{"flags": {"a": {"state": "ENABLED", "variants": {"x": "},\"b\": {"}, "defaultVariant": "x"}, "b": 1, "c": []}}`), uint16(30))
	f.Add([]byte(`{"flags": {"a": {}, "b": {"c": {}, "d": {}}, "e": {}}, "x": {"f": {}}}`), uint16(20))
	cfg := config{version: 2, clock: time.Now}
	f.Fuzz(func(t *testing.T, doc []byte, cut uint16) {
		if len(doc) > 4096 {
			t.Skip()
		}
		first := bytes.Index(doc, []byte(`{"flags": {`))
		if first < 0 {
			first = bytes.Index(doc, []byte(`{"flags":{`))
		}
		if first < 0 {
			t.Skip()
		}
		first = bytes.IndexByte(doc[first+1:], '{') + first + 2
		one := compileStreamFrom(doc, []int{first}, nil, cfg)
		from := first + int(cut)%(len(doc)-first+1)
		two := compileStreamFrom(doc, []int{first, from}, nil, cfg)
		if (one == nil) != (two == nil) {
			t.Fatalf("guess at %d: chain %v, alone %v", from, two != nil, one != nil)
		}
		if one == nil {
			return
		}
		var a, b []string
		for r := one; r != nil; r = r.next {
			for _, f := range r.flags {
				a = append(a, f.key)
			}
		}
		for r := two; r != nil; r = r.next {
			for _, f := range r.flags {
				b = append(b, f.key)
			}
		}
		if fmt.Sprint(a) != fmt.Sprint(b) || chainEnd(one) != chainEnd(two) {
			t.Fatalf("guess at %d: %q ending at %d, alone %q ending at %d", from, b, chainEnd(two), a, chainEnd(one))
		}
	})
}
