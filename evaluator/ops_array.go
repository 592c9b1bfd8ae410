package evaluator

// mapFilter is map and filter. Each element becomes the data of the
// expression; filter also opens a scope with the data it was called with.
func (e *evalState) mapFilter(n *node) value {
	if len(n.args) < 2 {
		return arrVal([]value{})
	}
	subj := e.subject(n.args[0])
	if subj.k == kNull {
		return arrVal([]value{})
	}
	if subj.k != kArr {
		return opFail(e, n, "can only walk an array")
	}
	l := arrLen(subj)
	if n.op == opFilter {
		e.pushScope(e.cur)
		defer e.popScope(1)
	}
	out := make([]value, 0, l)
	for i := range l {
		el := arrAt(subj, i)
		v := e.evaluateOn(n.args[1], el)
		if n.op == opMap {
			out = append(out, v)
		} else if truthy(v) {
			out = append(out, el)
		}
	}
	return arrVal(out)
}

// reduce folds an array into the type of its initial value (boolean,
// number or string), skipping null elements.
func (e *evalState) reduce(n *node) value {
	if len(n.args) < 3 {
		return numVal(0)
	}
	init := n.args[2]
	var acc value
	if init.op == opConst {
		acc = init.lit
	} else {
		acc = e.evaluate(init)
	}
	state := &reduceState{}
	switch acc.k {
	case kBool:
		state.valueType = "bool"
	case kNum:
		state.valueType = "number"
		acc = numVal(acc.n)
	case kStr:
		state.valueType = "string"
	default:
		return opFail(e, n, "initial value must be a boolean, a number or a string")
	}
	state.accumulator = acc
	state.current = numVal(0)
	subj := e.subject(n.args[0])
	if subj.k == kNull {
		return numVal(0)
	}
	if subj.k != kArr {
		return opFail(e, n, "can only walk an array")
	}
	data := value{k: kReduce, ref: state}
	for i, l := 0, arrLen(subj); i < l; i++ {
		el := arrAt(subj, i)
		if el.k == kNull {
			continue
		}
		state.current = el
		v := e.appliedOn(n.args[1], data)
		switch state.valueType {
		case "bool":
			state.accumulator = boolVal(truthy(v))
		case "number":
			state.accumulator = numVal(e.number(n, v))
		default:
			state.accumulator = strVal(e.text(n, v))
		}
		if e.err != nil {
			return null
		}
	}
	return state.accumulator
}

// quantifier is all, some and none. The scopes each opens for its condition
// follow the reference engine: all opens one with the element, some one
// with its data and then one with the element, none one with its data.
func (e *evalState) quantifier(n *node) value {
	empty := n.op == opNone // the answer when there is nothing to test
	subj := e.subject(n.args[0])
	if !truthy(subj) {
		return boolVal(empty)
	}
	if len(n.args) < 2 {
		return opFail(e, n, "needs a condition")
	}
	if subj.k != kArr {
		return opFail(e, n, "can only walk an array")
	}
	if n.op != opAll {
		e.pushScope(e.cur)
		defer e.popScope(1)
	}
	for i, l := 0, arrLen(subj); i < l; i++ {
		el := arrAt(subj, i)
		var t bool
		if n.op == opNone {
			t = truthy(e.appliedOn(n.args[1], el))
		} else {
			e.pushScope(el)
			t = truthy(e.appliedOn(n.args[1], el))
			e.popScope(1)
		}
		if e.err != nil {
			return null
		}
		switch {
		case n.op == opAll && !t:
			return falseVal
		case n.op == opSome && t:
			return trueVal
		case n.op == opNone && t:
			return falseVal
		}
	}
	return boolVal(n.op != opSome)
}
