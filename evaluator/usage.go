package evaluator

import (
	"hash/maphash"
	"math"
	"math/bits"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// A UsageCounter counts the evaluations of the flag sets attached to it
// (see Attach), by flag key and variant, and the keys asked for that the
// set in force does not define.
//
// An evaluation adds one to one counter, with one atomic add, and reads
// no clock: counting must not show next to an evaluation that takes
// 20 ns. When a flag was last evaluated is found once a second (Tick),
// and by Snapshot, by the counts that changed. The counters of a flag (its region) are striped: each stripe is a
// copy of them, and the regions of every flag are laid out in chunks so
// that stripe s of every flag lies in cache lines of its own. An
// evaluation picks its stripe by the address of its stack, so that two
// goroutines evaluating the same flag at once on two cores write
// different cache lines; addresses that land on the same stripe are
// noticed (see countSlow) and moved apart.
//
// A flag set holds the region of each of its flags, beside its index:
// a flag's own struct has no room to spare in its size class. Every
// version of a flag with the same key and variants has the same region,
// so that an evaluation still running on a flag set that has been
// replaced counts where the new set's evaluations do. A region is
// allocated on the flag's first evaluation: a flag that is never
// evaluated costs the set a nil pointer.
type UsageCounter struct {
	// Read by every evaluation, written when stripes collide (remap).
	remap [buckets]uint32 // atomic: the offset of each bucket's stripe
	miss  unsafe.Pointer  // atomic *missingTable: this window's missing keys
	// missCache finds this window's missing keys by the address of their
	// bytes, which is the same at every call from the same place (a string
	// constant); atomic *missingEntry, written under mu.
	missCache [1 << missCacheBits]unsafe.Pointer

	stripes  int
	handoffs []stripeState
	now      atomic.Int64 // Unix seconds, set by Tick
	_        [64]byte     // keeps what follows, written under mu, off the lines above

	mu      sync.Mutex
	since   time.Time
	current *FlagSet // the set attached last, which is the one in force
	// retired are the regions of flags whose variants have changed, by
	// key: evaluations of the former versions may still be running, and
	// what they counted belongs to the key. Kept while the key is in the
	// set; at most one per list of variants the key has had.
	retired map[string][]retired
	chunk   unsafe.Pointer // where regions are carved, one word at a time
	used    uintptr        // words of chunk's stripes handed out
	free    map[int][]freed
	// prevMiss is the previous window's missing keys with what they had
	// counted when the window ended: a late evaluation still counts there,
	// and belongs to the current window.
	prevMiss *missingTable
	prevBase map[*missingEntry]uint64
}

const (
	bucketBits = 10
	buckets    = 1 << bucketBits
	// stackBits: goroutine stacks start at 2 KiB.
	stackBits = 11
	// golden spreads the buckets, which follow the stacks' addresses,
	// over the stripes (Fibonacci hashing), and missing keys over the
	// cache.
	golden = 0x9E3779B97F4A7C15

	// stripeBytes is the width of one stripe of a chunk. A region lies in
	// one stripe, so it also bounds the variants counted one by one.
	stripeBytes = 2048
	stripeWords = stripeBytes / 8
	maxStripes  = 64

	// The words of a region, in each stripe: the stamp (in stripe 0 only:
	// the second of the last evaluation seen, and the low half of the
	// total then), the evaluations that failed, those that served no
	// variant (disabled, or no default variant), then one word per
	// variant in the flag's order.
	slotStamp   = 0
	slotError   = 1
	slotNone    = 2
	slotVariant = 3

	// sampleEvery is how often, in evaluations of a flag's variant in
	// one stripe, an evaluation looks at who sampled the stripe before it.
	sampleEvery = 64
	// handoffLimit is how many times, within a second, a sample may find
	// the stripe last sampled by another stack bucket before the one that
	// noticed is moved to another stripe. Two goroutines that evaluate at
	// once on one stripe make a turn every other sample or so, and are
	// parted within a few thousand evaluations. Goroutines that follow
	// each other on a stripe (one per request) make turns too, and move a
	// bucket now and then, which costs nothing but the move.
	handoffLimit = 16

	// quarantineSeconds is how long freed counters wait before another
	// flag gets them: an evaluation that read the flag set they were
	// freed from before it was replaced may yet add to them.
	quarantineSeconds = 60

	// MaxMissingKeys is how many distinct missing keys a window keeps.
	MaxMissingKeys = 1000
	missCacheBits  = 8
)

// stripeState is what a stripe knows of the goroutines that write it, on
// a cache line of its own.
type stripeState struct {
	owner atomic.Uint32 // the bucket of the last sample
	turns atomic.Uint32 // samples that found another bucket's, this second
	_     [56]byte
}

// retired is the region of a former version of a flag.
type retired struct {
	region unsafe.Pointer
	of     *flag // for its variants
}

type freed struct {
	p     unsafe.Pointer
	since int64 // Unix seconds
}

// NewUsageCounter returns a counter with a stripe for every GOMAXPROCS
// (rounded up to a power of two, at most 64), whose window starts now.
func NewUsageCounter(now time.Time) *UsageCounter {
	return newUsageCounter(now, runtime.GOMAXPROCS(0))
}

func newUsageCounter(now time.Time, procs int) *UsageCounter {
	n := 1
	for n < procs && n < maxStripes {
		n <<= 1
	}
	c := &UsageCounter{stripes: n, handoffs: make([]stripeState, n), retired: map[string][]retired{}, free: map[int][]freed{}}
	for b := range c.remap {
		c.remap[b] = uint32(uint64(b)*golden>>32&uint64(n-1)) * stripeBytes
	}
	c.miss = unsafe.Pointer(newMissingTable())
	c.emptyMissCache()
	c.since = now
	c.Tick(now)
	return c
}

// newChunk allocates stripes*stripeBytes of counters on a 64-byte
// boundary, so that no stripe shares a cache line with another. Go's
// allocator puts an object of a multiple of 2 KiB there already; asking
// for the 56 bytes that would align it otherwise costs the next size
// class, 700 bytes more.
func (c *UsageCounter) newChunk() unsafe.Pointer {
	words := make([]atomic.Uint64, c.stripes*stripeWords)
	if p := unsafe.Pointer(&words[0]); uintptr(p)%64 == 0 {
		return p
	}
	words = make([]atomic.Uint64, c.stripes*stripeWords+7)
	p := unsafe.Pointer(&words[0])
	return unsafe.Add(p, -uintptr(p)&63)
}

// Tick notes that the flags whose counts changed since the last Tick
// were evaluated at now, which is the resolution LastEvaluated has: the
// provider calls it every second. It reads every evaluated flag's
// counters (a few milliseconds a second for a million flags).
func (c *UsageCounter) Tick(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tick(now)
}

// tick is Tick under mu.
func (c *UsageCounter) tick(now time.Time) {
	sec := max(now.Unix(), 1) // a zero stamp means never
	c.now.Store(sec)
	for i := range c.handoffs {
		if c.handoffs[i].turns.Load() != 0 {
			c.handoffs[i].turns.Store(0)
		}
	}
	set := c.current
	if set == nil {
		return
	}
	for i, f := range set.index.slots {
		if f == nil {
			continue
		}
		c.stamp(atomic.LoadPointer(set.region(uint64(i))), f, sec)
		for _, old := range c.retired[f.key] {
			c.stamp(old.region, old.of, sec)
		}
	}
}

// stamp records sec as the last evaluation of the region r, of flag f,
// if its counts changed since it was last stamped; under mu.
func (c *UsageCounter) stamp(r unsafe.Pointer, f *flag, sec int64) {
	if r == nil {
		return
	}
	var total uint64
	for s := range c.stripes {
		for w := slotError; w < regionWords(f); w++ {
			total += atomic.LoadUint64((*uint64)(unsafe.Add(r, s*stripeBytes+w*8)))
		}
	}
	st := (*uint64)(r)
	if old := atomic.LoadUint64(st); uint32(old) != uint32(total) || old == 0 && total != 0 {
		atomic.StoreUint64(st, uint64(sec)<<32|uint64(uint32(total)))
	}
}

// Start says that the window began at now rather than when the counter
// was made: a provider counts from its first Init.
func (c *UsageCounter) Start(now time.Time) {
	c.mu.Lock()
	c.since = now
	c.mu.Unlock()
}

// Since is when the window began.
func (c *UsageCounter) Since() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.since
}

