package evaluator

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestErrorMessages(t *testing.T) {
	cause := errors.New("unknown operator \"nope\"")
	for _, tc := range []struct {
		err  *Error
		want string
	}{
		{ErrFlagNotFound, "flag not found"},
		{&Error{Code: CodeGeneral, Flag: "color", Msg: "targeting returned \"x\", which is not a variant"},
			`flag "color": targeting returned "x", which is not a variant`},
		{&Error{Code: CodeParseError, Flag: "a\"b", Msg: "targeting", Err: cause},
			`flag "a\"b": targeting: unknown operator "nope"`},
		{&Error{Code: CodeParseError, Flag: "f", Err: cause}, `flag "f": unknown operator "nope"`},
		{&Error{Code: CodeParseError, Msg: "alone"}, "alone"},
		{&Error{Code: CodeParseError, Flag: "ключ", Msg: "m"}, `flag "ключ": m`},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %s, want %s", got, tc.want)
		}
	}
}

func TestTypeMismatchNamesTheVariant(t *testing.T) {
	set := mustLoad(t, `{"flags": {
	  "b": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on"},
	  "n": {"state": "ENABLED", "variants": {"pi": 3.14}, "defaultVariant": "pi"},
	  "l": {"state": "ENABLED", "variants": {"list": [1]}, "defaultVariant": "list"}}}`)
	for _, tc := range []struct {
		got  *Error
		want string
	}{
		{set.ResolveString("b", "", nil).Err, `flag "b": variant "on" is a boolean, not a string`},
		{set.ResolveInt("n", 0, nil).Err, `flag "n": variant "pi" is a non-integer number, not an integer`},
		{set.ResolveBool("l", false, nil).Err, `flag "l": variant "list" is an array, not a boolean`},
	} {
		if tc.got == nil || tc.got.Code != CodeTypeMismatch || tc.got.Error() != tc.want {
			t.Errorf("got %v, want TYPE_MISMATCH %s", tc.got, tc.want)
		}
	}
}

// TestOperatorNamesCompile holds the names a misspelt operator is compared
// with to what compiles.
func TestOperatorNamesCompile(t *testing.T) {
	names := OperatorNames()
	if len(names) != len(operators) || !slices.IsSorted(names) || slices.Contains(names, legacyFractional) {
		t.Fatalf("OperatorNames() = %q", names)
	}
	for _, name := range names {
		doc := `{"flags": {"f": {"state": "ENABLED", "variants": {"a": "a"}, "defaultVariant": "a", "targeting": {` +
			strconv.Quote(name) + `: [1, 2]}}}}`
		for _, p := range mustLoad(t, doc).Problems() {
			var ce *CompileError
			if errors.As(p.Err, &ce) && strings.HasPrefix(ce.Msg, "unknown operator") {
				t.Errorf("%q: %v", name, p.Err)
			}
		}
	}
}

// A part of a rule that an evaluation reaches says where it is written, as
// a JSON Pointer into the document (the one Problems and the load warning
// give), and why, with a suggestion when the mistake is plain.
func TestBrokenPartReached(t *testing.T) {
	const evaluators = `"$evaluators": {"staff-only": {"in": ["@staff.com", {"var": "email"}]}}`
	flag := func(key, rule string) string {
		return `"` + key + `": {"state": "ENABLED", "variants": {"a": "a", "b": "b"}, "defaultVariant": "a", "targeting": ` + rule + `}`
	}
	for _, tt := range []struct {
		name, doc, key, want string
	}{
		{"misspelt operator",
			`{"flags": {` + flag("my-flag", `{"if": [{"ends_witth": [{"var": "email"}, "x"]}, "a", "b"]}`) + `}}`, "my-flag",
			`flag "my-flag": /flags/my-flag/targeting/if/0/ends_witth: unknown operator "ends_witth"; did you mean "ends_with"?`},
		{"unknown operator, nothing near",
			`{"flags": {` + flag("f", `{"if": [true, {"frobnicate": 1}, "b"]}`) + `}}`, "f",
			`flag "f": /flags/f/targeting/if/1/frobnicate: unknown operator "frobnicate"`},
		{"flags as an array: the pointer has the index",
			`{"flags": [{"key": "f", "state": "ENABLED", "variants": {"a": "a"}, "defaultVariant": "a", "targeting": {"startsWith": [{"var": "x"}, "y"]}}]}`, "f",
			`flag "f": /flags/0/targeting/startsWith: unknown operator "startsWith"; did you mean "starts_with"?`},
		{"a key holding a slash",
			`{"flags": {` + flag("team/f~1", `{"in": 5}`) + `}}`, "team/f~1",
			`flag "team/f~1": /flags/team~1f~01/targeting/in: in needs an array of arguments`},
		{"misspelt $ref",
			`{` + evaluators + `, "flags": {` + flag("f", `{"if": [{"$ref": "staf-only"}, "a", "b"]}`) + `}}`, "f",
			`flag "f": /flags/f/targeting/if/0/$ref: $ref "staf-only" names no entry of $evaluators; did you mean "staff-only"?`},
		{"$ref in data",
			`{` + evaluators + `, "flags": {` + flag("f", `{"in": ["a", [1, {"$ref": "nope"}]], "k": 1}`) + `}}`, "f",
			`flag "f": /flags/f/targeting/in/1/1/$ref: $ref "nope" names no entry of $evaluators`},
		{"$ref in data, within an object of one member",
			`{` + evaluators + `, "flags": {` + flag("f", `{"if": [{"in": ["a", [{"a": 1, "b": {"x": {"$ref": "nope"}}}]]}, "a", "b"]}`) + `}}`, "f",
			`flag "f": /flags/f/targeting/if/0/in/1/0/b/x/$ref: $ref "nope" names no entry of $evaluators`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			set := mustLoad(t, tt.doc)
			r := set.ResolveString(tt.key, "d", nil)
			if r.Err == nil || r.Err.Code != CodeParseError || r.Err.Error() != tt.want {
				t.Fatalf("got  %v\nwant %s", r.Err, tt.want)
			}
			if ref := strings.Contains(tt.want, "names no entry"); errors.Is(r.Err, ErrUnresolvedRef) != ref {
				t.Errorf("errors.Is(%v, ErrUnresolvedRef) = %v", r.Err, !ref)
			}
			p := set.Problems()[0]
			if got := `flag "` + tt.key + `": ` + p.Err.Error(); !p.WhenReached || got != tt.want {
				t.Errorf("problem %s (WhenReached %v)", got, p.WhenReached)
			}
			if !strings.HasPrefix(tt.want, `flag "`+tt.key+`": `+p.Pointer()+": ") {
				t.Errorf("the message does not start with the problem's pointer %s", p.Pointer())
			}
		})
	}
}
