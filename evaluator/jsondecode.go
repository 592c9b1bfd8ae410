package evaluator

import (
	"encoding/json"
	"runtime"
	"unicode/utf16"
	"unicode/utf8"
)

// maxJSONDepth is encoding/json's nesting limit, so that both decoders
// accept the same documents.
const maxJSONDepth = 10000

// fastDecoder parses a JSON document into the values encoding/json's
// Decoder produces with UseNumber (map[string]any, []any, string,
// json.Number, bool, nil), in one pass and without reflection. Loading
// large flag sets spends most of its time here.
//
// It only reports whether the document is valid: for an invalid one the
// caller asks encoding/json, whose messages (and line and column) users
// see. Strings and numbers up to internMax bytes are interned for the
// document, boxed as the interface values they are decoded into, since
// flag sets repeat the same keys, states, variant names and weights
// thousands of times: each is made and boxed once (boxing a string
// allocates), and the flag set keeps them, so sharing them saves memory
// too.
type fastDecoder struct {
	data   []byte
	pos    int
	depth  int
	intern map[string]any // strings, each boxed as a string
	nums   map[string]any // numbers, each boxed as a json.Number
	stack  []any          // elements of the arrays and objects being built
	keys   []string
	refs   bool // some object has a "$ref" key
	// lazy: a "flags" object is read as lazyFlags.
	lazy     bool
	single   bool // an object of one member is an *op1
	lazyHint int  // how many members lazyFlags will have, about

	// A "flags" object of wideMin bytes or more is decoded by up to
	// workers goroutines (see parallelObject).
	wideMin, workers int
}

const internMax = 32

// internCap bounds how many strings a decoder interns. The strings that
// repeat (member names, states, variant names) come early and often; past
// the first few thousand, most strings are a flag's own (its key, its
// values), and a map growing with them costs more than it shares.
const internCap = 4096

// decodeFast parses data, reporting ok=false for anything encoding/json
// might not accept exactly so.
func decodeFast(data []byte) (v any, refs, ok bool) {
	return decodeFastWide(data, parallelDecodeMin, min(runtime.GOMAXPROCS(0), maxDecodeWorkers))
}

// decodeFastWide is decodeFast with the parallel decoding of a large
// "flags" object set as given.
func decodeFastWide(data []byte, wideMin, workers int) (v any, refs, ok bool) {
	return decodeFastWith(fastDecoder{data: data, wideMin: wideMin, workers: workers})
}

// decodeFastLazy is decodeFast reading a "flags" object as lazyFlags.
// flags is about how many members it has, or 0 when that is not known.
func decodeFastLazy(data []byte, flags int) (v any, refs, ok bool) {
	if flags <= 0 {
		// About the size of the definitions of the standard mix: growing
		// the list as it fills costs more than a guess that is too large.
		flags = len(data) / 128
	}
	return decodeFastWith(fastDecoder{data: data, lazy: true, lazyHint: flags})
}

func decodeFastWith(d fastDecoder) (v any, refs, ok bool) {
	d.intern, d.nums = make(map[string]any, 64), make(map[string]any, 16)
	v, ok = d.value()
	if !ok {
		return nil, false, false
	}
	d.space()
	if d.pos != len(d.data) {
		return nil, false, false
	}
	return v, d.refs, true
}

// objectAhead reports whether an object starts at d.pos (after spaces).
func (d *fastDecoder) objectAhead() bool {
	d.space()
	return d.pos < len(d.data) && d.data[d.pos] == '{'
}

// defDepth is the depth a flag's definition starts at within a document
// (inside the document's object and "flags"), counted as the decoder
// counts it, so that a definition decoded on its own meets the same limit
// as in the whole document.
const defDepth = 2

// decodeSpan decodes data, a flag's definition, with d's interned strings.
func (d *fastDecoder) decodeSpan(data []byte) (any, bool) {
	d.data, d.pos, d.depth = data, 0, defDepth
	v, ok := d.value()
	d.space()
	return v, ok && d.pos == len(d.data)
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
		return nil, false
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
	return nil, false
}

func (d *fastDecoder) literal(word string) bool {
	if len(d.data)-d.pos < len(word) || string(d.data[d.pos:d.pos+len(word)]) != word {
		return false
	}
	d.pos += len(word)
	return true
}

// member reads one `"key": value` of an object, spaces before it included.
func (d *fastDecoder) member() (string, any, bool) {
	d.space()
	if d.pos >= len(d.data) || d.data[d.pos] != '"' {
		return "", nil, false
	}
	kv, ok := d.str()
	if !ok {
		return "", nil, false
	}
	k := kv.(string)
	if k == "$ref" {
		d.refs = true
	}
	d.space()
	if d.pos >= len(d.data) || d.data[d.pos] != ':' {
		return "", nil, false
	}
	d.pos++
	var v any
	if d.depth == 1 && k == "flags" && d.lazy && d.objectAhead() {
		v, ok = d.lazyMembers()
	} else if d.depth == 1 && k == "flags" && d.wideObjectAhead() {
		v, ok = d.parallelObject()
	} else {
		v, ok = d.value()
	}
	return k, v, ok
}

