package fractional

import (
	"bytes"
	"cmp"
	"encoding"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Errors reported for bucketing values that cannot be hashed.
var (
	// ErrNullInput reports a null bucketing value. flagd treats it as "no
	// result" rather than hashing the CBOR null.
	ErrNullInput = errors.New("fractional: bucketing value is null")
	// ErrUnsupportedInput reports a bucketing value that cannot be hashed: a
	// non-string in V1/V2, or in V3 a Go value that has no JSON form
	// (complex numbers, channels, functions, a json.Number that is no
	// number, a value that encoding/json refuses) or that nests more than
	// 1000 levels deep.
	ErrUnsupportedInput = errors.New("fractional: unsupported bucketing value")
)

// CBOR initial-byte building blocks (RFC 8949 §3).
const (
	majorUint   byte = 0 << 5
	majorNeg    byte = 1 << 5
	majorText   byte = 3 << 5
	majorArray  byte = 4 << 5
	majorMap    byte = 5 << 5
	majorTag    byte = 6 << 5
	majorSimple byte = 7 << 5

	// tagEpoch is tag 1, an epoch-based date/time (RFC 8949 §3.4.2).
	tagEpoch = majorTag | 1

	cborFalse   = majorSimple | 20
	cborTrue    = majorSimple | 21
	cborNull    = majorSimple | 22
	cborFloat16 = majorSimple | 25
	cborFloat32 = majorSimple | 26
	cborFloat64 = majorSimple | 27

	// maxHead is the longest possible initial byte plus argument.
	maxHead = 9
)

// maxDepth bounds the nesting of containers. Nothing a caller means to
// bucket by comes near it; it turns a value that holds itself (a map stored
// in itself) into an error instead of endless recursion.
const maxDepth = 1000

// Bounds of the whole numbers that are encoded as CBOR integers. Both are
// powers of two and therefore exact float64 values.
const (
	twoTo63 = 1 << 63
	twoTo64 = 1 << 64
)

// AppendCBOR appends the RFC 8949 core deterministic CBOR encoding of x to
// dst, as hashed by V3, and returns the extended buffer.
//
// Numbers are normalised first so that a value hashes the same whichever
// numeric type carries it: a whole number in [-2^63, 2^64-1], including
// -0.0, becomes a CBOR integer; any other number becomes the shortest of
// float16, float32 and float64 that holds it exactly (NaN as float16 0x7e00,
// infinities as float16). Strings are CBOR text strings; bytes that are not
// valid UTF-8 become U+FFFD, one for each bad byte, as encoding/json writes
// them. Maps are written with keys sorted bytewise by their encoding, and
// all lengths are definite.
//
// x is taken exactly as the Go value it is, at any depth:
//
//   - every int and uint type is the integer of that exact value, 64-bit
//     values beyond 2^53 included; a float32 is widened exactly (so it
//     usually takes the float32 form); a json.Number is its exact value
//     (integer text that fits 64 bits is an integer);
//   - time.Time and *time.Time are tag 1 over the POSIX time in seconds: an
//     integer for a whole second, otherwise the float64
//     float64(t.Unix()) + float64(t.Nanosecond())/1e9, normalised like any
//     number;
//   - named types (type UserID int64) count as their underlying kind;
//   - slices, arrays and maps with string keys, of any element type, are
//     arrays and maps whose elements are taken the same way;
//   - everything else has its encoding/json form, read back with exact
//     numbers: structs, pointers, maps with other keys, byte slices (base64
//     text), and any type that marshals itself (json.Marshaler,
//     encoding.TextMarshaler) other than time.Time.
//
// nil, and a nil slice, map or pointer, encode as CBOR null, as encoding/json
// writes them. Values without a JSON form yield an error wrapping
// ErrUnsupportedInput, and dst is returned unchanged.
func AppendCBOR(dst []byte, x any) ([]byte, error) {
	if out, ok, err := appendScalar(dst, x); ok || err != nil {
		if err != nil {
			return dst, err
		}
		return out, nil
	}
	// Containers are written into a buffer of their own: handed to the
	// recursive encoder, dst would be moved to the heap by the compiler, in
	// every caller and for scalars too.
	enc, err := appendValue(nil, x, 0)
	if err != nil {
		return dst, err
	}
	if len(dst) == 0 && cap(dst) < len(enc) {
		return enc, nil // what append would return, without copying it
	}
	return append(dst, enc...), nil
}

// appendValue writes x at nesting depth depth. Every scalar, at the top
// level or inside a container, is written by appendScalar, so a value
// encodes the same wherever it stands; containers are written element by
// element, and values that only have a JSON form are written as that form.
func appendValue(dst []byte, x any, depth int) ([]byte, error) {
	if depth > maxDepth {
		return dst, fmt.Errorf("%w: nested deeper than %d levels", ErrUnsupportedInput, maxDepth)
	}
	if out, ok, err := appendScalar(dst, x); ok || err != nil {
		return out, err
	}
	switch v := x.(type) {
	case []any:
		if v == nil {
			return append(dst, cborNull), nil
		}
		dst = appendHead(dst, majorArray, uint64(len(v)))
		var err error
		for _, e := range v {
			if dst, err = appendValue(dst, e, depth+1); err != nil {
				return dst, err
			}
		}
		return dst, nil
	case map[string]any:
		if v == nil {
			return append(dst, cborNull), nil
		}
		entries := make([]mapEntry, 0, len(v))
		for k, e := range v {
			entries = append(entries, newMapEntry(k, e))
		}
		return appendMap(dst, entries, depth)
	}
	return appendReflected(dst, x, depth)
}

func unsupportedType(x any) error {
	return fmt.Errorf("%w: Go type %T", ErrUnsupportedInput, x)
}

// appendScalar writes x when it is not a container and needs no JSON form,
// without allocating. ok is false for everything else.
func appendScalar(dst []byte, x any) (out []byte, ok bool, err error) {
	switch v := x.(type) {
	case nil:
		return append(dst, cborNull), true, nil
	case bool:
		return appendBool(dst, v), true, nil
	case string:
		return appendText(dst, validText(v)), true, nil
	case float64:
		return appendFloat(dst, v), true, nil
	case float32:
		return appendFloat(dst, float64(v)), true, nil
	case int:
		return appendInt(dst, int64(v)), true, nil
	case int8:
		return appendInt(dst, int64(v)), true, nil
	case int16:
		return appendInt(dst, int64(v)), true, nil
	case int32:
		return appendInt(dst, int64(v)), true, nil
	case int64:
		return appendInt(dst, v), true, nil
	case uint:
		return appendHead(dst, majorUint, uint64(v)), true, nil
	case uint8:
		return appendHead(dst, majorUint, uint64(v)), true, nil
	case uint16:
		return appendHead(dst, majorUint, uint64(v)), true, nil
	case uint32:
		return appendHead(dst, majorUint, uint64(v)), true, nil
	case uint64:
		return appendHead(dst, majorUint, v), true, nil
	case json.Number:
		n, err := parseNumber(v)
		if err != nil {
			return dst, false, err
		}
		return n.append(dst), true, nil
	case time.Time:
		return appendTime(dst, v), true, nil
	case *time.Time:
		if v == nil {
			return append(dst, cborNull), true, nil
		}
		return appendTime(dst, *v), true, nil
	}
	if marshalsItself(x) {
		return dst, false, nil
	}
	// Named scalar types, by their underlying kind.
	switch rv := reflect.ValueOf(x); rv.Kind() {
	case reflect.Bool:
		return appendBool(dst, rv.Bool()), true, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return appendInt(dst, rv.Int()), true, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return appendHead(dst, majorUint, rv.Uint()), true, nil
	case reflect.Float32, reflect.Float64:
		return appendFloat(dst, rv.Float()), true, nil
	case reflect.String:
		return appendText(dst, validText(rv.String())), true, nil
	}
	return dst, false, nil
}

// marshalsItself reports whether encoding/json leaves x's form to x. A
// time.Time does too, but has its own CBOR tag and never gets here.
func marshalsItself(x any) bool {
	switch x.(type) {
	case json.Marshaler, encoding.TextMarshaler:
		return true
	}
	return false
}

func appendBool(dst []byte, b bool) []byte {
	if b {
		return append(dst, cborTrue)
	}
	return append(dst, cborFalse)
}

// appendTime writes t as tag 1 over its POSIX time. The float form is the
// sum the specification spells out, so that every language that follows it
// computes the same float64, rounding included.
func appendTime(dst []byte, t time.Time) []byte {
	dst = append(dst, tagEpoch)
	if t.Nanosecond() == 0 {
		return appendInt(dst, t.Unix())
	}
	return appendFloat(dst, epochSeconds(t))
}

func epochSeconds(t time.Time) float64 {
	return float64(t.Unix()) + float64(t.Nanosecond())/1e9
}

// appendHead writes a major type with its argument in the shortest form, as
// deterministic encoding requires.
func appendHead(dst []byte, major byte, n uint64) []byte {
	switch {
	case n < 24:
		return append(dst, major|byte(n))
	case n <= math.MaxUint8:
		return append(dst, major|24, byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(dst, major|25), uint16(n))
	case n <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(dst, major|26), uint32(n))
	default:
		return binary.BigEndian.AppendUint64(append(dst, major|27), n)
	}
}

