package evaluator

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/flagsnap/flagsnap/fractional"
)

// Explanation is how a flag was resolved for one evaluation context: the
// answer, as the typed Resolve methods give it, and the path the targeting
// rule took. It is recorded while the evaluator itself runs the rule, so
// it cannot disagree with what the provider answers for the same flag set
// and context.
type Explanation struct {
	Flag string
	// FractionalVersion is the bucketing version of the flag set.
	FractionalVersion fractional.Version
	// Value is the variant's value in JSON form (bool, string, float64 or
	// int64 for a whole number, map[string]any or []any), nil when the
	// caller's default applies.
	Value    any
	Variant  string
	Reason   Reason
	Err      *Error
	Metadata map[string]any
	// Rule is the evaluation of the targeting rule, nil when no rule ran
	// (a flag without targeting, disabled, broken or missing).
	Rule *Step
}

// Step is one element of a targeting rule as it was evaluated: an
// operation with its inputs and its result, or a constant.
type Step struct {
	// Op is the operator ("if", "==", "var", "fractional"…), "array" for an
	// array written with operations inside, "" for a constant.
	Op string `json:"op,omitempty"`
	// Path locates the step in the rule, as compile errors do:
	// "targeting.if[0].==".
	Path string `json:"path"`
	// Var is the path a var operation reads ("user.email").
	Var string `json:"var,omitempty"`
	// Args are the inputs in the order they are written. An input that was
	// evaluated more than once (the condition of all, some, none, map,
	// filter and reduce, once per element) appears once per evaluation.
	Args []Step `json:"args,omitempty"`
	// Skipped marks an input that was not evaluated: and, or and if stop
	// at the first input that decides.
	Skipped bool `json:"skipped,omitempty"`
	// Result is the value produced, in JSON form.
	Result any `json:"result"`
	// Bucketing is what a fractional operation hashed and how it chose,
	// nil for other operations and for a fractional that answered null
	// before hashing (weights that are all 0, a malformed bucket).
	Bucketing *Bucketing `json:"bucketing,omitempty"`

	node *node
}

// Bucketing is the work of one fractional operation.
type Bucketing struct {
	Version fractional.Version `json:"version"`
	// Default: no bucketing value was given (or, before v3, it was null),
	// so the input is the flag key and the targeting key.
	Default      bool   `json:"default,omitempty"`
	FlagKey      string `json:"flagKey,omitempty"`      // with Default
	TargetingKey any    `json:"targetingKey,omitempty"` // with Default, as the context holds it
	// Value is the bucketing value hashed, without Default: v3 hashes the
	// caller's Go value itself.
	Value any `json:"value,omitempty"`
	// Bytes are the bytes hashed: the UTF-8 text before v3, its CBOR
	// encoding in v3.
	Bytes HexBytes `json:"bytes,omitempty"`
	Hash  uint32   `json:"hash"`
	// Bucket is where the hash falls: a percentage in [0, 100] in v1, an
	// integer in [0, Total) in v2 and v3, (hash × Total) >> 32.
	Bucket   float64  `json:"bucket"`
	Buckets  []Bucket `json:"buckets"`
	Total    uint32   `json:"total"`
	Selected int      `json:"selected"` // index into Buckets, -1 when none
	// NoInput says why nothing was hashed, when the operator answered null
	// for want of a bucketing input.
	NoInput string `json:"noInput,omitempty"`
}

// Bucket is one bucket of a fractional operation: the bucket values in
// [Start, End) select it.
type Bucket struct {
	Variant any     `json:"variant"`
	Weight  uint32  `json:"weight"`
	Start   float64 `json:"start"`
	End     float64 `json:"end"`
}

// HexBytes are bytes that print and marshal as hexadecimal.
type HexBytes []byte

// String is the bytes in hexadecimal.
func (b HexBytes) String() string { return hex.EncodeToString(b) }

// MarshalText is the bytes in hexadecimal.
func (b HexBytes) MarshalText() ([]byte, error) { return []byte(b.String()), nil }

// Explain resolves key for ctx as the Resolve methods do and records the
// path the targeting rule takes. It costs what recording costs (a few
// allocations per operation); the Resolve methods pay nothing for it.
// The error is non-nil only when the flag set has no such flag; any other
// failure is the explanation's Err, as in a Resolution.
func (s *FlagSet) Explain(key string, ctx map[string]any) (Explanation, error) {
	f := s.index.get(key)
	x := Explanation{Flag: key, FractionalVersion: s.version}
	if f == nil {
		err := &Error{Code: CodeFlagNotFound, Flag: key, Msg: "flag not found"}
		x.Reason, x.Err, x.Metadata = ReasonError, err, s.metadata
		return x, err
	}
	var t tracer
	o := s.evaluateFlag(f, ctx, &t)
	x.Reason, x.Err, x.Metadata = o.reason, o.err, o.meta
	if o.v != nil && o.err == nil {
		x.Variant, x.Value = o.v.name, variantValue(o.v)
	}
	if t.root != nil {
		setPaths(t.root, "targeting")
		x.Rule = t.root
	}
	return x, nil
}

