package evaluator

import (
	"fmt"
	"math"

	"strconv"
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

// Evaluation is what evaluating a flag answered, before its value is read
// as a type: the variant served (if any), why, the error, the flag's
// metadata and the flag's index in its set, which stays the same for the
// set's life. It is kept to 32 bytes of at most four fields, which the
// compiler passes in registers rather than copying through memory.
type Evaluation struct {
	flag *flag // the set's absent flag for a key it does not define
	err  *Error
	at   served
}

// served says where an evaluation landed.
type served struct {
	index   int32 // the flag's, in its set; -1 when there is none
	variant int32 // in flag.vals; -1 for none
	reason  Reason
}

// Index is the flag's index in its set (see FlagSet.FlagKey), -1 when the
// set has no such flag.
func (e *Evaluation) Index() int { return int(e.at.index) }

// Reason says how the value was chosen.
func (e *Evaluation) Reason() Reason { return e.at.reason }

// Err is why the evaluation failed, nil when it did not.
func (e *Evaluation) Err() *Error { return e.err }

// Metadata is the flag's metadata over the flag set's, or the flag set's
// for a missing key. It is shared with the flag set and must not be
// modified.
func (e *Evaluation) Metadata() map[string]any {
	if e.flag == nil {
		return nil
	}
	return e.flag.metadata
}

// Variant is the name of the variant served, "" when none was.
func (e *Evaluation) Variant() string {
	if e.at.variant < 0 {
		return ""
	}
	return e.flag.vals[e.at.variant].name
}

// VariantIndex is the index of the variant served among the flag's
// variants (see FlagSet.VariantName), -1 when none was.
func (e *Evaluation) VariantIndex() int { return int(e.at.variant) }

// value is the variant the evaluation served without an error, or nil.
func (e *Evaluation) value() *variant {
	if e.at.variant < 0 || e.err != nil {
		return nil
	}
	return &e.flag.vals[e.at.variant]
}

// Value is the value of the variant served without an error, as Object
// reads it but shared with the flag set (it must not be modified), or nil
// when none was served: for a disabled flag, a flag without a default
// variant, or an error. Numbers are int64 when whole, float64 otherwise.
// It allocates nothing.
func (e *Evaluation) Value() any {
	if v := e.value(); v != nil {
		return v.obj
	}
	return nil
}

// EvaluateAt evaluates the flag at index i (see FlagKey), as Evaluate does
// the flag of a key; an index out of range answers as a key the set does
// not define would, with an empty key.
func (s *FlagSet) EvaluateAt(i int, ctx map[string]any) Evaluation {
	if i < 0 || i >= len(s.index.flags) {
		return s.Evaluate("", ctx)
	}
	return s.evaluateFlag(s.index.flags[i], i, ctx, nil)
}

// Evaluate evaluates the flag key for the evaluation context ctx (the
// flattened OpenFeature context; targetingKey is one of its keys). The
// Resolve methods and the typed readers of Evaluation are built on it.
// For a key the set does not define, the error is NotFound(key).
func (s *FlagSet) Evaluate(key string, ctx map[string]any) Evaluation {
	f, i := s.index.lookup(key)
	if f == nil {
		return Evaluation{flag: s.absent, err: s.NotFound(key), at: served{index: -1, variant: -1, reason: ReasonError}}
	}
	return s.evaluateFlag(f, i, ctx, nil)
}

func (f *flag) answer(variant int32, reason Reason) Evaluation {
	return Evaluation{flag: f, at: served{index: -1, variant: variant, reason: reason}}
}

func (f *flag) defaultAnswer(reason Reason) Evaluation {
	if f.defaultIdx < 0 {
		reason = ReasonDefault
	}
	return f.answer(f.defaultIdx, reason)
}

// evaluateFlag evaluates f, which is at index i of s; t records the
// evaluation for Explain.
func (s *FlagSet) evaluateFlag(f *flag, i int, ctx map[string]any, t *tracer) Evaluation {
	var e Evaluation
	switch {
	case f.disabled:
		e = Evaluation{flag: f, at: served{variant: -1, reason: ReasonDisabled}}
	case f.broken != nil:
		e = Evaluation{flag: f, err: f.broken, at: served{variant: -1, reason: ReasonError}}
	case f.rule == nil:
		e = f.defaultAnswer(ReasonStatic)
	default:
		e = s.evaluateRule(f, ctx, t)
	}
	e.at.index = int32(i)
	return e
}

// evaluateRule evaluates the rule of f, which has one.
func (s *FlagSet) evaluateRule(f *flag, ctx map[string]any, t *tracer) Evaluation {
	var e evalState
	e.fs, e.f, e.ctx, e.cur.k, e.trace = s, f, ctx, kRoot, t
	r := e.evaluate(f.rule)
	if e.err != nil {
		if _, ok := e.err.(*CompileError); ok {
			// A broken part of the rule, reached: the problem says where.
			return f.fail(CodeParseError, "", e.err)
		}
		return f.fail(CodeParseError, "targeting failed", e.err)
	}
	return f.chosen(r)
}

// chosen is the answer for the value a flag's rule returned: the variant
// it names, or the default variant for null.
func (f *flag) chosen(r value) Evaluation {
	var name string
	switch r.k {
	case kNull:
		return f.defaultAnswer(ReasonDefault)
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
	j := f.variant(name)
	if j < 0 {
		return f.fail(CodeGeneral, fmt.Sprintf("targeting returned %q, which is not a variant", name), nil)
	}
	return f.answer(j, ReasonTargetingMatch)
}

// maxScannedVariants is how many variants are searched one by one. Flags
// rarely have more than a handful, and comparing a few strings is cheaper
// than hashing one, and holds no map per flag.
const maxScannedVariants = 8

// variant finds a variant by name; -1 when the flag has none of that name.
func (f *flag) variant(name string) int32 {
	if f.variants != nil {
		if i, ok := f.variants[name]; ok {
			return int32(i)
		}
		return -1
	}
	for i := range f.vals {
		if f.vals[i].name == name {
			return int32(i)
		}
	}
	return -1
}

func (f *flag) fail(code ErrorCode, msg string, cause error) Evaluation {
	return Evaluation{flag: f, err: &Error{Code: code, Flag: f.key, Msg: msg, Err: cause}, at: served{index: -1, variant: -1, reason: ReasonError}}
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

// Resolution is the answer for one flag, read as one type. On error, or
// when the flag is disabled or has no applicable variant, Value is the
// caller's default. Metadata is shared with the flag set and must not be
// modified.
type Resolution[T any] struct {
	Value    T
	Variant  string
	Reason   Reason
	Err      *Error
	Metadata map[string]any
}

func resolution[T any](v T, e *Evaluation) Resolution[T] {
	return Resolution[T]{Value: v, Variant: e.Variant(), Reason: e.at.reason, Err: e.err, Metadata: e.Metadata()}
}

// Bool reads the evaluation as a boolean flag: the variant's value, or def.
// When the variant served is not a boolean, e becomes a TYPE_MISMATCH.
// The readers work on e in place: an evaluation copied from call to call
// costs more than the rest of a static flag's answer.
func (e *Evaluation) Bool(def bool) bool {
	if b, ok := e.Value().(bool); ok {
		return b
	}
	if e.at.variant >= 0 && e.err == nil {
		e.mismatch("a boolean")
	}
	return def
}

// String reads the evaluation as a string flag, as Bool does.
func (e *Evaluation) String(def string) string {
	if s, ok := e.Value().(string); ok {
		return s
	}
	if e.at.variant >= 0 && e.err == nil {
		e.mismatch("a string")
	}
	return def
}

// Int reads the evaluation as an integer flag, as Bool does. A number
// converts only when it is whole and within int64: 10.0 is 10, 3.14 is a
// TYPE_MISMATCH.
func (e *Evaluation) Int(def int64) int64 {
	if i, ok := e.Value().(int64); ok {
		return i
	}
	if e.at.variant >= 0 && e.err == nil {
		e.mismatch("an integer")
	}
	return def
}

// Float reads the evaluation as a number flag, as Bool does; integers
// widen to float64.
func (e *Evaluation) Float(def float64) float64 {
	switch n := e.Value().(type) {
	case float64:
		return n
	case int64:
		return float64(n)
	}
	if e.at.variant >= 0 && e.err == nil {
		e.mismatch("a number")
	}
	return def
}

// Object reads the evaluation as an object flag, as Bool does: a copy of
// the variant's map[string]any or []any, which the caller may change.
func (e *Evaluation) Object(def any) any {
	if v := e.value(); v != nil && v.kind() == kObj {
		return deepCopy(v.obj)
	}
	if e.at.variant >= 0 && e.err == nil {
		e.mismatch("an object")
	}
	return def
}

// mismatch makes e, which served a variant of a type other than want, a
// TYPE_MISMATCH that still names the variant.
func (e *Evaluation) mismatch(want string) {
	v := &e.flag.vals[e.at.variant]
	e.at.reason = ReasonError
	e.err = &Error{Code: CodeTypeMismatch, Flag: e.flag.key, Msg: "variant " + strconv.Quote(v.name) + " is " + describe(v) + ", not " + want}
}

func describe(v *variant) string {
	if _, ok := v.obj.(float64); ok {
		return "a non-integer number"
	}
	if _, ok := v.obj.([]any); ok {
		return "an array"
	}
	return kindName(v.kind())
}

// ResolveBool resolves a boolean flag for the evaluation context ctx.
func (s *FlagSet) ResolveBool(key string, def bool, ctx map[string]any) Resolution[bool] {
	e := s.Evaluate(key, ctx)
	return resolution(e.Bool(def), &e)
}

// ResolveString resolves a string flag.
func (s *FlagSet) ResolveString(key string, def string, ctx map[string]any) Resolution[string] {
	e := s.Evaluate(key, ctx)
	return resolution(e.String(def), &e)
}

// ResolveInt resolves an integer flag (see Evaluation.Int).
func (s *FlagSet) ResolveInt(key string, def int64, ctx map[string]any) Resolution[int64] {
	e := s.Evaluate(key, ctx)
	return resolution(e.Int(def), &e)
}

// ResolveFloat resolves a number flag; integers widen to float64.
func (s *FlagSet) ResolveFloat(key string, def float64, ctx map[string]any) Resolution[float64] {
	e := s.Evaluate(key, ctx)
	return resolution(e.Float(def), &e)
}

// ResolveObject resolves an object flag (see Evaluation.Object).
func (s *FlagSet) ResolveObject(key string, def any, ctx map[string]any) Resolution[any] {
	e := s.Evaluate(key, ctx)
	return resolution(e.Object(def), &e)
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
