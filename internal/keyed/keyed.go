// Package keyed is an immutable hash table of values by string key, for
// tables that evaluations read without a lock while a writer replaces them
// with a copy that holds one more entry. The caller hashes the keys, so a
// hash it has taken already is not taken again.
package keyed

// Table is an immutable open-addressing hash table, at most half full. A
// nil *Table is empty.
type Table[V any] struct {
	slots []slot[V]
	mask  uint64
	n     int
}

type slot[V any] struct {
	hash uint64
	key  string
	val  V
	used bool
}

// Len is how many keys t holds.
func (t *Table[V]) Len() int {
	if t == nil {
		return 0
	}
	return t.n
}

// Get returns the value of key, whose hash is h.
func (t *Table[V]) Get(key string, h uint64) (v V, ok bool) {
	if t == nil {
		return v, false
	}
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		switch s := &t.slots[i]; {
		case !s.used:
			return v, false
		case s.hash == h && s.key == key:
			return s.val, true
		}
	}
}

// With returns a copy of t that also holds val for key, of hash h; key
// must not be in t.
func (t *Table[V]) With(key string, h uint64, val V) *Table[V] {
	n := t.Len() + 1
	size := 2
	for size < 2*n {
		size <<= 1
	}
	next := &Table[V]{slots: make([]slot[V], size), mask: uint64(size - 1), n: n}
	next.put(slot[V]{hash: h, key: key, val: val, used: true})
	if t != nil {
		for _, s := range t.slots {
			if s.used {
				next.put(s)
			}
		}
	}
	return next
}

func (t *Table[V]) put(s slot[V]) {
	i := s.hash & t.mask
	for t.slots[i].used {
		i = (i + 1) & t.mask
	}
	t.slots[i] = s
}
