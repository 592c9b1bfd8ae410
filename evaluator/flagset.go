package evaluator

import (
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/flagsnap/flagsnap/fractional"
)

// FlagSet is a compiled flag set, safe for concurrent use. Its flags never
// change once it is loaded; the one thing an evaluation writes is the error
// it keeps for a key the set does not define (see NotFound), by replacing
// a map, never writing into one.
type FlagSet struct {
	index    flagIndex // the flags, by key
	metadata map[string]any
	absent   *flag // what evaluating a key the set does not define answers from
	problems []FlagProblem
	version  fractional.Version
	clock    func() time.Time
	enrich   map[string]any
	reuseKey uint64 // what else a flag's compilation depends on (see WithPrevious)
	// id tells flag sets apart. A set that took flags from the one whose
	// id is from (WithPrevious) lists the flags it compiled in fresh and
	// counts the others in reused: Changes from that set needs no more.
	id, from uint64
	fresh    []*flag
	reused   int
	// missing is shared by the sets WithEnrichment makes, which have the
	// same keys.
	missing *missingKeys
	// layers is nil but for a set made by Layered.
	layers *layering
	// brokenWhole and brokenPartly are BrokenFlags' counts.
	brokenWhole, brokenPartly int
}

// lastSetID is the id of the flag set made last.
var lastSetID atomic.Uint64

// flag is one compiled flag. Its size is most of the memory of a large set:
// what is cheap to work out at evaluation is not kept.
type flag struct {
	key string
	// keyRef is the key boxed once, for $flagd.flagKey: nil for a flag
	// without a rule, which cannot read it.
	keyRef   any
	variants map[string]int // by name, only past maxScannedVariants
	// vals are the variants; nothing writes to them once the flag is
	// compiled.
	vals     []variant
	rule     *node
	broken   *Error
	metadata map[string]any // flag metadata over flag-set metadata
	// fingerprint is a hash of what the flag does (see
	// loader.fingerprint): it only tells a flag from the same key's
	// previous definition, in this process.
	fingerprint uint64
	// written is a hash of the definition as written, and reusable says
	// that it compiled without a problem or a warning: a later flag set
	// whose definition of the key is written the same takes this flag
	// as it is (see WithPrevious).
	written    uint64
	defaultIdx int32 // -1: no default variant
	disabled   bool
	reusable   bool
}

// variant is one variant value.
type variant struct {
	name string
	// obj is the value: a bool, a string, an int64 for a whole number
	// (else a float64), an object or array in plain JSON form, or nil.
	// Boxed once at load, so that reading it allocates nothing.
	obj any
}

// kind is the variant's type: kBool, kNum, kStr, kObj (objects and
// arrays) or kNull.
func (v *variant) kind() kind {
	switch v.obj.(type) {
	case nil:
		return kNull
	case bool:
		return kBool
	case int64, float64:
		return kNum
	case string:
		return kStr
	}
	return kObj
}

// Option configures how a flag set is loaded.
type Option func(*config)

type config struct {
	version fractional.Version
	strict  bool
	logger  *slog.Logger
	clock   func() time.Time
	prev    *FlagSet
}

// WithPrevious names the flag set that the document replaces: a flag
// whose definition is written exactly as it was there, in a document
// whose $evaluators and metadata are the same, is taken from it as it is
// instead of being compiled again, so that an update that changes a few
// flags of many costs little more than decoding the document. Flags that
// had a problem or a warning are compiled again, to be reported again.
func WithPrevious(set *FlagSet) Option {
	return func(c *config) { c.prev = set }
}

// WithFractionalVersion selects the bucketing of the fractional operator
// (fractional.V2 by default, which is what flagd uses today, and the
// provider's default too).
func WithFractionalVersion(v fractional.Version) Option {
	return func(c *config) { c.version = v }
}

// WithStrict rejects the whole document when any flag has a problem, as
// flagd does, instead of loading the other flags.
func WithStrict() Option {
	return func(c *config) { c.strict = true }
}

// WithLogger receives the load-time warnings: broken flags, dropped
// metadata, deprecated operators. Nothing is logged without it. Each record
// has the attributes "flag" (the flag's key, absent for the flag set's own
// metadata) and "pointer", the JSON Pointer of the part of the document it
// concerns (see FlagProblem.Path).
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.logger = l
		}
	}
}

// withClock sets the clock behind $flagd.timestamp (time.Now by default),
// for tests.
func withClock(now func() time.Time) Option {
	return func(c *config) {
		if now != nil {
			c.clock = now
		}
	}
}
