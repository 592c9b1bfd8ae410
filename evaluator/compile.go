package evaluator

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/flagsnap/flagsnap/internal/suggest"
)

// opcode names one operator of the targeting language.
type opcode uint8

const (
	opConst opcode = iota
	opArray        // an array literal with expressions inside: evaluated element by element
	opVar
	opAnd
	opOr
	opIf
	opNot
	opNotNot
	opEq
	opNe
	opStrictEq
	opStrictNe
	opLt
	opLe
	opGt
	opGe
	opAdd
	opSub
	opMul
	opDiv
	opMod
	opMin
	opMax
	opAbs
	opCat
	opSubstr
	opIn
	opMerge
	opMap
	opFilter
	opReduce
	opAll
	opSome
	opNone
	opMissing
	opMissingSome
	opSet
	opContainsAll
	opContainsAny
	opContainsNone
	opStartsWith
	opEndsWith
	opSemVer
	opFractional
	// opBroken is a part of a rule that cannot be used (an unknown
	// operator, a malformed argument): it fails when an evaluation reaches
	// it, as flagd's engine, which reads rules as it evaluates them, does.
	opBroken
)

var operators = map[string]opcode{
	"var":           opVar,
	"and":           opAnd,
	"or":            opOr,
	"if":            opIf,
	"?:":            opIf,
	"!":             opNot,
	"!!":            opNotNot,
	"==":            opEq,
	"!=":            opNe,
	"===":           opStrictEq,
	"!==":           opStrictNe,
	"<":             opLt,
	"<=":            opLe,
	">":             opGt,
	">=":            opGe,
	"+":             opAdd,
	"-":             opSub,
	"*":             opMul,
	"/":             opDiv,
	"%":             opMod,
	"min":           opMin,
	"max":           opMax,
	"abs":           opAbs,
	"cat":           opCat,
	"substr":        opSubstr,
	"in":            opIn,
	"merge":         opMerge,
	"map":           opMap,
	"filter":        opFilter,
	"reduce":        opReduce,
	"all":           opAll,
	"some":          opSome,
	"none":          opNone,
	"missing":       opMissing,
	"missing_some":  opMissingSome,
	"set":           opSet,
	"contains_all":  opContainsAll,
	"contains_any":  opContainsAny,
	"contains_none": opContainsNone,
	"starts_with":   opStartsWith,
	"ends_with":     opEndsWith,
	"sem_ver":       opSemVer,
	"fractional":    opFractional,
}

// operatorNames are the keys of operators, sorted: the names a misspelt
// operator is compared with.
var operatorNames = slices.Sorted(maps.Keys(operators))

// OperatorNames lists the operators a rule may use, sorted; the deprecated
// fractionalEvaluation, which still compiles, is not one of them.
func OperatorNames() []string { return slices.Clone(operatorNames) }

// legacyFractional is flagd's deprecated spelling of fractional, whose
// first argument names a context property instead of being an expression.
const legacyFractional = "fractionalEvaluation"

// node is one compiled operation. Arguments come in one of two shapes,
// because the reference engine evaluates an operator's argument before
// looking at it: a list written in the rule (args, list=true) or any other
// expression whose value becomes the argument (one).
type node struct {
	op     opcode
	nameID uint8 // the operator as written: opNames[nameID]
	list   bool
	// attrConst: a binary operator (==, !=, <, <=, >, >=, in) between a
	// context attribute (a var of one segment) and a constant. exact: and
	// comparing a string attribute's bytes with the constant decides,
	// because the operator is ==, != or in an array of strings, and no
	// constant holds U+FFFD, which is what a string that is not valid UTF-8
	// would read as.
	attrConst, exact bool

	lit  value
	args []*node
	one  *node
	v    *varSpec
	// aux is what the operator precomputed, of one type per operator (see
	// its accessors): one field for all keeps small a node, of which a flag
	// set has millions.
	aux any
}

// inSet is the precomputed list of an in, or nil.
func (n *node) inSet() *inSet {
	s, _ := n.aux.(*inSet)
	return s
}

// semver is the precomputed part of a sem_ver, or nil.
func (n *node) semver() *semverArgs {
	s, _ := n.aux.(*semverArgs)
	return s
}

