package evaluator

import (
	"encoding/json"
	"hash/maphash"
	"strconv"
)

// maxJSONDepth is encoding/json's nesting limit, so that both decoders
// accept the same documents.
const maxJSONDepth = 10000

// fastDecoder parses a JSON document into the values encoding/json's
// Decoder produces with UseNumber, except that its "flags" is a *flagList
// and a rule's one-member objects are *op1: maps for those would be most of
// what a load allocates. It stops where encoding/json would, saying what it
// says, except for a missing comma, which it reports where the comma goes
// (see failComma).
type fastDecoder struct {
	data  []byte
	pos   int
	depth int
	// interned are the strings and numbers up to internMax bytes met so
	// far, boxed, in slots chosen by a hash of their text: flag sets repeat
	// the same few thousands of times, and boxing allocates. Without it a
	// million flags load at the edge of 3 s and 1 GiB (bench/README.md,
	// "The evaluator's mechanisms").
	interned []any
	stack    []any // elements of the arrays and objects being built
	keys     []string
	refs     bool // some object has a "$ref" key
	single   bool // an object of one member is an *op1
	// defChunk is where definitions are read, a chunk at a time, members
	// the variants being read, and memberChunk where they are kept.
	defChunk    []defFields
	members     []member
	memberChunk []member
	// chunkRead, when not nil, is handed each full chunk of a flagList,
	// which the decoder leaves alone from then on.
	chunkRead func([]flagDef)
	// failAt is where the document stops being JSON (len(data) when it
	// ends too early), and failure what encoding/json says of the byte
	// there, after "invalid character …". When comma is set, failAt is
	// instead where a missing comma goes, and failure the whole message.
	failAt  int
	failure string
	comma   bool
}

const internMax = 32

// internSeeds hash the text of the values interned: strings by the first,
// numbers by the second, so that "1" and 1 do not take each other's slot.
var internSeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

// maxInterned is how many slots a large document's interned values have:
// the strings that repeat are few, and most others are a flag's own.
const maxInterned = 4096

// newInterned are the interned slots for a document of n bytes.
func newInterned(n int) []any {
	size := 64
	for size < maxInterned && size*64 < n {
		size *= 2
	}
	return make([]any, size)
}

// The contexts of encoding/json's messages, after "invalid character …".
const (
	beginValue = "looking for beginning of value"
	beginKey   = "looking for beginning of object key string"
	afterKey   = "after object key"
	afterPair  = "after object key:value pair"
	afterElem  = "after array element"
)

// flagList is a document's "flags" as decoded, in chunks of up to defsChunk
// definitions, each with its bytes (flagDef.span) to tell if it changed.
type flagList struct {
	chunks flagDefs
	array  bool // an array of definitions, each with its "key"
}

// defsChunk is how many definitions a chunk of a flagList holds.
const defsChunk = 256

// op1 is an object of one member, as a rule's operations are written,
// decoded without a map: the compiler reads it as the map it stands for.
type op1 struct {
	key string
	val any
}

// MarshalJSON writes the object, for the messages that quote a rule.
func (o *op1) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{o.key: o.val})
}

// decodeJSON decodes a JSON document. refs reports whether an object in it
// has a "$ref" member; err is a *SyntaxError.
func decodeJSON(data []byte, chunkRead func([]flagDef)) (v any, refs bool, err error) {
	d := fastDecoder{data: data, interned: newInterned(len(data)), chunkRead: chunkRead}
	v, ok := d.value()
	if !ok {
		return nil, false, d.syntaxError()
	}
	d.space()
	if d.pos != len(data) {
		return nil, false, syntaxErrorAt(data, d.pos, "unexpected data after the top-level value")
	}
	return v, d.refs, nil
}

// fail records that the document stops being JSON at d.pos, and why, as
// encoding/json says it after "invalid character …". It returns false.
func (d *fastDecoder) fail(why string) bool {
	d.failAt, d.failure = d.pos, why
	return false
}

// syntaxError is the error of a document that fail or failComma stopped.
func (d *fastDecoder) syntaxError() *SyntaxError {
	if d.comma {
		return syntaxErrorBefore(d.data, d.failAt, d.failure)
	}
	if d.failAt >= len(d.data) {
		return syntaxErrorAt(d.data, len(d.data)-1, "unexpected end of document")
	}
	c := d.data[d.failAt]
	return syntaxErrorAt(d.data, d.failAt, "invalid character "+quoteChar(c)+" "+d.failure)
}

// failComma records that the member or element that ends at end is
// followed by another, at d.pos, with no comma between them: the one
// fault where encoding/json's message ("invalid character '"' after object
// key:value pair", at the next member) leaves the reader looking in the
// wrong place. The error is where the comma goes, and says so. closing is
// the object's or the array's closing delimiter. It returns false.
func (d *fastDecoder) failComma(end int, closing byte) bool {
	d.failAt, d.comma = end, true
	d.failure = "expected , or " + string(closing) + " after the value: add a comma"
	return false
}