func variantValue(v *variant) any {
	switch v.k {
	case kBool:
		return v.b
	case kStr:
		return v.s
	case kNum:
		if v.intOK {
			return v.i
		}
		return v.f
	case kObj:
		return deepCopy(v.obj)
	}
	return nil
}

// tracer records an evaluation. The evaluator checks for it with one
// nil test in eval (and in test and fractional), so evaluations without
// one take no other branch and allocate nothing.
type tracer struct {
	// entered is the node being handed back to eval to run: eval hands
	// every other node to the tracer first.
	entered *node
	stack   []*Step
	root    *Step
}

// eval evaluates n, recording a step for it under the current one.
func (t *tracer) eval(e *env, n *node) value {
	s := &Step{node: n}
	t.stack = append(t.stack, s)
	t.entered = n
	v := e.eval(n)
	t.entered = nil
	t.readVars(e, s)
	t.stack = t.stack[:len(t.stack)-1]
	s.Result = e.toAny(v)
	switch n.op {
	case opConst:
	case opArray:
		s.Op = "array"
	case opVar:
		s.Op, s.Var = "var", varText(n.v)
	default:
		s.Op = n.name
	}
	if len(t.stack) == 0 {
		if t.root == nil {
			t.root = s
		}
	} else {
		parent := t.stack[len(t.stack)-1]
		parent.Args = append(parent.Args, *s)
	}
	return v
}

// readVars records the vars an operation read without going through eval:
// comparisons read a context attribute straight from the caller's map, and
// iterations read the array they walk directly. Such a var is evaluated
// again, as it was read; it has no side effects.
func (t *tracer) readVars(e *env, s *Step) {
	n := s.node
	var args []*node
	switch n.op {
	case opAnd, opOr, opIf:
		return // their inputs all go through eval; a missing one was skipped
	case opMap, opFilter, opReduce, opAll, opSome, opNone:
		if len(n.args) > 0 {
			args = n.args[:1]
		}
	default:
		args = n.args
		if n.one != nil {
			args = []*node{n.one}
		}
	}
	for _, a := range args {
		if a.op != opVar || a.v.dyn != nil || stepOf(s.Args, a) != nil {
			continue
		}
		t.eval(e, a)
	}
}

// stepOf is the step of n among steps, nil when n has none.
func stepOf(steps []Step, n *node) *Step {
	for i := range steps {
		if steps[i].node == n {
			return &steps[i]
		}
	}
	return nil
}

func varText(v *varSpec) string {
	if v.dyn != nil {
		return ""
	}
	return strings.Join(v.path.parts, ".")
}

// setPaths spells the rule path of every step, and puts the constant and
// skipped inputs of each operation in their places among the evaluated
// ones.
func setPaths(s *Step, at string) {
	n := s.node
	s.Path = at
	if n.op != opConst && n.op != opArray {
		s.Path = at + "." + n.name
	}
	var written []*node
	switch {
	case n.op == opVar && n.v.dyn != nil:
		written = []*node{n.v.dyn}
	case n.list:
		written = n.args
	case n.one != nil:
		written = []*node{n.one}
	}
	evaluated := s.Args
	used := make([]bool, len(evaluated))
	args := make([]Step, 0, max(len(written), len(evaluated)))
	for i, a := range written {
		argAt := s.Path
		if n.list && n.op != opVar {
			argAt = fmt.Sprintf("%s[%d]", s.Path, i)
		}
		found := false
		for j := range evaluated {
			if !used[j] && evaluated[j].node == a {
				used[j], found = true, true
				setPaths(&evaluated[j], argAt)
				args = append(args, evaluated[j])
			}
		}
		if found {
			continue
		}
		c := Step{node: a, Path: argAt}
		if a.op == opConst {
			c.Result = (&env{}).toAny(a.lit)
		} else {
			c.Skipped = true
			c.Op = a.name
			if a.op == opArray {
				c.Op = "array"
			} else {
				c.Path = argAt + "." + a.name
			}
		}
		args = append(args, c)
	}
	// Steps of nodes that are not written arguments: the variants of
	// fractional buckets that are expressions.
	for j := range evaluated {
		if !used[j] {
			setPaths(&evaluated[j], s.Path)
			args = append(args, evaluated[j])
		}
	}
	s.Args = args
	switch n.op {
	case opIf, opAnd, opOr:
		markSkipped(s)
	}
	if s.Bucketing != nil {
		s.Bucketing.nameBuckets(s)
	}
}