// fraction is the precomputed split of a fractional, or nil.
func (n *node) fraction() *fracSpec {
	s, _ := n.aux.(*fracSpec)
	return s
}

// missingNames are the constant names of missing and missing_some, read
// as var reads them, or nil.
func (n *node) missingNames() []varSpec {
	if names, ok := n.aux.(*[]varSpec); ok {
		return *names
	}
	return nil
}

// brokenPart is what an opBroken node answers.
func (n *node) brokenPart() *brokenPart {
	b, _ := n.aux.(*brokenPart)
	return b
}

// lastPath is where a var of a computed path keeps the path it split
// last (see env.dynVar).
func (n *node) lastPath() *atomic.Pointer[dynPath] {
	p, _ := n.aux.(*atomic.Pointer[dynPath])
	return p
}

// name is the operator as the rule writes it.
func (n *node) name() string { return opNames[n.nameID] }

// opNames lists the operators' spellings, for node.nameID; 0 is none.
var opNames, opNameIDs = func() ([]string, map[string]uint8) {
	names := []string{"", legacyFractional}
	for name := range operators {
		names = append(names, name)
	}
	slices.Sort(names[2:])
	ids := make(map[string]uint8, len(names))
	for i, name := range names {
		ids[name] = uint8(i)
	}
	return names, ids
}()

// brokenPart is what an opBroken node answers when it is reached.
type brokenPart struct {
	err error
	// null: the part answers null without an error, as flagd's custom
	// operators (fractional) do with arguments they cannot read.
	null bool
}

func (n *node) isConst() bool { return n.op == opConst }

// argc is the number of arguments written in the rule, or -1 when the
// argument is computed.
func (n *node) argc() int {
	if !n.list {
		return -1
	}
	return len(n.args)
}

// compiler turns a decoded rule into nodes, once, when a flag set loads.
// It goes on past a problem, so that flagsnap validate reports them all: an
// operation with one of its own compiles to an opBroken node, which fails
// only when an evaluation reaches it, as in flagd, and its compile method
// returns the first problem of its subtree. A constant that cannot be read
// breaks the whole flag instead (whole), as flagd refuses the document.
type compiler struct {
	usesLegacy bool
	errs       []error // every problem, in the order met
	depths     []int   // the operation depth each of errs was met at
	depth      int     // of the operation being compiled
	whole      bool    // a problem that breaks the whole flag was met
	legacy     []any   // the legacy fractional arguments met, rewritten, for the migration hint
	// locs holds the locations of the elements being compiled, in chunks
	// shared by the flags a loader compiles: each links to its parent, which
	// would put every one on the heap.
	locs []loc
	// paths are the var paths split so far, shared by the rules that read
	// the same ones: a set reads the same few attributes thousands of times.
	paths map[string]path
	// consts are the scalar constants of the rules compiled so far, by
	// value, and rule numbers the rule being compiled among them.
	consts map[constKey]*sharedConst
	rule   int
}

// locChunk is how many locations the compiler allocates at once.
const locChunk = 128

// loc returns a location of the compiler's, valid until the compiler's
// locations are reused.
func (c *compiler) loc(l loc) *loc {
	if len(c.locs) == cap(c.locs) {
		// Not append: the locations handed out must not move.
		c.locs = make([]loc, 0, locChunk)
	}
	c.locs = append(c.locs, l)
	return &c.locs[len(c.locs)-1]
}

// fail records a problem of the element being compiled.
func (c *compiler) fail(err error) (*node, error) {
	c.errs = append(c.errs, err)
	c.depths = append(c.depths, c.depth)
	return unknown(), err
}

// since is the first problem recorded after mark, the length of c.errs
// when an element's compilation began.
func (c *compiler) since(mark int) error {
	if len(c.errs) > mark {
		return c.errs[mark]
	}
	return nil
}

// ownSince is the first problem recorded after mark at depth, the
// operation's own rather than one of its operands'.
func (c *compiler) ownSince(mark, depth int) error {
	for i := mark; i < len(c.errs); i++ {
		if c.depths[i] == depth {
			return c.errs[i]
		}
	}
	return nil
}

