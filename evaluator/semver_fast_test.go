package evaluator

import (
	"fmt"
	"testing"
)

// sem_ver of a context attribute against constants reads the attribute
// directly; it must answer what the general path answers, which a rule
// takes when the version is computed ({"cat": [...]}).
func TestSemVerDirectAttributeMatchesTheGeneralPath(t *testing.T) {
	versions := []any{"1.2.3", "v1.2.3", "1.2", "1", "1.2.3-beta.1", "1.2.3+build", "2.0.0", "0.9.9", "01.2.3",
		"1.2.x", "", "not a version", "1.2.3\xff", 1.2, 2, true, nil}
	ops := []string{"=", "!=", "<", "<=", ">", ">=", "^", "~", "??"}
	for _, op := range ops {
		direct := mustLoad(t, fmt.Sprintf(`{"flags": {"f": {"state": "ENABLED", "variants": {"on": "on", "off": "off"}, "defaultVariant": "off",
		  "targeting": {"if": [{"sem_ver": [{"var": "v"}, %q, "1.2.3"]}, "on", "off"]}}}}`, op))
		general := mustLoad(t, fmt.Sprintf(`{"flags": {"f": {"state": "ENABLED", "variants": {"on": "on", "off": "off"}, "defaultVariant": "off",
		  "targeting": {"if": [{"sem_ver": [{"if": [true, {"var": "v"}]}, %q, "1.2.3"]}, "on", "off"]}}}}`, op))
		checkDirectPath(t, "sem_ver "+op, direct, general)
		for _, v := range versions {
			ctx := map[string]any{"v": v}
			if v == nil {
				ctx = map[string]any{}
			}
			got, want := direct.ResolveString("f", "", ctx), general.ResolveString("f", "", ctx)
			if got.Value != want.Value || got.Reason != want.Reason {
				t.Errorf("sem_ver %q %q: direct %+v, general %+v", v, op, got, want)
			}
		}
	}
}

// starts_with and ends_with of a context attribute and a constant read the
// attribute directly; they must answer what the general path answers.
func TestAffixDirectAttributeMatchesTheGeneralPath(t *testing.T) {
	values := []any{"admin@example.com", "user@example.com", "admin", "", "ADMIN@EXAMPLE.COM", "admin\xff@example.com", 42, true, nil,
		map[string]any{"a": 1}}
	for _, op := range []string{"starts_with", "ends_with"} {
		for _, affix := range []string{"admin", "@example.com", ""} {
			direct := mustLoad(t, fmt.Sprintf(`{"flags": {"f": {"state": "ENABLED", "variants": {"on": "on", "off": "off"}, "defaultVariant": "off",
			  "targeting": {"if": [{%q: [{"var": "email"}, %q]}, "on", "off"]}}}}`, op, affix))
			general := mustLoad(t, fmt.Sprintf(`{"flags": {"f": {"state": "ENABLED", "variants": {"on": "on", "off": "off"}, "defaultVariant": "off",
			  "targeting": {"if": [{%q: [{"if": [true, {"var": "email"}]}, %q]}, "on", "off"]}}}}`, op, affix))
			checkDirectPath(t, op+" "+affix, direct, general)
			for _, v := range values {
				ctx := map[string]any{"email": v}
				if v == nil {
					ctx = map[string]any{}
				}
				got, want := direct.ResolveString("f", "", ctx), general.ResolveString("f", "", ctx)
				if got.Value != want.Value || got.Reason != want.Reason {
					t.Errorf("%s %q %q: direct %+v, general %+v", op, v, affix, got, want)
				}
			}
		}
	}
}

// checkDirectPath fails the test unless the condition of flag f's rule,
// {"if": [condition, …]}, takes the direct path (node.attrConst) in direct
// and not in general: were both to take the same path, they would agree
// whatever it does.
func checkDirectPath(t *testing.T, what string, direct, general *FlagSet) {
	t.Helper()
	dn, gn := direct.flag("f").rule.args[0], general.flag("f").rule.args[0]
	if !dn.attrConst || gn.attrConst {
		t.Fatalf("%s: attrConst is %v for the direct rule, %v for the general one", what, dn.attrConst, gn.attrConst)
	}
}
