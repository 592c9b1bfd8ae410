package evaluator

import "errors"

// operands are an operator's arguments, evaluated by evalOperands: the
// list written in the rule, or the value of the expression that computes
// it, which is a list when it is an array. The list is kept in buf, on the
// caller's stack, when it fits.
type operands struct {
	buf    [6]value
	n      int     // the list is buf[:n] …
	long   []value // … or this, when it does not fit
	single value   // the value that is not a list
	isList bool
}

// list is the list of the operands, empty when they are not one.
func (o *operands) list() []value {
	if o.long != nil {
		return o.long
	}
	return o.buf[:o.n]
}

// evaluateOn evaluates n with d as the data.
func (e *evalState) evaluateOn(n *node, d value) value {
	saved := e.cur
	e.cur = d
	v := e.evaluate(n)
	e.cur = saved
	return v
}

// appliedOn is applied with d as the data.
func (e *evalState) appliedOn(n *node, d value) value {
	saved := e.cur
	e.cur = d
	v := e.applied(n)
	e.cur = saved
	return v
}

// operand is evaluate for an operator's argument, with a constant
// answered in place: it inlines, where evaluate does not.
func (e *evalState) operand(n *node) value {
	if n.op == opConst {
		return n.lit
	}
	return e.evaluate(n)
}

// evaluate evaluates n against the current data, e.cur.
func (e *evalState) evaluate(n *node) value {
	if e.trace != nil && e.trace.entered != n {
		return e.trace.evaluate(e, n)
	}
	if n.op == opVar && n.v.plain && e.atRoot() {
		// The most common node, a context attribute, before the dispatch.
		return e.walkRaw(e.attr(n.v.path.first), n.v.path.rest, n.v.def)
	}
	switch n.op {
	case opConst:
		return n.lit
	case opVar:
		v, _ := e.evalVar(n)
		return v
	case opArray:
		vals := make([]value, len(n.args))
		for i, a := range n.args {
			vals[i] = e.evaluate(a)
		}
		return arrVal(vals)
	case opAnd:
		return e.and(n)
	case opOr:
		return e.or(n)
	case opIf:
		return e.cond(n)
	case opNot, opNotNot:
		return e.not(n)
	case opEq, opNe:
		return e.eq(n)
	case opStrictEq, opStrictNe:
		return e.strictEq(n)
	case opLt, opLe, opGt, opGe:
		return e.compare(n)
	case opAdd:
		return e.add(n)
	case opSub, opMul, opDiv:
		return e.arith(n)
	case opMod:
		return e.mod(n)
	case opMin, opMax:
		return e.minMax(n)
	case opAbs:
		return e.abs(n)
	case opCat:
		return e.cat(n)
	case opSubstr:
		return e.substr(n)
	case opIn:
		return e.in(n)
	case opMerge:
		return e.merge(n)
	case opMap, opFilter:
		return e.mapFilter(n)
	case opReduce:
		return e.reduce(n)
	case opAll, opSome, opNone:
		return e.quantifier(n)
	case opMissing:
		return e.missing(n)
	case opMissingSome:
		return e.missingSome(n)
	case opSet:
		return e.set(n)
	case opContainsAll, opContainsAny, opContainsNone:
		return e.contains(n)
	case opStartsWith, opEndsWith:
		return e.affix(n)
	case opSemVer:
		return e.semver(n)
	case opFractional:
		return e.fractional(n)
	case opBroken:
		if n.x.broken.null {
			return null
		}
		return e.fail(n.x.broken.err)
	}
	return e.fail(errors.New("internal: unknown opcode"))
}

// evalOperands evaluates the argument of n into o. The list stays in o
// rather than being returned: a slice of o.buf returned from here would
// move every operator's operands to the heap.
func (e *evalState) evalOperands(n *node, o *operands) {
	if n.list {
		o.isList = true
		if len(n.args) > len(o.buf) {
			o.long = make([]value, len(n.args))
			for i, a := range n.args {
				o.long[i] = e.operand(a)
			}
			return
		}
		for i, a := range n.args {
			o.buf[i] = e.operand(a)
		}
		o.n = len(n.args)
		return
	}
	v := e.evaluate(n.args[0])
	if v.k != kArr {
		o.single = v
		return
	}
	o.isList = true
	if vals, ok := v.ref.([]value); ok {
		o.long = vals
		return
	}
	l := arrLen(v)
	if l > len(o.buf) {
		o.long = make([]value, l)
		for i := range l {
			o.long[i] = arrAt(v, i)
		}
		return
	}
	for i := range l {
		o.buf[i] = arrAt(v, i)
	}
	o.n = l
}

// evalVar evaluates a var node; substituted reports that the value came from
// an enclosing scope rather than from d.
func (e *evalState) evalVar(n *node) (v value, substituted bool) {
	if len(e.scopes) > e.base && !n.v.local {
		for i := e.base; i < len(e.scopes); i++ {
			if v := e.varIn(n, e.scopes[i]); v.k != kNull {
				return v, true
			}
		}
	}
	return e.varIn(n, e.cur), false
}

func (e *evalState) varIn(n *node, data value) value {
	spec := n.v
	if spec.dyn != nil {
		// A computed path is evaluated against the data it is looked up in,
		// never through enclosing scopes, as in the reference engine.
		saved := e.hideScopes()
		arg := e.evaluateOn(spec.dyn, data)
		e.base = saved
		v, ok := e.getVar(arg, data)
		if !ok {
			return e.fail(&evalError{op: "var", msg: "path must be a string, a number or [path, default]"})
		}
		return v
	}
	return e.applyVar(spec, data)
}

// applied evaluates n where the reference engine "applies" a rule fragment
// rather than evaluating it as a value (the condition of all/some/none and
// the step of reduce): the fragment must be an operation, or a var that an
// enclosing scope replaced with an object.
func (e *evalState) applied(n *node) value {
	switch n.op {
	case opVar:
		v, substituted := e.evalVar(n)
		if substituted && !v.isObject() {
			return e.fail(&evalError{op: "var", msg: "a value from an enclosing scope is used as a rule"})
		}
		return v
	case opConst:
		if n.lit.isObject() {
			return n.lit
		}
		return e.fail(&evalError{op: "rule", msg: "condition is not an operation"})
	case opArray:
		return e.fail(&evalError{op: "rule", msg: "condition is not an operation"})
	}
	return e.evaluate(n)
}

// subject evaluates the array an iteration walks, with the reference
// engine's rules: a written array as it is, an operation's value, and a var
// replaced by an enclosing scope only if it is an array or an object.
func (e *evalState) subject(n *node) value {
	switch n.op {
	case opConst:
		if n.lit.k == kArr || n.lit.isObject() {
			return n.lit
		}
		return null
	case opVar:
		v, substituted := e.evalVar(n)
		if substituted && v.k != kArr && !v.isObject() {
			return null
		}
		return v
	}
	return e.evaluate(n)
}

// evalError is a failure while running a rule: the reference engine panics
// (and flagd answers PARSE_ERROR) in the same situations.
type evalError struct {
	op  string
	msg string
}

func (e *evalError) Error() string { return e.op + ": " + e.msg }

func opFail(e *evalState, n *node, msg string) value {
	return e.fail(&evalError{op: n.name(), msg: msg})
}

// at is list[i], or null past the end.
func at(list []value, i int) value {
	if i < len(list) {
		return list[i]
	}
	return null
}
