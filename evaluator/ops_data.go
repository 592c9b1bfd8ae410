package evaluator

import "maps"

// absent reports whether name, the i-th name of missing or missing_some,
// is null or absent in the current data: var with an evaluated argument.
func (e *evalState) absent(n *node, i int, name value) bool {
	if n.x != nil && n.x.names != nil {
		return e.applyVar(&n.x.names[i], e.cur).k == kNull
	}
	v, ok := e.getVar(name, e.cur)
	if !ok {
		opFail(e, n, "names must be strings, numbers or [name, default]")
	}
	return v.k == kNull
}

// missing lists the names (as written) whose values are null or absent.
func (e *evalState) missing(n *node) value {
	var args operands
	e.evalOperands(n, &args)
	list, single, isList := args.list(), args.single, args.isList
	names := list
	if !isList {
		if single.k != kStr {
			return opFail(e, n, "needs a name or an array of names")
		}
		names = []value{single}
	}
	out := []value{}
	for i, name := range names {
		if e.absent(n, i, name) {
			out = append(out, name)
		}
	}
	return arrVal(out)
}

// missingSome is missing_some: [need, names]; the missing names when fewer
// than need are present, else an empty array.
func (e *evalState) missingSome(n *node) value {
	var args operands
	e.evalOperands(n, &args)
	list, isList := args.list(), args.isList
	if !isList || len(list) < 2 {
		return opFail(e, n, "needs a count and an array of names")
	}
	need := toInt(e.number(n, list[0]))
	names := list[1]
	if names.k != kArr {
		return opFail(e, n, "needs an array of names")
	}
	missing := []value{}
	found := 0
	for i, l := 0, arrLen(names); i < l; i++ {
		name := arrAt(names, i)
		if e.absent(n, i, name) {
			missing = append(missing, name)
		} else {
			found++
		}
	}
	if need > found {
		return arrVal(missing)
	}
	return arrVal([]value{})
}

// precomputeNames reads the names of missing and missing_some as var
// arguments once, when the rule writes them all as constants. Names that
// var may fail on are left to evaluation, which reports them.
func precomputeNames(n *node) []varSpec {
	var names []value
	switch {
	case n.op == opMissingSome:
		if !n.list || len(n.args) < 2 || !n.args[1].isConst() || n.args[1].lit.k != kArr {
			return nil
		}
		for i, l := 0, arrLen(n.args[1].lit); i < l; i++ {
			names = append(names, arrAt(n.args[1].lit, i))
		}
	case n.list:
		for _, a := range n.args {
			if !a.isConst() {
				return nil
			}
			names = append(names, a.lit)
		}
	case n.args[0].isConst():
		names = []value{n.args[0].lit}
	}
	if len(names) == 0 {
		return nil
	}
	specs := make([]varSpec, len(names))
	for i, name := range names {
		spec, why := varSpecOf(name)
		if why != "" {
			return nil
		}
		specs[i] = spec
	}
	return specs
}

// set is [object, key, value]: a copy of object with key set.
func (e *evalState) set(n *node) value {
	var args operands
	e.evalOperands(n, &args)
	list, isList := args.list(), args.isList
	if !isList {
		return opFail(e, n, "needs an array of arguments")
	}
	switch {
	case len(list) == 0:
		return null
	case len(list) < 3:
		return list[0]
	}
	obj := list[0]
	if !obj.isObject() {
		return obj
	}
	key := list[1]
	if key.k != kStr {
		return opFail(e, n, "key must be a string")
	}
	// Nothing in the engine modifies an object once it is made, so a copy of
	// the top level is enough to leave obj as it was.
	src, _ := e.toAny(obj).(map[string]any)
	out := make(map[string]any, len(src)+1)
	maps.Copy(out, src)
	out[key.str()] = e.toAny(list[2])
	return objVal(out)
}

// contains is contains_all, contains_any and contains_none over two arrays.
func (e *evalState) contains(n *node) value {
	var args operands
	e.evalOperands(n, &args)
	list, isList := args.list(), args.isList
	none := n.op == opContainsNone
	if !isList || len(list) != 2 || list[0].k != kArr || list[1].k != kArr {
		return boolVal(none)
	}
	search, check := list[0], list[1]
	for i, l := 0, arrLen(check); i < l; i++ {
		found := e.member(n, search, arrAt(check, i))
		if e.err != nil {
			return null
		}
		switch {
		case n.op == opContainsAll && !found:
			return falseVal
		case n.op == opContainsAny && found:
			return trueVal
		case none && found:
			return falseVal
		}
	}
	return boolVal(n.op != opContainsAny)
}

// member compares like the reference engine's contains_* operators: Go ==
// (which fails on two arrays or two objects), then numbers by value.
func (e *evalState) member(n *node, list, x value) bool {
	for i, l := 0, arrLen(list); i < l; i++ {
		el := arrAt(list, i)
		if (el.k == kArr && x.k == kArr) || (el.isObject() && x.isObject()) {
			opFail(e, n, "arrays and objects cannot be compared")
			return false
		}
		if identical(el, x) || (el.k == kNum && x.k == kNum && el.n == x.n) {
			return true
		}
	}
	return false
}
