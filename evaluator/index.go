package evaluator

import (
	"math/bits"
	"math/rand/v2"
)

// flagIndex, the flag set's one collection of its flags, finds one by key:
// open addressing with linear probing over a table at most half full, less
// work per lookup than a Go map.
type flagIndex struct {
	seed  uint64
	slots []*flag
	mask  uint64
	n     int // flags held
}

// indexFlags indexes flags; unique is false when two have the same key,
// and the index then holds both.
func indexFlags(flags []*flag) (x flagIndex, unique bool) {
	size := 1
	for size < 2*len(flags) {
		size <<= 1
	}
	// The seed differs per flag set, so that no fixed set of keys can be
	// made to collide.
	x = flagIndex{seed: rand.Uint64(), slots: make([]*flag, size), mask: uint64(size - 1), n: len(flags)}
	unique = true
	for _, f := range flags {
		i := keyHash(x.seed, f.key) & x.mask
		for x.slots[i] != nil {
			unique = unique && x.slots[i].key != f.key
			i = (i + 1) & x.mask
		}
		x.slots[i] = f
	}
	return x, unique
}

// get returns the flag with key, or nil (from a nil index too).
func (x *flagIndex) get(key string) *flag {
	if x == nil {
		return nil
	}
	f, _ := x.lookup(key)
	return f
}

// lookup returns the flag with key and its index (see FlagSet.Slots), or
// nil and -1.
func (x *flagIndex) lookup(key string) (*flag, int) {
	if len(x.slots) == 0 {
		return nil, -1
	}
	for i := keyHash(x.seed, key) & x.mask; ; i = (i + 1) & x.mask {
		switch f := x.slots[i]; {
		case f == nil:
			return nil, -1
		case f.key == key:
			return f, int(i)
		}
	}
}

// keyHash hashes a flag key in the manner of wyhash: bytes read a word at a
// time, mixed by a 64×64→128-bit multiply. For short keys it is a few
// instructions where hash/maphash makes three calls.
func keyHash(seed uint64, s string) uint64 {
	const k0, k1 = 0xa0761d6478bd642f, 0xe7037ed1a0b428db
	n := len(s)
	h := seed ^ k0
	var lo, hi uint64
	switch {
	case n > 16:
		for i := 0; i+16 < n; i += 16 {
			h = mix(word64(s, i)^k1, word64(s, i+8)^h)
		}
		lo, hi = word64(s, n-16), word64(s, n-8)
	case n >= 8:
		lo, hi = word64(s, 0), word64(s, n-8)
	case n >= 4:
		lo, hi = word32(s, 0), word32(s, n-4)
	case n > 0:
		lo = uint64(s[0])<<16 | uint64(s[n>>1])<<8 | uint64(s[n-1])
	}
	return mix(lo^k1^uint64(n), hi^h)
}

// word64 reads s[i:i+8] as a little-endian word, which the compiler does
// in one load.
func word64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// word32 reads s[i:i+4] as a little-endian word, in one load.
func word32(s string, i int) uint64 {
	s = s[i : i+4]
	return uint64(uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24)
}

func mix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}
