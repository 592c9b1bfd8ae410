package evaluator

import (
	"cmp"
	"strings"
)

// looseEquals is "==": null equals only null, two strings compare as
// strings, anything else compares as numbers (so "1" == 1 and true == 1,
// and containers, which read as NaN, equal nothing).
func looseEquals(a, b value) bool {
	if a.k == kStr && b.k == kStr {
		return a.str() == b.str()
	}
	if a.k == kNull || b.k == kNull {
		return a.k == kNull && b.k == kNull
	}
	return looseNumber(a) == looseNumber(b)
}

// less is "<" between two values: strings by code points, anything else
// as numbers.
func less(a, b value) bool {
	if a.k == kStr && b.k == kStr {
		return a.str() < b.str()
	}
	return looseNumber(b) > looseNumber(a)
}

func (e *evalState) eq(n *node) value {
	if n.argc() == 2 {
		return e.compareTwo(n)
	}
	var args operands
	e.evalOperands(n, &args)
	list, isList := args.list(), args.isList
	if !isList {
		return opFail(e, n, "needs an array of arguments")
	}
	result := len(list) >= 2 && looseEquals(list[0], list[1])
	if n.op == opNe {
		return boolVal(!result)
	}
	return boolVal(result)
}

// compareTwo is ==, !=, <, <=, >, >= and in between two written
// operands. The usual shape, a context attribute against a constant
// (node.attrConst), is decided straight from the context's own Go value
// when attrAgainstConst can; any other is compared as values.
func (e *evalState) compareTwo(n *node) value {
	var a, b value
	if n.attrConst && e.atRoot() {
		attr := e.attr(n.args[0].v.path.first)
		if v, ok := attrAgainstConst(n, attr); ok {
			return v
		}
		a, b = orDefault(attr, n.args[0].v.def), n.args[1].lit
	} else {
		a, b = e.operand(n.args[0]), e.operand(n.args[1])
	}
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

// attrAgainstConst decides the operation n of compareTwo for the value
// attr of its attribute without making a value of it, for a string or a
// number; ok is false for anything else.
func attrAgainstConst(n *node, attr any) (v value, ok bool) {
	c := n.args[1].lit
	switch t := attr.(type) {
	case string:
		if n.exact {
			// The bytes decide, valid UTF-8 or not (see node.exact).
			if n.op == opIn {
				return boolVal(n.x.in.has(t)), true
			}
			return boolVal((t == c.str()) == (n.op == opEq)), true
		}
		if !validText(t) {
			break
		}
		if n.op == opIn && n.x != nil && n.x.in != nil {
			return boolVal(n.x.in.has(t)), true
		}
		if c.k == kStr {
			return boolVal(stringOp(n, t, c.str())), true
		}
	case float64:
		if c.k == kNum && !c.goInt() {
			return boolVal(numberOp(n, t, c.n)), true
		}
	case int:
		if c.k == kNum && !c.goInt() {
			return boolVal(numberOp(n, float64(t), c.n)), true
		}
	}
	return null, false
}

// stringOp is n between two strings.
func stringOp(n *node, a, b string) bool {
	if n.op == opIn {
		return strings.Contains(b, a) // with a string haystack
	}
	return ordered(n.op, a, b)
}

// numberOp is n between two numbers (in is never reached with a
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

// goKind is the Go type the reference engine would hold the value in, which
// "===" compares before the values.
type goKind uint8

const (
	gkNull goKind = iota
	gkBool
	gkString
	gkFloat
	gkInt
	gkSlice
	gkMap
)

func kindOf(v value) goKind {
	switch v.k {
	case kBool:
		return gkBool
	case kStr:
		return gkString
	case kNum:
		if v.goInt() {
			return gkInt
		}
		return gkFloat
	case kArr:
		return gkSlice
	case kObj, kRoot, kFlagd, kReduce:
		return gkMap
	}
	return gkNull
}

func strictEquals(a, b value) bool {
	if a.k == kNull || b.k == kNull {
		return a.k == kNull && b.k == kNull
	}
	if kindOf(a) != kindOf(b) {
		return false
	}
	return looseEquals(a, b)
}

func (e *evalState) strictEq(n *node) value {
	if n.argc() == 2 {
		result := strictEquals(e.operand(n.args[0]), e.operand(n.args[1]))
		return boolVal(result != (n.op == opStrictNe))
	}
	var args operands
	e.evalOperands(n, &args)
	list, isList := args.list(), args.isList
	result := isList && len(list) >= 2 && strictEquals(list[0], list[1])
	if n.op == opStrictNe {
		return boolVal(!result)
	}
	return boolVal(result)
}

// compare is <, <=, > and >=, with the three-argument "between" form.
func (e *evalState) compare(n *node) value {
	switch n.argc() {
	case 2:
		return e.compareTwo(n)
	case 3:
		return compare3(n.op, e.operand(n.args[0]), e.operand(n.args[1]), e.operand(n.args[2]))
	}
	var args operands
	e.evalOperands(n, &args)
	l, isList := args.list(), args.isList
	switch {
	case !isList:
		return opFail(e, n, "needs an array of arguments")
	case len(l) < 2:
		return falseVal
	case len(l) == 3:
		return compare3(n.op, l[0], l[1], l[2])
	}
	return compare2(n.op, l[0], l[1])
}

func lessEq(x, y value) bool { return less(x, y) || looseEquals(x, y) }

// compare3 is the "between" form: a < b < c (or <=), and the same
// reversed for > and >=.
func compare3(op opcode, a, b, c value) value {
	switch op {
	case opLt:
		return boolVal(less(a, b) && less(b, c))
	case opLe:
		return boolVal(lessEq(a, b) && lessEq(b, c))
	case opGt:
		return boolVal(less(c, b) && less(b, a))
	default:
		return boolVal(lessEq(c, b) && lessEq(b, a))
	}
}

func compare2(op opcode, a, b value) value {
	switch op {
	case opLt:
		return boolVal(less(a, b))
	case opLe:
		return boolVal(lessEq(a, b))
	case opGt:
		return boolVal(less(b, a))
	default:
		return boolVal(lessEq(b, a))
	}
}
