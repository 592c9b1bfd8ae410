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
