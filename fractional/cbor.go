package fractional

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/fxamacker/cbor/v2"
)

// Errors reported for bucketing values that cannot be hashed.
var (
	// ErrNullInput reports a null bucketing value. flagd treats it as "no
	// result" rather than hashing the CBOR null.
	ErrNullInput = errors.New("fractional: bucketing value is null")
	// ErrUnsupportedInput reports a bucketing value whose type cannot be
	// hashed: a non-string in V1/V2, or a Go type that is not JSON-like.
	ErrUnsupportedInput = errors.New("fractional: unsupported bucketing value")
)

// CBOR initial-byte building blocks (RFC 8949 §3).
const (
	majorUint   byte = 0 << 5
	majorNeg    byte = 1 << 5
	majorText   byte = 3 << 5
	majorArray  byte = 4 << 5
	majorSimple byte = 7 << 5

	cborFalse   = majorSimple | 20
	cborTrue    = majorSimple | 21
	cborNull    = majorSimple | 22
	cborFloat16 = majorSimple | 25
	cborFloat32 = majorSimple | 26
	cborFloat64 = majorSimple | 27

	// maxHead is the longest possible initial byte plus argument.
	maxHead = 9
)

// Bounds of the whole numbers that are encoded as CBOR integers. Both are
// powers of two and therefore exact float64 values.
const (
	twoTo63 = 1 << 63
	twoTo64 = 1 << 64
)

// coreDet encodes containers. Building the mode validates the options, so it
// is done once rather than per value.
var coreDet = mustCoreDet()

func mustCoreDet() cbor.EncMode {
	em, err := cbor.CoreDetEncOptions().EncMode()
	if err != nil {
		panic("fractional: core deterministic CBOR options rejected: " + err.Error())
	}
	return em
}

// AppendCBOR appends the RFC 8949 core deterministic CBOR encoding of x to
// dst, as hashed by V3, and returns the extended buffer.
//
// Numbers are normalised first so that a value hashes the same whichever
// numeric type carries it: a whole number in [-2^63, 2^64-1], including
// -0.0, becomes a CBOR integer; any other number becomes the shortest of
// float16, float32 and float64 that holds it exactly (NaN as float16 0x7e00,
// infinities as float16). Strings are CBOR text strings, taken byte for
// byte. Maps are written with keys sorted bytewise by their encoding, and all
// lengths are definite.
//
// Accepted types are nil, bool, string, float64, float32, every int and
// uint type, json.Number, []any and map[string]any, nested arbitrarily. nil
// encodes as CBOR null; a nil slice or map encodes as an empty array or map,
// as an empty JSON container would. A json.Number that fits int64 or uint64
// is encoded as that exact integer rather than rounded through float64.
// Other types yield an error wrapping ErrUnsupportedInput, and dst is
// returned unchanged.
func AppendCBOR(dst []byte, x any) ([]byte, error) {
	if out, ok, err := appendScalar(dst, x); ok || err != nil {
		if err != nil {
			return dst, err
		}
		return out, nil
	}
	switch x.(type) {
	case []any, map[string]any:
	default:
		return dst, unsupportedType(x)
	}
	norm, err := normalise(x)
	if err != nil {
		return dst, err
	}
	b, err := coreDet.Marshal(norm)
	if err != nil {
		return dst, fmt.Errorf("fractional: encoding bucketing value: %w", err)
	}
	return append(dst, b...), nil
}

func unsupportedType(x any) error {
	return fmt.Errorf("%w: Go type %T", ErrUnsupportedInput, x)
}

// appendScalar encodes x when it is not a container. ok is false for
// containers and for unsupported types, which the caller tells apart.
func appendScalar(dst []byte, x any) (out []byte, ok bool, err error) {
	switch v := x.(type) {
	case nil:
		return append(dst, cborNull), true, nil
	case bool:
		if v {
			return append(dst, cborTrue), true, nil
		}
		return append(dst, cborFalse), true, nil
	case string:
		return appendText(dst, v), true, nil
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
		switch n := n.(type) {
		case int64:
			return appendInt(dst, n), true, nil
		case uint64:
			return appendHead(dst, majorUint, n), true, nil
		default:
			return appendFloat(dst, n.(float64)), true, nil
		}
	}
	return dst, false, nil
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

func appendText(dst []byte, s string) []byte {
	return append(appendHead(dst, majorText, uint64(len(s))), s...)
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

// parseNumber turns a json.Number into int64, uint64 or float64. Integers
// that fit 64 bits are kept exact; everything else goes through float64 and
// is normalised like any other float.
func parseNumber(n json.Number) (any, error) {
	s := string(n)
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i, nil
	}
	if u, err := strconv.ParseUint(s, 10, 64); err == nil {
		return u, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, fmt.Errorf("%w: json.Number %q: %v", ErrUnsupportedInput, s, err)
	}
	return normaliseFloat(f), nil
}

// normaliseFloat applies the number normalisation in value form, for the
// containers that the library encodes. It must agree with appendFloat.
func normaliseFloat(f float64) any {
	if f == math.Trunc(f) { // false for NaN; true for ±Inf, excluded below
		if f >= 0 && f < twoTo64 {
			return uint64(f)
		}
		if f < 0 && f >= -twoTo63 {
			return int64(f)
		}
	}
	return f
}

// normalise copies x with every number replaced by its normalised form so
// that the library's generic encoding matches appendScalar byte for byte.
func normalise(x any) (any, error) {
	switch v := x.(type) {
	case nil, bool, string, int64, uint64:
		return v, nil
	case float64:
		return normaliseFloat(v), nil
	case float32:
		return normaliseFloat(float64(v)), nil
	case int:
		return int64(v), nil
	case int8:
		return int64(v), nil
	case int16:
		return int64(v), nil
	case int32:
		return int64(v), nil
	case uint:
		return uint64(v), nil
	case uint8:
		return uint64(v), nil
	case uint16:
		return uint64(v), nil
	case uint32:
		return uint64(v), nil
	case json.Number:
		return parseNumber(v)
	case []any:
		// Never nil, even for a nil input: the library writes nil slices
		// as CBOR null, but a Go nil slice stands for an empty list here.
		out := make([]any, len(v))
		for i, e := range v {
			n, err := normalise(e)
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			n, err := normalise(e)
			if err != nil {
				return nil, err
			}
			out[k] = n
		}
		return out, nil
	}
	return nil, unsupportedType(x)
}