// missingComma tells whether the byte at d.pos, where a comma or closing
// was expected after the value ending at end, begins another member (of an
// object, closing '}') or element (of an array) as written without the
// comma before it. A number or literal written right against the value,
// as in [01] or [1true], is a malformed value rather than a missing comma.
func (d *fastDecoder) missingComma(end int, closing byte) bool {
	c := d.data[d.pos]
	if closing == '}' {
		return c == '"'
	}
	switch {
	case c == '"' || c == '{' || c == '[':
		return true
	case c == '-' || c == 't' || c == 'f' || c == 'n' || c >= '0' && c <= '9':
		prev := d.data[end-1]
		return end < d.pos || prev == '"' || prev == '}' || prev == ']'
	}
	return false
}

// syntaxErrorAt is a JSON syntax error at doc[at], with its line and its
// column in bytes (a newline starts the line after it).
func syntaxErrorAt(doc []byte, at int, msg string) *SyntaxError {
	line, col := 1, 1
	for _, c := range doc[:min(at+1, len(doc))] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	if col > 1 {
		col-- // the byte's column, not the one after it
	}
	return &SyntaxError{Format: "JSON", Line: line, Column: col, Msg: msg}
}

// syntaxErrorBefore is a JSON syntax error at the place just before
// doc[at], as a caret between two bytes: after the last byte of a line
// when doc[at] ends it (a '\r' or '\n'), on the line of doc[at] otherwise.
func syntaxErrorBefore(doc []byte, at int, msg string) *SyntaxError {
	line, start := 1, 0
	for i, c := range doc[:at] {
		if c == '\n' {
			line, start = line+1, i+1
		}
	}
	return &SyntaxError{Format: "JSON", Line: line, Column: at - start + 1, Msg: msg}
}

// quoteChar quotes a byte as encoding/json's messages do.
func quoteChar(c byte) string {
	switch c {
	case '\'':
		return `'\''`
	case '"':
		return `'"'`
	}
	s := strconv.Quote(string(rune(c)))
	return "'" + s[1:len(s)-1] + "'"
}

func (d *fastDecoder) space() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *fastDecoder) value() (any, bool) {
	d.space()
	if d.pos >= len(d.data) {
		return nil, d.fail(beginValue)
	}
	switch c := d.data[d.pos]; {
	case c == '{':
		return d.object()
	case c == '[':
		return d.array()
	case c == '"':
		return d.str()
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	}
	return nil, d.fail(beginValue)
}

func (d *fastDecoder) literal(word string) bool {
	for i := 1; i < len(word); i++ {
		if p := d.pos + i; p >= len(d.data) || d.data[p] != word[i] {
			d.pos = p
			return d.fail("in literal " + word + " (expecting " + quoteChar(word[i]) + ")")
		}
	}
	d.pos += len(word)
	return true
}

// name reads a member's name, spaces before it included, and the colon
// after it. The name's bytes are the document's unless it has escapes.
func (d *fastDecoder) name() ([]byte, bool) {
	d.space()
	if d.pos >= len(d.data) || d.data[d.pos] != '"' {
		return nil, d.fail(beginKey)
	}
	b, ok := d.plainStr()
	if !ok {
		if b, ok = d.escapedStr(); !ok {
			return nil, false
		}
	}
	if string(b) == "$ref" {
		d.refs = true
	}
	d.space()
	if d.pos >= len(d.data) || d.data[d.pos] != ':' {
		return nil, d.fail(afterKey)
	}
	d.pos++
	return b, true
}

// each reads the object or array that starts at d.pos, calling read for
// each of its members, with the member's name, or each of its elements.
func (d *fastDecoder) each(read func(name []byte) bool) bool {
	closing, why := byte(']'), afterElem
	if d.data[d.pos] == '{' {
		closing, why = '}', afterPair
	}
	if d.depth++; d.depth > maxJSONDepth {
		return d.fail("exceeded max depth")
	}
	defer func() { d.depth-- }()
	d.pos++
	d.space()
	if d.pos < len(d.data) && d.data[d.pos] == closing {
		d.pos++
		return true
	}
	for {
		var name []byte
		if closing == '}' {
			var ok bool
			if name, ok = d.name(); !ok {
				return false
			}
		}
		if !read(name) {
			return false
		}
		end := d.pos
		d.space()
		switch {
		case d.pos >= len(d.data):
			return d.fail(why)
		case d.data[d.pos] == closing:
			d.pos++
			return true
		case d.data[d.pos] != ',':
			if d.missingComma(end, closing) {
				return d.failComma(end, closing)
			}
			return d.fail(why)
		}
		d.pos++
	}
}

