package usage

import (
	"sync"
	"time"
)

// Usage is how the flags were evaluated since Since: which were, how often,
// with which variants, and which keys were asked for that the flags do not
// define. It marshals to JSON and back unchanged.
type Usage struct {
	// Since is when counting started: the provider's first Init, or the
	// last reset.
	Since time.Time `json:"since"`
	// Flags has an entry for every flag in force, evaluated or not. A
	// flag that a flag set update removes leaves it; one that stays keeps
	// its counts.
	Flags map[string]FlagUsage `json:"flags"`
	// Missing counts the evaluations of keys that the flags in force did
	// not define, by key; at most MaxMissingKeys keys.
	Missing map[string]uint64 `json:"missing"`
	// MissingDropped is how many more distinct missing keys were asked
	// for: exact for a few, within about 1% for many.
	MissingDropped uint64 `json:"missingDropped,omitempty"`
}

// FlagUsage is how one flag was evaluated.
type FlagUsage struct {
	Evaluations uint64 `json:"evaluations"`
	// Variants counts the evaluations that served each variant, by
	// name; empty when none did.
	Variants map[string]uint64 `json:"variants,omitempty"`
	// Errors counts the evaluations that failed (PARSE_ERROR, GENERAL,
	// TYPE_MISMATCH: the caller's default was served), and ErrorCodes
	// the same evaluations by OpenFeature error code, which add up to
	// Errors. Evaluations of a disabled flag, or of one that chose no
	// variant, served the caller's default without an error: they are in
	// Evaluations alone.
	Errors     uint64            `json:"errors,omitempty"`
	ErrorCodes map[string]uint64 `json:"errorCodes,omitempty"`
	// Bulk counts the flag's evaluations by a bulk evaluation (every flag
	// for one context, Provider.EvaluateAll and OFREP's bulk endpoint),
	// which are not in Evaluations: a flag that code never asks for but a
	// front-end reads through a bulk request has Evaluations 0 and Bulk
	// above 0; a flag no one reads has both 0.
	Bulk uint64 `json:"bulk,omitempty"`
	// LastEvaluated is the second of the last evaluation, in UTC: when
	// the provider, which looks once a second while it runs, or a
	// snapshot first saw the counts change; zero when the flag was not
	// evaluated.
	LastEvaluated time.Time `json:"lastEvaluated,omitzero"`
}

// ErrorCode is why an evaluation of a flag failed: the OpenFeature error
// codes an evaluation of a flag that exists can answer. Each has a counter
// of its own, so that counting a failure stays one atomic add.
type ErrorCode uint8

const (
	// General: targeting named no variant, or anything not below.
	General ErrorCode = iota
	// ParseError: the flag's definition or rule cannot be used.
	ParseError
	// TypeMismatch: the variant is not of the type asked for.
	TypeMismatch

	numErrorCodes
)

var errorCodeNames = [numErrorCodes]string{General: "GENERAL", ParseError: "PARSE_ERROR", TypeMismatch: "TYPE_MISMATCH"}

// String is the code as OpenFeature spells it, the key of
// FlagUsage.ErrorCodes.
func (c ErrorCode) String() string {
	if c < numErrorCodes {
		return errorCodeNames[c]
	}
	return errorCodeNames[General]
}

// MaxMissingKeys is how many distinct missing keys a window keeps.
const MaxMissingKeys = 1000

// Flags is a flag set as the counter sees it: its flags by index, the
// index an evaluation reports. Some indexes may hold no flag.
type Flags interface {
	// Slots is one more than the largest index.
	Slots() int
	// FlagKey is the key of the flag at index i, "" when there is none.
	FlagKey(i int) string
	// VariantCount is how many variants the flag at index i has.
	VariantCount(i int) int
	// VariantName is the name of variant j of the flag at index i.
	VariantName(i, j int) string
	// Index is the index of the flag with key, -1 when there is none.
	Index(key string) int
}

// Counter counts the evaluations of the flag sets attached to it, one
// after the other, in a window that starts when it is made or reset.
type Counter struct {
	shards shards

	mu      sync.Mutex
	since   time.Time
	current *Table // the table attached last: the set in force
	// keys holds the counts of every key that has been evaluated in the
	// set in force; a key that was not has no entry.
	keys    map[string]*keyCounts
	missing missingKeys
}

// keyCounts are the counts of one key: those of the variants the key has
// in the set in force, and those of variants it had before, which stay
// with the key while it is in force.
type keyCounts struct {
	current *counts
	retired []*counts
}

// NewCounter returns a counter whose window starts at now.
func NewCounter(now time.Time) *Counter {
	c := &Counter{since: now, keys: map[string]*keyCounts{}, shards: newShards()}
	c.missing.reset(c.shards.n)
	return c
}

// Since is when the window began.
func (c *Counter) Since() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.since
}

// Start says that the window began at now rather than when the counter
// was made: a provider counts from its first Init.
func (c *Counter) Start(now time.Time) {
	c.mu.Lock()
	c.since = now
	c.mu.Unlock()
}

