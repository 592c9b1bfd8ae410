package evaluator

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"unsafe"
)

// Reason says how a resolution's value was chosen; the names are
// OpenFeature's.
type Reason uint8

const (
	// ReasonStatic: the flag has no targeting; its default variant applies.
	ReasonStatic Reason = iota + 1
	// ReasonDefault: targeting chose nothing (or the flag has no default
	// variant); the default variant or the caller's default applies.
	ReasonDefault
	// ReasonTargetingMatch: targeting chose the variant.
	ReasonTargetingMatch
	// ReasonDisabled: the flag is disabled; the caller's default applies.
	ReasonDisabled
	// ReasonError: see the resolution's error; the caller's default applies.
	ReasonError
)

var reasonNames = [...]string{
	ReasonStatic:         "STATIC",
	ReasonDefault:        "DEFAULT",
	ReasonTargetingMatch: "TARGETING_MATCH",
	ReasonDisabled:       "DISABLED",
	ReasonError:          "ERROR",
}

// String is the OpenFeature spelling of the reason.
func (r Reason) String() string {
	if int(r) < len(reasonNames) && reasonNames[r] != "" {
		return reasonNames[r]
	}
	return fmt.Sprintf("Reason(%d)", uint8(r))
}

// Resolution is the answer for one flag. On error, or when the flag is
// disabled or has no applicable variant, Value is the caller's default.
// Metadata is shared with the flag set and must not be modified.
type Resolution[T any] struct {
	Value    T
	Variant  string
	Reason   Reason
	Err      *Error
	Metadata map[string]any
}

// outcome is a resolution before the value is read as a type.
type outcome struct {
	v      *variant
	reason Reason
	err    *Error
	meta   map[string]any
}

func (f *flag) defaultOutcome(reason Reason) outcome {
	if f.defaultIdx < 0 {
		return outcome{reason: ReasonDefault, meta: f.metadata}
	}
	return outcome{v: &f.vals[f.defaultIdx], reason: reason, meta: f.metadata}
}

// evaluateFlag evaluates f; t records the evaluation for Explain.
func (s *FlagSet) evaluateFlag(f *flag, ctx map[string]any, t *tracer) outcome {
	switch {
	case f == nil:
		return outcome{reason: ReasonError, err: ErrFlagNotFound, meta: s.metadata}
	case f.disabled:
		return outcome{reason: ReasonDisabled, meta: f.metadata}
	case f.broken != nil:
		return outcome{reason: ReasonError, err: f.broken, meta: f.metadata}
	case f.rule == nil:
		return f.defaultOutcome(ReasonStatic)
	}
	// Field by field: a composite literal is built in a temporary and copied
	// in wide moves that the processor cannot forward from its stores.
	var e env
	e.fs, e.f, e.ctx, e.cur.k, e.trace = s, f, ctx, kRoot, t
	r := e.eval(f.rule)
	if e.err != nil {
		if _, ok := e.err.(*CompileError); ok {
			// A broken part of the rule, reached: the problem says where.
			return f.fail(CodeParseError, "", e.err)
		}
		return f.fail(CodeParseError, "targeting failed", e.err)
	}
	var name string
	switch r.k {
	case kNull:
		return f.defaultOutcome(ReasonDefault)
	case kStr:
		name = r.str()
	case kBool:
		name = strconv.FormatBool(r.b)
	case kNum:
		if math.IsNaN(r.n) || math.IsInf(r.n, 0) {
			return f.fail(CodeParseError, fmt.Sprintf("targeting returned %v", r.n), nil)
		}
		name = variantName(r)
	default:
		return f.fail(CodeGeneral, "targeting returned an array or an object, which cannot name a variant", nil)
	}
	v := f.variant(name)
	if v == nil {
		return f.fail(CodeGeneral, fmt.Sprintf("targeting returned %q, which is not a variant", name), nil)
	}
	return outcome{v: v, reason: ReasonTargetingMatch, meta: f.metadata}
}

// maxScannedVariants is how many variants are searched one by one. Flags
// rarely have more than a handful, and comparing a few strings is cheaper
// than hashing one, and holds no map per flag.
const maxScannedVariants = 8

