package evaluator

import "errors"

// argBuf holds evaluated arguments on the stack for the common arities.
type argBuf [6]value

// evalIn evaluates n with d as the data.
func (e *env) evalIn(n *node, d value) value {
	saved := e.cur
	e.cur = d
	v := e.eval(n)
	e.cur = saved
	return v
}

// appliedIn is applied with d as the data.
func (e *env) appliedIn(n *node, d value) value {
	saved := e.cur
	e.cur = d
	v := e.applied(n)
	e.cur = saved
	return v
}

// ev is eval with constants answered in place (it inlines).
func (e *env) ev(n *node) value {
	if n.op == opConst {
		return n.lit
	}
	return e.eval(n)
}

// eval evaluates n against the current data, e.cur.
func (e *env) eval(n *node) value {
	if e.trace != nil && e.trace.entered != n {
		return e.trace.eval(e, n)
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
			vals[i] = e.eval(a)
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

// args evaluates an operator's argument: every element of a written list,
// or the single expression, whose array value is then the list. The list
// goes into the caller's buf when it fits, for listOf: a slice of buf
// returned from here would move every buffer of the recursion to the heap.
func (e *env) args(n *node, buf *argBuf) (k int, more []value, one value, isList bool) {
	if n.list {
		if len(n.args) > len(buf) {
			more = make([]value, len(n.args))
			for i, a := range n.args {
				more[i] = e.ev(a)
			}
			return 0, more, null, true
		}
		for i, a := range n.args {
			buf[i] = e.ev(a)
		}
		return len(n.args), nil, null, true
	}
	v := e.eval(n.one)
	if v.k != kArr {
		return 0, nil, v, false
	}
	if vals, ok := v.ref.([]value); ok {
		return 0, vals, null, true
	}
	l := arrLen(v)
	if l > len(buf) {
		more = make([]value, l)
		for i := range l {
			more[i] = arrAt(v, i)
		}
		return 0, more, null, true
	}
	for i := range l {
		buf[i] = arrAt(v, i)
	}
	return l, nil, null, true
}

// listOf is the argument list args produced.
func listOf(buf *argBuf, k int, more []value) []value {
	if more != nil {
		return more
	}
	return buf[:k]
}

// evalVar evaluates a var node; substituted reports that the value came from
// an enclosing scope rather than from d.
func (e *env) evalVar(n *node) (v value, substituted bool) {
	if len(e.scopes) > e.base && !n.v.local {
		for i := e.base; i < len(e.scopes); i++ {
			if v := e.varIn(n, e.scopes[i]); v.k != kNull {
				return v, true
			}
		}
	}
	return e.varIn(n, e.cur), false
}

func (e *env) varIn(n *node, data value) value {
	spec := n.v
	if spec.dyn != nil {
		// A computed path is evaluated against the data it is looked up in,
		// never through enclosing scopes, as in the reference engine.
		saved := e.hideScopes()
		arg := e.evalIn(spec.dyn, data)
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
func (e *env) applied(n *node) value {
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
	return e.eval(n)
}

// subject evaluates the array an iteration walks, with the reference
// engine's rules: a written array as it is, an operation's value, and a var
// replaced by an enclosing scope only if it is an array or an object.
func (e *env) subject(n *node) value {
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
	return e.eval(n)
}

// evalError is a failure while running a rule: the reference engine panics
// (and flagd answers PARSE_ERROR) in the same situations.
type evalError struct {
	op  string
	msg string
}

func (e *evalError) Error() string { return e.op + ": " + e.msg }

func opFail(e *env, n *node, msg string) value {
	return e.fail(&evalError{op: n.name(), msg: msg})
}

// at is list[i], or null past the end.
func at(list []value, i int) value {
	if i < len(list) {
		return list[i]
	}
	return null
}
