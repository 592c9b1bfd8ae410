package evaluator

import "strings"

// evalState is the state of one evaluation of a flag's rule. It lives on
// the caller's stack: the evaluation reads the caller's context and the
// snapshot's enrichment in place and never merges or copies them.
type evalState struct {
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
}

// atRoot reports whether a var reads the caller's data as it is: the
// current data is the root and no enclosing scope can stand in for it.
func (e *evalState) atRoot() bool { return e.cur.k == kRoot && len(e.scopes) == e.base }

func (e *evalState) pushScope(d value) { e.scopes = append(e.scopes, d) }

func (e *evalState) popScope(n int) { e.scopes = e.scopes[:len(e.scopes)-n] }

// hideScopes makes the next evaluation see no enclosing scopes; the caller
// restores e.base to the returned value.
func (e *evalState) hideScopes() int {
	saved := e.base
	e.base = len(e.scopes)
	return saved
}

// fail records a runtime error. Evaluation carries on with null (there are
// no side effects to protect) and the caller checks err at the end.
func (e *evalState) fail(err error) value {
	if e.err == nil {
		e.err = err
	}
	return null
}

func (e *evalState) timestamp() int64 {
	if !e.nowSet {
		e.now = e.fs.clock().Unix()
		e.nowSet = true
	}
	return e.now
}

// rootGet looks a top-level key up through the layers: $flagd first, then
// the enrichment, then the caller's context.
func (e *evalState) rootGet(key string) value {
	if key == flagdKey {
		return value{k: kFlagd}
	}
	return fromAny(e.attr(key))
}

// rootMap is the data as one map, for the rare rules that use all of it
// ({"var": ""}, or a result that is the data object itself).
func (e *evalState) rootMap() map[string]any {
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
func (e *evalState) child(v value, part string) (value, bool) {
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
		f, _ := parseFloat(part)
		idx := toInt(f)
		if idx < 0 || idx >= arrLen(v) {
			return null, false
		}
		return arrAt(v, idx), true
	}
	return null, false
}

// path is a var path as written ("user.tier"), with its first segment,
// which a var of the context looks up in the caller's map, apart. Its
// segments are found as it is walked (see nextSegment): splitting a path
// computed at evaluation would allocate.
type path struct {
	text  string // as written
	first string // the first segment, "" for none
	rest  string // what follows first, "" when no other segment does
}

func splitPath(s string) path {
	first, rest := nextSegment(s)
	if next, _ := nextSegment(rest); next == "" {
		rest = ""
	}
	return path{text: s, first: first, rest: rest}
}

// nextSegment is the first segment of the dotted path p, "" for none, and
// what follows it. Empty segments ("a..b") are skipped, as the reference
// engine skips them.
func nextSegment(p string) (seg, rest string) {
	for p != "" {
		seg, p, _ = strings.Cut(p, ".")
		if seg != "" {
			return seg, p
		}
	}
	return "", ""
}

// walk follows p from data; def is answered for anything missing or null.
func (e *evalState) walk(data value, p *path, def value) value {
	if data.k == kNull {
		return def
	}
	return e.walkFrom(data, p.text, def)
}

// walkFrom follows the dotted path p from cur.
func (e *evalState) walkFrom(cur value, p string, def value) value {
	for {
		seg, rest := nextSegment(p)
		if seg == "" {
			return cur
		}
		if m, ok := cur.ref.(map[string]any); ok {
			x, _ := mapGet(m, seg)
			return e.walkRaw(x, rest, def)
		}
		next, ok := e.child(cur, seg)
		if !ok || next.k == kNull {
			return def
		}
		cur, p = next, rest
	}
}

// walkRaw follows the dotted path p from a context value x. Objects from
// a context are mostly map[string]any: stepping through them as they are
// is cheaper than making a value of each level.
func (e *evalState) walkRaw(x any, p string, def value) value {
	for {
		seg, rest := nextSegment(p)
		if seg == "" {
			return orDefault(x, def)
		}
		m, ok := x.(map[string]any)
		if !ok {
			if x == nil {
				return def
			}
			return e.walkFrom(fromAny(x), p, def)
		}
		x, _ = mapGet(m, seg)
		p = rest
	}
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
func (e *evalState) attr(key string) any {
	if e.fs.enrich != nil {
		if v, ok := mapGet(e.fs.enrich, key); ok {
			return v
		}
	}
	v, _ := mapGet(e.ctx, key)
	return v
}

// getVar is the reference engine's var applied to an already evaluated
// argument (see varSpecOf). The second result is false when the argument
// is of a shape the reference engine fails on.
func (e *evalState) getVar(arg value, data value) (value, bool) {
	spec, why := varSpecOf(arg)
	if why != "" {
		// Booleans and objects only fail once they are split as a path, which
		// the reference engine never reaches for null data.
		return null, arg.k != kArr && data.k == kNull
	}
	return e.applyVar(&spec, data), true
}

// applyVar looks spec up in data.
func (e *evalState) applyVar(spec *varSpec, data value) value {
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
