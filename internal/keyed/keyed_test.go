package keyed

import (
	"fmt"
	"hash/maphash"
	"testing"
)

func TestTable(t *testing.T) {
	seed := maphash.MakeSeed()
	var tb *Table[int]
	if _, ok := tb.Get("a", 1); ok || tb.Len() != 0 {
		t.Fatal("a nil table holds something")
	}
	for i := range 100 {
		key := fmt.Sprint("k", i)
		// Every third key has the same hash as another, so probing is tested.
		h := maphash.String(seed, fmt.Sprint(i/3))
		before := tb
		tb = tb.With(key, h, i)
		if before.Len() != i || tb.Len() != i+1 {
			t.Fatalf("after %d: lengths %d and %d", i, before.Len(), tb.Len())
		}
		if _, ok := before.Get(key, h); ok {
			t.Fatalf("%s is in the table it was added to a copy of", key)
		}
	}
	for i := range 100 {
		if v, ok := tb.Get(fmt.Sprint("k", i), maphash.String(seed, fmt.Sprint(i/3))); !ok || v != i {
			t.Errorf("k%d: %d, %v", i, v, ok)
		}
	}
	if _, ok := tb.Get("k1", maphash.String(seed, "7")); ok {
		t.Error("found a key under another's hash")
	}
}