// lookup is flagIndex.get that also returns the flag's slot, which is
// where the flag set keeps its region.
func (x *flagIndex) lookup(key string) (*flag, uint64) {
	if len(x.slots) == 0 {
		return nil, 0
	}
	for i := keyHash(x.seed, key) & x.mask; ; i = (i + 1) & x.mask {
		f := x.slots[i]
		if f == nil || f.key == key {
			return f, i
		}
	}
}

// region is the address of the region of the flag in slot i.
func (s *FlagSet) region(i uint64) *unsafe.Pointer {
	return (*unsafe.Pointer)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(s.regions)), i*8))
}

// bucket is the stack bucket of a goroutine whose frame holds here: the
// address with the offset of the frame in a small stack taken off, so
// that a goroutine is one bucket whatever it calls from, and goroutines,
// whose stacks are apart, are others. The remap table spreads the
// buckets over the stripes.
func bucket(here *byte) uintptr {
	return uintptr(unsafe.Pointer(here)) >> stackBits & (buckets - 1)
}

// tally adds one evaluation of the flag in slot i of s to slot, when s is
// attached. It is small enough to be inlined into every Resolve method:
// what is not common goes to countSlow, which the caller calls with what
// tally returns when that is not zero: the stack bucket, plus one, for a
// sample; plus buckets more when the flag has no counters yet, and the
// evaluation is not counted.
func (s *FlagSet) tally(i uint64, slot uintptr) uintptr {
	c := s.use
	if c == nil {
		return 0
	}
	var here byte
	b := uintptr(unsafe.Pointer(&here)) >> stackBits & (buckets - 1) // see bucket
	r := atomic.LoadPointer(&s.regions[i])
	if r == nil {
		return b + 1 + buckets
	}
	if atomic.AddUint64((*uint64)(unsafe.Add(r, uintptr(atomic.LoadUint32(&c.remap[b]))+slot*8)), 1)%sampleEvery != 0 {
		return 0
	}
	return b + 1
}

