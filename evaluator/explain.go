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
	// Layer names the layer that defined the flag, in a set made by
	// Layered; "" in the set of one document.
	Layer string
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

// MarshalJSON writes the step as its fields say, but for a number that
// JSON cannot hold (a rule's 1/0 is +Inf), which it writes as a string,
// "+Inf", "-Inf" or "NaN", as the explanation's text shows it.
func (s Step) MarshalJSON() ([]byte, error) {
	type plain Step // the fields, without this method
	p := plain(s)
	p.Result = finiteJSON(p.Result)
	if b := p.Bucketing; b != nil {
		c := *b
		c.Value, c.TargetingKey = finiteJSON(c.Value), finiteJSON(c.TargetingKey)
		p.Bucketing = &c
	}
	return json.Marshal(p)
}

// finiteJSON is v with every number JSON cannot hold, within arrays and
// objects too, as its text.
func finiteJSON(v any) any {
	switch t := v.(type) {
	case float64:
		if math.IsInf(t, 0) || math.IsNaN(t) {
			return fmt.Sprint(t)
		}
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = finiteJSON(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = finiteJSON(e)
		}
		return out
	}
	return v
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
		// Made afresh, not kept: an explanation is asked for by a person,
		// who is owed the key even past the bound of NotFound.
		err := s.notFoundError(key)
		x.Reason, x.Err, x.Metadata = ReasonError, err, s.metadata
		return x, err
	}
	x.Layer = s.layerName(key)
	var t tracer
	o := s.evaluateFlag(f, -1, ctx, &t)
	x.Reason, x.Err, x.Metadata = o.Reason(), o.Err(), o.Metadata()
	if v := o.value(); v != nil {
		x.Variant, x.Value = v.name, variantValue(v)
	}
	if t.root != nil {
		setPaths(t.root, "targeting")
		x.Rule = t.root
	}
	return x, nil
}

func variantValue(v *variant) any {
	if v.kind() == kObj {
		return deepCopy(v.obj)
	}
	return v.obj
}

// tracer records an evaluation. The evaluator checks for it with one
// nil test in evaluate (and in fractional), so evaluations without
// one take no other branch and allocate nothing.
type tracer struct {
	// entered is the node being handed back to evaluate to run: evaluate hands
	// every other node to the tracer first.
	entered *node
	stack   []*Step
	root    *Step
}