func appendInt(dst []byte, i int64) []byte {
	if i >= 0 {
		return appendHead(dst, majorUint, uint64(i))
	}
	// CBOR stores a negative integer n as -1-n, which is ^n in two's
	// complement and cannot overflow even for math.MinInt64.
	return appendHead(dst, majorNeg, uint64(^i))
}

// appendText writes s as a text string, byte for byte: callers that may
// hold invalid UTF-8 pass it through validText first.
func appendText(dst []byte, s string) []byte {
	return append(appendHead(dst, majorText, uint64(len(s))), s...)
}

// validText is s with each byte that is not part of valid UTF-8 replaced by
// U+FFFD, as encoding/json writes strings (strings.ToValidUTF8 would replace
// a run of bad bytes with a single one). Valid text, the usual case, is
// returned as it is.
func validText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		b.WriteRune(r)
	}
	return b.String()
}

// appendFloat encodes f after normalisation: whole numbers in range as
// integers, everything else as the shortest exact float.
func appendFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, cborFloat16, 0x7e, 0x00)
	case math.IsInf(f, 1):
		return append(dst, cborFloat16, 0x7c, 0x00)
	case math.IsInf(f, -1):
		return append(dst, cborFloat16, 0xfc, 0x00)
	}
	if f == math.Trunc(f) {
		if f >= 0 && f < twoTo64 {
			// -0.0 takes this branch too and becomes the integer 0.
			return appendHead(dst, majorUint, uint64(f))
		}
		if f < 0 && f >= -twoTo63 {
			return appendInt(dst, int64(f))
		}
	}
	if h, ok := float16Bits(f); ok {
		return append(dst, cborFloat16, byte(h>>8), byte(h))
	}
	if f32 := float32(f); float64(f32) == f {
		return binary.BigEndian.AppendUint32(append(dst, cborFloat32), math.Float32bits(f32))
	}
	return binary.BigEndian.AppendUint64(append(dst, cborFloat64), math.Float64bits(f))
}