// countSlow finishes what tally started. On the flag's first evaluation
// it allocates the flag's counters and counts. For a sample, it notes the
// bucket as the stripe's owner; when it finds another bucket's instead,
// the stripe may be shared by two goroutines that run at once, which
// countSlow separates after a few such turns.
//
//go:noinline
func (s *FlagSet) countSlow(i uint64, slot uintptr, x uintptr) {
	c := s.use
	b := (x - 1) % buckets
	off := uintptr(atomic.LoadUint32(&c.remap[b]))
	if x > buckets {
		r := c.allocated(s, i)
		if r != nil { // else the flag has left the set in force, and its counts
			atomic.AddUint64((*uint64)(unsafe.Add(r, off+slot*8)), 1)
		}
		return
	}
	st := &c.handoffs[off/stripeBytes]
	if st.owner.Swap(uint32(b)) == uint32(b) || st.turns.Add(1) < handoffLimit {
		return
	}
	st.turns.Store(0)
	// The bucket that noticed moves to the next stripe; should that one be
	// taken too, it moves on after as many turns there.
	next := (off/stripeBytes + 1) & uintptr(c.stripes-1)
	atomic.StoreUint32(&c.remap[b], uint32(next*stripeBytes))
}

// allocated returns the region of the flag in slot i of s, allocating it
// on first use. When s is no longer in force, the region is the one of
// the same flag in the set that is, which may have taken s's before it
// was allocated; nil when that set has no such flag.
func (c *UsageCounter) allocated(s *FlagSet, i uint64) unsafe.Pointer {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r := atomic.LoadPointer(s.region(i)); r != nil {
		return r
	}
	f := s.index.slots[i]
	at := s.region(i)
	if cur := c.current; cur != s && cur != nil {
		g, j := cur.index.lookup(f.key)
		if g == nil {
			return nil
		}
		if !sameVariants(f, g) {
			// The key's former variants: their counts stay with it.
			r := c.retiredRegion(f)
			atomic.StorePointer(s.region(i), r)
			return r
		}
		at = cur.region(j)
	}
	r := atomic.LoadPointer(at)
	if r == nil {
		r = c.alloc(regionWords(f))
		atomic.StorePointer(at, r)
	}
	atomic.StorePointer(s.region(i), r)
	return r
}