// broken is the node of an operation that cannot be used.
func broken(err error, null bool) *node {
	return &node{op: opBroken, aux: &brokenPart{err: err, null: null}}
}

// unknown stands for an element that has a problem, or whose value cannot
// be known at load: a var of a computed path, which the checks around it
// take for a value computed at evaluation. Its flag is broken.
func unknown() *node {
	return &node{op: opVar, v: &varSpec{dyn: &node{op: opConst, lit: null}}, aux: new(atomic.Pointer[dynPath])}
}

// unresolvedRef takes the place of a {"$ref": …} that names nothing when
// the loader substitutes $evaluators, so that the rest of the rule is still
// compiled, and checked, around it.
type unresolvedRef struct {
	// err is the problem the loader reports at the $ref, which the part
	// answers when an evaluation reaches it.
	err *CompileError
}

// problem is what the part where the $ref stands answers.
func (u unresolvedRef) problem() error {
	if u.err == nil {
		return errRefToNothing
	}
	return u.err
}

// errUnresolved is constValue's answer for a constant holding an
// unresolvedRef, which is not a problem of its own.
var errUnresolved = errors.New("unresolved $ref")

// firstUnresolved is the problem of the $ref in data that names nothing
// and is written first (the one the loader reports first), or
// errRefToNothing when none says where it is.
func firstUnresolved(raw any) error {
	if first := earliestRef(raw, nil); first != nil {
		return first
	}
	return errRefToNothing
}

// earliestRef is firstUnresolved's walk; first is the problem found so far.
func earliestRef(raw any, first *CompileError) *CompileError {
	switch t := raw.(type) {
	case unresolvedRef:
		if t.err != nil && (first == nil || slices.Compare(t.err.at, first.at) < 0) {
			first = t.err
		}
	case map[string]any:
		for _, v := range t {
			first = earliestRef(v, first)
		}
	case []any:
		for _, v := range t {
			first = earliestRef(v, first)
		}
	}
	return first
}

// errRefToNothing is what the part of a rule where a $ref could not be
// substituted answers when it is reached and the $ref's own problem is not
// at hand (within a constant); the loader reports the $ref itself, at its
// place.
var errRefToNothing = errors.New("a $ref names no entry of $evaluators")

// CompileError says why a part of a targeting rule cannot be used.
type CompileError struct {
	// Path is where in the rule, e.g. "targeting.if[1].in"; empty for the
	// problem of a $ref, which Error gives as a pointer.
	Path string
	Msg  string

	// at is Path as keys and indexes, for FlagProblem.Path: the spelled-out
	// Path cannot be read back when a key holds '.' or '['.
	at []string
	// pointer is where the part is in the document, as FlagProblem.Pointer
	// writes it, once the loader knows where the flag is; "" before.
	pointer string
	// hint is how the part may be mended, when that is plain from what is
	// written: `did you mean "ends_with"?` for a misspelt operator.
	hint string
}

// Error says where the rule is wrong, as a JSON Pointer into the document
// (the path flagsnap validate and the load warning give), and why.
func (e *CompileError) Error() string {
	msg := e.Msg
	if e.hint != "" {
		msg += "; " + e.hint
	}
	switch {
	case e.pointer != "":
		return e.pointer + ": " + msg
	case e.Path != "":
		return e.Path + ": " + msg
	}
	return msg
}

func compileErr(at *loc, format string, args ...any) error {
	return &CompileError{Path: at.String(), Msg: fmt.Sprintf(format, args...), at: at.segments()}
}

// loc is where a rule element sits: "targeting.if[0].==[1]". The compiler
// links one per element as it descends and spells the path out only for an
// error, since most rules compile without one.
type loc struct {
	up   *loc
	name string // a key or operator name, when idx is -1
	idx  int    // an array index; -1 for a key, which may be ""
}

// root is the location of a whole rule, named name.
func root(name string) loc { return loc{name: name, idx: -1} }

func (l *loc) index(i int) loc     { return loc{up: l, idx: i} }
func (l *loc) key(name string) loc { return loc{up: l, name: name, idx: -1} }

