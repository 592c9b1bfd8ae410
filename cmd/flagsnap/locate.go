package main

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/flagsnap/flagsnap/internal/plainyaml"
	yaml "go.yaml.in/yaml/v3"
)

// maxDepth is the deepest nesting the provider reads: encoding/json's
// limit, which the evaluator's own JSON decoder keeps, and the YAML
// parser's. Nothing validate reads goes deeper, whatever the file.
const maxDepth = 10000

// pos is a 1-based line and column in a flag file; columns count bytes in
// JSON, as the evaluator's syntax errors do, and characters in YAML, as the
// YAML parser does. The zero pos is unknown.
type pos struct{ line, column int }

// sourceMap tells where the parts of a flag document are written: a member
// by its key, an array element by its first character, both addressed by
// JSON pointer ("/flags/new-checkout/targeting/if/0"). The evaluator
// reports where each problem is as such a pointer; this is how it gets a
// line.
//
// It is a tree of the document's values rather than a table of pointers:
// a table holds every ancestor's path again in each pointer, which grows
// with the square of the nesting, and YAML aliases would be written out
// once for every use. Here an alias is the node of its anchor, so the map
// grows with the file, whatever it nests or aliases.
type sourceMap struct {
	root *srcNode
}

// srcNode is one value of the document.
type srcNode struct {
	at    pos
	array bool
	kids  []srcEdge // members, or elements in order
	// byKey indexes the members of an object of minIndexedMembers or more
	// (such as "flags") once a pointer goes through it; the last of a
	// repeated key, as the evaluator reads it.
	byKey map[string]int
	// keyValue is the value of a string written as the member "key": the
	// key of an entry of an array of flags.
	keyValue string
}

// srcEdge leads from a value to one of its members or elements.
type srcEdge struct {
	key   string
	at    pos // the member's key, or where the element is written
	node  *srcNode
	merge bool // a YAML merge key ("<<"), whose mappings lend their members
}

// minIndexedMembers is the number of members from which an object is
// indexed by key rather than searched.
const minIndexedMembers = 16

// newSourceMap maps any document: one that does not parse keeps the
// positions read before the fault, and nothing deeper than maxDepth is
// read.
func newSourceMap(data []byte) *sourceMap {
	if plainyaml.IsJSON(data) {
		return &sourceMap{root: walkJSON(data)}
	}
	return &sourceMap{root: walkYAML(data)}
}

// find is the position of ptr, or of its nearest ancestor that is written
// in the file (a rule path inside a substituted $ref is not).
func (m *sourceMap) find(ptr string) pos {
	if m.root == nil || (ptr != "" && ptr[0] != '/') {
		return pos{}
	}
	n, at := m.root, m.root.at
	for rest := ptr; rest != ""; {
		var tok string
		tok, rest = nextToken(rest)
		e := n.child(tok)
		if e == nil {
			break
		}
		n, at = e.node, e.at
	}
	return at
}

// flagOf names the flag a pointer is inside, if any.
func (m *sourceMap) flagOf(ptr string) string {
	if m.root == nil || !strings.HasPrefix(ptr, "/flags/") {
		return ""
	}
	flags := m.root.child("flags")
	if flags == nil {
		return ""
	}
	tok, _ := nextToken(ptr[len("/flags"):])
	def := flags.node.child(tok)
	switch {
	case def == nil:
		return ""
	case !flags.node.array:
		return tok
	}
	if key := def.node.child("key"); key != nil {
		return key.node.keyValue
	}
	return ""
}

// nextToken splits the first reference token off a pointer that starts
// with '/', unescaped (RFC 6901).
func nextToken(ptr string) (tok, rest string) {
	ptr = ptr[1:]
	if i := strings.IndexByte(ptr, '/'); i >= 0 {
		ptr, rest = ptr[:i], ptr[i:]
	}
	if strings.IndexByte(ptr, '~') >= 0 {
		ptr = strings.ReplaceAll(strings.ReplaceAll(ptr, "~1", "/"), "~0", "~")
	}
	return ptr, rest
}

func escapePointer(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}

// child is the member named tok of an object, or the element at index tok
// of an array.
func (n *srcNode) child(tok string) *srcEdge {
	if n.array {
		i, err := strconv.Atoi(tok)
		if err != nil || i < 0 || i >= len(n.kids) || strconv.Itoa(i) != tok {
			return nil
		}
		return &n.kids[i]
	}
	return n.member(tok, 0)
}

