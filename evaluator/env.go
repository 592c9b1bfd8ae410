package evaluator

import "strings"

// env is the state of one evaluation. It lives on the caller's stack: the
// evaluation reads the caller's context and the snapshot's enrichment in
// place and never merges or copies them.
type env struct {
	fs  *FlagSet // the enrichment, the clock and the fractional version
	f   *flag    // the flag being evaluated
	ctx map[string]any

	now    int64
	nowSet bool
	root   map[string]any // merged data, built only if a rule needs all of it

	err error // first runtime error; the result is discarded when set

	// cur is the data the rule is evaluated against: the root at first, an
	// array element inside map, filter, all, some and none. Keeping it here
	// rather than passing it along saves copying it into every call.
	cur value

	// The scopes opened by enclosing iterations, outermost first: the
	// reference engine substitutes vars found there into an iteration's
	// condition before running it (its solveVars), so they win over the
	// element being visited. Most rules have no iteration, so the stack is
	// only allocated by the first one.
	scopes []value
	base   int // scopes below base are hidden from the current evaluation

	trace *tracer // records the evaluation for Explain; nil otherwise

	// The attributes the rule reads more than once, by varSpec.memoIdx,
	// once looked up; have holds the memoBit of each.
	memo [maxMemo]any
	have uint8
}

// atRoot reports whether a var reads the caller's data as it is: the
// current data is the root and no enclosing scope can stand in for it.
func (e *env) atRoot() bool { return e.cur.k == kRoot && len(e.scopes) == e.base }

func (e *env) pushScope(d value) { e.scopes = append(e.scopes, d) }

func (e *env) popScope(n int) { e.scopes = e.scopes[:len(e.scopes)-n] }

// hideScopes makes the next evaluation see no enclosing scopes; the caller
// restores e.base to the returned value.
func (e *env) hideScopes() int {
	saved := e.base
	e.base = len(e.scopes)
	return saved
}

// fail records a runtime error. Evaluation carries on with null (there are
// no side effects to protect) and the caller checks err at the end.
func (e *env) fail(err error) value {
	if e.err == nil {
		e.err = err
	}
	return null
}

func (e *env) timestamp() int64 {
	if !e.nowSet {
		e.now = e.fs.clock().Unix()
		e.nowSet = true
	}
	return e.now
}

// rootGet looks a top-level key up through the layers: $flagd first, then
// the enrichment, then the caller's context.
func (e *env) rootGet(key string) value {
	if key == flagdKey {
		return value{k: kFlagd}
	}
	return fromAny(e.attr(key))
}

// rootMap is the data as one map, for the rare rules that use all of it
// ({"var": ""}, or a result that is the data object itself).
func (e *env) rootMap() map[string]any {
	if e.root == nil {
		m := make(map[string]any, len(e.ctx)+len(e.fs.enrich)+1)
		for k, v := range e.ctx {
			m[k] = v
		}
		for k, v := range e.fs.enrich {
			m[k] = v
		}
		m[flagdKey] = e.toAny(value{k: kFlagd})
		e.root = m
	}
	return e.root
}

const (
	flagdKey        = "$flagd"
	targetingKeyKey = "targetingKey"
)

// child steps from v into one path segment the way the reference engine's
// var does: objects by key, arrays by the segment read as a number
// (badly formed numbers read as 0). ok is false when the step is impossible
// or lands outside an array, which makes var answer its default.
func (e *env) child(v value, part string, idx int) (value, bool) {
	switch v.k {
	case kRoot:
		return e.rootGet(part), true
	case kObj:
		return objGet(v, part), true
	case kFlagd:
		switch part {
		case "flagKey":
			return value{k: kStr, ref: e.f.keyRef}, true
		case "timestamp":
			return numVal(float64(e.timestamp())), true
		}
		return null, true
	case kReduce:
		return v.ref.(*reduceState).get(part), true
	case kArr:
		if idx < 0 || idx >= arrLen(v) {
			return null, false
		}
		return arrAt(v, idx), true
	}
	return null, false
}

// path is a var path split once, at load, with each segment's array index
// precomputed.
type path struct {
	parts []string
	idx   []int
}

