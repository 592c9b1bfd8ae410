package evaluator

import (
	"cmp"
	"strings"
)

// test is the truthiness of n's value. Conditions (of if, and the operands
// of and / or beneath one) only need truthiness, and for the operators that
// answer booleans it is cheaper to compute it directly than to build the
// value and then inspect it. Evaluation order, short-circuiting and errors
// are exactly those of eval.
func (e *env) test(n *node) bool {
	if e.trace != nil {
		// Every operation explained goes through eval.
		return truthy(e.eval(n))
	}
	switch n.op {
	case opConst:
		return truthy(n.lit)
	case opAnd:
		for _, a := range n.args {
			if !e.test(a) {
				return false
			}
		}
		return len(n.args) > 0
	case opOr:
		for _, a := range n.args {
			if e.test(a) {
				return true
			}
		}
		return false
	case opIf:
		l := len(n.args)
		for i := 0; i < l-1; i += 2 {
			if e.test(n.args[i]) {
				return e.test(n.args[i+1])
			}
		}
		if l%2 == 1 {
			return e.test(n.args[l-1])
		}
		return false
	case opEq, opNe, opLt, opLe, opGt, opGe, opIn:
		if n.argc() == 2 {
			return e.binary(n).b
		}
	case opStartsWith, opEndsWith:
		return e.affix(n).b
	case opSemVer:
		return e.semver(n).b
	}
	return truthy(e.eval(n))
}

// binary evaluates ==, !=, <, <=, >, >= and in with two written operands.
// The usual shape, a context attribute against a constant, is compared
// straight from the context's own Go value.
func (e *env) binary(n *node) value {
	a, b := n.args[0], n.args[1]
	if n.attrConst && e.atRoot() {
		x := e.rootAttr(a.v)
		switch t := x.(type) {
		case string:
			if n.exact {
				// The bytes decide, valid UTF-8 or not (see node.exact).
				if n.op == opIn {
					return boolVal(n.x.in.has(t))
				}
				return boolVal((t == b.lit.str()) == (n.op == opEq))
			}
			if !validText(t) {
				break
			}
			if n.op == opIn && n.x.in != nil {
				return boolVal(n.x.in.has(t))
			}
			if c := b.lit; c.k == kStr {
				return boolVal(stringOp(n, t, c.str()))
			}
		case float64:
			if c := b.lit; c.k == kNum && !c.goInt() {
				return boolVal(numberOp(n, t, c.n))
			}
		case int:
			if c := b.lit; c.k == kNum && !c.goInt() {
				return boolVal(numberOp(n, float64(t), c.n))
			}
		}
		return e.binaryOf(n, orDefault(x, a.v.def), b.lit)
	}
	return e.binaryOf(n, e.ev(a), e.ev(b))
}

func (e *env) binaryOf(n *node, a, b value) value {
	switch n.op {
	case opEq:
		return boolVal(looseEquals(a, b))
	case opNe:
		return boolVal(!looseEquals(a, b))
	case opIn:
		return e.inOf(n, a, b)
	}
	return compare2(n.op, a, b)
}

// stringOp is binaryOf for two strings.
func stringOp(n *node, a, b string) bool {
	if n.op == opIn {
		return strings.Contains(b, a) // with a string haystack
	}
	return ordered(n.op, a, b)
}

// numberOp is binaryOf for two numbers (in is never reached with a
// number constant as its haystack: that answers false).
func numberOp(n *node, a, b float64) bool {
	if n.op == opIn {
		return false
	}
	return ordered(n.op, a, b)
}

// ordered compares two strings or two numbers directly. For numbers it
// agrees with the general path: with NaN, only != holds.
func ordered[T cmp.Ordered](op opcode, a, b T) bool {
	switch op {
	case opEq:
		return a == b
	case opNe:
		return a != b
	case opLt:
		return a < b
	case opLe:
		return a <= b
	case opGt:
		return a > b
	}
	return a >= b
}