// member finds a member by key; through YAML merge keys it finds the
// members the mapping takes from others, as the YAML decoder does (within
// bounds: merged mappings may merge others in turn, or themselves).
func (n *srcNode) member(key string, merges int) *srcEdge {
	if len(n.kids) >= minIndexedMembers {
		if n.byKey == nil {
			n.byKey = make(map[string]int, len(n.kids))
			for i, e := range n.kids {
				n.byKey[e.key] = i
			}
		}
		if i, ok := n.byKey[key]; ok && !n.kids[i].merge {
			return &n.kids[i]
		}
	} else {
		for i := len(n.kids) - 1; i >= 0; i-- {
			if e := &n.kids[i]; e.key == key && !e.merge {
				return e
			}
		}
	}
	if merges >= 8 {
		return nil
	}
	for _, e := range n.kids {
		if !e.merge {
			continue
		}
		if !e.node.array {
			if m := e.node.member(key, merges+1); m != nil {
				return m
			}
			continue
		}
		for _, el := range e.node.kids {
			if m := el.node.member(key, merges+1); m != nil {
				return m
			}
		}
	}
	return nil
}

// walkJSON reads the document token by token. InputOffset says where each
// token ends; the positions are counted from the start of the file, byte
// order mark included, as the evaluator counts them.
func walkJSON(data []byte) *srcNode {
	body := plainyaml.TrimBOM(data)
	skip := len(data) - len(body)
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	lines := newLineIndex(data)
	// start is where the next token begins: past the white space, commas
	// and colons that InputOffset leaves before it.
	start := func() pos {
		off := int(dec.InputOffset())
		for off < len(body) && strings.IndexByte(" \t\r\n,:", body[off]) >= 0 {
			off++
		}
		return lines.pos(off + skip)
	}
	// walk reads the value n is for, and gives its token when it is a
	// scalar; ok is false where the document stops parsing.
	var walk func(n *srcNode, depth int) (scalar json.Token, ok bool)
	walk = func(n *srcNode, depth int) (json.Token, bool) {
		n.at = start()
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		delim, _ := tok.(json.Delim)
		if delim != '{' && delim != '[' {
			return tok, true
		}
		if depth > maxDepth {
			return nil, false // the provider reads no further either
		}
		n.array = delim == '['
		for dec.More() {
			e := srcEdge{at: start(), node: &srcNode{}}
			if !n.array {
				k, err := dec.Token()
				if err != nil {
					return nil, false
				}
				e.key, _ = k.(string)
			}
			n.kids = append(n.kids, e)
			scalar, ok := walk(e.node, depth+1)
			if !ok {
				return nil, false
			}
			if s, isStr := scalar.(string); isStr && e.key == "key" {
				e.node.keyValue = s
			}
		}
		_, err = dec.Token() // the closing delimiter
		return nil, err == nil
	}
	root := &srcNode{}
	walk(root, 1)
	return root
}

// walkYAML maps the document's node tree, in which an alias is a reference
// to its anchor's node: it is mapped as that node, once.
func walkYAML(data []byte) *srcNode {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil
	}
	anchors := map[*yaml.Node]*srcNode{}
	var walk func(n *yaml.Node, depth int) *srcNode
	walk = func(n *yaml.Node, depth int) *srcNode {
		if n.Kind == yaml.AliasNode {
			if n.Alias == nil {
				return &srcNode{at: pos{n.Line, n.Column}}
			}
			n = n.Alias
		}
		if s, ok := anchors[n]; ok {
			return s
		}
		s := &srcNode{at: pos{n.Line, n.Column}}
		if n.Anchor != "" {
			// Before its contents: an anchor may be aliased within
			// itself.
			anchors[n] = s
		}
		if depth > maxDepth {
			return s
		}
		switch n.Kind {
		case yaml.MappingNode:
			s.kids = make([]srcEdge, 0, len(n.Content)/2)
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				e := srcEdge{key: k.Value, at: pos{k.Line, k.Column}, node: walk(v, depth+1),
					merge: k.Tag == "!!merge"}
				if k.Value == "key" && v.Kind == yaml.ScalarNode {
					e.node.keyValue = v.Value
				}
				s.kids = append(s.kids, e)
			}
		case yaml.SequenceNode:
			s.array = true
			s.kids = make([]srcEdge, 0, len(n.Content))
			for _, c := range n.Content {
				s.kids = append(s.kids, srcEdge{at: pos{c.Line, c.Column}, node: walk(c, depth+1)})
			}
		}
		return s
	}
	if len(doc.Content) == 0 {
		return nil
	}
	return walk(doc.Content[0], 1)
}

// lineIndex turns byte offsets into lines and columns.
type lineIndex struct{ starts []int }

func newLineIndex(data []byte) lineIndex {
	starts := []int{0}
	for i, c := range data {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return lineIndex{starts: starts}
}

func (l lineIndex) pos(off int) pos {
	i := 0
	lo, hi := 0, len(l.starts)
	for lo < hi { // the last line start at or before off
		mid := (lo + hi) / 2
		if l.starts[mid] <= off {
			i, lo = mid, mid+1
		} else {
			hi = mid
		}
	}
	return pos{line: i + 1, column: off - l.starts[i] + 1}
}