// variant finds a variant by name. A rule's constants that name a variant
// share its string (see shareNames), so the name a rule returned is first
// looked for by its address, which compares no bytes.
func (f *flag) variant(name string) *variant {
	if f.variants != nil {
		if i, ok := f.variants[name]; ok {
			return &f.vals[i]
		}
		return nil
	}
	p := unsafe.StringData(name)
	for i := range f.vals {
		if unsafe.StringData(f.vals[i].name) == p && len(f.vals[i].name) == len(name) {
			return &f.vals[i]
		}
	}
	for i := range f.vals {
		if f.vals[i].name == name {
			return &f.vals[i]
		}
	}
	return nil
}

func (f *flag) fail(code ErrorCode, msg string, cause error) outcome {
	return outcome{reason: ReasonError, err: &Error{Code: code, Flag: f.key, Msg: msg, Err: cause}, meta: f.metadata}
}

// variantName spells a number the way flagd's JSON encoding of the rule's
// result does, since that text is what it looks up among the variants:
// plain decimals, and exponents below 1e-6 or from 1e21 on.
func variantName(v value) string {
	if v.goInt() {
		return "0"
	}
	f := v.n
	abs := math.Abs(f)
	if abs == 0 || (abs >= 1e-6 && abs < 1e21) {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	s := strconv.FormatFloat(f, 'e', -1, 64)
	// Two-digit negative exponents lose their leading zero: 1e-07 → 1e-7.
	if n := len(s); n >= 4 && s[n-4] == 'e' && s[n-3] == '-' && s[n-2] == '0' {
		s = s[:n-2] + s[n-1:]
	}
	return s
}

// Each Resolve method has a ...Fields twin that returns the resolution's
// fields one by one, for callers that copy them into a type of their own,
// as a provider does into OpenFeature's resolution detail. A struct of five
// fields comes back from a call in registers, and the caller stores them in
// words and copies the struct in wider moves, which the processor cannot
// forward from the stores: that stall cost more than half of a static
// flag's evaluation. Fields returned separately are used where they arrive.

// answer makes a Resolution of the fields a ...Fields method returns.
func answer[T any](v T, variant string, reason Reason, err *Error, meta map[string]any) Resolution[T] {
	return Resolution[T]{Value: v, Variant: variant, Reason: reason, Err: err, Metadata: meta}
}

// typed is the answer for o when its variant is not of the requested type
// or there is none: def with the reason and error that apply.
func typed[T any](key string, o outcome, def T, want string) (T, string, Reason, *Error, map[string]any) {
	if o.v == nil || o.err != nil {
		return def, "", o.reason, o.err, o.meta
	}
	return def, o.v.name, ReasonError, &Error{Code: CodeTypeMismatch, Flag: key, Msg: "variant " + strconv.Quote(o.v.name) + " is " + describe(o.v) + ", not " + want}, o.meta
}

func describe(v *variant) string {
	if v.k == kNum && !v.intOK {
		return "a non-integer number"
	}
	if v.k == kObj {
		if _, ok := v.obj.([]any); ok {
			return "an array"
		}
	}
	return kindName(v.k)
}

// ResolveBool resolves a boolean flag for the evaluation context ctx (the
// flattened OpenFeature context; targetingKey is one of its keys).
func (s *FlagSet) ResolveBool(key string, def bool, ctx map[string]any) Resolution[bool] {
	return answer(s.ResolveBoolFields(key, def, ctx))
}

// ResolveBoolFields is ResolveBool with the resolution's fields as separate
// results, in the order of Resolution's fields.
func (s *FlagSet) ResolveBoolFields(key string, def bool, ctx map[string]any) (bool, string, Reason, *Error, map[string]any) {
	f, i := s.index.lookup(key)
	switch {
	case f == nil:
		if s.tallyMissing(key) {
			s.use.missingSlow(key)
		}
		return def, "", ReasonError, ErrFlagNotFound, s.metadata
	case f.disabled:
		if x := s.tally(i, slotNone); x != 0 {
			s.countSlow(i, slotNone, x)
		}
		return def, "", ReasonDisabled, nil, f.metadata
	case f.fixed != nil && f.fixed.k == kBool:
		if x := s.tally(i, f.fixedSlot()); x != 0 {
			s.countSlow(i, f.fixedSlot(), x)
		}
		return f.fixed.b, f.fixed.name, ReasonStatic, nil, f.metadata
	}
	o := s.evaluateFlag(f, ctx, nil)
	if o.v != nil && o.err == nil && o.v.k == kBool {
		if x := s.tally(i, f.slotOf(o.v)); x != 0 {
			s.countSlow(i, f.slotOf(o.v), x)
		}
		return o.v.b, o.v.name, o.reason, nil, o.meta
	}
	if x := s.tally(i, failSlot(o)); x != 0 {
		s.countSlow(i, failSlot(o), x)
	}
	return typed(key, o, def, "a boolean")
}

// ResolveString resolves a string flag.
func (s *FlagSet) ResolveString(key string, def string, ctx map[string]any) Resolution[string] {
	return answer(s.ResolveStringFields(key, def, ctx))
}

// ResolveStringFields is ResolveString with the resolution's fields as separate
// results, in the order of Resolution's fields.
func (s *FlagSet) ResolveStringFields(key string, def string, ctx map[string]any) (string, string, Reason, *Error, map[string]any) {
	f, i := s.index.lookup(key)
	switch {
	case f == nil:
		if s.tallyMissing(key) {
			s.use.missingSlow(key)
		}
		return def, "", ReasonError, ErrFlagNotFound, s.metadata
	case f.disabled:
		if x := s.tally(i, slotNone); x != 0 {
			s.countSlow(i, slotNone, x)
		}
		return def, "", ReasonDisabled, nil, f.metadata
	case f.fixed != nil && f.fixed.k == kStr:
		if x := s.tally(i, f.fixedSlot()); x != 0 {
			s.countSlow(i, f.fixedSlot(), x)
		}
		return f.fixed.s, f.fixed.name, ReasonStatic, nil, f.metadata
	}
	o := s.evaluateFlag(f, ctx, nil)
	if o.v != nil && o.err == nil && o.v.k == kStr {
		if x := s.tally(i, f.slotOf(o.v)); x != 0 {
			s.countSlow(i, f.slotOf(o.v), x)
		}
		return o.v.s, o.v.name, o.reason, nil, o.meta
	}
	if x := s.tally(i, failSlot(o)); x != 0 {
		s.countSlow(i, failSlot(o), x)
	}
	return typed(key, o, def, "a string")
}

// ResolveInt resolves an integer flag. Only numbers that convert exactly
// are integers: 10.0 is 10, but 3.14 is a type mismatch rather than 3.
func (s *FlagSet) ResolveInt(key string, def int64, ctx map[string]any) Resolution[int64] {
	return answer(s.ResolveIntFields(key, def, ctx))
}

// ResolveIntFields is ResolveInt with the resolution's fields as separate
// results, in the order of Resolution's fields.
func (s *FlagSet) ResolveIntFields(key string, def int64, ctx map[string]any) (int64, string, Reason, *Error, map[string]any) {
	f, i := s.index.lookup(key)
	switch {
	case f == nil:
		if s.tallyMissing(key) {
			s.use.missingSlow(key)
		}
		return def, "", ReasonError, ErrFlagNotFound, s.metadata
	case f.disabled:
		if x := s.tally(i, slotNone); x != 0 {
			s.countSlow(i, slotNone, x)
		}
		return def, "", ReasonDisabled, nil, f.metadata
	}
	o := s.evaluateFlag(f, ctx, nil)
	if o.v != nil && o.err == nil && o.v.k == kNum && o.v.intOK {
		if x := s.tally(i, f.slotOf(o.v)); x != 0 {
			s.countSlow(i, f.slotOf(o.v), x)
		}
		return int64(o.v.f), o.v.name, o.reason, nil, o.meta
	}
	if x := s.tally(i, failSlot(o)); x != 0 {
		s.countSlow(i, failSlot(o), x)
	}
	return typed(key, o, def, "an integer")
}

// ResolveFloat resolves a number flag; integers widen to float64.
func (s *FlagSet) ResolveFloat(key string, def float64, ctx map[string]any) Resolution[float64] {
	return answer(s.ResolveFloatFields(key, def, ctx))
}

// ResolveFloatFields is ResolveFloat with the resolution's fields as separate
// results, in the order of Resolution's fields.
func (s *FlagSet) ResolveFloatFields(key string, def float64, ctx map[string]any) (float64, string, Reason, *Error, map[string]any) {
	f, i := s.index.lookup(key)
	switch {
	case f == nil:
		if s.tallyMissing(key) {
			s.use.missingSlow(key)
		}
		return def, "", ReasonError, ErrFlagNotFound, s.metadata
	case f.disabled:
		if x := s.tally(i, slotNone); x != 0 {
			s.countSlow(i, slotNone, x)
		}
		return def, "", ReasonDisabled, nil, f.metadata
	}
	o := s.evaluateFlag(f, ctx, nil)
	if o.v != nil && o.err == nil && o.v.k == kNum {
		if x := s.tally(i, f.slotOf(o.v)); x != 0 {
			s.countSlow(i, f.slotOf(o.v), x)
		}
		return o.v.f, o.v.name, o.reason, nil, o.meta
	}
	if x := s.tally(i, failSlot(o)); x != 0 {
		s.countSlow(i, failSlot(o), x)
	}
	return typed(key, o, def, "a number")
}

// ResolveObject resolves an object flag: a JSON object or array as
// map[string]any or []any, copied so that the caller may modify it.
func (s *FlagSet) ResolveObject(key string, def any, ctx map[string]any) Resolution[any] {
	return answer(s.ResolveObjectFields(key, def, ctx))
}

// ResolveObjectFields is ResolveObject with the resolution's fields as separate
// results, in the order of Resolution's fields.
func (s *FlagSet) ResolveObjectFields(key string, def any, ctx map[string]any) (any, string, Reason, *Error, map[string]any) {
	f, i := s.index.lookup(key)
	switch {
	case f == nil:
		if s.tallyMissing(key) {
			s.use.missingSlow(key)
		}
		return def, "", ReasonError, ErrFlagNotFound, s.metadata
	case f.disabled:
		if x := s.tally(i, slotNone); x != 0 {
			s.countSlow(i, slotNone, x)
		}
		return def, "", ReasonDisabled, nil, f.metadata
	}
	o := s.evaluateFlag(f, ctx, nil)
	if o.v != nil && o.err == nil && o.v.k == kObj {
		if x := s.tally(i, f.slotOf(o.v)); x != 0 {
			s.countSlow(i, f.slotOf(o.v), x)
		}
		return deepCopy(o.v.obj), o.v.name, o.reason, nil, o.meta
	}
	if x := s.tally(i, failSlot(o)); x != 0 {
		s.countSlow(i, failSlot(o), x)
	}
	return typed(key, o, def, "an object")
}

// deepCopy copies a variant's object or array, which is in plain JSON form,
// so that callers of ResolveObject cannot change the flag set.
func deepCopy(x any) any {
	switch t := x.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, v := range t {
			out[k] = deepCopy(v)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, v := range t {
			out[i] = deepCopy(v)
		}
		return out
	}
	return x
}

// Metadata is the flag-set metadata. It must not be modified.
func (s *FlagSet) Metadata() map[string]any { return s.metadata }

// Keys lists the flag keys in sorted order.
func (s *FlagSet) Keys() []string {
	keys := make([]string, 0, s.index.n)
	for _, f := range s.index.slots {
		if f != nil {
			keys = append(keys, f.key)
		}
	}
	slices.Sort(keys)
	return keys
}

// Len is the number of flags, broken ones included.
func (s *FlagSet) Len() int { return s.index.n }

// Problems lists the flags that could not be compiled and why; each of them
// answers PARSE_ERROR.
func (s *FlagSet) Problems() []FlagProblem { return slices.Clone(s.problems) }

// WithEnrichment returns a flag set that shares this one's compiled flags
// and adds enrich to the data of every evaluation (after $flagd and before
// the caller's context). The map must not be modified afterwards.
func (s *FlagSet) WithEnrichment(enrich map[string]any) *FlagSet {
	c := *s
	c.enrich = enrich
	return &c
}

// Enrichment is the map given to WithEnrichment.
func (s *FlagSet) Enrichment() map[string]any { return s.enrich }

// Changes lists the flags added, removed and changed between old and s (in
// state, variants, default variant, targeting or metadata). A nil old is an
// empty flag set.
func (s *FlagSet) Changes(old *FlagSet) (added, removed, changed []string) {
	if old != nil && s.from != 0 && s.from == old.id {
		return s.changesFrom(old)
	}
	var before flagIndex
	if old != nil {
		before = old.index
	}
	// The indexes are walked as they are and only what changed is sorted:
	// an update that changes one flag of many sorts one key.
	for _, f := range s.index.slots {
		if f == nil {
			continue
		}
		switch prev := before.get(f.key); {
		case prev == nil:
			added = append(added, f.key)
		case prev.fingerprint != f.fingerprint:
			changed = append(changed, f.key)
		}
	}
	for _, f := range before.slots {
		if f != nil && s.index.get(f.key) == nil {
			removed = append(removed, f.key)
		}
	}
	slices.Sort(added)
	slices.Sort(removed)
	slices.Sort(changed)
	return added, removed, changed
}
