package evaluator

import (
	"github.com/flagsnap/flagsnap/internal/semver"

	"errors"
	"strings"

	"github.com/flagsnap/flagsnap/fractional"
)

// flagd's own operators answer null on malformed input instead of failing
// the evaluation, so the flag falls back to its default variant.

func (e *evalState) affix(n *node) value {
	if n.argc() == 2 {
		// The usual shape, a context attribute and a constant affix
		// (node.attrConst), read straight from the context's own string.
		if n.attrConst && e.atRoot() {
			if s, ok := e.attr(n.args[0].v.path.first).(string); ok && validText(s) {
				affix := n.args[1].lit.str()
				if n.op == opStartsWith {
					return boolVal(strings.HasPrefix(s, affix))
				}
				return boolVal(strings.HasSuffix(s, affix))
			}
		}
		a, b := e.operand(n.args[0]), e.operand(n.args[1])
		if a.k != kStr || b.k != kStr {
			return null
		}
		if n.op == opStartsWith {
			return boolVal(strings.HasPrefix(a.str(), b.str()))
		}
		return boolVal(strings.HasSuffix(a.str(), b.str()))
	}
	var args operands
	e.evalOperands(n, &args)
	list, isList := args.list(), args.isList
	return affixOf(n.op == opStartsWith, list, isList)
}

// affixOf is starts_with / ends_with over [value, affix], both strings.
func affixOf(prefix bool, list []value, isList bool) value {
	if !isList || len(list) != 2 || list[0].k != kStr || list[1].k != kStr {
		return null
	}
	if prefix {
		return boolVal(strings.HasPrefix(list[0].str(), list[1].str()))
	}
	return boolVal(strings.HasSuffix(list[0].str(), list[1].str()))
}

// semverArgs holds the sem_ver operands that are constant in the rule,
// parsed once at load.
type semverArgs struct {
	op                    semver.Op
	left, right           semver.Version
	leftOK, rightOK       bool // the constant operand is a valid version
	constOp               bool
	constLeft, constRight bool
}

func precomputeSemVer(n *node) *semverArgs {
	if !n.list || len(n.args) != 3 {
		return nil
	}
	s := &semverArgs{}
	if a := n.args[1]; a.isConst() {
		s.constOp = true
		if a.lit.k == kStr {
			s.op = semver.ParseOp(a.lit.str())
		}
	}
	if a := n.args[0]; a.isConst() {
		s.constLeft = true
		s.left, s.leftOK = versionOf(a.lit)
	}
	if a := n.args[2]; a.isConst() {
		s.constRight = true
		s.right, s.rightOK = versionOf(a.lit)
	}
	if !s.constOp && !s.constLeft && !s.constRight {
		return nil // nothing to keep: semverOf reads nil as all computed
	}
	return s
}

func (e *evalState) semver(n *node) value {
	if n.attrConst && e.atRoot() {
		// The usual shape, a context attribute against a constant
		// version (node.attrConst), read straight from the context's own
		// string.
		if s, ok := e.attr(n.args[0].v.path.first).(string); ok && validText(s) {
			pre := n.x.semver
			var left semver.Version
			lok := semver.ParseInto(s, &left)
			if pre.op == semver.Invalid || !lok || !pre.rightOK {
				return null
			}
			return boolVal(pre.op.Holds(&left, &pre.right))
		}
	}
	var pre *semverArgs
	if n.x != nil {
		pre = n.x.semver
	}
	if n.argc() == 3 {
		vals := [3]value{e.operand(n.args[0]), e.operand(n.args[1]), e.operand(n.args[2])}
		return semverOf(vals[:], true, pre)
	}
	var args operands
	e.evalOperands(n, &args)
	list, isList := args.list(), args.isList
	return semverOf(list, isList, pre)
}

