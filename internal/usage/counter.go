package usage

import (
	"slices"
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
// index an evaluation reports.
type Flags interface {
	// Len is how many flags there are, at indexes 0 to Len()-1.
	Len() int
	// FlagKey is the key of the flag at index i.
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
	mu      sync.Mutex
	since   time.Time
	current *Table // the table attached last: the set in force
	// The counts of a key are in the cell of its flag in the table in
	// force; retired holds, by key, the cells of variants the key had
	// before, which stay with the key while it is in force.
	retired map[string][]retiredCell
	missing missingKeys
}

// retiredCell is a key's counts of a list of variants it no longer has.
type retiredCell struct {
	*cell
	names []string
}

// NewCounter returns a counter whose window starts at now.
func NewCounter(now time.Time) *Counter {
	c := &Counter{since: now, retired: map[string][]retiredCell{}}
	c.missing.reset(nil)
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
	if old == nil {
		return nil, 0
	}
	sec := time.Now().Unix()
	for j := range old.flags.Len() {
		key := old.flags.FlagKey(j)
		i := t.flags.Index(key)
		if i >= 0 {
			if k := old.cells[j].Load(); k != nil {
				t.cells[i].Store(c.follow(key, k, variantNames(old.flags, j), t.flags, i))
			}
			continue
		}
		// A key never evaluated has nothing to count: keyUsage would
		// only list its variants.
		if old.cells[j].Load() == nil && len(c.retired[key]) == 0 {
			unused++
			continue
		}
		if u := c.keyUsage(old, j, sec); u.Evaluations > 0 || u.Bulk > 0 {
			if removed == nil {
				removed = map[string]FlagUsage{}
			}
			removed[key] = u
		} else {
			unused++
		}
		delete(c.retired, key)
	}
	return removed, unused
}

// follow returns the cell that counts key, whose counts of variants names
// are k, as the flag at index i of flags: k when the flag has those
// variants; else k is retired, and the key's retired cell of the flag's
// variants, if any, comes back (nil: a cell is made on first evaluation).
func (c *Counter) follow(key string, k *cell, names []string, flags Flags, i int) *cell {
	if sameVariants(names, flags, i) {
		return k
	}
	rs := append(c.retired[key], retiredCell{k, names})
	for j, r := range rs {
		if sameVariants(r.names, flags, i) {
			c.retired[key] = slices.Delete(rs, j, j+1)
			return r.cell
		}
	}
	c.retired[key] = rs
	return nil
}

func variantNames(flags Flags, i int) []string {
	names := make([]string, flags.VariantCount(i))
	for j := range names {
		names[j] = flags.VariantName(i, j)
	}
	return names
}

func sameVariants(names []string, flags Flags, i int) bool {
	if flags.VariantCount(i) != len(names) {
		return false
	}
	for j, name := range names {
		if flags.VariantName(i, j) != name {
			return false
		}
	}
	return true
}

// cellFor returns the cell that an evaluation of the flag at index i of t
// adds to, making it on the key's first evaluation: the cell of the key
// in the set in force when the flag has its variants there, else the
// key's retired cell of its variants. It returns nil when the set in
// force does not have the key, whose evaluations are no longer counted.
func (c *Counter) cellFor(t *Table, i int) *cell {
	c.mu.Lock()
	defer c.mu.Unlock()
	if k := t.cells[i].Load(); k != nil {
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
	k := cur.cells[j].Load()
	if k == nil {
		k = &cell{}
		cur.cells[j].Store(k)
	}
	if t != cur && !sameVariants(variantNames(cur.flags, j), t.flags, i) {
		k = c.former(key, t.flags, i)
	}
	t.cells[i].Store(k)
	return k
}

// former returns the key's retired cell of the variants of the flag at
// index i of flags, making it if there is none.
func (c *Counter) former(key string, flags Flags, i int) *cell {
	for _, r := range c.retired[key] {
		if sameVariants(r.names, flags, i) {
			return r.cell
		}
	}
	r := retiredCell{&cell{}, variantNames(flags, i)}
	c.retired[key] = append(c.retired[key], r)
	return r.cell
}

// keyUsage adds up the counts of the key of the flag at index i of t, the
// table in force or the one it replaced, and its retired cells, stamping
// sec on those that changed.
func (c *Counter) keyUsage(t *Table, i int, sec int64) FlagUsage {
	var u FlagUsage
	key := t.flags.FlagKey(i)
	last := addCell(&u, t.cells[i].Load(), variantNames(t.flags, i), sec)
	for _, r := range c.retired[key] {
		last = max(last, addCell(&u, r.cell, r.names, sec))
	}
	if last > 0 {
		u.LastEvaluated = time.Unix(last, 0).UTC()
	}
	return u
}

// addCell adds the counts of k, of variants names, to u, and returns the
// second of the last evaluation it counted. A nil cell adds nothing.
func addCell(u *FlagUsage, k *cell, names []string, sec int64) int64 {
	if k == nil {
		return 0
	}
	n := len(names)
	byOutcome := make([]uint64, outcomes(n))
	total := k.counts(byOutcome)
	for j, name := range names {
		if byOutcome[j] > 0 {
			if u.Variants == nil {
				u.Variants = map[string]uint64{}
			}
			u.Variants[name] += byOutcome[j]
		}
	}
	bulk := byOutcome[bulkOutcome(n)]
	u.Bulk += bulk
	u.Evaluations += total - bulk
	for code := range numErrorCodes {
		if e := byOutcome[errorOutcome(n, code)]; e > 0 {
			if u.ErrorCodes == nil {
				u.ErrorCodes = map[string]uint64{}
			}
			u.ErrorCodes[code.String()] += e
			u.Errors += e
		}
	}
	// A bulk evaluation is a read too: it stamps LastEvaluated.
	return k.note(total, sec)
}

// Tick notes that the flags whose counts changed since the last Tick
// were evaluated at now, which is the resolution LastEvaluated has: an
// evaluation reads no clock.
func (c *Counter) Tick(now time.Time) {
	sec := now.Unix()
	c.mu.Lock()
	defer c.mu.Unlock()
	var byOutcome []uint64 // one buffer for every cell: Tick runs every second
	c.eachCell(func(k *cell, n int) {
		byOutcome = slices.Grow(byOutcome[:0], outcomes(n))[:outcomes(n)]
		clear(byOutcome)
		k.note(k.counts(byOutcome), sec)
	})
}

// eachCell calls f for every cell of the table in force and every retired
// cell, with its number of variants; under c.mu.
func (c *Counter) eachCell(f func(k *cell, variants int)) {
	if t := c.current; t != nil {
		for i := range t.cells {
			if k := t.cells[i].Load(); k != nil {
				f(k, t.flags.VariantCount(i))
			}
		}
	}
	for _, rs := range c.retired {
		for _, r := range rs {
			f(r.cell, len(r.names))
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
		for i := range t.flags.Len() {
			u.Flags[t.flags.FlagKey(i)] = c.keyUsage(t, i, sec)
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
	c.eachCell(func(k *cell, _ int) { k.zero() })
	c.missing.reset(c.missing.window.Load().tallies)
}
