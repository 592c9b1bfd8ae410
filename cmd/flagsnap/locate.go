package main

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// pos is a 1-based line and column in a flag file; columns count bytes in
// JSON, as the evaluator's syntax errors do, and characters in YAML, as the
// YAML parser does. The zero pos is unknown.
type pos struct{ line, column int }

// sourceMap tells where the parts of a flag document are written: a member
// by its key, an array element by its first character, both addressed by
// JSON pointer ("/flags/new-checkout/targeting/if/0"). The evaluator
// reports where each problem is as such a pointer; this is how it gets a
// line.
type sourceMap struct {
	at    map[string]pos
	flags map[string]string // flag key → pointer of its definition
}

// bom is the UTF-8 byte order mark the evaluator accepts before a document.
const bom = "\xef\xbb\xbf"

// isJSON decides between JSON and YAML as the evaluator does: a document
// whose first significant character opens an object or an array is JSON.
func isJSON(data []byte) bool {
	t := bytes.TrimLeft(bytes.TrimPrefix(data, []byte(bom)), " \t\r\n")
	return len(t) > 0 && (t[0] == '{' || t[0] == '[')
}

func newSourceMap(data []byte) *sourceMap {
	m := &sourceMap{at: map[string]pos{}, flags: map[string]string{}}
	if isJSON(data) {
		m.walkJSON(data)
	} else {
		m.walkYAML(data)
	}
	return m
}

// find is the position of ptr, or of its nearest ancestor that is written
// in the file (a rule path inside a substituted $ref is not).
func (m *sourceMap) find(ptr string) pos {
	for {
		if p, ok := m.at[ptr]; ok {
			return p
		}
		i := strings.LastIndexByte(ptr, '/')
		if i < 0 {
			return pos{}
		}
		ptr = ptr[:i]
	}
}

func escapePointer(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}

func (m *sourceMap) set(ptr string, p pos) {
	if _, ok := m.at[ptr]; !ok {
		m.at[ptr] = p
	}
}

// walkJSON records positions by reading the document token by token. A
// document that stops parsing keeps the positions read so far.
func (m *sourceMap) walkJSON(data []byte) {
	skip := 0
	if bytes.HasPrefix(data, []byte(bom)) {
		skip = len(bom)
	}
	body := data[skip:]
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
	var walk func(ptr string) error
	walk = func(ptr string) error {
		m.set(ptr, start())
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			for dec.More() {
				at := start()
				k, err := dec.Token()
				if err != nil {
					return err
				}
				key, _ := k.(string)
				child := ptr + "/" + escapePointer(key)
				m.set(child, at)
				if ptr == "/flags" {
					m.flagAt(key, child)
				}
				if err := walk(child); err != nil {
					return err
				}
			}
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				if err := walk(ptr + "/" + strconv.Itoa(i)); err != nil {
					return err
				}
			}
		default:
			if s, ok := tok.(string); ok {
				m.maybeArrayFlag(ptr, s)
			}
			return nil
		}
		_, err = dec.Token() // the closing delimiter
		return err
	}
	_ = walk("")
}

func (m *sourceMap) flagAt(key, ptr string) {
	if _, dup := m.flags[key]; !dup {
		m.flags[key] = ptr
	}
}

var arrayFlagKey = regexp.MustCompile(`^/flags/(\d+)/key$`)

// maybeArrayFlag notes the "key" of an entry in the array form of "flags".
func (m *sourceMap) maybeArrayFlag(ptr, s string) {
	if sub := arrayFlagKey.FindStringSubmatch(ptr); sub != nil {
		m.flagAt(s, "/flags/"+sub[1])
	}
}

func (m *sourceMap) walkYAML(data []byte) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return
	}
	var walk func(n *yaml.Node, ptr string, depth int)
	walk = func(n *yaml.Node, ptr string, depth int) {
		if n == nil || depth > 1000 {
			return
		}
		if n.Kind == yaml.AliasNode {
			walk(n.Alias, ptr, depth+1)
			return
		}
		m.set(ptr, pos{n.Line, n.Column})
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, ptr, depth+1)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				child := ptr + "/" + escapePointer(k.Value)
				m.set(child, pos{k.Line, k.Column})
				if ptr == "/flags" {
					m.flagAt(k.Value, child)
				}
				walk(v, child, depth+1)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, ptr+"/"+strconv.Itoa(i), depth+1)
			}
		case yaml.ScalarNode:
			m.maybeArrayFlag(ptr, n.Value)
		}
	}
	walk(&doc, "", 0)
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
