package evaluator

// Compiling a rule's expressions: constants, operators and their arguments.

import (
	"errors"
	"fmt"
	"strings"

	"github.com/flagsnap/flagsnap/internal/suggest"
)

// compile compiles raw in value position: objects are operations, arrays
// are evaluated element by element, everything else is a constant.
func (c *compiler) compile(raw any, at *loc) (*node, error) {
	switch t := raw.(type) {
	case map[string]any:
		if len(t) != 1 {
			// The reference engine treats an object with zero or several
			// keys as data, not as an operation.
			return c.constant(t, at)
		}
		for name, args := range t {
			return c.compileOp(name, args, c.loc(at.key(name)))
		}
	case *op1:
		return c.compileOp(t.key, t.val, c.loc(at.key(t.key)))
	case unresolvedRef:
		return broken(t.problem(), false), nil
	case []any:
		mark := len(c.errs)
		n := &node{op: opArray, list: true, args: make([]*node, 0, len(t))}
		allConst := true
		for i, el := range t {
			child, _ := c.compile(el, c.loc(at.index(i)))
			n.args = append(n.args, child)
			allConst = allConst && child.isConst()
		}
		if err := c.since(mark); err != nil {
			// Its broken elements fail where they are reached.
			return n, err
		}
		if allConst {
			vals := make([]value, len(n.args))
			for i, a := range n.args {
				vals[i] = a.lit
			}
			return &node{op: opConst, lit: arrVal(vals)}, nil
		}
		return n, nil
	}
	return c.constant(raw, at)
}

// constant compiles a value written as data.
func (c *compiler) constant(raw any, at *loc) (*node, error) {
	v, err := constValue(raw)
	switch {
	case errors.Is(err, errUnresolved):
		return broken(firstUnresolved(raw), false), nil
	case err != nil:
		c.whole = true
		return c.fail(compileErr(at, "%v", err))
	}
	return &node{op: opConst, lit: v}, nil
}

// compileArgs compiles an operator's argument in the two shapes it can take.
func (c *compiler) compileArgs(n *node, raw any, at *loc) {
	if list, ok := raw.([]any); ok {
		n.list = true
		n.args = make([]*node, 0, len(list))
		for i, el := range list {
			child, _ := c.compile(el, c.loc(at.index(i)))
			n.args = append(n.args, child)
		}
		return
	}
	child, _ := c.compile(raw, at)
	n.args = []*node{child}
}

// needsList rejects operators whose argument the reference engine always
// fails on when it is not a list: a constant that is not an array.
func needsList(n *node, at *loc) error {
	if n.list || !n.args[0].isConst() || n.args[0].lit.k == kArr {
		return nil
	}
	return compileErr(at, "%s needs an array of arguments", n.name())
}

func (c *compiler) compileOp(name string, raw any, at *loc) (*node, error) {
	c.depth++
	defer func() { c.depth-- }()
	op, ok := operators[name]
	if !ok && name != legacyFractional {
		// Its arguments are not compiled: what they mean depends on the
		// operator meant.
		err := &CompileError{Path: at.String(), Msg: fmt.Sprintf("unknown operator %q", name), at: at.segments(),
			hint: suggest.Hint(name, operatorNames)}
		c.fail(err)
		return broken(err, false), err
	}
	if u, ok := raw.(unresolvedRef); ok {
		// Its arguments are what the $ref would have given.
		return broken(u.problem(), false), nil
	}
	if name == legacyFractional {
		return c.compileLegacyFractional(raw, at)
	}
	mark := len(c.errs)
	n := &node{op: op, nameID: opNameIDs[name]}
	switch {
	case op == opVar:
		c.compileVar(n, raw, at)
	case isRawListOp(op):
		c.compileRawList(n, raw, at)
	default:
		c.compileArgs(n, raw, at)
	}
	if op == opVar || isRawListOp(op) {
		// The checks and precomputations below are for the others.
		return c.finish(n, mark)
	}
	c.checkArgs(n, at)
	c.precompute(n, at)
	if nn, err := c.finish(n, mark); err != nil || nn != n {
		return nn, err
	}
	markAttrConst(n)
	return n, nil
}

// markAttrConst sets n.attrConst when n has the usual shape of a rule, a
// context attribute against constants, so that an evaluation tests the one
// flag rather than the shape of the operands each time.
func markAttrConst(n *node) {
	if !n.list || len(n.args) == 0 || !isAttr(n.args[0]) {
		return
	}
	switch n.op {
	case opEq, opNe, opLt, opLe, opGt, opGe, opIn:
		if len(n.args) == 2 && n.args[1].isConst() {
			n.attrConst = true
			n.exact = exactText(n)
		}
	case opStartsWith, opEndsWith:
		n.attrConst = len(n.args) == 2 && n.args[1].isConst() && n.args[1].lit.k == kStr
	case opSemVer:
		// A left operand that is an attribute is not a constant one.
		if n.x != nil {
			pre := n.x.semver
			n.attrConst = pre.constOp && pre.constRight
		}
	}
}

