package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/flagsnap/flagsnap/evaluator"
)

// pos is a 1-based line and column in a flag file; columns count bytes in
// JSON, as the evaluator's syntax errors do, and characters in YAML, as the
// YAML parser does. The zero pos is unknown.
type pos struct{ line, column int }

// sourceMap tells where the parts of a flag document are written: a member
// by its key, an array element by its first character, both addressed by
// JSON pointer ("/flags/new-checkout/targeting/if/0"). The evaluator
// reports problems by flag key and rule path; this is how they get a line.
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

// flag is the pointer of a flag's definition, "" when the file has none.
func (m *sourceMap) flag(key string) string {
	if p, ok := m.flags[key]; ok {
		return p
	}
	// The evaluator names an entry of a flag array without a key by its
	// index.
	var i int
	if _, err := fmt.Sscanf(key, "flags[%d]", &i); err == nil {
		return "/flags/" + strconv.Itoa(i)
	}
	return ""
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

// rulePath turns the evaluator's path in a rule ("targeting.if[1].in") into
// pointer segments ("/targeting/if/1/in").
func rulePath(p string) string {
	var b strings.Builder
	for _, part := range strings.Split(p, ".") {
		name, rest, _ := strings.Cut(part, "[")
		if name != "" {
			b.WriteString("/" + escapePointer(name))
		}
		for rest != "" {
			idx, after, _ := strings.Cut(rest, "]")
			b.WriteString("/" + idx)
			rest = strings.TrimPrefix(after, "[")
		}
	}
	return b.String()
}

var quoted = regexp.MustCompile(`"((?:[^"\\]|\\.)*)"`)

// problemPointer says where in a flag's definition its problem is written.
// The evaluator's messages are plain sentences; the part of the definition
// they concern is read from them, falling back to the flag itself.
func problemPointer(flagPtr string, err error) string {
	var ce *evaluator.CompileError
	if errors.As(err, &ce) {
		return flagPtr + rulePath(ce.Path)
	}
	msg := err.Error()
	names := quoted.FindAllStringSubmatch(msg, -1)
	switch {
	case strings.HasPrefix(msg, "defaultVariant"):
		return flagPtr + "/defaultVariant"
	case strings.HasPrefix(msg, "variants mix types") && len(names) >= 2:
		return flagPtr + "/variants/" + escapePointer(unquote(names[1][0]))
	case strings.HasPrefix(msg, "variant ") && len(names) >= 1:
		return flagPtr + "/variants/" + escapePointer(unquote(names[0][0]))
	case strings.HasPrefix(msg, `"variants"`):
		return flagPtr + "/variants"
	case strings.HasPrefix(msg, "$ref"):
		return flagPtr + "/targeting"
	}
	return flagPtr
}

// warningPointer is problemPointer for the loader's warnings.
func warningPointer(flagPtr, msg string) string {
	switch {
	case strings.HasPrefix(msg, "metadata"):
		return flagPtr + "/metadata"
	case strings.HasPrefix(msg, "state"):
		return flagPtr + "/state"
	case strings.Contains(msg, "fractionalEvaluation"):
		return flagPtr + "/targeting"
	}
	return flagPtr
}

func unquote(s string) string {
	if u, err := strconv.Unquote(s); err == nil {
		return u
	}
	return strings.Trim(s, `"`)
}