// retiredRegion is the region of f's variants among those retired for its
// key, allocated and retired if there is none; under mu.
func (c *UsageCounter) retiredRegion(f *flag) unsafe.Pointer {
	for _, old := range c.retired[f.key] {
		if sameVariants(old.of, f) {
			return old.region
		}
	}
	r := c.alloc(regionWords(f))
	c.retired[f.key] = append(c.retired[f.key], retired{region: r, of: f})
	return r
}

// regionWords is the size of a region for f, in words per stripe.
// Variants past what a stripe holds are counted as serving none.
func regionWords(f *flag) int { return min(slotVariant+len(f.vals), stripeWords) }

// slotOf is the slot of f's variant v.
func (f *flag) slotOf(v *variant) uintptr {
	i := (uintptr(unsafe.Pointer(v)) - uintptr(unsafe.Pointer(unsafe.SliceData(f.vals)))) / unsafe.Sizeof(variant{})
	if i >= stripeWords-slotVariant {
		return slotNone
	}
	return slotVariant + i
}

// fixedSlot is the slot of f's fixed variant, its default one: slotOf
// without the division.
func (f *flag) fixedSlot() uintptr {
	if f.defaultIdx >= stripeWords-slotVariant {
		return slotNone
	}
	return slotVariant + uintptr(f.defaultIdx)
}

// failSlot is the slot of an outcome that is not answered with a variant:
// an error, a variant of another type (a type mismatch), or no variant.
func failSlot(o outcome) uintptr {
	if o.err != nil || o.v != nil {
		return slotError
	}
	return slotNone
}

// alloc hands out words per stripe of counters, all zero; under mu.
func (c *UsageCounter) alloc(words int) unsafe.Pointer {
	now := c.now.Load()
	if l := c.free[words]; len(l) > 0 && l[0].since+quarantineSeconds <= now {
		p := l[0].p
		c.free[words] = l[1:]
		c.zero(p, words)
		return p
	}
	if c.chunk == nil || c.used+uintptr(words) > stripeWords {
		c.chunk, c.used = c.newChunk(), 0
	}
	p := unsafe.Add(c.chunk, c.used*8)
	c.used += uintptr(words)
	return p
}

// release frees a region for reuse after the quarantine; under mu.
func (c *UsageCounter) release(p unsafe.Pointer, words int) {
	if p == nil {
		return
	}
	c.free[words] = append(c.free[words], freed{p: p, since: c.now.Load()})
}

// zero sets words counters of every stripe of the region p to zero. An
// evaluation that adds meanwhile is counted in the window that follows
// or, if its word was zeroed after it, in the one that ended.
func (c *UsageCounter) zero(p unsafe.Pointer, words int) {
	for s := range c.stripes {
		st := unsafe.Add(p, s*stripeBytes)
		for w := range words {
			atomic.SwapUint64((*uint64)(unsafe.Add(st, w*8)), 0)
		}
	}
}

