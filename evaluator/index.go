package evaluator

import "hash/maphash"

// flagIndex finds a flag by key for evaluations: open addressing with
// linear probing over a table at most half full. It does what a Go map
// does with less work per lookup, which is most of the cost of answering a
// flag that needs no evaluation. The flag set's map stays for everything
// else.
type flagIndex struct {
	seed  maphash.Seed
	slots []*flag
	mask  uint64
}

func newFlagIndex(flags map[string]*flag) flagIndex {
	size := 1
	for size < 2*len(flags) {
		size <<= 1
	}
	x := flagIndex{seed: maphash.MakeSeed(), slots: make([]*flag, size), mask: uint64(size - 1)}
	for key, f := range flags {
		i := maphash.String(x.seed, key) & x.mask
		for x.slots[i] != nil {
			i = (i + 1) & x.mask
		}
		x.slots[i] = f
	}
	return x
}

// get returns the flag with key, or nil.
func (x *flagIndex) get(key string) *flag {
	if len(x.slots) == 0 {
		return nil
	}
	for i := maphash.String(x.seed, key) & x.mask; ; i = (i + 1) & x.mask {
		f := x.slots[i]
		if f == nil || f.key == key {
			return f
		}
	}
}
