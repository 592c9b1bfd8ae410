package evaluator

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

func (e *env) eq(n *node) value {
	if n.argc() == 2 {
		return e.binary(n)
	}
	var buf argBuf
	k, more, _, isList := e.args(n, &buf)
	list := listOf(&buf, k, more)
	if !isList {
		return opFail(e, n, "needs an array of arguments")
	}
	result := len(list) >= 2 && looseEquals(list[0], list[1])
	if n.op == opNe {
		return boolVal(!result)
	}
	return boolVal(result)
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

func (e *env) strictEq(n *node) value {
	if n.argc() == 2 {
		result := strictEquals(e.ev(n.args[0]), e.ev(n.args[1]))
		return boolVal(result != (n.op == opStrictNe))
	}
	var buf argBuf
	k, more, _, isList := e.args(n, &buf)
	list := listOf(&buf, k, more)
	result := isList && len(list) >= 2 && strictEquals(list[0], list[1])
	if n.op == opStrictNe {
		return boolVal(!result)
	}
	return boolVal(result)
}

// compare is <, <=, > and >=, with the three-argument "between" form.
func (e *env) compare(n *node) value {
	switch n.argc() {
	case 2:
		return e.binary(n)
	case 3:
		return compare3(n.op, e.ev(n.args[0]), e.ev(n.args[1]), e.ev(n.args[2]))
	}
	var buf argBuf
	k, more, _, isList := e.args(n, &buf)
	l := listOf(&buf, k, more)
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
