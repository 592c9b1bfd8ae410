package evaluator

import (
	"math"
	"slices"
	"strings"
)

func (e *evalState) text(n *node, v value) string {
	s, ok := strictString(v)
	if !ok {
		opFail(e, n, "operand is not a string or a number")
	}
	return s
}

// cat concatenates; with two or more operands the reference engine trims
// surrounding white space from the result, and so do we.
func (e *evalState) cat(n *node) value {
	var args operands
	e.evalOperands(n, &args)
	list, single, isList := args.list(), args.single, args.isList
	if !isList {
		if single.k == kStr {
			return single
		}
		return opFail(e, n, "needs a string or an array of arguments")
	}
	switch len(list) {
	case 0:
		return strVal("")
	case 1:
		return strVal(e.text(n, list[0]))
	}
	var b strings.Builder
	for _, v := range list {
		b.WriteString(e.text(n, v))
	}
	return strVal(strings.TrimSpace(b.String()))
}

// substr takes [string, start, length?] counted in code points; negative
// start counts from the end, negative length drops characters from the end.
func (e *evalState) substr(n *node) value {
	var args operands
	e.evalOperands(n, &args)
	list, isList := args.list(), args.isList
	if !isList || len(list) < 2 {
		return opFail(e, n, "needs a string and a start")
	}
	runes := []rune(e.text(n, list[0]))
	from := toInt(e.number(n, list[1]))
	length := len(runes)
	if from < 0 {
		from += length
	}
	if from < 0 || from > length {
		return strVal(string(runes))
	}
	if len(list) == 3 {
		length = toInt(e.number(n, list[2]))
	}
	var to int
	if length < 0 {
		to = len(runes) + length
	} else {
		to = from + length
	}
	if to > len(runes) {
		to = len(runes)
	}
	if to < from || to < 0 {
		return opFail(e, n, "length reaches before the start")
	}
	return strVal(string(runes[from:to]))
}

// inSet is a constant list of strings, looked up as a set. Numbers are
// compared with each string read as a number, so those are kept too,
// sorted: a number is seldom looked up, and a slice is a fraction of a
// map's memory. Short lists are scanned: comparing a few strings beats
// hashing one.
type inSet struct {
	list []string
	strs map[string]struct{}
	nums []float64 // sorted, without NaN, which equals nothing
}

func (s *inSet) has(x string) bool {
	if s.strs == nil {
		for _, el := range s.list {
			if el == x {
				return true
			}
		}
		return false
	}
	_, ok := s.strs[x]
	return ok
}

// precomputeIn turns {"in": [x, ["a", "b", …]]} into set lookups when the
// list is constant and holds only strings.
func precomputeIn(n *node) *inSet {
	if !n.list || len(n.args) < 2 || !n.args[1].isConst() || n.args[1].lit.k != kArr {
		return nil
	}
	list := n.args[1].lit
	l := arrLen(list)
	s := &inSet{list: make([]string, 0, l), nums: make([]float64, 0, l)}
	for i := range l {
		el := arrAt(list, i)
		if el.k != kStr {
			return nil
		}
		s.list = append(s.list, el.str())
		// The error is dropped on purpose: the reference reads a string
		// that is not a number as 0 here, so {"in": [0, ["a"]]} is true.
		if f, _ := parseFloat(el.str()); !math.IsNaN(f) {
			s.nums = append(s.nums, f)
		}
	}
	slices.Sort(s.nums)
	if len(s.list) > 8 {
		s.strs = make(map[string]struct{}, len(s.list))
		for _, el := range s.list {
			s.strs[el] = struct{}{}
		}
	}
	return s
}

// in is substring search when the haystack is a string, and membership
// when it is an array. Array elements that are themselves arrays are
// [low, high] ranges; numbers match elements read as numbers.
func (e *evalState) in(n *node) value {
	if n.argc() == 2 {
		return e.compareTwo(n)
	}
	var args operands
	e.evalOperands(n, &args)
	list, isList := args.list(), args.isList
	if !isList || len(list) == 0 {
		return opFail(e, n, "needs a value and where to look for it")
	}
	return e.inOf(n, list[0], at(list, 1))
}

func (e *evalState) inOf(n *node, a, b value) value {
	if n.x != nil && n.x.in != nil {
		in := n.x.in
		switch a.k {
		case kStr:
			return boolVal(in.has(a.str()))
		case kNum:
			if a.goInt() {
				return falseVal
			}
			_, ok := slices.BinarySearch(in.nums, a.n)
			return boolVal(ok)
		}
		return falseVal
	}
	if b.k == kStr {
		if a.k != kStr {
			return opFail(e, n, "needle must be a string to search a string")
		}
		return boolVal(strings.Contains(b.str(), a.str()))
	}
	if b.k != kArr {
		return falseVal
	}
	for i, l := 0, arrLen(b); i < l; i++ {
		el := arrAt(b, i)
		if el.k == kArr {
			if e.inRange(n, a, el) {
				return trueVal
			}
			continue
		}
		if a.k == kNum {
			f := e.number(n, el)
			if !a.goInt() && f == a.n {
				return trueVal
			}
			continue
		}
		if el.isObject() && a.isObject() {
			return opFail(e, n, "objects cannot be compared")
		}
		if identical(el, a) {
			return trueVal
		}
	}
	return falseVal
}

// inRange is low <= a <= high for an element [low, high].
func (e *evalState) inRange(n *node, a, r value) bool {
	if arrLen(r) < 2 {
		opFail(e, n, "a range needs two bounds")
		return false
	}
	if !(e.number(n, a) >= e.number(n, arrAt(r, 0))) {
		return false
	}
	return e.number(n, arrAt(r, 1)) >= e.number(n, a)
}

// identical is Go's == on the interface values the reference engine holds:
// same type and same value, for scalars.
func identical(a, b value) bool {
	if a.k != b.k {
		return false
	}
	switch a.k {
	case kNull:
		return true
	case kBool:
		return a.b == b.b
	case kStr:
		return a.str() == b.str()
	case kNum:
		return a.goInt() == b.goInt() && a.n == b.n
	}
	return false
}

// merge flattens its operands one level into a new array.
func (e *evalState) merge(n *node) value {
	var args operands
	e.evalOperands(n, &args)
	list, single, isList := args.list(), args.single, args.isList
	if !isList {
		switch single.k {
		case kBool, kNum, kStr:
			return arrVal([]value{single})
		}
		return opFail(e, n, "needs values to merge")
	}
	size := 0
	for _, v := range list {
		if v.k == kArr {
			size += arrLen(v)
		} else {
			size++
		}
	}
	out := make([]value, 0, size)
	for _, v := range list {
		if v.k != kArr {
			out = append(out, v)
			continue
		}
		for i, l := 0, arrLen(v); i < l; i++ {
			out = append(out, arrAt(v, i))
		}
	}
	return arrVal(out)
}