func splitPath(s string) path {
	n := 0
	for part := range strings.SplitSeq(s, ".") {
		if part != "" {
			n++
		}
	}
	if n == 0 {
		return path{}
	}
	p := path{parts: make([]string, 0, n), idx: make([]int, 0, n)}
	for part := range strings.SplitSeq(s, ".") {
		if part == "" {
			continue
		}
		f, _ := parseFloat(part)
		p.parts = append(p.parts, part)
		p.idx = append(p.idx, toInt(f))
	}
	return p
}

// splitPathIn is splitPath through paths, when there are any: a path's
// slices are never written once split, so rules can share them.
func splitPathIn(paths map[string]path, s string) path {
	if paths == nil {
		return splitPath(s)
	}
	if p, ok := paths[s]; ok {
		return p
	}
	p := splitPath(s)
	paths[s] = p
	return p
}

// walk follows p from data; def is answered for anything missing or null.
func (e *env) walk(data value, p *path, def value) value {
	if data.k == kNull {
		return def
	}
	return e.walkFrom(data, p, 0, def)
}

// walkFrom follows p from its segment i on.
func (e *env) walkFrom(cur value, p *path, i int, def value) value {
	for ; i < len(p.parts); i++ {
		if m, ok := cur.ref.(map[string]any); ok {
			x, _ := mapGet(m, p.parts[i])
			return e.walkRaw(x, p, i+1, def)
		}
		next, ok := e.child(cur, p.parts[i], p.idx[i])
		if !ok || next.k == kNull {
			return def
		}
		cur = next
	}
	return cur
}

// walkRaw follows p from segment i on, starting at a context value x.
// Objects from a context are mostly map[string]any: stepping through them
// as they are is cheaper than making a value of each level.
func (e *env) walkRaw(x any, p *path, i int, def value) value {
	for ; i < len(p.parts); i++ {
		m, ok := x.(map[string]any)
		if !ok {
			if x == nil {
				return def
			}
			return e.walkFrom(fromAny(x), p, i, def)
		}
		x, _ = mapGet(m, p.parts[i])
	}
	return orDefault(x, def)
}

// orDefault is what var answers for the context value x at the end of its
// path: def when x is null once encoded as JSON (nil, but also a nil slice
// or map, or a nil pointer), else x.
func orDefault(x any, def value) value {
	if v := fromAny(x); v.k != kNull {
		return v
	}
	return def
}

// attr looks up a top-level key other than $flagd, as the caller's Go
// value.
func (e *env) attr(key string) any {
	if e.fs.enrich != nil {
		if v, ok := mapGet(e.fs.enrich, key); ok {
			return v
		}
	}
	v, _ := mapGet(e.ctx, key)
	return v
}

// rootAttr is the attribute a plain var's path starts with, looked up once
// per evaluation when the rule reads it more than once. The context and the
// enrichment do not change during an evaluation, whatever the scope.
func (e *env) rootAttr(v *varSpec) any {
	if e.have&v.memoBit != 0 {
		return e.memo[v.memoIdx&(maxMemo-1)]
	}
	return e.lookUp(v)
}

// lookUp is rootAttr's first lookup of an attribute.
func (e *env) lookUp(v *varSpec) any {
	x := e.attr(v.path.parts[0])
	if v.memoBit != 0 {
		e.memo[v.memoIdx&(maxMemo-1)] = x
		e.have |= v.memoBit
	}
	return x
}

// getVar is the reference engine's var applied to an already evaluated
// argument (see varSpecOf). The second result is false when the argument
// is of a shape the reference engine fails on.
func (e *env) getVar(arg value, data value) (value, bool) {
	spec, why := varSpecOf(arg, nil)
	if why != "" {
		// Booleans and objects only fail once they are split as a path, which
		// the reference engine never reaches for null data.
		return null, arg.k != kArr && data.k == kNull
	}
	return e.applyVar(&spec, data), true
}

// applyVar looks spec up in data.
func (e *env) applyVar(spec *varSpec, data value) value {
	switch spec.mode {
	case varData:
		return data
	case varNull:
		switch data.k {
		case kBool, kNum, kStr:
			return data
		}
		return null
	}
	return e.walk(data, &spec.path, spec.def)
}
