package evaluator

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
)

// ErrorCode classifies why a resolution failed. The provider maps each code
// to the OpenFeature error of the same name.
type ErrorCode uint8

const (
	// CodeFlagNotFound: no flag has the requested key.
	CodeFlagNotFound ErrorCode = iota + 1
	// CodeParseError: the flag's definition or targeting rule cannot be used.
	CodeParseError
	// CodeTypeMismatch: the variant's value is not of the requested type.
	CodeTypeMismatch
	// CodeGeneral: targeting produced something that names no variant.
	CodeGeneral
)

var codeNames = [...]string{
	CodeFlagNotFound: "FLAG_NOT_FOUND",
	CodeParseError:   "PARSE_ERROR",
	CodeTypeMismatch: "TYPE_MISMATCH",
	CodeGeneral:      "GENERAL",
}

// String is the OpenFeature spelling of the code.
func (c ErrorCode) String() string {
	if int(c) < len(codeNames) && codeNames[c] != "" {
		return codeNames[c]
	}
	return fmt.Sprintf("ErrorCode(%d)", uint8(c))
}

// Error is a failed resolution. Code says what kind of failure it is; callers
// switch on it rather than on the message.
type Error struct {
	Code ErrorCode
	Flag string // the flag key, when the error concerns one flag
	Msg  string
	Err  error // the underlying cause, if any

	// path is where the problem of a broken flag is written, for
	// FlagProblem.Path; nil for the errors of evaluation.
	path []string

	// text is the message made once, for the error of a broken flag, which
	// every evaluation of the flag answers; the fields do not change after.
	text string

	// Tally is a count its caller keeps with the error of a key the set
	// does not define, which the set makes once per key and every
	// evaluation of the key answers (NotFound): a caller counts a key's
	// misses where the evaluation found them, without a lookup of its
	// own. The evaluator never reads it; nil for other errors.
	Tally *Tally
}

// Tally is a count of evaluations, and the window (a number of the
// caller's choosing) that the count belongs to.
type Tally struct {
	Count, Window atomic.Uint64
}

// Error names the flag, then says what went wrong. A message made once is
// read where it is kept, in a call small enough to inline: the provider
// asks it of every evaluation of a missing key.
func (e *Error) Error() string {
	if e.text != "" {
		return e.text
	}
	return e.format()
}

