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
// lives beside the node, not in it. A variant keeps its value once, in
// obj, which the typed readers take apart.
func TestFlagNodeAndVariantSize(t *testing.T) {
	// Every flag is one; 112 bytes is a size class of the allocator, the
	// next is 128.
	if size := unsafe.Sizeof(flag{}); size > 112 {
		t.Errorf("a flag is %d bytes, more than 112", size)
	}
	// A flag set has millions of nodes; 80 bytes is a size class too.
	if size := unsafe.Sizeof(node{}); size > 80 {
		t.Errorf("a node is %d bytes, more than 80", size)
	}
	// Most rules read the context: a var is a node and a varSpec.
	if size := unsafe.Sizeof(varSpec{}); size > 96 {
		t.Errorf("a varSpec is %d bytes, more than 96", size)
	}
	if size := unsafe.Sizeof(variant{}); size > 32 {
		t.Errorf("a variant is %d bytes, more than 32", size)
	}
}

// A node has a nodeExtra only when its operator worked something out at
// load: an empty one would be an allocation per node for nothing.
func TestNodeExtraOnlyWithContent(t *testing.T) {
	for _, c := range []struct {
		rule string
		want bool
	}{
		{`{"in": [{"var": "x"}, ["a", "b"]]}`, true},
		{`{"in": [{"var": "x"}, {"var": "y"}]}`, false},
		{`{"in": [{"var": "x"}, ["a", 1]]}`, false},
		{`{"sem_ver": [{"var": "v"}, ">=", "1.2.3"]}`, true},
		{`{"sem_ver": [{"var": "v"}, {"var": "op"}, {"var": "w"}]}`, false},
		{`{"sem_ver": {"var": "args"}}`, false},
		{`{"missing": ["a", "b"]}`, true},
		{`{"missing": {"var": "names"}}`, false},
		{`{"missing_some": [1, ["a", "b"]]}`, true},
		{`{"missing_some": [1, {"var": "names"}]}`, false},
		{`{"fractional": [["a", 1], ["b", 1]]}`, true},
		{`{"fractional": [["a", {"var": "w"}], ["b", 1]]}`, false},
	} {
		n, err := compileRule(decodeRule(t, c.rule))
		if err != nil {
			t.Fatalf("%s: %v", c.rule, err)
		}
		if got := n.x != nil; got != c.want {
			t.Errorf("%s: has a nodeExtra: %v, want %v", c.rule, got, c.want)
		}
	}
}

// constNodes lists the constant nodes of a flag's rule whose text is s.
func constNodes(set *FlagSet, key, s string) []*node {
	var out []*node
	var walk func(n *node)
	walk = func(n *node) {
		if n == nil {
			return
		}
		if n.op == opConst && n.lit.k == kStr && n.lit.str() == s {
			out = append(out, n)
		}
		for _, a := range n.args {
			walk(a)
		}
	}
	walk(set.index.get(key).rule)
	return out
}

// Each occurrence of a constant has a node of its own: Explain tells an
// operation's arguments apart by their nodes.
func TestEachConstantHasItsNode(t *testing.T) {
	const rule = `{"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off",
		"targeting": {"if": [{"==": [{"var": "x"}, "on"]}, "on", "off"]}}`
	set := mustLoad(t, `{"flags": {"a": `+rule+`, "b": `+rule+`}}`)
	a, b := constNodes(set, "a", "on"), constNodes(set, "b", "on")
	if len(a) != 2 || len(b) != 2 {
		t.Fatalf(`"on" constants: %d in a, %d in b, want 2 each`, len(a), len(b))
	}
	if a[0] == a[1] || b[0] == b[1] || a[0] == b[0] || a[0] == b[1] {
		t.Error("two constants share a node")
	}
	for _, key := range []string{"a", "b"} {
		for x, want := range map[string]string{"on": "on", "off": "off"} {
			if e := set.Evaluate(key, map[string]any{"x": x}); e.Variant() != want {
				t.Errorf("%s with x=%s: %q, want %q", key, x, e.Variant(), want)
			}
		}
	}
}
