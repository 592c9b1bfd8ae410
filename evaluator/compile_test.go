package evaluator

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"
)

// A rule with more locations than a chunk holds, compiled after another
// such rule by the same loader, places its problem where it is written.
func TestLocationsPastAChunk(t *testing.T) {
	var vars []string
	for i := range 2 * locChunk {
		vars = append(vars, fmt.Sprintf(`{"var": "v%d"}`, i))
	}
	big := `{"in": [{"var": "x"}, [` + strings.Join(vars, ",") + `]]}`
	broken := `{"in": [{"var": "x"}, [` + strings.Join(vars, ",") + `, {"nope": 1}]]}`
	flag := func(rule string) string {
		return `{"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off",
			"targeting": {"if": [` + rule + `, "on", "off"]}}`
	}
	set := mustLoad(t, `{"flags": {"a": `+flag(big)+`, "b": `+flag(broken)+`}}`)
	problems := set.Problems()
	if len(problems) != 1 {
		t.Fatalf("problems %+v, want one", problems)
	}
	want := fmt.Sprintf("/flags/b/targeting/if/0/in/1/%d/nope", 2*locChunk)
	if got := problems[0].Pointer(); got != want {
		t.Errorf("problem at %s, want %s", got, want)
	}
}

// A flag set has millions of nodes: what an operator works out at load
// lives beside the node, not in it.
func TestNodeSize(t *testing.T) {
	if size := unsafe.Sizeof(node{}); size > 88 {
		t.Errorf("a node is %d bytes, more than 88", size)
	}
}
