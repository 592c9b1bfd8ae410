package evaluator

import "sync"

// The "flags" object of a large document is decoded on several goroutines:
// a first pass, which only follows strings and nesting, finds where the
// object ends and splits its members into runs of about equal size; each
// goroutine then decodes a run with a decoder of its own. Decoding is the
// part of loading that the parallel compilation of flags leaves on one core.

// parallelDecodeMin is the size of a "flags" object, in bytes, from which it
// is decoded in parallel: about 2,000 flags.
const parallelDecodeMin = 256 << 10

const maxDecodeWorkers = 4

// wideObjectAhead reports whether an object large enough for
// parallelObject starts at d.pos (after spaces).
func (d *fastDecoder) wideObjectAhead() bool {
	d.space()
	return d.workers > 1 && d.pos < len(d.data) && d.data[d.pos] == '{' && len(d.data)-d.pos >= d.wideMin
}

// parallelObject decodes the object at d.pos as d.value would.
func (d *fastDecoder) parallelObject() (any, bool) {
	splits, end, ok := splitMembers(d.data, d.pos, d.workers)
	if !ok {
		return nil, false
	}
	if len(splits) < 2 {
		return d.value()
	}
	type run struct {
		keys []string
		vals []any
		refs bool
		ok   bool
	}
	runs := make([]run, len(splits))
	var wg sync.WaitGroup
	for i, from := range splits {
		to := end
		if i+1 < len(splits) {
			to = splits[i+1]
		}
		wg.Go(func() {
			sub := fastDecoder{data: d.data[:to], pos: from, depth: d.depth + 1,
				intern: make(map[string]any, 64), nums: make(map[string]any, 16)}
			// sub.workers is 0: what a run holds is decoded on its own.
			r := &runs[i]
			r.keys, r.vals, r.ok = sub.members()
			r.refs = sub.refs
		})
	}
	wg.Wait()
	n := 0
	for _, r := range runs {
		if !r.ok {
			return nil, false
		}
		n += len(r.keys)
	}
	m := make(map[string]any, n)
	for _, r := range runs {
		for i, k := range r.keys {
			m[k] = r.vals[i] // a repeated key: the last wins, as in encoding/json
		}
		d.refs = d.refs || r.refs
	}
	d.pos = end + 1
	return m, true
}

// members decodes `"key": value` members separated by commas up to the end
// of d.data, which a run may end with a comma (the next run's members follow
// it).
func (d *fastDecoder) members() (keys []string, vals []any, ok bool) {
	for {
		d.space()
		if d.pos == len(d.data) {
			return keys, vals, len(keys) > 0
		}
		k, v, ok := d.member()
		if !ok {
			return nil, nil, false
		}
		keys, vals = append(keys, k), append(vals, v)
		d.space()
		if d.pos == len(d.data) {
			return keys, vals, true
		}
		if d.data[d.pos] != ',' {
			return nil, nil, false
		}
		d.pos++
	}
}

// splitMembers follows the object that starts at data[open] to its closing
// brace, end, and returns where each of up to n runs of members starts: the
// first member, then the first member at or after each n-th of the object.
// It reads only string and nesting structure; what it does not check, the
// decoding of the runs does. ok is false when the object does not close, or
// a comma comes before the closing brace.
func splitMembers(data []byte, open, n int) (splits []int, end int, ok bool) {
	size := len(data) - open // an upper bound: the object ends before data does
	depth := 0
	afterComma := false
	first := -1
	next := open + size/n
	for p := open + 1; p < len(data); p++ {
		c := data[p]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			continue
		case first < 0 && c != '"' && c != '}':
			return nil, 0, false // a member must start with its key
		}
		switch c {
		case '"':
			if depth == 0 && (first < 0 || afterComma) {
				switch {
				case first < 0:
					first = p
					splits = append(splits, p)
				case p >= next && len(splits) < n:
					splits = append(splits, p)
					next = open + len(splits)*size/n
				}
			}
			// Skip the string; a backslash escapes the byte after it.
			for p++; p < len(data) && data[p] != '"'; p++ {
				if data[p] == '\\' {
					p++
				}
			}
			if p >= len(data) {
				return nil, 0, false // the string does not end
			}
		case '{', '[':
			depth++
		case ']':
			depth--
		case '}':
			if depth == 0 {
				if first < 0 {
					return nil, p, true // empty
				}
				if afterComma {
					return nil, 0, false
				}
				return splits, p, true
			}
			depth--
		}
		afterComma = depth == 0 && data[p] == ','
	}
	return nil, 0, false
}