// segments is the path from the root, one key or decimal index each.
func (l *loc) segments() []string {
	n := 0
	for p := l; p != nil; p = p.up {
		n++
	}
	out := make([]string, n)
	for p := l; p != nil; p = p.up {
		n--
		if p.idx >= 0 {
			out[n] = strconv.Itoa(p.idx)
		} else {
			// A copy: a location that leaked its names would be taken
			// for one that leaks its chain, and every location of every
			// rule would move to the heap.
			out[n] = strings.Clone(p.name)
		}
	}
	return out
}

func (l *loc) String() string {
	s := ""
	for p := l; p != nil; p = p.up {
		switch {
		case p.idx >= 0:
			s = "[" + strconv.Itoa(p.idx) + "]" + s
		case p.up == nil || strings.HasPrefix(p.name, "["):
			s = p.name + s
		default:
			s = "." + p.name + s
		}
	}
	return s
}

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
	return c.constNode(v), nil
}

// constKey is a scalar constant as the compiler shares it.
type constKey struct {
	k kind
	b bool
	n uint64 // the float's bits
	s string
}

// sharedConst is a constant node that rules share, and the rule that last
// took it.
type sharedConst struct {
	n    *node
	rule int
}

// constNode is a node for the constant v: the one an earlier rule of the
// same loader made for the same scalar, or a new one. Within one rule each
// has its own node, as Explain tells arguments apart by their nodes.
func (c *compiler) constNode(v value) *node {
	if c.consts == nil {
		return &node{op: opConst, lit: v}
	}
	key := constKey{k: v.k, b: v.b}
	switch v.k {
	case kNull, kBool:
	case kNum:
		if _, ok := v.ref.(float64); !ok && v.ref != nil {
			// A number that keeps another type is hashed by it.
			return &node{op: opConst, lit: v}
		}
		key.n = math.Float64bits(v.n)
	case kStr:
		s, ok := v.ref.(string)
		if !ok {
			return &node{op: opConst, lit: v}
		}
		key.s = s
	default:
		return &node{op: opConst, lit: v}
	}
	sc, ok := c.consts[key]
	if ok && sc.rule != c.rule {
		sc.rule = c.rule
		return sc.n
	}
	n := &node{op: opConst, lit: v}
	if !ok && len(c.consts) < maxSharedConsts {
		c.consts[key] = &sharedConst{n: n, rule: c.rule}
	}
	return n
}

// maxSharedConsts bounds the constants a loader shares: past the common
// ones, most are a rule's own.
const maxSharedConsts = 4096

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
	n.one, _ = c.compile(raw, at)
}

// needsList rejects operators whose argument the reference engine always
// fails on when it is not a list: a constant that is not an array.
func needsList(n *node, at *loc) error {
	if n.list || !n.one.isConst() || n.one.lit.k == kArr {
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
	switch op {
	case opEq, opNe, opLt, opLe, opGt, opGe, opIn:
		if n.argc() == 2 && n.args[1].isConst() && n.args[0].op == opVar && n.args[0].v.single {
			n.attrConst = true
			n.exact = exactText(n)
		}
	}
	return n, nil
}

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
		if !n.list && n.one.isConst() && n.one.lit.k != kStr && n.one.lit.k != kArr {
			c.fail(compileErr(at, "cat needs a string or an array of arguments"))
		}
	case opMissing:
		if !n.list && n.one.isConst() && n.one.lit.k != kStr && n.one.lit.k != kArr {
			c.fail(compileErr(at, "missing needs a name or an array of names"))
		}
	case opMerge:
		if !n.list && n.one.isConst() && (n.one.lit.k == kNull || n.one.lit.isObject()) {
			c.fail(compileErr(at, "merge needs values to merge"))
		}
	}
}