// evaluate evaluates n, recording a step for it under the current one.
func (t *tracer) evaluate(e *evalState, n *node) value {
	s := &Step{node: n}
	t.stack = append(t.stack, s)
	t.entered = n
	v := e.evaluate(n)
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
		s.Op = n.name()
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

// readVars records the vars an operation read without going through evaluate
// (comparisons, iterations) by evaluating them again: a var has no side
// effects.
func (t *tracer) readVars(e *evalState, s *Step) {
	n := s.node
	var args []*node
	switch n.op {
	case opAnd, opOr, opIf:
		return // their inputs all go through evaluate; a missing one was skipped
	case opMap, opFilter, opReduce, opAll, opSome, opNone:
		if len(n.args) > 0 {
			args = n.args[:1]
		}
	default:
		args = n.args
	}
	for _, a := range args {
		if a.op != opVar || a.v.dyn != nil || stepOf(s.Args, a) != nil {
			continue
		}
		t.evaluate(e, a)
	}
}

// result is what n evaluated to, as recorded under the current step, nil
// when it was not evaluated there.
func (t *tracer) result(n *node) any {
	if len(t.stack) == 0 {
		return nil
	}
	if s := stepOf(t.stack[len(t.stack)-1].Args, n); s != nil {
		return s.Result
	}
	return nil
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

// varText is the path of a var as it is read: its segments, without the
// empty ones nextSegment skips; "" for a path computed at evaluation.
func varText(v *varSpec) string {
	if v.dyn != nil {
		return ""
	}
	segs := strings.FieldsFunc(v.path.text, func(r rune) bool { return r == '.' })
	return strings.Join(segs, ".")
}

// setPaths spells the rule path of every step, and puts the constant and
// skipped inputs of each operation in their places among the evaluated
// ones.
func setPaths(s *Step, at string) {
	n := s.node
	s.Path = at
	if n.op != opConst && n.op != opArray {
		s.Path = at + "." + n.name()
	}
	var written []*node
	switch {
	case n.op == opVar && n.v.dyn != nil:
		written = []*node{n.v.dyn}
	default:
		written = n.args
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
			c.Result = (&evalState{}).toAny(a.lit)
		} else {
			c.Skipped = true
			c.Op = a.name()
			if a.op == opArray {
				c.Op = "array"
			} else {
				c.Path = argAt + "." + a.name()
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

// fracWork is the work of a fractional operation as the evaluator did
// it: hasBy and by are its bucketing value, ok whether there was an input
// to hash, choice the bucket chosen for it (Index is the bucket whose
// variant the operation answers), total the buckets' total weight and
// variants the variant of each bucket, in JSON form.
type fracWork struct {
	hasBy    bool
	by       value
	ok       bool
	choice   fractional.Choice
	total    uint32
	variants []any
}

// bucketed records the work of a fractional operation right after the
// evaluator chose a bucket. weights are not part of w, which the
// explanation keeps: the evaluator's buffer of them would move to the heap.
func (t *tracer) bucketed(e *evalState, w *fracWork, weights []uint32) {
	if len(t.stack) == 0 {
		return
	}
	v := e.fs.version
	b := &Bucketing{Version: v, Total: w.total, Selected: -1}
	t.stack[len(t.stack)-1].Bucketing = b
	if bucketsByValue(v, w.hasBy, w.by) {
		b.hashedValue(e, w.by, w.ok)
	} else {
		b.hashedDefault(e, w.ok)
	}
	ends := fractional.AppendEnds(make([]float64, 0, len(weights)), v, weights, w.total)
	var start float64
	for i, weight := range weights {
		end := start
		if i < len(ends) {
			end = ends[i]
		}
		c := Bucket{Weight: weight, Start: start, End: end}
		if i < len(w.variants) {
			c.Variant = w.variants[i]
		}
		b.Buckets = append(b.Buckets, c)
		start = end
	}
	if w.ok {
		b.Hash, b.Bucket, b.Selected = w.choice.Hash, w.choice.Bucket, w.choice.Index
	}
}

// hashedValue records a bucketing value, and the bytes hashed for it or
// why there were none.
func (b *Bucketing) hashedValue(e *evalState, by value, ok bool) {
	v := b.Version
	b.Value = e.hashable(by)
	if v != fractional.V3 && by.k == kStr {
		b.Value = by.str()
	}
	switch {
	case ok && v == fractional.V3:
		// HashValue hashes exactly what AppendCBOR writes.
		b.Bytes, _ = fractional.AppendCBOR(nil, b.Value)
	case ok:
		b.Bytes = fractional.AppendString(nil, v, by.str())
	case by.k == kNull:
		b.NoInput = "the bucketing value is null"
	case v != fractional.V3:
		b.NoInput = fmt.Sprintf("%s hashes only strings, and the bucketing value is %s", v, kindName(by.k))
	default:
		b.NoInput = "the bucketing value cannot be encoded"
	}
}

// hashedDefault records the default bucketing input, and the bytes hashed
// for it or why there were none.
func (b *Bucketing) hashedDefault(e *evalState, ok bool) {
	tk := e.rootGet(targetingKeyKey)
	b.Default, b.FlagKey, b.TargetingKey = true, e.f.key, e.toAny(tk)
	if !ok {
		b.NoInput = "no targeting key (it must be a non-empty string)"
		return
	}
	b.Bytes = fractional.AppendDefault(nil, b.Version, e.f.key, tk.str())
}

// MarshalJSON spells the reason and the error code as OpenFeature does.
func (x Explanation) MarshalJSON() ([]byte, error) {
	type jsonError struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	out := struct {
		Flag              string             `json:"flag"`
		Layer             string             `json:"layer,omitempty"`
		FractionalVersion fractional.Version `json:"fractionalVersion"`
		Value             any                `json:"value"`
		Variant           string             `json:"variant,omitempty"`
		Reason            string             `json:"reason"`
		Error             *jsonError         `json:"error,omitempty"`
		Metadata          map[string]any     `json:"metadata,omitempty"`
		Rule              *Step              `json:"rule,omitempty"`
	}{x.Flag, x.Layer, x.FractionalVersion, x.Value, x.Variant, x.Reason.String(), nil, x.Metadata, x.Rule}
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