// semverOf is sem_ver over [version, operator, version].
func semverOf(list []value, isList bool, pre *semverArgs) value {
	if !isList || len(list) != 3 {
		return null
	}
	if pre == nil {
		pre = &semverArgs{}
	}
	op := pre.op
	if !pre.constOp {
		if list[1].k == kStr {
			op = semver.ParseOp(list[1].str())
		}
	}
	left, lok := pre.left, pre.leftOK
	if !pre.constLeft {
		left, lok = versionOf(list[0])
	}
	right, rok := pre.right, pre.rightOK
	if !pre.constRight {
		right, rok = versionOf(list[2])
	}
	if op == semver.Invalid || !lok || !rok {
		return null
	}
	return boolVal(op.Holds(&left, &right))
}

// fracSpec is what is known about a fractional at load: when every weight
// is a constant, they are validated and summed once, and the variants that
// are expressions are evaluated into a buffer on the stack.
type fracSpec struct {
	by        *node             // the bucketing expression, if the rule has one
	table     *fractional.Table // nil when every weight is zero: always null
	variants  []value
	exprs     []*node // per bucket, the variant's expression; nil when variants holds it
	exprCount int     // how many variants are expressions
}

// maxComputedVariants bounds the stack buffer for variants that are
// expressions; a rule with more of them takes the general path.
const maxComputedVariants = 16

// bucketParts returns a bucket's variant and weight when they are known
// at load: a constant bucket, or a written array whose weight is constant
// and whose variant may be an expression (variantExpr). ok is false for
// anything the general path must judge at evaluation time.
func bucketParts(b *node) (variant value, variantExpr *node, weight value, hasWeight, ok bool) {
	if b.isConst() {
		if b.lit.k != kArr || arrLen(b.lit) == 0 {
			return value{}, nil, value{}, false, true
		}
		if arrLen(b.lit) >= 2 {
			weight, hasWeight = arrAt(b.lit, 1), true
		}
		return arrAt(b.lit, 0), nil, weight, hasWeight, true
	}
	if b.op != opArray || len(b.args) == 0 {
		return value{}, nil, value{}, false, false
	}
	if len(b.args) >= 2 {
		w := b.args[1]
		if !w.isConst() || (w.lit.k != kNum && w.lit.k != kNull) {
			return value{}, nil, value{}, false, false
		}
		weight, hasWeight = w.lit, true
	}
	v := b.args[0]
	if v.isConst() {
		if v.lit.k == kArr || v.lit.isObject() {
			return value{}, nil, value{}, false, false
		}
		return v.lit, nil, weight, hasWeight, true
	}
	return value{}, v, weight, hasWeight, true
}

func precomputeFractional(n *node, at *loc) (*fracSpec, error) {
	if !n.list || len(n.args) == 0 {
		return nil, nil
	}
	spec := &fracSpec{}
	buckets := n.args
	if first := n.args[0]; first.op != opArray && !(first.isConst() && first.lit.k == kArr) {
		spec.by = first
		buckets = n.args[1:]
	}
	offset := len(n.args) - len(buckets) // the bucketing expression, if any
	weights := make([]float64, 0, len(buckets))
	exprs := 0
	for i, b := range buckets {
		variant, expr, wv, hasWeight, ok := bucketParts(b)
		if !ok {
			return nil, nil // computed buckets: evaluated and checked each time
		}
		bucketAt := at.index(i + offset)
		if b.isConst() && (b.lit.k != kArr || arrLen(b.lit) == 0) {
			return nil, compileErr(&bucketAt, "a bucket must be [variant, weight] or [variant]")
		}
		if expr == nil && (variant.k == kArr || variant.isObject()) {
			return nil, compileErr(&bucketAt, "a bucket's variant must be a string, boolean, number or null")
		}
		w := 1.0
		if hasWeight {
			switch wv.k {
			case kNum:
				w = wv.n
			case kNull:
			default:
				return nil, compileErr(&bucketAt, "weight must be a number")
			}
		}
		if expr != nil {
			exprs++
		}
		spec.variants = append(spec.variants, variant)
		spec.exprs = append(spec.exprs, expr)
		weights = append(weights, w)
	}
	if exprs > maxComputedVariants {
		return nil, nil
	}
	spec.exprCount = exprs
	table, err := fractional.NewTable(weights)
	if err != nil && !errors.Is(err, fractional.ErrNoWeight) {
		if spec.exprCount > 0 {
			// The general path answers null for such weights at
			// evaluation, and a rule written with expressions keeps that.
			return nil, nil
		}
		return nil, compileErr(at, "invalid weights: %v", err)
	}
	spec.table = table
	return spec, nil
}

