package evaluator

import "math"

// number reads an arithmetic operand; booleans, null and containers are an
// error, as in the reference engine.
func (e *evalState) number(n *node, v value) float64 {
	f, ok := strictNumber(v)
	if !ok {
		opFail(e, n, "operand is not a number")
	}
	return f
}

// add is "+": a sum of any number of operands, or one value read as a
// number.
func (e *evalState) add(n *node) value {
	var args operands
	e.evalOperands(n, &args)
	list, single, isList := args.list(), args.single, args.isList
	if !isList {
		return numVal(e.number(n, single))
	}
	switch len(list) {
	case 0:
		return numVal(0)
	case 1:
		return numVal(e.number(n, list[0]))
	}
	sum := 0.0
	for _, v := range list {
		sum += e.number(n, v)
	}
	return numVal(sum)
}

// arith is "-", "*" and "/", folding left to right.
func (e *evalState) arith(n *node) value {
	var args operands
	e.evalOperands(n, &args)
	list, isList := args.list(), args.isList
	if !isList {
		return opFail(e, n, "needs an array of arguments")
	}
	l := list
	switch n.op {
	case opMul:
		product := 1.0
		for _, v := range l {
			product *= e.number(n, v)
		}
		return numVal(product)
	case opSub:
		switch len(l) {
		case 0:
			return value{k: kNum, ref: engineInt(0)}
		case 1:
			return numVal(-1 * e.number(n, l[0]))
		}
		acc := e.number(n, l[0])
		for _, v := range l[1:] {
			acc -= e.number(n, v)
		}
		return numVal(acc)
	default: // opDiv
		if len(l) == 0 {
			return value{k: kNum, ref: engineInt(0)}
		}
		acc := e.number(n, l[0])
		for _, v := range l[1:] {
			acc /= e.number(n, v)
		}
		return numVal(acc)
	}
}

func (e *evalState) mod(n *node) value {
	var args operands
	e.evalOperands(n, &args)
	list, isList := args.list(), args.isList
	if !isList || len(list) < 2 {
		return opFail(e, n, "needs two operands")
	}
	return numVal(math.Mod(e.number(n, list[0]), e.number(n, list[1])))
}

// minMax is min and max; null without operands.
func (e *evalState) minMax(n *node) value {
	var args operands
	e.evalOperands(n, &args)
	list, isList := args.list(), args.isList
	if !isList {
		return opFail(e, n, "needs an array of arguments")
	}
	if len(list) == 0 {
		return null
	}
	best := e.number(n, list[0])
	for _, v := range list[1:] {
		x := e.number(n, v)
		if (n.op == opMax && x > best) || (n.op == opMin && best > x) {
			best = x
		}
	}
	return numVal(best)
}

func (e *evalState) abs(n *node) value {
	var args operands
	e.evalOperands(n, &args)
	list, single, isList := args.list(), args.single, args.isList
	if !isList {
		return numVal(math.Abs(e.number(n, single)))
	}
	if len(list) == 0 {
		return opFail(e, n, "needs an operand")
	}
	return numVal(math.Abs(e.number(n, list[0])))
}
