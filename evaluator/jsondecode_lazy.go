package evaluator

import "bytes"

// Load does not decode a "flags" object as a whole: it only finds where
// each flag's definition is written (lazyFlags), and each is decoded by
// the goroutine that compiles it. The decoding is then spread over the
// goroutines with the compilation, nothing holds the decoded definitions
// of all the flags at once, and a definition written exactly as in the
// flag set in force need not be decoded at all (see WithPrevious).

// lazyFlags is a "flags" object whose members are not decoded yet: keys
// in document order, each with the bytes of its value.
type lazyFlags struct {
	keys  []string
	spans [][]byte
}

// lazyMembers reads the object at d.pos as lazyFlags. The values are only
// followed through their strings and brackets, so a document that is not
// JSON may pass here; decoding a value finds it out. ok is false for what
// is certainly not JSON.
func (d *fastDecoder) lazyMembers() (lazyFlags, bool) {
	var lf lazyFlags
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
		kv, ok := d.str()
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
		lf.keys = append(lf.keys, kv.(string))
		lf.spans = append(lf.spans, d.data[start:d.pos])
		more, ok := d.after('}')
		if !ok {
			return lf, false
		}
		if !more {
			return lf, true
		}
	}
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
			for p++; p < len(d.data) && d.data[p] != '"'; p++ {
				if d.data[p] == '\\' {
					d.refs = true
					p++
				}
			}
			if p >= len(d.data) {
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