// Attach makes the counter count the evaluations of set, which is about
// to replace old (nil for none) as the set in force. The flags of set take
// over the counters of old's flags with the same key and variants; a
// flag whose variants changed starts new ones, and the counts of its
// former variants stay with the key. Attach returns the usage of the
// flags of old that set no longer has, which leave the counter: those
// evaluated in this window by key, and how many others (unused) there
// were. A set that replaces every flag of a million leaves no list of a
// million empty counts.
//
// A set is attached before anything evaluates it, as it is not safe for
// concurrent use until then; attaching a set that is attached already
// only makes it the one in force again.
func (c *UsageCounter) Attach(set, old *FlagSet) (removed map[string]FlagUsage, unused int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.current = set
	if set.use == c {
		return nil, 0
	}
	set.use = c
	set.regions = make([]unsafe.Pointer, len(set.index.slots))
	for i, f := range set.index.slots {
		if f == nil {
			continue
		}
		var r unsafe.Pointer
		if old != nil && old.use == c {
			if prev, j := old.index.lookup(f.key); prev != nil {
				r = c.takeOver(f, prev, atomic.LoadPointer(old.region(j)))
			}
		}
		set.regions[i] = r
	}
	if old == nil || old.use != c {
		return nil, 0
	}
	now := time.Now().Unix()
	for j, f := range old.index.slots {
		if f == nil || set.index.get(f.key) != nil {
			continue
		}
		r := atomic.LoadPointer(old.region(uint64(j)))
		if u := c.flagUsage(f, r, now); u.Evaluations > 0 {
			if removed == nil {
				removed = map[string]FlagUsage{}
			}
			removed[f.key] = u
		} else {
			unused++
		}
		c.drop(f, r)
	}
	return removed, unused
}

