package evaluator

import (
	"fmt"
	"strconv"
	"testing"
)

// Every key is found and no other: with thousands of keys the probes
// collide and wrap around the end of the table.
func TestFlagIndex(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 1000, 4097} {
		flags := make(map[string]*flag, n)
		for i := range n {
			k := "flag-" + strconv.Itoa(i)
			flags[k] = newFlag(k)
		}
		list := make([]*flag, 0, n)
		for _, f := range flags {
			list = append(list, f)
		}
		x, _ := indexFlags(list)
		for k, f := range flags {
			if got := x.get(k); got != f {
				t.Fatalf("%d flags: get(%q) = %v", n, k, got)
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

// Every byte of a key, at every length the hash treats differently, changes
// its hash: keys that differ in one byte only (flag-0001, flag-0002) are the
// usual case, and a byte the hash skipped would put them all in one probe
// chain.
func TestKeyHashReadsEveryByte(t *testing.T) {
	for _, seed := range []uint64{0, 1, 0x9e3779b97f4a7c15} {
		for n := 1; n <= 48; n++ {
			key := make([]byte, n)
			for i := range key {
				key[i] = 'a' + byte(i%26)
			}
			base := keyHash(seed, string(key))
			for i := range key {
				changed := append([]byte(nil), key...)
				changed[i] ^= 1
				if keyHash(seed, string(changed)) == base {
					t.Fatalf("seed %#x, length %d: byte %d does not change the hash", seed, n, i)
				}
			}
		}
		if keyHash(seed, "") == keyHash(seed, "\x00") {
			t.Errorf("seed %#x: the empty key and a NUL hash alike", seed)
		}
	}
}

// Keys numbered in sequence spread over the table: no slot of a table half
// full gets more than a few of them.
func TestKeyHashSpreads(t *testing.T) {
	const n, size = 4096, 8192
	var counts [size]int
	for i := range n {
		counts[keyHash(42, "feature.checkout.flag-"+strconv.Itoa(i))&(size-1)]++
	}
	for slot, c := range counts {
		if c > 6 {
			t.Fatalf("slot %d holds %d of %d sequential keys", slot, c, n)
		}
	}
}