func (d *fastDecoder) object() (any, bool) {
	base, kbase := len(d.stack), len(d.keys)
	ok := d.each(func(name []byte) bool {
		k := d.text(name).(string)
		var v any
		var ok bool
		if d.depth == 1 && k == "flags" {
			v, ok = d.flags()
		} else {
			v, ok = d.value()
		}
		d.keys, d.stack = append(d.keys, k), append(d.stack, v)
		return ok
	})
	if !ok {
		return nil, false
	}
	var o any
	if n := len(d.keys) - kbase; d.single && n == 1 {
		o = &op1{key: d.keys[kbase], val: d.stack[base]}
	} else {
		m := make(map[string]any, n)
		for i, k := range d.keys[kbase:] {
			m[k] = d.stack[base+i] // a repeated key: the last wins, as in encoding/json
		}
		o = m
	}
	clear(d.stack[base:])
	d.stack, d.keys = d.stack[:base], d.keys[:kbase]
	return o, true
}

func (d *fastDecoder) array() (any, bool) {
	base := len(d.stack)
	ok := d.each(func([]byte) bool {
		v, ok := d.value()
		d.stack = append(d.stack, v)
		return ok
	})
	if !ok {
		return nil, false
	}
	a := make([]any, len(d.stack)-base)
	copy(a, d.stack[base:])
	clear(d.stack[base:])
	d.stack = d.stack[:base]
	return a, true
}

// flags decodes the document's "flags" member: an object or an array is a
// *flagList, anything else its value.
func (d *fastDecoder) flags() (any, bool) {
	d.space()
	if d.pos >= len(d.data) || (d.data[d.pos] != '{' && d.data[d.pos] != '[') {
		return d.value()
	}
	list := &flagList{array: d.data[d.pos] == '['}
	var defs []flagDef
	n := 0
	ok := d.each(func(name []byte) bool {
		if len(defs) == cap(defs) {
			if defs != nil {
				list.chunks = append(list.chunks, defs)
				if d.chunkRead != nil {
					d.chunkRead(defs)
				}
			}
			// Small at first, for the many documents of a few flags.
			defs = make([]flagDef, 0, min(max(2*cap(defs), 8), defsChunk))
		}
		fd := flagDef{key: string(name), index: -1} // a flag's key is its own, not interned
		if list.array {
			fd.index = n
		}
		n++
		defs = append(defs, fd)
		return d.definition(&defs[len(defs)-1])
	})
	if !ok {
		return nil, false
	}
	if defs != nil {
		list.chunks = append(list.chunks, defs)
	}
	return list, true
}

// definition decodes a flag's definition: an object into fd.fields, which
// keep the members the loader reads (and fd.ref), anything else into
// fd.raw.
func (d *fastDecoder) definition(fd *flagDef) bool {
	d.space()
	start, refs := d.pos, d.refs
	d.refs = false
	var ok bool
	if d.pos < len(d.data) && d.data[d.pos] == '{' {
		fd.fields, fd.object = d.newFields(), true
		members := 0
		var key, source any // as written last, as a map keeps them
		ok = d.each(func(name []byte) bool {
			members++
			var read bool
			switch string(name) {
			case "key":
				key, read = d.value()
			case "source":
				source, read = d.value()
			default:
				read = d.field(fd, name)
			}
			return read
		})
		if members > 1 {
			fd.ref = nil // a "$ref" beside other members is data
		}
		fd.setKeyAndSource(key, source)
	} else {
		fd.raw, ok = d.value()
	}
	fd.span, fd.refs = d.data[start:d.pos], d.refs
	d.refs = d.refs || refs
	return ok
}

// newFields is a definition's fields, from the current chunk.
func (d *fastDecoder) newFields() *defFields {
	if len(d.defChunk) == cap(d.defChunk) {
		d.defChunk = make([]defFields, 0, min(max(2*cap(d.defChunk), 8), 256))
	}
	d.defChunk = d.defChunk[:len(d.defChunk)+1]
	return &d.defChunk[len(d.defChunk)-1]
}

// field decodes the value of a definition's member called name. A
// member written twice keeps the last value, as in a map.
func (d *fastDecoder) field(fd *flagDef, name []byte) bool {
	f := fd.fields
	var ok bool
	switch string(name) {
	case "state":
		f.state, ok = d.value()
	case "variants":
		return d.variants(f)
	case "defaultVariant":
		f.defaultVariant, ok = d.value()
	case "targeting":
		d.single = true
		f.targeting, ok = d.value()
		d.single = false
	case "metadata":
		f.metadata, ok = d.value()
	case "$ref":
		fd.ref, ok = d.value()
	default:
		_, ok = d.value()
	}
	return ok
}

// variants decodes a definition's "variants": an object into
// f.variantMembers, anything else into f.variants.
func (d *fastDecoder) variants(f *defFields) bool {
	d.space()
	f.variants, f.variantMembers = nil, nil
	if d.pos >= len(d.data) || d.data[d.pos] != '{' {
		var ok bool
		f.variants, ok = d.value()
		return ok
	}
	ok := d.each(func(name []byte) bool {
		m := member{name: d.text(name).(string)}
		var ok bool
		m.val, ok = d.value()
		d.members = append(d.members, m)
		return ok
	})
	f.variantMembers = d.memberList()
	return ok
}
