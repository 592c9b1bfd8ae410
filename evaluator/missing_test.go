package evaluator

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

const missingDoc = `{"metadata": {"team": "shop"}, "flags": {
  "new-checkout": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on"},
  "dark-mode":    {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on"},
  "dark-more":    {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on"},
  "banner":       {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on"}
}}`

func TestMissingKeyIsNamed(t *testing.T) {
	set := mustLoad(t, missingDoc)
	for _, tt := range []struct{ key, want string }{
		{"new-chekout", `flag "new-chekout" not found; did you mean "new-checkout"?`},
		{"New_Checkout", `flag "New_Checkout" not found; did you mean "new-checkout"?`},
		{"baner", `flag "baner" not found; did you mean "banner"?`},
		{"dark-moze", `flag "dark-moze" not found`}, // as near dark-mode as dark-more
		{"checkout", `flag "checkout" not found`},
		{"", `flag "" not found`},
		{"a\"b", `flag "a\"b" not found`},
	} {
		t.Run(tt.key, func(t *testing.T) {
			r := set.ResolveBool(tt.key, true, nil)
			if r.Err == nil || r.Err.Error() != tt.want || r.Err.Code != CodeFlagNotFound || r.Err.Flag != tt.key {
				t.Fatalf("ResolveBool: %#v, want %q", r.Err, tt.want)
			}
			if !r.Value || r.Reason != ReasonError || r.Metadata["team"] != "shop" {
				t.Errorf("ResolveBool: %+v", r)
			}
			if !errors.Is(r.Err, ErrFlagNotFound) {
				t.Error("errors.Is(err, ErrFlagNotFound) is false")
			}
			x, err := set.Explain(tt.key, nil)
			if err == nil || err.Error() != tt.want || x.Err == nil || x.Err.Error() != tt.want {
				t.Errorf("Explain: %v, %v; want %q", err, x.Err, tt.want)
			}
			if got := set.NotFound(tt.key); got != r.Err {
				t.Errorf("NotFound made a second error: %v", got)
			}
			if e := set.Evaluate(tt.key, nil); e.Err() != r.Err || e.Index() != -1 {
				t.Errorf("Evaluate: %v", e.Err())
			}
		})
	}
	if ErrFlagNotFound.Error() != "flag not found" || !errors.Is(ErrFlagNotFound, ErrFlagNotFound) {
		t.Errorf("ErrFlagNotFound: %v", ErrFlagNotFound)
	}
	other := &Error{Code: CodeParseError, Flag: "banner", Msg: "x"}
	if errors.Is(other, ErrFlagNotFound) {
		t.Error("a PARSE_ERROR is ErrFlagNotFound")
	}
}

func TestMissingKeyAllocatesOnce(t *testing.T) {
	set := mustLoad(t, missingDoc)
	set.ResolveBool("new-chekout", false, nil)
	if n := testing.AllocsPerRun(100, func() { set.ResolveBool("new-chekout", false, nil) }); n != 0 {
		t.Errorf("ResolveBool of a missing key: %v allocations after the first", n)
	}
	if n := testing.AllocsPerRun(100, func() { _ = set.NotFound("new-chekout").Error() }); n != 0 {
		t.Errorf("NotFound: %v allocations after the first", n)
	}
	if n := testing.AllocsPerRun(100, func() { set.Evaluate("new-chekout", nil) }); n != 0 {
		t.Errorf("Evaluate: %v allocations after the first", n)
	}
	// The sets WithEnrichment makes have the same keys, and share the errors.
	rich := set.WithEnrichment(map[string]any{"region": "eu"})
	if rich.NotFound("new-chekout") != set.NotFound("new-chekout") {
		t.Error("WithEnrichment's set made its own error")
	}
}

func TestMissingKeysAreBounded(t *testing.T) {
	set := mustLoad(t, missingDoc)
	for i := range maxNamedMissingKeys {
		if err := set.NotFound(fmt.Sprintf("k%d", i)); err == ErrFlagNotFound {
			t.Fatalf("key %d: the shared error", i)
		}
	}
	if err := set.NotFound("baner"); err != ErrFlagNotFound {
		t.Errorf("past the bound: %v, want the shared error", err)
	}
	if n := testing.AllocsPerRun(100, func() { set.NotFound("one-more") }); n != 0 {
		t.Errorf("past the bound: %v allocations", n)
	}
	if err := set.NotFound("k7"); err.Error() != `flag "k7" not found` {
		t.Errorf("kept key: %v", err)
	}
	if r := set.ResolveBool("baner", false, nil); r.Err != ErrFlagNotFound || r.Err.Code != CodeFlagNotFound {
		t.Errorf("ResolveBool past the bound: %v", r.Err)
	}
	// An explanation is read by a person: it names the key all the same.
	if _, err := set.Explain("baner", nil); err == nil || err.Error() != `flag "baner" not found; did you mean "banner"?` {
		t.Errorf("Explain past the bound: %v", err)
	}
}

// A set of more flags than suggest compares names with gets no hint, and
// is not searched.
func TestMissingKeyInALargeSet(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"flags": {`)
	for i := range 1100 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"flag-%04d": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on"}`, i)
	}
	b.WriteString(`}}`)
	set := mustLoad(t, b.String())
	if err := set.NotFound("flag-00001"); err.Error() != `flag "flag-00001" not found` {
		t.Errorf("got %v", err)
	}
}

func TestMissingKeyInAnEmptySet(t *testing.T) {
	set := mustLoad(t, `{"flags": {}}`)
	for _, key := range []string{"a", "b", "a"} {
		if r := set.ResolveString(key, "d", nil); r.Err.Error() != `flag "`+key+`" not found` || r.Value != "d" {
			t.Errorf("%s: %+v", key, r)
		}
	}
}

func TestMissingKeysConcurrently(t *testing.T) {
	set := mustLoad(t, missingDoc)
	const goroutines = 8
	got := make([][]*Error, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range 200 {
				// Every goroutine asks for the same keys, in another order.
				got[g] = append(got[g], set.NotFound(fmt.Sprintf("key-%d", (i*7+g*13)%200)))
			}
		})
	}
	wg.Wait()
	byKey := map[string]*Error{}
	for _, errs := range got {
		for _, err := range errs {
			if prev, ok := byKey[err.Flag]; ok && prev != err {
				t.Fatalf("%s: two errors kept", err.Flag)
			}
			byKey[err.Flag] = err
		}
	}
	if len(byKey) != 200 {
		t.Errorf("%d keys", len(byKey))
	}
}
