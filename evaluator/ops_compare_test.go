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

// TestInSetNumbersAsScanned checks a number looked up in a written list of
// strings, which is compiled into a sorted slice of the strings read as
// numbers, against the same list scanned at evaluation, which a computed
// list forces, for numbers JSON cannot carry as well: NaN equals nothing.
func TestInSetNumbersAsScanned(t *testing.T) {
	needles := []any{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0.0, 1.0, 1.5, 2, int64(-3), 1e300}
	lists := []string{`["NaN", "x"]`, `["inf", "-Infinity"]`, `["1e400", "-0"]`, `["3", "2", "1.5", "1", "-3"]`, `["a", "b"]`,
		`["k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "2"]`}
	for _, list := range lists {
		set, err := compileRule(decodeRule(t, `{"in": [{"var": "x"}, `+list+`]}`))
		if err != nil || set.x == nil || set.x.in == nil {
			t.Fatalf("%s: not compiled into a set (%v)", list, err)
		}
		scanned, err := compileRule(decodeRule(t, `{"in": [{"var": "x"}, {"if": [true, `+list+`]}]}`))
		if err != nil || scanned.x != nil {
			t.Fatalf("%s: the computed list is a set too (%v)", list, err)
		}
		for _, x := range needles {
			ctx := map[string]any{"x": x}
			got, gotErr := runRule(ruleSet(2), set, "f", ctx)
			want, wantErr := runRule(ruleSet(2), scanned, "f", ctx)
			if gotErr != nil || wantErr != nil || got != want {
				t.Errorf("%v in %s: set %v (%v), scanned %v (%v)", x, list, got, gotErr, want, wantErr)
			}
		}
	}
}