func (e *evalState) fractional(n *node) value {
	if n.x != nil && n.x.fraction != nil {
		spec := n.x.fraction
		var by value
		if spec.by != nil {
			by = e.evaluate(spec.by)
		}
		if by.k != kArr {
			// The variants that are expressions are evaluated into a buffer
			// on the stack, which is zeroed on every call: only as large a
			// one as the rule needs.
			switch {
			case spec.exprCount == 0:
				i := e.pickBucket(spec, by)
				if i < 0 {
					return null
				}
				return spec.variants[i]
			case spec.exprCount <= 2:
				var computed [2]value
				return e.pickComputed(spec, by, computed[:])
			}
			var computed [maxComputedVariants]value
			return e.pickComputed(spec, by, computed[:])
		}
		// The bucketing expression produced an array, which makes it a
		// bucket: fall through to the general form.
	}
	var args operands
	e.evalOperands(n, &args)
	list, isList := args.list(), args.isList
	return e.fractionalOf(list, isList)
}

// pickComputed is fractional's choice of bucket when some variants are
// expressions: every one is evaluated first, as in the general form, and one
// that is an array or an object makes the operator null. computed holds
// their values.
func (e *evalState) pickComputed(spec *fracSpec, by value, computed []value) value {
	j := 0
	for _, x := range spec.exprs {
		if x == nil {
			continue
		}
		v := e.evaluate(x)
		if v.k == kArr || v.isObject() {
			return null
		}
		computed[j] = v
		j++
	}
	i := e.pickBucket(spec, by)
	if i < 0 {
		return null
	}
	if spec.exprs[i] != nil {
		j := 0
		for _, x := range spec.exprs[:i] {
			if x != nil {
				j++
			}
		}
		return computed[j]
	}
	return spec.variants[i]
}

// pickBucket is the bucket fractional chooses for by, or -1 for none.
func (e *evalState) pickBucket(spec *fracSpec, by value) int {
	if spec.table == nil {
		return -1
	}
	h, ok := e.bucketHash(spec.by != nil, by)
	if e.trace != nil {
		return e.tracePick(spec, by, h, ok)
	}
	if !ok {
		return -1
	}
	return spec.table.Pick(e.fs.version, h)
}

// tracePick is pickBucket's choice in an evaluation that is recorded, made
// with Choose so that the tracer is handed the numbers that made it.
func (e *evalState) tracePick(spec *fracSpec, by value, h uint32, ok bool) int {
	variants := make([]any, len(spec.variants))
	for i, x := range spec.exprs {
		if x != nil {
			variants[i] = e.trace.result(x)
		} else {
			variants[i] = e.toAny(spec.variants[i])
		}
	}
	w := &fracWork{hasBy: spec.by != nil, by: by, ok: ok, total: spec.table.Total(), variants: variants}
	return e.traceChoice(w, h, spec.table.Weights())
}

// traceChoice chooses the bucket for the hash h, or none without an input
// (w.ok), as Pick does, and hands the choice to the tracer with the rest of
// w.
func (e *evalState) traceChoice(w *fracWork, h uint32, weights []uint32) int {
	w.choice = fractional.Choice{Hash: h, Index: -1}
	if w.ok {
		w.choice = fractional.Choose(e.fs.version, h, weights, w.total)
	}
	e.trace.bucketed(e, w, weights)
	return w.choice.Index
}

