package flagsnap

// OFREP's answers, written as JSON: each flag's unchanging parts (its key,
// each variant with its value, its metadata) are encoded once per flag set
// and copied into every answer, so that a bulk answer costs the
// evaluations and a copy, not an encoding of every value.

import (
	"encoding/hex"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/twmb/murmur3"
)

// ofrepView is the encoded form of one snapshot of the flags.
type ofrepView struct {
	in    *inForce
	flags []atomic.Pointer[ofrepFlag] // by index, encoded on first use
	meta  []byte                      // the flag set's metadata

	mu       sync.Mutex
	selected map[string][]int32 // sorted indexes of a selection of flag sets
}

// ofrepFlag is one flag's parts of an answer.
type ofrepFlag struct {
	head     []byte   // {"key":"..."
	variants [][]byte // ,"variant":"...","value":... for each variant
	metadata []byte   // ,"metadata":{...}, or nothing
	setID    string   // its flagSetId, "" for none
}

// currentView is the view of the flags in force, nil before the first.
// It is kept with them, so that it goes when they do.
func (h *ofrepHandler) currentView() *ofrepView {
	in := h.p.snap.Load()
	if in == nil {
		return nil
	}
	if v := in.ofrep.Load(); v != nil {
		return v
	}
	in.ofrep.CompareAndSwap(nil, &ofrepView{in: in, flags: make([]atomic.Pointer[ofrepFlag], in.set.Len()), meta: marshalJSON(in.set.Metadata())})
	return in.ofrep.Load()
}

// flag is the encoded parts of the flag at index i.
func (v *ofrepView) flag(i int32) *ofrepFlag {
	if f := v.flags[i].Load(); f != nil {
		return f
	}
	set := v.in.set
	f := &ofrepFlag{head: appendJSONString([]byte(`{"key":`), set.FlagKey(int(i)))}
	for j := range set.VariantCount(int(i)) {
		b := appendJSONString([]byte(`,"variant":`), set.VariantName(int(i), j))
		b = append(b, `,"value":`...)
		f.variants = append(f.variants, append(b, marshalJSON(set.VariantValue(int(i), j))...))
	}
	if md := set.FlagMetadata(int(i)); len(md) > 0 {
		f.metadata = append([]byte(`,"metadata":`), marshalJSON(md)...)
		f.setID, _ = md["flagSetId"].(string)
	}
	v.flags[i].Store(f)
	return f
}

// indexes is the indexes of the flags of the flag sets named, in key
// order; nil sets is every flag.
func (v *ofrepView) indexes(sets []string) []int32 {
	all := v.in.sortedIndexes()
	if sets == nil {
		return all
	}
	key := strings.Join(sets, "\x00")
	v.mu.Lock()
	defer v.mu.Unlock()
	if s, ok := v.selected[key]; ok {
		return s
	}
	s := make([]int32, 0, len(all))
	for _, i := range all {
		if slices.Contains(sets, v.flag(i).setID) {
			s = append(s, i)
		}
	}
	if v.selected == nil {
		v.selected = map[string][]int32{}
	}
	v.selected[key] = s
	return s
}

// appendFlag appends f, an evaluation of a flag of v, as OFREP writes it:
// a failure with its errorCode, or the reason with the variant and its
// value when one was served (ADR 0006: no value means the code default).
func (v *ofrepView) appendFlag(b []byte, f *FlagEvaluation) []byte {
	fl := v.flag(f.index)
	b = append(b, fl.head...)
	if f.ErrorCode != "" {
		b = append(b, `,"errorCode":"`...)
		b = append(b, f.ErrorCode...)
		b = append(b, `","errorDetails":`...)
		b = appendJSONString(b, f.ErrorMessage)
	} else {
		b = append(b, `,"reason":"`...)
		b = append(b, f.Reason...)
		b = append(b, '"')
		if f.variant >= 0 {
			b = append(b, fl.variants[f.variant]...)
		}
	}
	b = append(b, fl.metadata...)
	return append(b, '}')
}

// marshalJSON is v as JSON; the values of flags and their metadata come
// from JSON documents and always encode.
func marshalJSON(v any) []byte {
	if v == nil {
		return []byte("null")
	}
	if m, ok := v.(map[string]any); ok && len(m) == 0 {
		return []byte("{}")
	}
	b, err := json.Marshal(v)
	if err != nil {
		return []byte("null")
	}
	return b
}

// appendJSONString appends s as a JSON string. Invalid UTF-8 becomes
// U+FFFD, and U+2028 and U+2029 are escaped, for JavaScript.
func appendJSONString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			switch r {
			case utf8.RuneError:
				b = append(b, `\ufffd`...)
			case '\u2028':
				b = append(b, `\u2028`...)
			default:
				b = append(b, `\u2029`...)
			}
			start = i + size
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// bodyTag is the strong ETag of an answer: a hash of its bytes, so that it
// changes exactly when the answer does.
func bodyTag(b []byte) string {
	hi, lo := murmur3.Sum128(b)
	var sum [16]byte
	for k := range 8 {
		sum[k], sum[8+k] = byte(hi>>(56-8*k)), byte(lo>>(56-8*k))
	}
	return `"` + hex.EncodeToString(sum[:]) + `"`
}

// etagMatches reports whether an If-None-Match header names tag, or is *.
func etagMatches(header, tag string) bool {
	for c := range strings.SplitSeq(header, ",") {
		c = strings.TrimSpace(c)
		if c == tag || c == "*" || strings.TrimPrefix(c, "W/") == tag {
			return true
		}
	}
	return false
}

// Buffers and result lists are pooled across requests: a bulk answer of
// a large set is large, and allocating it for every request would cost
// more than writing it.
var (
	ofrepBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}
	ofrepResults = sync.Pool{New: func() any { return new(AllFlags) }}
)

// jsonContentType is the header's value, shared by every answer rather
// than made for each.
var jsonContentType = []string{"application/json"}

// writeJSON answers b as JSON with status.
func writeJSON(w http.ResponseWriter, status int, b []byte) {
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
