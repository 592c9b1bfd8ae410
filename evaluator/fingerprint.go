package evaluator

// A flag's fingerprint: what WithPrevious compares to carry an unchanged
// flag over from the set in force without compiling it again.

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"strconv"
)

// writtenSeed hashes definitions as written: flag sets are only compared
// within a process.
var writtenSeed = maphash.MakeSeed()

// fingerprintSeed hashes a flag's canonical form into its fingerprint.
var fingerprintSeed = maphash.MakeSeed()

// fingerprint hashes everything but metadata (see addSetMetadata) that changes how
// a flag evaluates, in a canonical form that ignores key order, spacing and
// number spelling, so that rewriting a file without changing its meaning
// is not a change. Fingerprints are compared within a process only.
func (l *loader) fingerprint(def *defFields, defaultVariant, targeting any) uint64 {
	b := l.scratch[:0]
	b = canonicalAppend(b, def.state)
	b = def.appendVariants(b)
	b = canonicalAppend(b, defaultVariant)
	b = canonicalAppend(b, targeting)
	l.scratch = b
	return maphash.Bytes(fingerprintSeed, b)
}

// canonicalAppend appends x in a binary form where equal JSON values, and
// only those, are equal bytes: every value is tagged with its type, object
// keys are sorted and every number is an exact integer or a float64.
func canonicalAppend(b []byte, x any) []byte {
	switch t := x.(type) {
	case nil:
		return append(b, 'n')
	case bool:
		if t {
			return append(b, 't')
		}
		return append(b, 'f')
	case string:
		b = append(b, 's')
		b = binary.AppendUvarint(b, uint64(len(t)))
		return append(b, t...)
	case json.Number:
		if i, ok := exactInt(string(t)); ok {
			return appendCanonicalInt(b, i)
		}
		f, _ := strconv.ParseFloat(string(t), 64)
		return appendCanonicalFloat(b, f)
	case int64:
		return appendCanonicalInt(b, t)
	case float64:
		return appendCanonicalFloat(b, t)
	case map[string]any:
		b = append(b, 'm')
		b = binary.AppendUvarint(b, uint64(len(t)))
		var arr [16]string
		keys := arr[:0]
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			b = binary.AppendUvarint(b, uint64(len(k)))
			b = append(b, k...)
			b = canonicalAppend(b, t[k])
		}
		return b
	case []any:
		b = append(b, 'a')
		b = binary.AppendUvarint(b, uint64(len(t)))
		for _, el := range t {
			b = canonicalAppend(b, el)
		}
		return b
	case *op1:
		b = append(b, 'm', 1)
		b = binary.AppendUvarint(b, uint64(len(t.key)))
		b = append(b, t.key...)
		return canonicalAppend(b, t.val)
	}
	// Not a decoded JSON value; its Go syntax still tells values apart.
	return fmt.Appendf(append(b, '?'), "%#v", x)
}

func appendCanonicalInt(b []byte, i int64) []byte {
	return binary.BigEndian.AppendUint64(append(b, 'i'), uint64(i))
}

func appendCanonicalFloat(b []byte, f float64) []byte {
	if f == math.Trunc(f) && f >= math.MinInt64 && f < math.MaxInt64 {
		return appendCanonicalInt(b, int64(f))
	}
	return binary.BigEndian.AppendUint64(append(b, 'd'), math.Float64bits(f))
}
