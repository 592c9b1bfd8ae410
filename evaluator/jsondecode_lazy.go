package evaluator

import (
	"bytes"
	"unicode/utf8"
	"unsafe"
)

// Load does not decode a "flags" object as a whole: it only finds where
// each flag's definition is written (lazyFlags), and each is decoded by
// the goroutine that compiles it. The decoding is then spread over the
// goroutines with the compilation, nothing holds the decoded definitions
// of all the flags at once, and a definition written exactly as in the
// flag set in force need not be decoded at all (see WithPrevious).

// lazyFlags is a "flags" object whose members are not decoded yet: a
// definition for each member, in document order, with the bytes of its
// value as span. A key written without escapes is a view of the
// document's bytes (keyView), which the loader replaces with a string of
// its own before anything keeps it: most keys are those of a flag set in
// force, and are found there.
type lazyFlags struct {
	defs []flagDef
}

// lazyMembers reads the object at d.pos as lazyFlags. The values are only
// followed through their strings and brackets, so a document that is not
// JSON may pass here; decoding a value finds it out. ok is false for what
// is certainly not JSON.
func (d *fastDecoder) lazyMembers() (lazyFlags, bool) {
	lf := lazyFlags{defs: make([]flagDef, 0, d.lazyHint)}
	d.pos++ // '{'
	d.space()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		return lf, true
	}
	for {
		d.space()
		if d.pos >= len(d.data) || d.data[d.pos] != '"' {
			return lf, false
		}
		key, view, ok := d.key()
		if !ok {
			return lf, false
		}
		d.space()
		if d.pos >= len(d.data) || d.data[d.pos] != ':' {
			return lf, false
		}
		d.pos++
		d.space()
		start := d.pos
		if !d.skipValue() {
			return lf, false
		}
		lf.defs = append(lf.defs, flagDef{key: key, keyView: view, span: d.data[start:d.pos], index: -1})
		more, ok := d.after('}')
		if !ok {
			return lf, false
		}
		if !more {
			return lf, true
		}
	}
}

// key reads a member's key at d.pos: a view of the document's bytes when
// it is plain ASCII without escapes, which str would return unchanged.
func (d *fastDecoder) key() (key string, view, ok bool) {
	start := d.pos + 1
	for p := start; p < len(d.data); p++ {
		switch c := d.data[p]; {
		case c == '"':
			d.pos = p + 1
			if p == start {
				return "", false, true
			}
			return unsafe.String(&d.data[start], p-start), true, true
		case c == '\\' || c < 0x20 || c >= utf8.RuneSelf:
			kv, ok := d.str()
			if !ok {
				return "", false, false
			}
			return kv.(string), false, true
		}
	}
	return "", false, false
}

var refKey = []byte(`"$ref"`)

// skipValue moves past the value at d.pos, following only strings and
// brackets. It notes a "$ref" string in it, which may be a key, and takes
// a string with escapes for one: it may spell "$ref" so.
func (d *fastDecoder) skipValue() bool {
	start := d.pos
	if start >= len(d.data) {
		return false
	}
	switch d.data[start] {
	case '{', '[', '"':
	default:
		p := start
	scalar:
		for ; p < len(d.data); p++ {
			switch d.data[p] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				break scalar
			}
		}
		d.pos = p
		return p > start
	}
	depth := 0
	for p := start; p < len(d.data); p++ {
		switch d.data[p] {
		case '"':
			open := p
			if p = d.stringEnd(p + 1); p < 0 {
				return false
			}
			if p-open == 5 && bytes.Equal(d.data[open:p+1], refKey) {
				d.refs = true
			}
			if depth == 0 {
				d.pos = p + 1
				return true
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				d.pos = p + 1
				return true
			}
		}
	}
	return false
}

// shortString is how many bytes of a string stringEnd reads one by one.
const shortString = 16

// stringEnd returns the index of the quote that ends the string whose
// content starts at p, or -1. A string with escapes is noted as a
// possible "$ref".
func (d *fastDecoder) stringEnd(p int) int {
	// Most strings of a flag document are a few bytes long: a loop over
	// them ends before two calls to IndexByte would.
	for end := min(p+shortString, len(d.data)); p < end; p++ {
		switch d.data[p] {
		case '"':
			return p
		case '\\':
			d.refs = true
			p++ // the escaped byte cannot end the string
		}
	}
	if p >= len(d.data) {
		return -1
	}
	for {
		q := bytes.IndexByte(d.data[p:], '"')
		if q < 0 {
			return -1
		}
		q += p
		if bytes.IndexByte(d.data[p:q], '\\') < 0 {
			return q
		}
		d.refs = true
		// The quote ends the string unless an odd run of backslashes
		// escapes it.
		n := 0
		for i := q - 1; i >= p && d.data[i] == '\\'; i-- {
			n++
		}
		if n%2 == 0 {
			return q
		}
		p = q + 1
	}
}