// float16Bits returns the IEEE 754 binary16 encoding of a finite f when f is
// exactly representable in it, subnormals included.
func float16Bits(f float64) (uint16, bool) {
	bits := math.Float64bits(f)
	sign := uint16(bits>>48) & 0x8000
	biased := int((bits >> 52) & 0x7ff)
	mant := bits & (1<<52 - 1)
	if biased == 0 {
		// float64 zeros and subnormals; the latter are far below the
		// smallest float16 subnormal.
		return sign, mant == 0
	}
	exp := biased - 1023
	switch {
	case exp >= -14 && exp <= 15:
		// Normal float16: 10 explicit mantissa bits, the low 42 must be 0.
		if mant&(1<<42-1) != 0 {
			return 0, false
		}
		return sign | uint16(exp+15)<<10 | uint16(mant>>42), true
	case exp >= -24 && exp < -14:
		// Subnormal float16: value = k * 2^-24 with k < 2^10. The float64
		// significand is sig * 2^(exp-52), so k = sig >> (28-exp) when no
		// set bits are shifted out.
		sig := mant | 1<<52
		shift := uint(28 - exp)
		if sig&(1<<shift-1) != 0 {
			return 0, false
		}
		return sign | uint16(sig>>shift), true
	}
	return 0, false
}

// parsedNumber is a json.Number read for encoding: an exact integer when
// the text is one that fits 64 bits, else a float64.
type parsedNumber struct {
	kind byte // 'i', 'u' or 'f'
	i    int64
	u    uint64
	f    float64
}

func (n parsedNumber) append(dst []byte) []byte {
	switch n.kind {
	case 'i':
		return appendInt(dst, n.i)
	case 'u':
		return appendHead(dst, majorUint, n.u)
	}
	return appendFloat(dst, n.f)
}