// fractionalOf is fractional over evaluated arguments:
// [bucketBy?, [variant, weight?]…].
func (e *evalState) fractionalOf(list []value, isList bool) value {
	if !isList || len(list) == 0 {
		return null
	}
	buckets := list
	var by value
	hasBy := buckets[0].k != kArr
	if hasBy {
		by = buckets[0]
		buckets = buckets[1:]
	}
	var wbuf [16]uint32
	weights := wbuf[:0]
	for _, b := range buckets {
		if b.k != kArr || arrLen(b) == 0 {
			return null
		}
		if v := arrAt(b, 0); v.k == kArr || v.isObject() {
			return null
		}
		w := uint32(1)
		if arrLen(b) >= 2 {
			switch wv := arrAt(b, 1); wv.k {
			case kNum:
				var err error
				if w, err = fractional.Weight(wv.n); err != nil {
					return null
				}
			case kNull:
			default:
				return null
			}
		}
		weights = append(weights, w)
	}
	total, err := fractional.Sum(weights)
	if err != nil {
		return null
	}
	h, ok := e.bucketHash(hasBy, by)
	var i int
	switch {
	case e.trace != nil:
		i = e.traceOf(&fracWork{hasBy: hasBy, by: by, ok: ok, total: total}, h, weights, buckets)
	case !ok:
		return null
	default:
		i = fractional.Pick(e.fs.version, h, weights, total)
	}
	if i < 0 {
		return null
	}
	return arrAt(buckets[i], 0)
}

// traceOf is fractionalOf's choice in an evaluation that is recorded, as
// tracePick is pickBucket's.
func (e *evalState) traceOf(w *fracWork, h uint32, weights []uint32, buckets []value) int {
	w.variants = make([]any, len(buckets))
	for i, b := range buckets {
		w.variants[i] = e.toAny(arrAt(b, 0))
	}
	return e.traceChoice(w, h, weights)
}

// bucketHash hashes the bucketing input of the configured version. Without
// a bucketing value (or, before v3, with a null one) the input comes from
// the flag key and a non-empty targeting key.
func (e *evalState) bucketHash(hasBy bool, by value) (uint32, bool) {
	v := e.fs.version
	if bucketsByValue(v, hasBy, by) {
		if s, ok := by.ref.(string); ok && by.k == kStr {
			return fractional.HashString(v, s), true
		}
		switch {
		case v != fractional.V3:
			// Before v3 only strings are hashed, a time as its JSON text.
			if by.k == kStr {
				return fractional.HashString(v, by.str()), true
			}
			return 0, false
		case by.k == kNull:
			return 0, false
		}
		h, err := fractional.HashValue(v, e.hashable(by))
		return h, err == nil
	}
	// An empty targeting key is none, as in OpenFeature and in the flagd
	// daemon, whatever the version.
	key := e.rootGet(targetingKeyKey)
	if key.k != kStr || key.str() == "" {
		return 0, false
	}
	return fractional.HashDefault(v, e.f.key, key.str()), true
}

// bucketsByValue reports whether fractional hashes its bucketing value
// rather than the flag key and the targeting key.
func bucketsByValue(v fractional.Version, hasBy bool, by value) bool {
	return hasBy && (by.k != kNull || v == fractional.V3)
}

// hashable is the Go value v3 hashes for v: the caller's own value, as far
// as v was read from the context unchanged (a number of any Go type, a time,
// a container with whatever it holds), else v in the targeting language's
// model, where numbers a rule computed are float64.
func (e *evalState) hashable(v value) any {
	switch v.k {
	case kNum:
		if v.ref != nil && !v.goInt() {
			return v.ref
		}
		return v.n
	case kStr:
		if t, ok := v.ref.(*goText); ok {
			return t.x
		}
		return v.str()
	case kBool:
		return v.b
	case kArr:
		if _, computed := v.ref.([]value); !computed {
			return v.ref
		}
	case kObj:
		return v.ref
	}
	return e.toAny(v)
}