// markSkipped marks the constant inputs of if, and and or that were not
// reached: every input after the one that decided. (Operations that were
// not reached are marked already: they have no step.)
func markSkipped(s *Step) {
	args := s.Args
	truthyAt := func(i int) bool { return truthy(fromAny(args[i].Result)) }
	decided := len(args)
	switch s.node.op {
	case opAnd, opOr:
		for i := range args {
			if args[i].Skipped || truthyAt(i) == (s.node.op == opOr) {
				decided = i
				break
			}
		}
	case opIf:
		for i := 0; i+1 < len(args); i += 2 {
			if args[i].Skipped {
				decided = i
				break
			}
			if truthyAt(i) {
				decided = i + 1
				break
			}
			args[i+1].Skipped = true
		}
	}
	for i := decided + 1; i < len(args); i++ {
		args[i].Skipped = true
	}
}

// nameBuckets puts each bucket's variant next to its weight: the first
// element of the bucket, as written or as evaluated.
func (b *Bucketing) nameBuckets(s *Step) {
	n := s.node
	if !n.list || len(n.args) < len(b.Buckets) {
		return
	}
	for i, a := range n.args[len(n.args)-len(b.Buckets):] {
		switch {
		case a.op == opConst && a.lit.k == kArr && arrLen(a.lit) > 0:
			b.Buckets[i].Variant = (&env{}).toAny(arrAt(a.lit, 0))
		case a.op == opArray && len(a.args) > 0 && a.args[0].op == opConst:
			b.Buckets[i].Variant = (&env{}).toAny(a.args[0].lit)
		case a.op == opArray && len(a.args) > 0:
			if st := stepOf(s.Args, a.args[0]); st != nil {
				b.Buckets[i].Variant = st.Result
			}
		}
		if st := stepOf(s.Args, a); st != nil {
			if arr, ok := st.Result.([]any); ok && len(arr) > 0 {
				b.Buckets[i].Variant = arr[0]
			}
		}
	}
}

// hashed records what a fractional operation hashed, called by the
// evaluator right after hashing: hasBy and by are its bucketing value, h
// and ok what bucketHash answered, weights and total the buckets'.
func (t *tracer) hashed(e *env, hasBy bool, by value, h uint32, ok bool, weights []uint32, total uint32) {
	if len(t.stack) == 0 {
		return
	}
	v := e.fs.version
	b := &Bucketing{Version: v, Total: total, Selected: -1}
	t.stack[len(t.stack)-1].Bucketing = b
	if hasBy && (by.k != kNull || v == fractional.V3) {
		b.Value = e.hashable(by)
		if v != fractional.V3 && by.k == kStr {
			b.Value = by.str()
		}
		switch {
		case ok && v == fractional.V3:
			b.Bytes, _ = fractional.AppendCBOR(nil, b.Value)
		case ok:
			b.Bytes = []byte(by.str())
		case by.k == kNull:
			b.NoInput = "the bucketing value is null"
		case v != fractional.V3:
			b.NoInput = fmt.Sprintf("%s hashes only strings, and the bucketing value is %s", v, kindName(by.k))
		default:
			b.NoInput = "the bucketing value cannot be encoded"
		}
	} else {
		b.Default, b.FlagKey = true, e.f.key
		tk := e.rootGet(targetingKeyKey)
		b.TargetingKey = e.toAny(tk)
		switch {
		case !ok:
			b.NoInput = "no targeting key (it must be a non-empty string)"
		case v == fractional.V3:
			b.Bytes, _ = fractional.AppendCBOR(nil, []any{e.f.key, tk.str()})
		default:
			b.Bytes = []byte(e.f.key + tk.str())
		}
	}
	var start float64
	for _, w := range weights {
		size := float64(w)
		if v == fractional.V1 {
			size = 100 * float64(w) / float64(total)
		}
		b.Buckets = append(b.Buckets, Bucket{Weight: w, Start: start, End: start + size})
		start += size
	}
	if !ok || total == 0 {
		return
	}
	b.Hash = h
	if v == fractional.V1 {
		b.Bucket = math.Abs(float64(int32(h))) / math.MaxInt32 * 100
	} else {
		b.Bucket = float64((uint64(h) * uint64(total)) >> 32)
	}
	b.Selected = fractional.Pick(v, h, weights, total)
}

// MarshalJSON spells the reason and the error code as OpenFeature does.
func (x Explanation) MarshalJSON() ([]byte, error) {
	type jsonError struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	out := struct {
		Flag              string             `json:"flag"`
		FractionalVersion fractional.Version `json:"fractionalVersion"`
		Value             any                `json:"value"`
		Variant           string             `json:"variant,omitempty"`
		Reason            string             `json:"reason"`
		Error             *jsonError         `json:"error,omitempty"`
		Metadata          map[string]any     `json:"metadata,omitempty"`
		Rule              *Step              `json:"rule,omitempty"`
	}{x.Flag, x.FractionalVersion, x.Value, x.Variant, x.Reason.String(), nil, x.Metadata, x.Rule}
	if x.Err != nil {
		out.Error = &jsonError{Code: x.Err.Code.String(), Message: x.Err.Error()}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // rules compare with < and >
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
