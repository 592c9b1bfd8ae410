package usage

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// The words of one shard of a flag's counts: those that served no variant,
// the bulk evaluations, the evaluations that failed, one word per
// ErrorCode, then one per variant.
const (
	wordNone    = 0
	wordBulk    = 1
	wordError   = 2
	wordVariant = wordError + int(numErrorCodes)
)

// lineWords is a cache line in counters: shards are this far apart, so
// that two cores never write the same line.
const lineWords = 8

// maxShards bounds the memory of a flag's counts on large machines.
const maxShards = 16

// shardsPerProcessor leaves shards to spare: a token a goroutine carries
// from one processor to another can leave two processors with tokens of
// one shard, and the more shards, the rarer that is.
const shardsPerProcessor = 4

// counts are the counters of one key with one list of variants.
type counts struct {
	names  []string        // the variants, in the flag's order
	stride int             // words per shard
	words  []atomic.Uint64 // shard s at s*stride
	// seen is the total last seen and last the second it was seen at;
	// under Counter.mu.
	seen uint64
	last int64
}

// newCounts makes the counts of the flag at index i of flags.
func newCounts(flags Flags, i, shards int) *counts {
	n := flags.VariantCount(i)
	k := &counts{names: make([]string, n)}
	for j := range n {
		k.names[j] = flags.VariantName(i, j)
	}
	k.stride = (wordVariant + n + lineWords - 1) / lineWords * lineWords
	k.words = make([]atomic.Uint64, shards*k.stride)
	return k
}

// of reports whether k counts the variants of the flag at index i of flags.
func (k *counts) of(flags Flags, i int) bool {
	if flags.VariantCount(i) != len(k.names) {
		return false
	}
	for j, name := range k.names {
		if flags.VariantName(i, j) != name {
			return false
		}
	}
	return true
}

// add adds k's counts to u and returns the second of the last evaluation
// it counted, stamping sec first if the counts changed since the last
// stamp. Nil counts add nothing.
func (k *counts) add(u *FlagUsage, sec int64) int64 {
	if k == nil {
		return 0
	}
	var total, bulk uint64
	for base := 0; base < len(k.words); base += k.stride {
		shard := k.words[base : base+k.stride]
		bulk += shard[wordBulk].Load()
		total += shard[wordNone].Load() + addErrors(u, shard[wordError:wordVariant])
		for j, name := range k.names {
			if n := shard[wordVariant+j].Load(); n > 0 {
				if u.Variants == nil {
					u.Variants = map[string]uint64{}
				}
				u.Variants[name] += n
				total += n
			}
		}
	}
	u.Evaluations += total
	u.Bulk += bulk
	// A bulk evaluation is a read too: it stamps LastEvaluated.
	k.note(total+bulk, sec)
	return k.last
}

// addErrors adds one shard's failed evaluations, a word per ErrorCode, to
// u and returns how many there were.
func addErrors(u *FlagUsage, words []atomic.Uint64) uint64 {
	var total uint64
	for c := range words {
		n := words[c].Load()
		if n == 0 {
			continue
		}
		if u.ErrorCodes == nil {
			u.ErrorCodes = map[string]uint64{}
		}
		u.ErrorCodes[ErrorCode(c).String()] += n
		total += n
	}
	u.Errors += total
	return total
}

// stamp notes sec as the time of the last evaluation if the counts changed
// since the last note.
func (k *counts) stamp(sec int64) {
	if k == nil {
		return
	}
	var total uint64
	for i := range k.words {
		total += k.words[i].Load()
	}
	k.note(total, sec)
}

func (k *counts) note(total uint64, sec int64) {
	if total != k.seen {
		k.seen, k.last = total, sec
	}
}

// zero sets every counter to zero. An evaluation that adds meanwhile is
// counted before or after, as its counter was zeroed after or before it.
func (k *counts) zero() {
	if k == nil {
		return
	}
	for i := range k.words {
		k.words[i].Swap(0)
	}
	k.seen, k.last = 0, 0
}

// shards hands each evaluation the shard of the processor it runs on. A
// sync.Pool keeps a value per processor: the token an evaluation takes
// from it is, almost always, the one the same processor put back last.
type shards struct {
	n    int
	pool *sync.Pool
}

type token struct{ shard int }

func newShards() shards {
	n := 1
	for n < shardsPerProcessor*runtime.GOMAXPROCS(0) && n < maxShards {
		n <<= 1
	}
	var next atomic.Uint32
	pool := &sync.Pool{New: func() any { return &token{shard: int(next.Add(1)-1) % n} }}
	return shards{n: n, pool: pool}
}
