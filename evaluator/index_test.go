package evaluator

import (
	"fmt"
	"strconv"
	"testing"
)

// Every key is found, at its position, and no other.
func TestFlagIndex(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 1000, 4097} {
		list := make([]*flag, n)
		for i := range list {
			list[i] = newFlag("flag-" + strconv.Itoa(i))
		}
		x, unique := indexFlags(list)
		if !unique {
			t.Fatalf("%d flags: a key is said to repeat", n)
		}
		for i, f := range list {
			if got, at := x.lookup(f.key); got != f || at != i {
				t.Fatalf("%d flags: lookup(%q) = %v at %d, want %d", n, f.key, got, at, i)
			}
		}
		for i := range 2*n + 10 {
			k := "absent-" + strconv.Itoa(i)
			if got := x.get(k); got != nil {
				t.Fatalf("%d flags: get(%q) found %q", n, k, got.key)
			}
		}
		if x.get("") != nil {
			t.Errorf("%d flags: the empty key was found", n)
		}
	}
	if _, unique := indexFlags([]*flag{newFlag("a"), newFlag("b"), newFlag("a")}); unique {
		t.Error("a repeated key is not noticed")
	}
}

// Problems of a flag set keyed by flag come in key order, whatever order
// the keys had in the document (twenty of them, so that map order cannot
// pass for sorted by chance).
func TestProblemsInKeyOrder(t *testing.T) {
	doc := `{"flags": {`
	for i := 20; i > 0; i-- {
		if i < 20 {
			doc += ","
		}
		doc += fmt.Sprintf(`"f%02d": {"state": "ENABLED", "variants": {"a": "a"}, "defaultVariant": "zz"}`, i)
	}
	set := mustLoad(t, doc+`}}`)
	problems := set.Problems()
	if len(problems) != 20 {
		t.Fatalf("%d problems, want 20", len(problems))
	}
	for i, p := range problems {
		if want := fmt.Sprintf("f%02d", i+1); p.Flag != want {
			t.Fatalf("problem %d is %s's, want %s's (all: %v)", i, p.Flag, want, problems)
		}
	}
}
