package evaluator

// Compiling var and the legacy fractionalEvaluation, and reading the
// constants of a rule.

import (
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// varSpec is a var whose argument is known at load (the common case), or
// the expression that computes it.
type varSpec struct {
	dyn    *node
	path   path
	def    value
	mode   varMode // beside the flags, where it takes no word of its own
	local  bool    // "" and ".x" are never looked up in enclosing scopes
	plain  bool    // the path starts with a context attribute (not $flagd)
	single bool    // and has only that one segment
}

type varMode uint8

const (
	varPath varMode = iota
	varData         // the data itself
	varNull         // var of null: primitive data itself, else null
)

func (c *compiler) compileVar(n *node, raw any, at *loc) {
	var arg value
	if _, ok := raw.(string); ok {
		// Most vars name an attribute: read as a constant is, without a
		// node to read it from.
		arg = fromAny(raw)
	} else {
		argNode, _ := c.compile(raw, at)
		if !argNode.isConst() {
			n.v = &varSpec{dyn: argNode}
			return
		}
		arg = argNode.lit
	}
	spec, why := varSpecOf(arg)
	if why != "" {
		c.fail(compileErr(at, "%s", why))
		return
	}
	if s, ok := raw.(string); ok && (s == "" || strings.HasPrefix(s, ".")) {
		spec.local = true
	}
	n.v = &spec
}

// varSpecOf reads what var does with an argument that is a value: a path
// string, a number (read as its decimal text), or [path, default]; why says
// what is wrong with the other shapes. It allocates nothing for a string.
func varSpecOf(arg value) (spec varSpec, why string) {
	switch arg.k {
	case kNull:
		spec.mode = varNull
		return spec, ""
	case kNum:
		arg = strVal(formatPlain(arg.n))
	case kArr:
		n := arrLen(arg)
		if n == 0 {
			spec.mode = varData
			return spec, ""
		}
		if n == 2 {
			spec.def = arrAt(arg, 1)
		}
		if arg = arrAt(arg, 0); arg.k != kStr {
			return spec, "var path must be a string"
		}
	case kStr:
		if arg.str() == "" {
			spec.mode = varData
			return spec, ""
		}
	default:
		return spec, "var path must be a string, a number or [path, default]"
	}
	spec.path = splitPath(arg.str())
	spec.plain = spec.path.first != "" && spec.path.first != flagdKey
	spec.single = spec.plain && spec.path.rest == ""
	return spec, ""
}

// compileLegacyFractional rewrites {"fractionalEvaluation": ["prop", buckets…]}
// as fractional bucketing by {"var": "prop"}, for old flag files, and the
// loader warns with the rule to use instead. Any other shape is broken.
func (c *compiler) compileLegacyFractional(raw any, at *loc) (*node, error) {
	list, ok := raw.([]any)
	if !ok || len(list) == 0 {
		err := compileErr(at, "%s needs a property name and buckets", legacyFractional)
		c.fail(err)
		return broken(err, false), err
	}
	prop, ok := list[0].(string)
	if !ok {
		err := compileErr(at, "%s: first argument must name a context property; flagd v0.16 does not know the operator, so this part fails when it is reached", legacyFractional)
		c.fail(err)
		return broken(err, false), err
	}
	c.usesLegacy = true
	rewritten := append([]any{map[string]any{"var": prop}}, list[1:]...)
	c.legacy = append(c.legacy, rewritten)
	c.depth-- // the rewritten operation stands where this one was
	defer func() { c.depth++ }()
	return c.compileOp("fractional", rewritten, at)
}

// constValue converts a decoded JSON constant into a value. Numbers parse as
// float64 exactly as encoding/json would; one that does not fit is an
// error, as it is for the reference engine's decoder.
func constValue(raw any) (value, error) {
	plain, err := plainJSON(raw)
	if err != nil {
		return null, err
	}
	switch t := plain.(type) {
	case []any:
		vals := make([]value, len(t))
		for i, el := range t {
			vals[i] = fromAny(el)
		}
		return arrVal(vals), nil
	}
	return fromAny(plain), nil
}

// plainJSON converts decoded JSON that may hold json.Number into the form
// encoding/json produces by default (float64 numbers).
func plainJSON(raw any) (any, error) {
	switch t := raw.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(t), 64)
		if err != nil || math.IsInf(f, 0) {
			return nil, fmt.Errorf("number %s is out of range", t)
		}
		return f, nil
	case map[string]any:
		out := make(map[string]any, len(t))
		if err := plainEach(maps.All(t), func(k string, v any) { out[k] = v }); err != nil {
			return nil, err
		}
		return out, nil
	case *op1:
		pv, err := plainJSON(t.val)
		if err != nil {
			return nil, err
		}
		return map[string]any{t.key: pv}, nil
	case []any:
		out := make([]any, len(t))
		if err := plainEach(slices.All(t), func(i int, v any) { out[i] = v }); err != nil {
			return nil, err
		}
		return out, nil
	case nil, bool, string, float64:
		return t, nil
	case unresolvedRef:
		return nil, errUnresolved
	}
	return nil, fmt.Errorf("unsupported value of type %T", raw)
}

// plainEach puts each value of all, made plain, with put. A value with an
// unresolved $ref makes it errUnresolved, unless another has a problem of
// its own, which counts whatever the order a map is walked in.
func plainEach[K any](all iter.Seq2[K, any], put func(K, any)) error {
	unresolved := false
	for k, v := range all {
		pv, err := plainJSON(v)
		switch {
		case err == errUnresolved:
			unresolved = true
		case err != nil:
			return err
		}
		put(k, pv)
	}
	if unresolved {
		return errUnresolved
	}
	return nil
}
