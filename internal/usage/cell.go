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
// compare-and-swap; a count about to fill its 16 bits moves to a wide
// counter. A failed compare-and-swap is two evaluations colliding: after
// hotAfter of them the cell counts in shards a cache line apart, doubled
// while they still collide, up to what the processors can use. Memory
// follows contention (figures in bench/README.md, "What counting costs").
type cell struct {
	packed atomic.Uint64
	wide   atomic.Pointer[wideCounts]
	// seen is the total last seen and last the second it was seen at;
	// under Counter.mu.
	seen uint64
	last int64
}

const (
	packedFields = 4
	fieldBits    = 16
	fieldMask    = 1<<fieldBits - 1
	// spillAt leaves the 16 bits room for the 2^15 evaluations that may
	// land between the add that reaches it and the move.
	spillAt   = 1 << 15
	hotAfter  = 16 // collisions that make a cell count in shards
	lineWords = 8  // a cache line, in counters
)

// outcomes is how many outcomes a flag of n variants has.
func outcomes(n int) int { return n + 2 + int(numErrorCodes) }

// The outcomes after the variants of a flag of n variants.
func noneOutcome(n int) int               { return n }
func bulkOutcome(n int) int               { return n + 1 }
func errorOutcome(n int, c ErrorCode) int { return n + 2 + int(c) }

// wideCounts are a cell's counts past its packed word, one per outcome,
// and its shards once it is hot.
type wideCounts struct {
	words      []atomic.Uint64
	collisions atomic.Uint64
	shards     atomic.Pointer[shardSet]
}

// shardSet is a hot cell's counters: n shards of one word per outcome,
// stride words apart. A set that a larger one replaces stays linked from
// it: an evaluation that loaded it before still adds to it.
type shardSet struct {
	words      []atomic.Uint64
	n, stride  int
	collisions atomic.Uint64
	prev       *shardSet
}

// maxShards is twice the processors, so that evaluations on every one at
// once seldom share a shard.
func maxShards() int { return 1 << bits.Len(uint(2*runtime.GOMAXPROCS(0)-1)) }

// add counts one evaluation of outcome o of the flag at index i of t,
// whose number of outcomes is only looked up when the cell widens.
func (c *cell) add(o int, t *Table, i int) {
	w := c.wide.Load()
	if w != nil {
		if s := w.shards.Load(); s != nil {
			s.add(o, w)
			return
		}
	}
	if o >= packedFields {
		if w == nil {
			w = c.widen(t, i)
		}
		if !addOnce(&w.words[o]) {
			w.collided()
		}
		return
	}
	shift := uint(fieldBits * o)
	old := c.packed.Load()
	if !c.packed.CompareAndSwap(old, old+1<<shift) {
		old = c.packed.Add(1<<shift) - 1<<shift
		c.widen(t, i).collided()
	}
	if old>>shift&fieldMask >= spillAt-1 {
		c.spill(c.widen(t, i))
	}
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

// widen returns the cell's wide counts, made the first time for the
// outcomes of the flag at index i of t.
func (c *cell) widen(t *Table, i int) *wideCounts {
	if w := c.wide.Load(); w != nil {
		return w
	}
	k := outcomes(t.flags.VariantCount(i))
	c.wide.CompareAndSwap(nil, &wideCounts{words: make([]atomic.Uint64, k)})
	return c.wide.Load()
}

// collided notes a collision, and makes the cell hot after hotAfter.
func (w *wideCounts) collided() {
	if w.collisions.Add(1) == hotAfter {
		w.shards.CompareAndSwap(nil, newShardSet(min(2, maxShards()), len(w.words), nil))
	}
}

// spill moves the packed counts to the wide counters: an add that lands
// meanwhile is in the swapped word, and moved, or in the new one.
func (c *cell) spill(w *wideCounts) {
	old := c.packed.Swap(0)
	for f := range packedFields {
		if n := old >> (fieldBits * f) & fieldMask; n > 0 {
			w.words[f].Add(n)
		}
	}
}

func newShardSet(n, k int, prev *shardSet) *shardSet {
	stride := (k + lineWords - 1) / lineWords * lineWords
	return &shardSet{words: make([]atomic.Uint64, n*stride), n: n, stride: stride, prev: prev}
}

// add counts outcome o in the shard of the processor the evaluation runs
// on, as a token from a sync.Pool (which keeps one per processor) tells,
// so that processors write lines of their own. A token whose shard
// another processor writes too moves to the next; shards that still
// collide are doubled.
func (s *shardSet) add(o int, w *wideCounts) {
	tok := processorTokens.Get().(*token)
	if !addOnce(&s.words[(tok.shard&(s.n-1))*s.stride+o]) {
		tok.shard++
		s.collided(w)
	}
	processorTokens.Put(tok)
}

// collided notes a collision in s, and doubles the shards of w after
// hotAfter, up to maxShards.
func (s *shardSet) collided(w *wideCounts) {
	if s.collisions.Add(1) == hotAfter && s.n < maxShards() {
		w.shards.CompareAndSwap(s, newShardSet(2*s.n, s.stride, s)) // a stride holds every outcome
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
	w := c.wide.Load()
	if w == nil {
		return
	}
	for o := range w.words {
		f(&w.words[o], o)
	}
	for s := w.shards.Load(); s != nil; s = s.prev {
		for j := range s.words {
			if o := j % s.stride; o < len(w.words) {
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
	if total != c.seen {
		c.seen, c.last = total, sec
	}
	return c.last
}
