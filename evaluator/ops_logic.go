package evaluator

// and answers the first falsy argument, or the last one; null when there
// are none. Arguments after the deciding one are not evaluated.
func (e *evalState) and(n *node) value {
	last := null
	for _, a := range n.args {
		last = e.evaluate(a)
		if !truthy(last) {
			return last
		}
	}
	return last
}

// or answers the first truthy argument, or the last one.
func (e *evalState) or(n *node) value {
	last := null
	for _, a := range n.args {
		last = e.evaluate(a)
		if truthy(last) {
			return last
		}
	}
	return last
}

// cond is if / ?: with any number of condition-result pairs and an
// optional final else.
func (e *evalState) cond(n *node) value {
	l := len(n.args)
	for i := 0; i < l-1; i += 2 {
		if truthy(e.operand(n.args[i])) {
			return e.operand(n.args[i+1])
		}
	}
	if l%2 == 1 {
		return e.operand(n.args[l-1])
	}
	return null
}

// not is "!" and "!!": the first argument of a list (an empty list counts
// as itself), or the single value.
func (e *evalState) not(n *node) value {
	var args operands
	e.evalOperands(n, &args)
	list, single, isList := args.list(), args.single, args.isList
	var t bool // an empty list is falsy
	switch {
	case !isList:
		t = truthy(single)
	case len(list) > 0:
		t = truthy(list[0])
	}
	if n.op == opNot {
		return boolVal(!t)
	}
	return boolVal(t)
}