// Attach makes t's set the one in force, which the counts of Snapshot
// are of. Each key of the set takes over the counts it had in the set t
// replaces. Attach returns the usage of the evaluated flags that left,
// by key, and how many others left (unused). A table is attached before
// anything evaluates its set; attaching the table in force again changes
// nothing.
func (c *Counter) Attach(t *Table) (removed map[string]FlagUsage, unused int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.current
	if old == t {
		return nil, 0
	}
	c.current = t
	left := 0
	if old != nil {
		left = leaving(old.flags, t.flags)
	}
	sec := time.Now().Unix()
	for key, kc := range c.keys {
		i := t.flags.Index(key)
		if i < 0 {
			if u := kc.usage(sec); u.Evaluations > 0 {
				if removed == nil {
					removed = map[string]FlagUsage{}
				}
				removed[key] = u
			}
			delete(c.keys, key)
			continue
		}
		kc.follow(t.flags, i)
		if kc.current != nil {
			t.slots[i].Store(kc.current)
		}
	}
	return removed, max(left-len(removed), 0)
}

// leaving is how many flags of old are not in next.
func leaving(old, next Flags) int {
	n := 0
	for i := range old.Slots() {
		if key := old.FlagKey(i); key != "" && next.Index(key) < 0 {
			n++
		}
	}
	return n
}

// follow makes the key's current counts those of the variants of the flag
// at index i of flags, retiring the counts of the variants it had.
func (kc *keyCounts) follow(flags Flags, i int) {
	if kc.current == nil || kc.current.of(flags, i) {
		return
	}
	kc.retired = append(kc.retired, kc.current)
	kc.current = nil
	for j, r := range kc.retired {
		if r.of(flags, i) {
			kc.current = r
			kc.retired = append(kc.retired[:j], kc.retired[j+1:]...)
			return
		}
	}
}

// countsFor returns the counts that an evaluation of the flag at index i of
// t adds to, making them on the key's first evaluation: the key's current
// counts when the flag has the variants of the set in force, else those of
// its former variants. It returns nil when the set in force does not have
// the key, whose evaluations are no longer counted.
func (c *Counter) countsFor(t *Table, i int) *counts {
	c.mu.Lock()
	defer c.mu.Unlock()
	if k := t.slots[i].Load(); k != nil {
		return k
	}
	cur := c.current
	if cur == nil {
		return nil
	}
	key := t.flags.FlagKey(i)
	j := cur.flags.Index(key)
	if j < 0 {
		return nil
	}
	kc := c.keys[key]
	if kc == nil {
		kc = &keyCounts{}
		c.keys[key] = kc
	}
	if kc.current == nil {
		kc.current = newCounts(cur.flags, j, c.shards.n)
		cur.slots[j].Store(kc.current)
	}
	k := kc.current
	if !k.of(t.flags, i) {
		k = kc.former(t.flags, i, c.shards.n)
	}
	t.slots[i].Store(k)
	return k
}

// former returns the key's retired counts of the variants of the flag at
// index i of flags, making them if there are none.
func (kc *keyCounts) former(flags Flags, i, shards int) *counts {
	for _, r := range kc.retired {
		if r.of(flags, i) {
			return r
		}
	}
	r := newCounts(flags, i, shards)
	kc.retired = append(kc.retired, r)
	return r
}

// usage adds up the key's counts, stamping sec on those that changed.
func (kc *keyCounts) usage(sec int64) FlagUsage {
	var u FlagUsage
	last := kc.current.add(&u, sec)
	for _, r := range kc.retired {
		last = max(last, r.add(&u, sec))
	}
	if last > 0 {
		u.LastEvaluated = time.Unix(last, 0).UTC()
	}
	return u
}

// Tick notes that the flags whose counts changed since the last Tick
// were evaluated at now, which is the resolution LastEvaluated has: an
// evaluation reads no clock.
func (c *Counter) Tick(now time.Time) {
	sec := now.Unix()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, kc := range c.keys {
		kc.current.stamp(sec)
		for _, r := range kc.retired {
			r.stamp(sec)
		}
	}
}

// Snapshot returns the counts of the window, for the set in force at now.
// Evaluations that run meanwhile are counted in it or not, but each
// flag's counts agree with each other.
func (c *Counter) Snapshot(now time.Time) Usage {
	sec := now.Unix()
	c.mu.Lock()
	defer c.mu.Unlock()
	u := Usage{Since: c.since, Flags: map[string]FlagUsage{}}
	if t := c.current; t != nil {
		for i := range t.flags.Slots() {
			key := t.flags.FlagKey(i)
			if key == "" {
				continue
			}
			var fu FlagUsage
			if kc := c.keys[key]; kc != nil {
				fu = kc.usage(sec)
			}
			u.Flags[key] = fu
		}
	}
	u.Missing, u.MissingDropped = c.missing.snapshot()
	return u
}

// Reset starts a new window at now: every count starts again from zero.
// An evaluation that runs meanwhile is counted in one window or the
// other.
func (c *Counter) Reset(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.since = now
	for _, kc := range c.keys {
		kc.current.zero()
		for _, r := range kc.retired {
			r.zero()
		}
	}
	c.missing.reset(c.shards.n)
}