// parseNumber reads a json.Number. Integers that fit 64 bits are kept
// exact; everything else goes through float64 and is normalised like any
// other float. Integer text is parsed as the one integer type its sign
// allows, and other text not as an integer at all, which keeps numbers free
// of the allocation of a failed strconv call.
func parseNumber(n json.Number) (parsedNumber, error) {
	s := string(n)
	switch {
	case !integerText(s):
	case s[0] == '-':
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return parsedNumber{kind: 'i', i: i}, nil
		}
	default:
		if u, err := strconv.ParseUint(s, 10, 64); err == nil {
			return parsedNumber{kind: 'u', u: u}, nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return parsedNumber{}, fmt.Errorf("%w: json.Number %q: %v", ErrUnsupportedInput, s, err)
	}
	return parsedNumber{kind: 'f', f: f}, nil
}

// integerText reports whether s is an optional minus sign and digits.
func integerText(s string) bool {
	if len(s) > 0 && s[0] == '-' {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// appendReflected writes the values that are neither scalars nor []any and
// map[string]any: other slices, arrays and maps with string keys element by
// element, everything else through encoding/json.
func appendReflected(dst []byte, x any, depth int) ([]byte, error) {
	if marshalsItself(x) {
		return appendJSONForm(dst, x, depth)
	}
	rv := reflect.ValueOf(x)
	switch rv.Kind() {
	case reflect.Slice, reflect.Map, reflect.Pointer:
		if rv.IsNil() {
			return append(dst, cborNull), nil
		}
	}
	switch rv.Kind() {
	case reflect.Slice:
		if rv.Type().Elem().Kind() == reflect.Uint8 {
			// Bytes are base64 text in JSON.
			return appendJSONForm(dst, x, depth)
		}
		return appendList(dst, rv, depth)
	case reflect.Array:
		return appendList(dst, rv, depth)
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			// encoding/json spells integer and TextMarshaler keys as text.
			return appendJSONForm(dst, x, depth)
		}
		entries := make([]mapEntry, 0, rv.Len())
		for it := rv.MapRange(); it.Next(); {
			entries = append(entries, newMapEntry(it.Key().String(), it.Value().Interface()))
		}
		return appendMap(dst, entries, depth)
	case reflect.Pointer, reflect.Struct:
		return appendJSONForm(dst, x, depth)
	}
	return dst, unsupportedType(x)
}

func appendList(dst []byte, rv reflect.Value, depth int) ([]byte, error) {
	dst = appendHead(dst, majorArray, uint64(rv.Len()))
	var err error
	for i := range rv.Len() {
		if dst, err = appendValue(dst, rv.Index(i).Interface(), depth+1); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

// mapEntry is one entry of a map being encoded: rawKey is its key as the
// map holds it, validKey the same made valid UTF-8, as it is written.
type mapEntry struct {
	validKey, rawKey string
	val              any
}

func newMapEntry(k string, v any) mapEntry {
	return mapEntry{validKey: validText(k), rawKey: k, val: v}
}

// appendMap writes a map with its entries in core deterministic order, by
// their encoded keys: for text, the shorter key first (its head holds the
// length), then bytewise. Keys that differ only in invalid bytes are one
// key once valid; of those, the entry with the greatest raw key wins,
// as it does when encoding/json writes the keys in sorted order and a
// decoder keeps the last of a duplicate.
func appendMap(dst []byte, entries []mapEntry, depth int) ([]byte, error) {
	slices.SortFunc(entries, func(a, b mapEntry) int {
		if c := cmp.Compare(len(a.validKey), len(b.validKey)); c != 0 {
			return c
		}
		if c := strings.Compare(a.validKey, b.validKey); c != 0 {
			return c
		}
		return strings.Compare(a.rawKey, b.rawKey)
	})
	n := 0
	for i := range entries {
		if i+1 < len(entries) && entries[i+1].validKey == entries[i].validKey {
			continue // an entry with a greater raw key follows
		}
		entries[n] = entries[i]
		n++
	}
	dst = appendHead(dst, majorMap, uint64(n))
	var err error
	for _, e := range entries[:n] {
		dst = appendText(dst, e.validKey)
		if dst, err = appendValue(dst, e.val, depth+1); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

// appendJSONForm writes x as encoding/json writes it, read back with
// numbers kept as json.Number so that no integer is rounded on the way.
func appendJSONForm(dst []byte, x any, depth int) ([]byte, error) {
	b, err := json.Marshal(x)
	if err != nil {
		return dst, fmt.Errorf("%w: Go type %T: %v", ErrUnsupportedInput, x, err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return dst, fmt.Errorf("%w: Go type %T: %v", ErrUnsupportedInput, x, err)
	}
	return appendValue(dst, out, depth+1)
}