// precompute prepares at load what operation n would otherwise work out
// on every evaluation.
func (c *compiler) precompute(n *node, at *loc) {
	switch n.op {
	case opIn:
		n.aux = precomputeIn(n)
	case opSemVer:
		n.aux = precomputeSemVer(n)
	case opMissing, opMissingSome:
		if names := precomputeNames(n); names != nil {
			n.aux = &names
		}
	case opFractional:
		spec, err := precomputeFractional(n, at)
		if err != nil {
			c.fail(err)
		}
		n.aux = spec
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
	case n.inSet() != nil:
		for _, el := range n.inSet().list {
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

// varSpec is a var whose argument is known at load (the common case), or
// the expression that computes it.
type varSpec struct {
	dyn    *node
	mode   varMode
	path   path
	def    value
	local  bool // "" and ".x" are never looked up in enclosing scopes
	plain  bool // the path starts with a context attribute (not $flagd)
	single bool // and has only that one segment
	// Where an evaluation keeps the attribute a plain path starts with, when
	// the rule reads it more than once: env.memo[memoIdx], present when
	// env.have has memoBit. memoBit is 0 for an attribute not kept.
	memoBit, memoIdx uint8
}

// maxMemo is how many attributes one evaluation remembers. A rule rarely
// reads more than a few attributes twice, and each slot is zeroed on every
// evaluation.
const maxMemo = 4

// assignSlots gives the attributes a rule reads more than once a memo slot,
// so that each is looked up in the caller's context once per evaluation:
// a lookup is a hashed map access, the largest part of a condition's cost.
func assignSlots(rule *node) {
	var buf [32]*varSpec
	specs := buf[:0]
	eachNode(rule, func(n *node) {
		if len(specs) == maxMemoScan {
			return
		}
		if n.op == opVar && n.v != nil && n.v.plain && n.v.dyn == nil && len(n.v.path.parts) > 0 {
			specs = append(specs, n.v)
		}
		if fr := n.fraction(); fr != nil && fr.tk != nil {
			specs = append(specs, fr.tk)
		}
	})
	// Rules read few attributes: comparing names pairwise is cheaper than
	// a map, and the scan is bounded for rules that read many.
	var used uint8
	for i, v := range specs {
		if v.memoBit != 0 {
			continue
		}
		name := v.path.parts[0]
		shared := false
		for _, w := range specs[i+1:] {
			if w.path.parts[0] == name {
				shared = true
				w.memoIdx, w.memoBit = used, 1<<used
			}
		}
		if shared {
			v.memoIdx, v.memoBit = used, 1<<used
			if used++; used == maxMemo {
				return
			}
		}
	}
}

// maxMemoScan bounds the vars assignSlots compares.
const maxMemoScan = 256

// eachNode calls fn for n and every node beneath it.
func eachNode(n *node, fn func(*node)) {
	if n == nil {
		return
	}
	fn(n)
	for _, a := range n.args {
		eachNode(a, fn)
	}
	eachNode(n.one, fn)
	if n.v != nil {
		eachNode(n.v.dyn, fn)
	}
	if fr := n.fraction(); fr != nil {
		eachNode(fr.by, fn)
		for _, x := range fr.exprs {
			eachNode(x, fn)
		}
	}
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
			n.v, n.aux = &varSpec{dyn: argNode}, new(atomic.Pointer[dynPath])
			return
		}
		arg = argNode.lit
	}
	spec, why := varSpecOf(arg, c.paths)
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
// what is wrong with the other shapes.
func varSpecOf(arg value, paths map[string]path) (spec varSpec, why string) {
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
	spec.path = splitPathIn(paths, arg.str())
	spec.plain = len(spec.path.parts) > 0 && spec.path.parts[0] != flagdKey
	spec.single = spec.plain && len(spec.path.parts) == 1
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
		unresolved := false
		for k, v := range t {
			pv, err := plainJSON(v)
			switch {
			case err == errUnresolved:
				// A problem of its own elsewhere in the value still
				// counts, whatever the order the map is walked in.
				unresolved = true
			case err != nil:
				return nil, err
			}
			out[k] = pv
		}
		if unresolved {
			return nil, errUnresolved
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
		unresolved := false
		for i, v := range t {
			pv, err := plainJSON(v)
			switch {
			case err == errUnresolved:
				unresolved = true
			case err != nil:
				return nil, err
			}
			out[i] = pv
		}
		if unresolved {
			return nil, errUnresolved
		}
		return out, nil
	case nil, bool, string, float64:
		return t, nil
	case unresolvedRef:
		return nil, errUnresolved
	case int:
		return float64(t), nil
	case int64:
		return float64(t), nil
	case uint64:
		return float64(t), nil
	}
	return nil, fmt.Errorf("unsupported value of type %T", raw)
}