// takeOver is the region of f, given prev, the flag of the same key in
// the set f replaces, and prev's region r; under mu.
func (c *UsageCounter) takeOver(f, prev *flag, r unsafe.Pointer) unsafe.Pointer {
	if sameVariants(prev, f) {
		return r
	}
	// The variants changed: prev's region is retired, unless it was never
	// used; and f's variants may be those of a region retired earlier.
	list := c.retired[f.key]
	var mine unsafe.Pointer
	for i, old := range list {
		if sameVariants(old.of, f) {
			mine = old.region
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if r != nil {
		list = append(list, retired{region: r, of: prev})
	}
	if len(list) == 0 {
		delete(c.retired, f.key)
	} else {
		c.retired[f.key] = list
	}
	return mine
}

func sameVariants(a, b *flag) bool {
	if len(a.vals) != len(b.vals) {
		return false
	}
	if len(a.vals) > 0 && &a.vals[0] == &b.vals[0] {
		return true
	}
	for i := range a.vals {
		if a.vals[i].name != b.vals[i].name {
			return false
		}
	}
	return true
}

// drop frees the counters of a flag that has left the set, whose region
// was r; under mu.
func (c *UsageCounter) drop(f *flag, r unsafe.Pointer) {
	c.release(r, regionWords(f))
	for _, old := range c.retired[f.key] {
		c.release(old.region, regionWords(old.of))
	}
	delete(c.retired, f.key)
}

// UsageSnapshot is what a UsageCounter counted since Since.
type UsageSnapshot struct {
	Since time.Time
	// Flags has an entry for every flag of the set in force.
	Flags map[string]FlagUsage
	// Missing are the keys asked for that the set in force did not
	// define, with the number of times; at most MaxMissingKeys of them.
	Missing map[string]uint64
	// MissingDropped is how many more distinct missing keys there were.
	// It is exact for a few and an estimate within about 1% for many: the
	// keys are not kept, a bitmap of their hashes is.
	MissingDropped uint64
}

// FlagUsage is how one flag was evaluated.
type FlagUsage struct {
	Evaluations uint64
	// Variants counts the evaluations that served each variant; nil when
	// none did.
	Variants map[string]uint64
	// Errors counts the evaluations that failed, type mismatches
	// included. Evaluations that served no variant without an error (a
	// disabled flag, no default variant) are in Evaluations only.
	Errors uint64
	// LastEvaluated is the second of the last evaluation, in UTC; zero
	// when there was none.
	LastEvaluated time.Time
}

// Snapshot returns the counts of the window, for the set attached last.
// Evaluations that run meanwhile are counted in it or not, but every
// flag's counts agree with each other.
func (c *UsageCounter) Snapshot() UsageSnapshot {
	sec := time.Now().Unix()
	c.mu.Lock()
	defer c.mu.Unlock()
	out := UsageSnapshot{Since: c.since, Flags: map[string]FlagUsage{}, Missing: map[string]uint64{}}
	if set := c.current; set != nil {
		for i, f := range set.index.slots {
			if f != nil {
				out.Flags[f.key] = c.flagUsage(f, atomic.LoadPointer(set.region(uint64(i))), sec)
			}
		}
	}
	t := c.missing()
	for key, e := range t.keys {
		if n := c.sum(e.region, 0); n > 0 {
			out.Missing[key] += n
		}
	}
	if c.prevMiss != nil {
		for key, e := range c.prevMiss.keys {
			if n := c.sum(e.region, 0) - c.prevBase[e]; n > 0 {
				out.Missing[key] += n
			}
		}
	}
	out.MissingDropped = t.droppedKeys()
	return out
}

// flagUsage adds up the counters of f, whose region is r, and those of
// the key's former variants, stamping sec on those whose counts have
// changed since their stamp; under mu.
func (c *UsageCounter) flagUsage(f *flag, r unsafe.Pointer, sec int64) FlagUsage {
	var u FlagUsage
	var last uint64
	add := func(r unsafe.Pointer, of *flag) {
		if r == nil {
			return
		}
		var total uint64
		for s := range c.stripes {
			st := unsafe.Add(r, s*stripeBytes)
			word := func(i int) uint64 { return atomic.LoadUint64((*uint64)(unsafe.Add(st, i*8))) }
			e, none := word(slotError), word(slotNone)
			u.Errors += e
			total += e + none
			for i := range regionWords(of) - slotVariant {
				if n := word(slotVariant + i); n > 0 {
					if u.Variants == nil {
						u.Variants = map[string]uint64{}
					}
					u.Variants[of.vals[i].name] += n
					total += n
				}
			}
		}
		u.Evaluations += total
		stamp := (*uint64)(r)
		old := atomic.LoadUint64(stamp)
		if uint32(old) != uint32(total) || old == 0 && total != 0 {
			old = uint64(sec)<<32 | uint64(uint32(total))
			atomic.StoreUint64(stamp, old)
		}
		last = max(last, old>>32)
	}
	for _, old := range c.retired[f.key] {
		add(old.region, old.of)
	}
	add(r, f)
	if last > 0 {
		u.LastEvaluated = time.Unix(int64(last), 0).UTC()
	}
	return u
}

// sum adds up word w of every stripe of a region.
func (c *UsageCounter) sum(p unsafe.Pointer, w int) uint64 {
	var n uint64
	for s := range c.stripes {
		n += atomic.LoadUint64((*uint64)(unsafe.Add(p, s*stripeBytes+w*8)))
	}
	return n
}

// Reset starts a new window at now: every count starts again from zero.
// An evaluation that runs meanwhile is counted in one window or the
// other.
func (c *UsageCounter) Reset(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.since = now
	if set := c.current; set != nil {
		for i, f := range set.index.slots {
			if f == nil {
				continue
			}
			if r := atomic.LoadPointer(set.region(uint64(i))); r != nil {
				c.zero(r, regionWords(f))
			}
			for _, old := range c.retired[f.key] {
				c.zero(old.region, regionWords(old.of))
			}
		}
	}
	// The previous window's table goes; this one's becomes the previous,
	// with its counts now as the base of late evaluations.
	if c.prevMiss != nil {
		for _, e := range c.prevMiss.keys {
			c.release(e.region, 1)
		}
	}
	c.emptyMissCache()
	t := (*missingTable)(atomic.SwapPointer(&c.miss, unsafe.Pointer(newMissingTable())))
	c.prevMiss, c.prevBase = t, make(map[*missingEntry]uint64, len(t.keys))
	for _, e := range t.keys {
		c.prevBase[e] = c.sum(e.region, 0)
	}
}

// missingTable is one window's missing keys.
type missingTable struct {
	// keys, n and dropped are under UsageCounter.mu.
	keys    map[string]*missingEntry
	dropped []uint64 // a bitmap of dropped keys' hashes, once one is
	seed    maphash.Seed
}

type missingEntry struct {
	key string
	// seen is the address of the bytes of a string found equal to key,
	// which it keeps alive: a string at that address is key.
	seen   unsafe.Pointer // atomic
	region unsafe.Pointer // one word per stripe
}

// noEntry fills the empty slots of missCache: its bytes are nobody's key.
var noEntry = &missingEntry{seen: unsafe.Pointer(new(byte))}

func (c *UsageCounter) emptyMissCache() {
	for i := range c.missCache {
		atomic.StorePointer(&c.missCache[i], unsafe.Pointer(noEntry))
	}
}

func (c *UsageCounter) missing() *missingTable {
	return (*missingTable)(atomic.LoadPointer(&c.miss))
}

func newMissingTable() *missingTable {
	return &missingTable{keys: map[string]*missingEntry{}, seed: maphash.MakeSeed()}
}

// tallyMissing counts an evaluation of key, which s does not define, when
// s is attached and the key was seen at the same address before; it
// reports whether missingSlow must count it instead.
func (s *FlagSet) tallyMissing(key string) bool {
	c := s.use
	if c == nil {
		return false
	}
	k := unsafe.Pointer(unsafe.StringData(key))
	e := (*missingEntry)(atomic.LoadPointer(&c.missCache[uint64(uintptr(k))*golden>>(64-missCacheBits)]))
	if atomic.LoadPointer(&e.seen) != k || len(e.key) != len(key) {
		return true
	}
	var here byte
	atomic.AddUint64((*uint64)(unsafe.Add(e.region, atomic.LoadUint32(&c.remap[bucket(&here)]))), 1)
	return false
}

// missingSlow counts an evaluation of key, which the set does not define,
// keeping the key when the window has room for it.
//
//go:noinline
func (c *UsageCounter) missingSlow(key string) {
	c.mu.Lock()
	t := c.missing()
	e := t.keys[key]
	if e == nil {
		if len(t.keys) >= MaxMissingKeys {
			t.drop(key)
			c.mu.Unlock()
			return
		}
		e = &missingEntry{key: strings.Clone(key), region: c.alloc(1)}
		t.keys[e.key] = e
	}
	// Under mu, so that Reset, which empties the cache, cannot be
	// followed by an entry of the window it ended.
	k := unsafe.Pointer(unsafe.StringData(key))
	atomic.StorePointer(&e.seen, k)
	atomic.StorePointer(&c.missCache[uint64(uintptr(k))*golden>>(64-missCacheBits)], unsafe.Pointer(e))
	c.mu.Unlock()
	var here byte
	atomic.AddUint64((*uint64)(unsafe.Add(e.region, atomic.LoadUint32(&c.remap[bucket(&here)]))), 1)
}

const droppedBits = 1 << 16

// drop notes a key that did not fit; under UsageCounter.mu.
func (t *missingTable) drop(key string) {
	if t.dropped == nil {
		t.dropped = make([]uint64, droppedBits/64)
	}
	h := maphash.String(t.seed, key) % droppedBits
	t.dropped[h/64] |= 1 << (h % 64)
}

// droppedKeys estimates the distinct keys drop saw by linear counting:
// with z of m bits still zero, -m·ln(z/m). For the few keys a window
// usually drops it is exact; a full bitmap is reported as what fills it.
func (t *missingTable) droppedKeys() uint64 {
	if t.dropped == nil {
		return 0
	}
	set := 0
	for _, w := range t.dropped {
		set += bits.OnesCount64(w)
	}
	m := float64(droppedBits)
	zero := m - float64(set)
	if zero == 0 {
		zero = 1
	}
	return uint64(math.Round(-m * math.Log(zero/m)))
}
