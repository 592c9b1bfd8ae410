package evaluator

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
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
// looking at it: a list written in the rule (list=true: args are its
// elements) or any other expression, whose value becomes the argument
// (args[0], the one element).
type node struct {
	op     opcode
	nameID uint8 // the operator as written: opNames[nameID]
	list   bool
	// attrConst: a context attribute (a var of one segment) against
	// constants: a binary operator (==, !=, <, <=, >, >=, in), starts_with
	// or ends_with with a constant string, or sem_ver with a constant
	// operator and right-hand version. exact: of a binary operator, and
	// comparing a string attribute's bytes with the constant decides,
	// because the operator is ==, != or in an array of strings, and no
	// constant holds U+FFFD, which is what a string that is not valid UTF-8
	// would read as.
	attrConst, exact bool

	lit  value
	args []*node
	v    *varSpec
	// x is what the operator works out at load: set for every opBroken
	// node, and for a node of in, sem_ver, missing, missing_some or
	// fractional when the operator worked something out; nil otherwise.
	x *nodeExtra
}

// nodeExtra holds what a node's operator works out at load. Only the
// field of the node's operator is used. It is kept apart from the node
// because few operators have one, and a flag set has millions of nodes.
type nodeExtra struct {
	in       *inSet      // in: the list of strings, when constant
	semver   *semverArgs // sem_ver: the constant operands
	fraction *fracSpec   // fractional: the buckets, when known at load
	// names are missing's and missing_some's constant names, read as var
	// reads them.
	names  []varSpec
	broken *brokenPart // opBroken: what it answers
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
	return &node{op: opBroken, x: &nodeExtra{broken: &brokenPart{err: err, null: null}}}
}

// unknown stands for an element that has a problem, or whose value cannot
// be known at load: a var of a computed path, which the checks around it
// take for a value computed at evaluation. Its flag is broken.
func unknown() *node {
	return &node{op: opVar, v: &varSpec{dyn: &node{op: opConst, lit: null}}}
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
func (u unresolvedRef) problem() error { return u.err }

// errUnresolved is constValue's answer for a constant holding an
// unresolvedRef, which is not a problem of its own.
var errUnresolved = errors.New("unresolved $ref")

// firstUnresolved is the problem of the $ref in data that names nothing
// and is written first (the one the loader reports first). earliestRef
// walks every container plainJSON does, so the fallback, which has no
// place to give, is only there should they ever part.
func firstUnresolved(raw any) error {
	if first := earliestRef(raw, nil); first != nil {
		return first
	}
	return ErrUnresolvedRef
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
	case *op1:
		first = earliestRef(t.val, first)
	case []any:
		for _, v := range t {
			first = earliestRef(v, first)
		}
	}
	return first
}

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
	// cause is the kind of problem errors.Is may look for
	// (ErrUnresolvedRef), nil for the others.
	cause error
}

// Unwrap is the kind of problem, when it has one errors.Is may look for.
func (e *CompileError) Unwrap() error { return e.cause }

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