func (d *fastDecoder) object() (any, bool) {
	if d.depth++; d.depth > maxJSONDepth {
		return nil, false
	}
	defer func() { d.depth-- }()
	d.pos++ // '{'
	base, kbase := len(d.stack), len(d.keys)
	d.space()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		return map[string]any{}, true
	}
	for {
		k, v, ok := d.member()
		if !ok {
			return nil, false
		}
		d.keys = append(d.keys, k)
		d.stack = append(d.stack, v)
		more, ok := d.after('}')
		if !ok {
			return nil, false
		}
		if !more && d.single && len(d.keys)-kbase == 1 {
			o := &op1{key: d.keys[kbase], val: d.stack[base]}
			d.stack[base] = nil
			d.stack, d.keys = d.stack[:base], d.keys[:kbase]
			return o, true
		}
		if !more {
			m := make(map[string]any, len(d.keys)-kbase)
			for i, k := range d.keys[kbase:] {
				m[k] = d.stack[base+i] // a repeated key: the last wins, as in encoding/json
			}
			clear(d.stack[base:])
			d.stack, d.keys = d.stack[:base], d.keys[:kbase]
			return m, true
		}
	}
}

// after reads what follows an element of an object or an array: a comma
// (more reports it) or the closing byte.
func (d *fastDecoder) after(closing byte) (more, ok bool) {
	d.space()
	if d.pos >= len(d.data) {
		return false, false
	}
	switch d.data[d.pos] {
	case ',':
		d.pos++
		return true, true
	case closing:
		d.pos++
		return false, true
	}
	return false, false
}

func (d *fastDecoder) array() (any, bool) {
	if d.depth++; d.depth > maxJSONDepth {
		return nil, false
	}
	defer func() { d.depth-- }()
	d.pos++ // '['
	base := len(d.stack)
	d.space()
	if d.pos < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		return []any{}, true
	}
	for {
		v, ok := d.value()
		if !ok {
			return nil, false
		}
		d.stack = append(d.stack, v)
		more, ok := d.after(']')
		if !ok {
			return nil, false
		}
		if !more {
			a := make([]any, len(d.stack)-base)
			copy(a, d.stack[base:])
			clear(d.stack[base:])
			d.stack = d.stack[:base]
			return a, true
		}
	}
}

// number checks the JSON number grammar and keeps the text as written.
func (d *fastDecoder) number() (any, bool) {
	start := d.pos
	p := d.pos
	if d.data[p] == '-' {
		p++
	}
	digits := func() int {
		n := 0
		for p < len(d.data) && d.data[p] >= '0' && d.data[p] <= '9' {
			p++
			n++
		}
		return n
	}
	if p >= len(d.data) {
		return nil, false
	}
	if d.data[p] == '0' {
		p++
	} else if digits() == 0 {
		return nil, false
	}
	if p < len(d.data) && d.data[p] == '.' {
		p++
		if digits() == 0 {
			return nil, false
		}
	}
	if p < len(d.data) && (d.data[p] == 'e' || d.data[p] == 'E') {
		p++
		if p < len(d.data) && (d.data[p] == '+' || d.data[p] == '-') {
			p++
		}
		if digits() == 0 {
			return nil, false
		}
	}
	d.pos = p
	b := d.data[start:p]
	if len(b) > internMax {
		return json.Number(b), true
	}
	if v, ok := d.nums[string(b)]; ok {
		return v, true
	}
	var v any = json.Number(b)
	d.nums[string(b)] = v
	return v, true
}

// text is b as a string boxed in an interface, shared with earlier strings
// of the same text.
func (d *fastDecoder) text(b []byte) any {
	if len(b) > internMax {
		return string(b)
	}
	if v, ok := d.intern[string(b)]; ok {
		return v
	}
	var v any = string(b)
	if len(d.intern) < internCap {
		d.intern[v.(string)] = v
	}
	return v
}

// plainStr reads a string at d.pos, the opening quote included, when it
// has neither escapes nor bytes past ASCII, and returns its bytes, which
// are the document's; plain is false, and d.pos unchanged, for any other
// string.
func (d *fastDecoder) plainStr() (b []byte, plain bool) {
	start := d.pos + 1
	for p := start; p < len(d.data); p++ {
		switch c := d.data[p]; {
		case c == '"':
			d.pos = p + 1
			return d.data[start:p], true
		case c == '\\' || c < 0x20 || c >= utf8.RuneSelf:
			return nil, false
		}
	}
	return nil, false
}

// str reads a string at d.pos, the opening quote included; the string is
// boxed in an interface.
func (d *fastDecoder) str() (any, bool) {
	if b, plain := d.plainStr(); plain {
		return d.text(b), true
	}
	d.pos++ // '"'
	start := d.pos
	for p := start; p < len(d.data); p++ {
		switch c := d.data[p]; {
		case c == '"':
			d.pos = p + 1
			return d.unescape(d.data[start:p])
		case c == '\\':
			p++ // the escaped byte cannot end the string
		case c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

// unescape decodes a string's content that has escapes or non-ASCII bytes
// as encoding/json does: invalid UTF-8 and lone surrogates become U+FFFD.
func (d *fastDecoder) unescape(b []byte) (any, bool) {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '\\':
			if i+1 >= len(b) {
				return nil, false
			}
			switch e := b[i+1]; e {
			case '"', '\\', '/':
				out = append(out, e)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r, ok := hex4(b[i+2:])
				if !ok {
					return nil, false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if r2, ok := lowSurrogate(b[i:]); ok {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							i += 6
							out = utf8.AppendRune(out, dec)
							continue
						}
					}
					r = utf8.RuneError
				}
				out = utf8.AppendRune(out, r)
				continue
			default:
				return nil, false
			}
			i += 2
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				out = utf8.AppendRune(out, utf8.RuneError)
			} else {
				out = append(out, b[i:i+size]...)
			}
			i += size
		}
	}
	return d.text(out), true
}

// lowSurrogate reads a \uXXXX escape at the start of b.
func lowSurrogate(b []byte) (rune, bool) {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return 0, false
	}
	return hex4(b[2:])
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
