package usage

import (
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
)

// A cell counts the evaluations of one key with one list of variants, by
// outcome: outcome j < n is variant j of the n, then come the evaluations
// that served no variant, the bulk evaluations, and the failures, one
// outcome per ErrorCode.
//
// Almost every flag is evaluated from one goroutine at a time; a few hot
// ones on every core at once. So a cell starts as one word of four 16-bit
// counts (the first four outcomes) that an evaluation adds to with one
// compare-and-swap; the other outcomes, and a count about to fill its 16
// bits, go to one word per outcome. A failed compare-and-swap is two
// evaluations colliding: after hotAfter of them the words are doubled into
// shards a cache line apart, and doubled again while they still collide,
// up to what the processors can use. Memory follows contention (figures
// in bench/README.md, "What counting costs").
type cell struct {
	packed atomic.Uint64
	wide   atomic.Pointer[shardSet]
	// seen is the total last seen and last the second (Unix time) it was
	// seen at; under Counter.mu. 32 bits make the cell 24 bytes: seen only
	// tells that the total changed, which notes a second apart see (no
	// flag is evaluated 2^32 times a second), and last fits until 2106.
	seen, last uint32
}

const (
	packedFields = 4
	fieldBits    = 16
	fieldMask    = 1<<fieldBits - 1
	// spillAt leaves the 16 bits room for the 2^15 evaluations that may
	// land between the add that reaches it and the move.
	spillAt   = 1 << 15
	hotAfter  = 16 // collisions that double a cell's shards
	lineWords = 8  // a cache line, in counters
)

// outcomes is how many outcomes a flag of n variants has.
func outcomes(n int) int { return n + 2 + int(numErrorCodes) }

// The outcomes after the variants of a flag of n variants.
func noneOutcome(n int) int               { return n }
func bulkOutcome(n int) int               { return n + 1 }
func errorOutcome(n int, c ErrorCode) int { return n + 2 + int(c) }

// shardSet is a cell's counters past its packed word: n shards of one
// word per outcome (k of them), stride words apart. A set that a larger
// one replaces stays linked from it: an evaluation that loaded it before
// still adds to it.
type shardSet struct {
	words        []atomic.Uint64
	n, k, stride int
	collisions   atomic.Uint64
	prev         *shardSet
}

// newShardSet makes n shards for k outcomes; one shard is k words, more
// are a cache line apart.
func newShardSet(n, k int, prev *shardSet) *shardSet {
	stride := k
	if n > 1 {
		stride = (k + lineWords - 1) / lineWords * lineWords
	}
	return &shardSet{words: make([]atomic.Uint64, n*stride), n: n, k: k, stride: stride, prev: prev}
}

// maxShards is twice the processors, so that evaluations on every one at
// once seldom share a shard.
func maxShards() int { return 1 << bits.Len(uint(2*runtime.GOMAXPROCS(0)-1)) }

// add counts one evaluation of outcome o of the flag at index i of t,
// whose number of outcomes is only looked up when the cell widens.
func (c *cell) add(o int, t *Table, i int) {
	if s := c.wide.Load(); o >= packedFields || (s != nil && s.n > 1) {
		// The set loaded is what widen would return; widen, which is not
		// inlined, is only called to make it.
		if s == nil {
			s = c.widen(t, i)
		}
		s.add(o, c)
		return
	}
	shift := uint(fieldBits * o)
	old := c.packed.Load()
	if !c.packed.CompareAndSwap(old, old+1<<shift) {
		old = c.packed.Add(1<<shift) - 1<<shift
		c.widen(t, i).collided(c)
	}
	if old>>shift&fieldMask >= spillAt-1 {
		c.spill(c.widen(t, i))
	}
}

// widen returns the cell's wide counters, made the first time, as one
// shard, for the outcomes of the flag at index i of t.
func (c *cell) widen(t *Table, i int) *shardSet {
	if s := c.wide.Load(); s != nil {
		return s
	}
	c.wide.CompareAndSwap(nil, newShardSet(1, outcomes(t.flags.VariantCount(i)), nil))
	return c.wide.Load()
}

// spill moves the packed counts to the wide counters: an add that lands
// meanwhile is in the swapped word, and moved, or in the new one.
func (c *cell) spill(s *shardSet) {
	old := c.packed.Swap(0)
	for f := range packedFields {
		if n := old >> (fieldBits * f) & fieldMask; n > 0 {
			s.words[f].Add(n)
		}
	}
}

// add counts outcome o in one of the shards: with several, the one of the
// processor the evaluation runs on, as a token from a sync.Pool (which
// keeps one per processor) tells, so that processors write lines of their
// own. A token whose shard another processor writes too moves to the
// next.
func (s *shardSet) add(o int, c *cell) {
	if s.n == 1 {
		if !addOnce(&s.words[o]) {
			s.collided(c)
		}
		return
	}
	tok := processorTokens.Get().(*token)
	if !addOnce(&s.words[(tok.shard&(s.n-1))*s.stride+o]) {
		tok.shard++
		s.collided(c)
	}
	processorTokens.Put(tok)
}

// addOnce adds one to n with one compare-and-swap, or else with an add,
// and reports whether the compare-and-swap did it: false means another
// evaluation added meanwhile.
func addOnce(n *atomic.Uint64) bool {
	old := n.Load()
	if n.CompareAndSwap(old, old+1) {
		return true
	}
	n.Add(1)
	return false
}

// collided notes a collision in s, and doubles c's shards after hotAfter,
// up to maxShards.
func (s *shardSet) collided(c *cell) {
	if s.collisions.Add(1) == hotAfter && s.n < maxShards() {
		c.wide.CompareAndSwap(s, newShardSet(2*s.n, s.k, s))
	}
}

// token numbers the processor that holds it.
type token struct{ shard int }

var (
	tokens          atomic.Uint32
	processorTokens = sync.Pool{New: func() any { return &token{shard: int(tokens.Add(1) - 1)} }}
)

// counts adds up the cell's counts by outcome into out, which has a word
// per outcome, and returns their total.
func (c *cell) counts(out []uint64) uint64 {
	old := c.packed.Load()
	for f := range min(packedFields, len(out)) {
		out[f] += old >> (fieldBits * f) & fieldMask
	}
	c.eachWide(func(n *atomic.Uint64, o int) { out[o] += n.Load() })
	var total uint64
	for _, n := range out {
		total += n
	}
	return total
}

// eachWide calls f with each of the cell's wide and sharded counters and
// its outcome.
func (c *cell) eachWide(f func(n *atomic.Uint64, o int)) {
	for s := c.wide.Load(); s != nil; s = s.prev {
		for j := range s.words {
			if o := j % s.stride; o < s.k {
				f(&s.words[j], o)
			}
		}
	}
}

// zero sets every count to zero. An evaluation that adds meanwhile is
// counted before or after, as its word was zeroed after or before it.
func (c *cell) zero() {
	c.packed.Swap(0)
	c.eachWide(func(n *atomic.Uint64, _ int) { n.Swap(0) })
	c.seen, c.last = 0, 0
}

// note stamps sec as the time of the last evaluation if the total changed
// since the last note, and returns the stamp.
func (c *cell) note(total uint64, sec int64) int64 {
	if uint32(total) != c.seen {
		c.seen, c.last = uint32(total), uint32(sec)
	}
	return int64(c.last)
}
