package fractional

import (
	"fmt"

	"github.com/twmb/murmur3"
)

// stackBufSize bounds the inputs hashed without a heap allocation. It covers
// a 256-byte string with its CBOR head, and typical flag keys plus targeting
// keys, while keeping the frame small enough to zero cheaply. HashString's
// documented limit is stackBufSize-maxHead.
const stackBufSize = 320

// HashString returns the bucketing hash of the string s. V3 hashes the CBOR
// text string holding s; every other version hashes the bytes of s as they
// are, as V1 and V2 do. Either way s is taken byte for byte: text that may
// not be valid UTF-8 goes through HashValue, which makes it valid as
// AppendCBOR does, or is made valid by the caller (a CBOR text string must
// be valid UTF-8). No version allocates for strings of up to 311
// bytes. AppendString gives the bytes hashed.
func HashString(v Version, s string) uint32 {
	if v != V3 {
		return murmur3.StringSum32(s)
	}
	var buf [stackBufSize]byte
	b := buf[:0]
	if n := maxHead + len(s); n > len(buf) {
		b = make([]byte, 0, n)
	}
	return murmur3.Sum32(appendText(b, s))
}

// AppendString appends to dst the bytes HashString hashes for s, written by
// the same code, and returns the extended buffer, for showing what was
// hashed.
func AppendString(dst []byte, v Version, s string) []byte {
	if v != V3 {
		return append(dst, s...)
	}
	return appendText(dst, s)
}

// HashDefault returns the hash of the default bucketing input, used when the
// operator has no bucketing expression: flagKey+targetingKey concatenated for
// V1 and V2, the CBOR array [flagKey, targetingKey] for V3. Short inputs are
// hashed without allocating. The keys are taken byte for byte, as by
// HashString; AppendDefault gives the bytes hashed.
//
// It does not judge the targeting key: callers return no result when it is
// missing, and in V3 also when it is empty, before calling.
func HashDefault(v Version, flagKey, targetingKey string) uint32 {
	var buf [stackBufSize]byte
	b := buf[:0]
	if v != V3 {
		if n := len(flagKey) + len(targetingKey); n > len(buf) {
			b = make([]byte, 0, n)
		}
		b = append(b, flagKey...)
		b = append(b, targetingKey...)
		return murmur3.Sum32(b)
	}
	if n := 1 + 2*maxHead + len(flagKey) + len(targetingKey); n > len(buf) {
		b = make([]byte, 0, n)
	}
	b = append(b, majorArray|2)
	b = appendText(b, flagKey)
	b = appendText(b, targetingKey)
	return murmur3.Sum32(b)
}

// AppendDefault appends to dst the bytes HashDefault hashes and returns the
// extended buffer, for showing what was hashed. HashDefault writes them
// itself, which keeps the hot path free of a call; TestAppendHashedBytes
// holds the two to the same bytes.
func AppendDefault(dst []byte, v Version, flagKey, targetingKey string) []byte {
	if v != V3 {
		return append(append(dst, flagKey...), targetingKey...)
	}
	dst = append(dst, majorArray|2)
	dst = appendText(dst, flagKey)
	return appendText(dst, targetingKey)
}

// HashValue returns the bucketing hash of an evaluated bucketing value.
//
// V1 and V2 accept only strings. V3 accepts every value AppendCBOR does and
// hashes its encoding, the caller's Go value exactly (see AppendCBOR);
// numbers, booleans, times and strings are hashed without allocating (the
// caller's conversion to any aside), other values allocate while being
// encoded.
//
// A nil x yields ErrNullInput in every version, and so in V3 does any value
// that encodes as null (a nil slice, map or pointer), so callers can apply
// the version's rule for null; other rejected values yield an error
// wrapping ErrUnsupportedInput, and an invalid version one wrapping
// ErrUnknownVersion.
func HashValue(v Version, x any) (uint32, error) {
	if !v.Valid() {
		return 0, fmt.Errorf("%w: %d", ErrUnknownVersion, uint8(v))
	}
	if x == nil {
		return 0, ErrNullInput
	}
	if s, ok := x.(string); ok {
		if v == V3 {
			s = validText(s)
		}
		return HashString(v, s), nil
	}
	if v != V3 {
		return 0, fmt.Errorf("%w: %s hashes only strings, got %T", ErrUnsupportedInput, v, x)
	}
	var buf [16]byte
	b, ok, err := appendScalar(buf[:0], x)
	if err != nil {
		return 0, err
	}
	if !ok {
		if b, err = appendValue(nil, x, 0); err != nil {
			return 0, err
		}
	}
	if len(b) == 1 && b[0] == cborNull {
		return 0, ErrNullInput
	}
	return murmur3.Sum32(b), nil
}
