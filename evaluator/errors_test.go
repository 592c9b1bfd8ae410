package evaluator

import (
	"errors"
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
