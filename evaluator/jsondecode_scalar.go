package evaluator

// The JSON decoder's numbers and strings.

import (
	"encoding/json"
	"hash/maphash"
	"unicode/utf16"
	"unicode/utf8"
)

// number checks the JSON number grammar and keeps the text as written.
func (d *fastDecoder) number() (any, bool) {
	start, p := d.pos, d.pos
	digits := func() int {
		n := 0
		for p < len(d.data) && d.data[p] >= '0' && d.data[p] <= '9' {
			p++
			n++
		}
		return n
	}
	fail := func(why string) (any, bool) {
		d.pos = p
		return nil, d.fail(why)
	}
	if d.data[p] == '-' {
		p++
	}
	if p < len(d.data) && d.data[p] == '0' {
		p++
	} else if digits() == 0 {
		return fail("in numeric literal")
	}
	if p < len(d.data) && d.data[p] == '.' {
		p++
		if digits() == 0 {
			return fail("after decimal point in numeric literal")
		}
	}
	if p < len(d.data) && (d.data[p] == 'e' || d.data[p] == 'E') {
		p++
		if p < len(d.data) && (d.data[p] == '+' || d.data[p] == '-') {
			p++
		}
		if digits() == 0 {
			return fail("in exponent of numeric literal")
		}
	}
	d.pos = p
	b := d.data[start:p]
	if len(b) > internMax {
		return json.Number(b), true
	}
	slot := &d.interned[maphash.Bytes(internSeeds[1], b)&uint64(len(d.interned)-1)]
	if n, ok := (*slot).(json.Number); ok && string(n) == string(b) {
		return *slot, true
	}
	*slot = json.Number(b)
	return *slot, true
}

// text is b as a string boxed in an interface, shared with earlier strings
// of the same text.
func (d *fastDecoder) text(b []byte) any {
	if len(b) > internMax {
		return string(b)
	}
	slot := &d.interned[maphash.Bytes(internSeeds[0], b)&uint64(len(d.interned)-1)]
	if s, ok := (*slot).(string); ok && s == string(b) {
		return *slot
	}
	*slot = string(b)
	return *slot
}

// memberList is a copy of d.members, from a chunk shared with other
// lists: the variants of thousands of flags make that many lists.
func (d *fastDecoder) memberList() []member {
	n := len(d.members)
	if n == 0 {
		return []member{} // an empty object, not a missing one
	}
	if cap(d.memberChunk)-len(d.memberChunk) < n {
		d.memberChunk = make([]member, 0, max(n, min(2*cap(d.memberChunk), memberChunk), 16))
	}
	start := len(d.memberChunk)
	d.memberChunk = append(d.memberChunk, d.members...)
	clear(d.members)
	d.members = d.members[:0]
	return d.memberChunk[start:len(d.memberChunk):len(d.memberChunk)]
}

// memberChunk is how many members memberList allocates at once, once a
// document has had many.
const memberChunk = 512

// plainStr reads a string at d.pos, quotes included, when it has neither
// escapes nor bytes past ASCII: its bytes are the document's. For any other
// string plain is false, and d.pos unchanged.
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
	b, ok := d.plainStr()
	if !ok {
		if b, ok = d.escapedStr(); !ok {
			return nil, false
		}
	}
	return d.text(b), true
}

// escapedStr reads any string at d.pos, the opening quote included, and
// returns its content unescaped.
func (d *fastDecoder) escapedStr() ([]byte, bool) {
	start := d.pos + 1
	for d.pos = start; d.pos < len(d.data); d.pos++ {
		switch c := d.data[d.pos]; {
		case c == '"':
			d.pos++
			return unescape(d.data[start : d.pos-1]), true
		case c == '\\':
			if !d.escape() {
				return nil, false
			}
		case c < 0x20:
			return nil, d.fail("in string literal")
		}
	}
	return nil, d.fail("in string literal")
}

// escape checks the escape whose backslash is at d.pos, and leaves d.pos
// at its last byte.
func (d *fastDecoder) escape() bool {
	if d.pos++; d.pos >= len(d.data) {
		return d.fail("in string escape code")
	}
	switch d.data[d.pos] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return true
	case 'u':
		for range 4 {
			if d.pos++; d.pos >= len(d.data) || !isHex(d.data[d.pos]) {
				return d.fail(`in \u hexadecimal character escape`)
			}
		}
		return true
	}
	return d.fail("in string escape code")
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// unescape decodes a string's content, whose escapes are valid, as
// encoding/json does: invalid UTF-8 and lone surrogates become U+FFFD.
func unescape(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		switch c := b[i]; {
		case c == '\\' && b[i+1] == 'u':
			r := hex4(b[i+2:])
			i += 6
			if utf16.IsSurrogate(r) {
				if i+6 <= len(b) && b[i] == '\\' && b[i+1] == 'u' {
					if dec := utf16.DecodeRune(r, hex4(b[i+2:])); dec != utf8.RuneError {
						i += 6
						out = utf8.AppendRune(out, dec)
						continue
					}
				}
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
		case c == '\\':
			out = append(out, unescaped[b[i+1]])
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
	return out
}

// unescaped is the byte that each one-byte escape stands for.
var unescaped = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// hex4 reads the four hexadecimal digits at the start of b.
func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		default:
			c = c - 'A' + 10
		}
		r = r<<4 | rune(c)
	}
	return r
}