// format builds the message in one buffer of the right size rather than
// through fmt: the provider asks every failed evaluation for its message.
func (e *Error) format() string {
	var cause string
	if e.Err != nil {
		cause = e.Err.Error()
	}
	buf := make([]byte, 0, len(e.Flag)+len(e.Msg)+len(cause)+12)
	if e.Flag != "" {
		buf = append(buf, "flag "...)
		buf = strconv.AppendQuote(buf, e.Flag)
		buf = append(buf, ": "...)
	}
	buf = append(buf, e.Msg...)
	if e.Err != nil {
		if e.Msg != "" {
			buf = append(buf, ": "...)
		}
		buf = append(buf, cause...)
	}
	return string(buf)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is makes every error of a missing key, the shared ErrFlagNotFound and
// those that name the key (FlagSet.NotFound), match ErrFlagNotFound for
// errors.Is.
func (e *Error) Is(target error) bool {
	return target == error(ErrFlagNotFound) && e.Code == CodeFlagNotFound
}

// ErrFlagNotFound is the error of a key the flag set does not have once
// the set keeps no more errors that name the key (see FlagSet.NotFound).
// It is shared, so it does not name the key; errors.Is matches every error
// of a missing key with it.
var ErrFlagNotFound = &Error{Code: CodeFlagNotFound, Msg: "flag not found", text: "flag not found"}

// notFound is the error of a missing key that names it: `flag "KEY" not
// found`, and `; did you mean "OTHER"?` when hint is that question.
func notFound(key, hint string) *Error {
	msg := "flag not found"
	text := "flag " + strconv.Quote(key) + " not found"
	if hint != "" {
		msg += "; " + hint
		text += "; " + hint
	}
	return &Error{Code: CodeFlagNotFound, Flag: key, Msg: msg, text: text, Tally: new(Tally)}
}

// SyntaxError is a flag document that is not valid JSON or YAML. Line and
// Column are 1-based; Column is 0 when the YAML parser does not report one.
type SyntaxError struct {
	Format string // "JSON" or "YAML"
	Line   int
	Column int
	Msg    string
}

// Error gives the format, the position and the parser's message.
func (e *SyntaxError) Error() string {
	if e.Column > 0 {
		return fmt.Sprintf("invalid %s at line %d, column %d: %s", e.Format, e.Line, e.Column, e.Msg)
	}
	if e.Line > 0 {
		return fmt.Sprintf("invalid %s at line %d: %s", e.Format, e.Line, e.Msg)
	}
	return fmt.Sprintf("invalid %s: %s", e.Format, e.Msg)
}

// DocumentError is a well-formed document that is not a flag set (no
// "flags", or parts of the wrong type).
type DocumentError struct {
	Msg string
	// Path is the part of the document that is wrong, as in FlagProblem:
	// ["flags"] when "flags" is neither an object nor an array. It is empty
	// when the fault is the document's as a whole, "flags" missing
	// included.
	Path []string
}

// Error says why the document is not a flag set.
func (e *DocumentError) Error() string { return "not a flag set: " + e.Msg }

// Pointer is Path as a JSON Pointer (RFC 6901).
func (e *DocumentError) Pointer() string { return jsonPointer(e.Path) }

// FlagProblem is a problem confined to one flag. Outside strict mode the
// flag answers PARSE_ERROR and the rest of the flag set loads. A flag may
// have several problems, one FlagProblem each, listed together in the
// order the loader checks a flag (variants, defaultVariant, $ref, rule):
// the first is the one its evaluations answer.
type FlagProblem struct {
	Flag string
	// Path is where the problem is written, as the object keys and array
	// indexes (in decimal) that lead to it from the top of the document,
	// so that tools can point at it without reading Err's message:
	// ["flags", "new-checkout", "targeting", "if", "0", "starts_with"], or
	// ["flags", "2", "defaultVariant"] when "flags" is an array.
	//
	// It ends at the flag for a definition that is not an object or a key
	// defined twice (the first definition), at the "$ref" member of a $ref
	// that cannot be substituted, and at the variant for a variant's
	// problem. Within a rule substituted for a $ref it follows the rule as
	// substituted, so its last parts may not be written in the document:
	// the deepest part that is written is the $ref.
	Path []string
	Err  error
	// WhenReached is set for a problem in a part of a flag's rule (an
	// unknown operator, a malformed argument): the flag answers as usual,
	// and an evaluation that reaches the part answers PARSE_ERROR (or, for
	// fractional, falls back to the default variant), as flagd does. The
	// other problems break the whole flag.
	WhenReached bool
}

// Error names the flag and its problem.
func (p FlagProblem) Error() string { return fmt.Sprintf("flag %q: %v", p.Flag, p.Err) }

// Unwrap is the problem's error.
func (p FlagProblem) Unwrap() error { return p.Err }

// Pointer is Path as a JSON Pointer (RFC 6901):
// "/flags/new-checkout/defaultVariant".
func (p FlagProblem) Pointer() string { return jsonPointer(p.Path) }

// jsonPointer escapes each part (RFC 6901) so that a key holding '/' stays
// one part.
func jsonPointer(path []string) string {
	var b strings.Builder
	for _, part := range path {
		b.WriteByte('/')
		for i := 0; i < len(part); i++ {
			switch part[i] {
			case '~':
				b.WriteString("~0")
			case '/':
				b.WriteString("~1")
			default:
				b.WriteByte(part[i])
			}
		}
	}
	return b.String()
}

// ValidationError is the strict mode's rejection of a whole document
// because of problems in individual flags.
type ValidationError struct {
	Problems []FlagProblem // every problem, a flag's together (see FlagProblem)
}

// Unwrap is every problem, for errors.Is and errors.As.
func (e *ValidationError) Unwrap() []error {
	errs := make([]error, len(e.Problems))
	for i, p := range e.Problems {
		errs[i] = p
	}
	return errs
}

// ErrUnresolvedRef is the problem of a {"$ref": name} that names no entry
// of its document's "$evaluators": errors.Is finds it in Load's error. A
// $ref resolves in the document that defines the flag, never in another
// layer's (see Layered).
var ErrUnresolvedRef = errors.New(`a "$ref" names no entry of "$evaluators"`)

// Error counts the invalid flags and lists every problem.
func (e *ValidationError) Error() string {
	msgs := make([]string, len(e.Problems))
	flags := 0
	for i, p := range e.Problems {
		msgs[i] = p.Error()
		if i == 0 || p.Flag != e.Problems[i-1].Flag {
			flags++
		}
	}
	return fmt.Sprintf("%d invalid flag(s): %s", flags, strings.Join(msgs, "; "))
}

// jsonType names the JSON type of a decoded value, for messages.
func jsonType(x any) string {
	switch x.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case json.Number, float64:
		return "a number"
	case []any:
		return "an array"
	case map[string]any, *op1:
		return "an object"
	}
	return fmt.Sprintf("a %T", x)
}
