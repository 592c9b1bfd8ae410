package evaluator

import (
	"fmt"
	"math"
	"testing"
)

// TestDirectComparisonsAgree checks the direct comparison of a context
// attribute with a constant against the general path, which an "if" in
// between forces, for values JSON cannot carry as well (NaN, infinities).
func TestDirectComparisonsAgree(t *testing.T) {
	values := []any{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0.0, 1.0, 1.5, 2, int64(-3),
		"a", "b", "", "1", "1.5", "ab", "é", "\xff", "a\xffb", "\xc3", "\uFFFD", "a\uFFFDb", true, false, nil, []any{1.0}, map[string]any{"k": 1.0, "j": 2.0}}
	// Strings that are not valid UTF-8 read with U+FFFD; constants that
	// hold it, alone or in a list, must then match them.
	consts := []string{`1`, `1.5`, `0`, `"a"`, `"1"`, `""`, `"abc"`, `true`, `null`,
		`"\ufffd"`, `"a\ufffdb"`, `"é"`, `["a", "b"]`, `["\ufffd", "x"]`, `["a\ufffdb"]`}
	for _, op := range []string{"==", "!=", "<", "<=", ">", ">=", "in"} {
		for _, c := range consts {
			direct := decodeRule(t, fmt.Sprintf(`{%q: [{"var": "x"}, %s]}`, op, c))
			general := decodeRule(t, fmt.Sprintf(`{%q: [{"if": [true, {"var": "x"}]}, %s]}`, op, c))
			dn, err1 := compileRule(direct)
			gn, err2 := compileRule(general)
			if err1 != nil || err2 != nil {
				t.Fatalf("%s %s: %v %v", op, c, err1, err2)
			}
			// Were the compiler to fold the if away, both rules would take
			// the direct path and agree whatever it does; were it to stop
			// marking the direct one, neither would take it.
			if dn.args[0].op != opVar || gn.args[0].op == opVar {
				t.Fatalf("%s %s: the rules no longer compile to a var and to something else", op, c)
			}
			if !dn.attrConst || gn.attrConst {
				t.Fatalf("%s %s: attrConst is %v for the direct rule, %v for the general one", op, c, dn.attrConst, gn.attrConst)
			}
			for _, x := range values {
				ctx := map[string]any{"x": x}
				set := ruleSet(2)
				got, gotErr := runRule(set, dn, "f", ctx)
				want, wantErr := runRule(set, gn, "f", ctx)
				if (gotErr != nil) != (wantErr != nil) || !sameJSON(got, want) {
					t.Errorf("%v %s %s: direct %v (%v), general %v (%v)", x, op, c, got, gotErr, want, wantErr)
				}
			}
		}
	}
}