// isAttr reports whether n is a var of one segment: a context attribute,
// when evaluated at the root.
func isAttr(n *node) bool { return n.op == opVar && n.v.single }

// checkArgs reports the arguments that operation n cannot take.
func (c *compiler) checkArgs(n *node, at *loc) {
	// An operand with a problem is a broken or unknown node here, which the
	// checks take for a computed value: they report only what is wrong with
	// the operation itself.
	switch n.op {
	case opEq, opNe, opLt, opLe, opGt, opGe, opSub, opMul, opDiv, opMod, opMin, opMax,
		opSubstr, opIn, opMissingSome, opSet:
		if err := needsList(n, at); err != nil {
			c.fail(err)
		}
	case opCat:
		if !n.list && n.args[0].isConst() && n.args[0].lit.k != kStr && n.args[0].lit.k != kArr {
			c.fail(compileErr(at, "cat needs a string or an array of arguments"))
		}
	case opMissing:
		if !n.list && n.args[0].isConst() && n.args[0].lit.k != kStr && n.args[0].lit.k != kArr {
			c.fail(compileErr(at, "missing needs a name or an array of names"))
		}
	case opMerge:
		if !n.list && n.args[0].isConst() && (n.args[0].lit.k == kNull || n.args[0].lit.isObject()) {
			c.fail(compileErr(at, "merge needs values to merge"))
		}
	}
}

// precompute prepares at load what operation n would otherwise work out
// on every evaluation. A node gets a nodeExtra only when there is something
// to hold: an empty one would cost an allocation per node for nothing.
func (c *compiler) precompute(n *node, at *loc) {
	switch n.op {
	case opIn:
		if in := precomputeIn(n); in != nil {
			n.x = &nodeExtra{in: in}
		}
	case opSemVer:
		if pre := precomputeSemVer(n); pre != nil {
			n.x = &nodeExtra{semver: pre}
		}
	case opMissing, opMissingSome:
		if names := precomputeNames(n); names != nil {
			n.x = &nodeExtra{names: names}
		}
	case opFractional:
		spec, err := precomputeFractional(n, at)
		if err != nil {
			c.fail(err)
		}
		if spec != nil {
			n.x = &nodeExtra{fraction: spec}
		}
	}
}

// finish is n, or the broken node that stands for it when it has a problem
// of its own, and the first problem of its subtree. flagd's fractional
// answers null for arguments it cannot read; any other operation fails.
func (c *compiler) finish(n *node, mark int) (*node, error) {
	if own := c.ownSince(mark, c.depth); own != nil {
		return broken(own, n.op == opFractional), own
	}
	return n, c.since(mark)
}

// exactText is node.exact for a binary operator with a constant operand.
func exactText(n *node) bool {
	const replacement = "\uFFFD"
	c := n.args[1].lit
	switch {
	case (n.op == opEq || n.op == opNe) && c.k == kStr:
		return !strings.Contains(c.str(), replacement)
	case n.op == opIn && n.x != nil && n.x.in != nil:
		for _, el := range n.x.in.list {
			if strings.Contains(el, replacement) {
				return false
			}
		}
		return true
	}
	return false
}

// compileRawList handles the operators that read their argument list as
// written, before evaluating anything: the list is mandatory.
func (c *compiler) compileRawList(n *node, raw any, at *loc) {
	list, ok := raw.([]any)
	if !ok {
		c.fail(compileErr(at, "%s needs an array of arguments", n.name()))
		return
	}
	n.list = true
	n.args = make([]*node, 0, len(list))
	for i, el := range list {
		elAt := c.loc(at.index(i))
		var child *node
		switch {
		case i == 0 && isIteration(n.op), i == 2 && n.op == opReduce:
			// The array walked and the initial value of reduce.
			child, _ = c.compileRaw(el, elAt)
		default:
			child, _ = c.compile(el, elAt)
		}
		n.args = append(n.args, child)
	}
	switch n.op {
	case opAll, opSome, opNone:
		if len(list) == 0 {
			c.fail(compileErr(at, "%s needs an array and a condition", n.name()))
		}
	}
}

// isRawListOp reports the operators compileRawList handles.
func isRawListOp(op opcode) bool {
	switch op {
	case opAnd, opOr, opIf, opMap, opFilter, opReduce, opAll, opSome, opNone:
		return true
	}
	return false
}

func isIteration(op opcode) bool {
	switch op {
	case opMap, opFilter, opReduce, opAll, opSome, opNone:
		return true
	}
	return false
}

// compileRaw keeps raw exactly as written unless it is an operation: the
// reference engine takes a literal array there as it is, without
// evaluating what is inside.
func (c *compiler) compileRaw(raw any, at *loc) (*node, error) {
	switch raw.(type) {
	case map[string]any, *op1, unresolvedRef:
		return c.compile(raw, at)
	}
	return c.constant(raw, at)
}
