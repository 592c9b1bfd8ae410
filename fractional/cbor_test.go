package fractional

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/fxamacker/cbor/v2"
	"github.com/twmb/murmur3"
	"github.com/x448/float16"
)

func TestAppendCBORKnown(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string // hex
	}{
		// RFC 8949 Appendix A, where normalisation leaves the value alone.
		{"0", int64(0), "00"},
		{"1", 1, "01"},
		{"10", int8(10), "0a"},
		{"23", uint8(23), "17"},
		{"24", int16(24), "1818"},
		{"25", uint16(25), "1819"},
		{"100", int32(100), "1864"},
		{"1000", uint32(1000), "1903e8"},
		{"1000000", uint(1000000), "1a000f4240"},
		{"1e12", int64(1000000000000), "1b000000e8d4a51000"},
		{"maxuint64", uint64(math.MaxUint64), "1bffffffffffffffff"},
		{"-1", -1, "20"},
		{"-10", int8(-10), "29"},
		{"-100", int64(-100), "3863"},
		{"-1000", int64(-1000), "3903e7"},
		{"minint8", int8(math.MinInt8), "387f"},
		{"minint64", int64(math.MinInt64), "3b7fffffffffffffff"},
		{"1.1", 1.1, "fb3ff199999999999a"},
		{"1.5", 1.5, "f93e00"},
		{"f16 min subnormal", 5.960464477539063e-8, "f90001"},
		{"f16 min normal", 0.00006103515625, "f90400"},
		{"f16 max subnormal", 1023 * 0x1p-24, "f903ff"},
		{"-4.1", -4.1, "fbc010666666666666"},
		{"1e300", 1.0e300, "fb7e37e43c8800759c"},
		{"+inf", math.Inf(1), "f97c00"},
		{"-inf", math.Inf(-1), "f9fc00"},
		{"nan", math.NaN(), "f97e00"},
		{"nan payload", math.Float64frombits(0x7ff0000000000123), "f97e00"},
		{"false", false, "f4"},
		{"true", true, "f5"},
		{"null", nil, "f6"},
		{"empty string", "", "60"},
		{"a", "a", "6161"},
		{"IETF", "IETF", "6449455446"},
		{"quote backslash", "\"\\", "62225c"},
		{"u00fc", "\u00fc", "62c3bc"},
		{"u6c34", "\u6c34", "63e6b0b4"},
		{"u10151", "\U00010151", "64f0908591"},
		{"empty array", []any{}, "80"},
		{"array", []any{1, 2, 3}, "83010203"},
		{"empty map", map[string]any{}, "a0"},
		{"map with array", map[string]any{"a": 1, "b": []any{2, 3}}, "a26161016162820203"},
		{"array with map", []any{"a", map[string]any{"b": "c"}}, "826161a161626163"},

		// Normalisation of whole floats.
		{"0.0", 0.0, "00"},
		{"-0.0", math.Copysign(0, -1), "00"},
		{"1.0", 1.0, "01"},
		{"-4.0", -4.0, "23"},
		{"65504.0 is an integer", 65504.0, "19ffe0"},
		{"100000.0", 100000.0, "1a000186a0"},
		{"2^63", 0x1p63, "1b8000000000000000"},
		{"largest below 2^64", 0x1p64 - 2048, "1bfffffffffffff800"},
		{"-2^63", -0x1p63, "3b7fffffffffffffff"},
		{"2^64 is a float", 0x1p64, "fa5f800000"},
		{"-2^64 is a float", -0x1p64, "fadf800000"},
		{"below -2^63 is a float", -0x1p63 - 2048, "fbc3e0000000000001"},
		{"f32 max", 3.4028234663852886e+38, "fa7f7fffff"},
		{"float32 whole", float32(7), "07"},
		{"float32 1.1", float32(1.1), "fa3f8ccccd"},
		{"float32 -0", float32(math.Copysign(0, -1)), "00"},

		// Float width boundaries.
		{"f16 one ulp", 1 + 0x1p-10, "f93c01"},
		{"needs f32", 1 + 0x1p-11, "fa3f801000"},
		{"below f16 subnormals", 0x1p-25, "fa33000000"},
		{"f16 subnormal needs f32", 3 * 0x1p-25, "fa33c00000"},
		{"65505.0 needs f32", 65504.5, "fa477fe080"},
		{"f32 min subnormal", 0x1p-149, "fa00000001"},
		{"f32 min normal", 0x1p-126, "fa00800000"},
		{"below f32 subnormals", 0x1p-150, "fb3690000000000000"},
		{"f64 min subnormal", 4.9406564584124654e-324, "fb0000000000000001"},
		{"negative f16", -1.5, "f9be00"},
		{"negative subnormal f16", -0x1p-24, "f98001"},

		// Maps sort by encoded key: shorter keys first, then bytewise.
		{"sort by length", map[string]any{"b": 1, "aa": 2}, "a2616201626161" + "02"},
		{"sort bytewise", map[string]any{"ÿ": 2, "aaa": 1, "z": 0}, "a3617a0062c3bf02636161610" + "1"},
		{"nested normalised", map[string]any{"k": []any{math.Copysign(0, -1), 2.5, float32(3), nil}}, "a1616b8400f94100" + "03f6"},

		// A nil slice or map is null, as encoding/json writes it.
		{"nil slice", []any(nil), "f6"},
		{"nil map", map[string]any(nil), "f6"},
		{"nested nil", map[string]any{"a": []any(nil), "b": map[string]any(nil)}, "a26161f6" + "6162f6"},

		// json.Number keeps 64-bit integers exact and normalises the rest.
		{"number int", json.Number("9007199254740993"), "1b0020000000000001"},
		{"number uint", json.Number("18446744073709551615"), "1bffffffffffffffff"},
		{"number min int", json.Number("-9223372036854775808"), "3b7fffffffffffffff"},
		{"number 1.0", json.Number("1.0"), "01"},
		{"number 1e2", json.Number("1e2"), "1864"},
		{"number 0.5", json.Number("0.5"), "f93800"},
		{"number -0.0", json.Number("-0.0"), "00"},
		{"number in map", map[string]any{"n": json.Number("2.5")}, "a1616ef94100"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := AppendCBOR(nil, tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if h := hex.EncodeToString(got); h != tc.want {
				t.Errorf("AppendCBOR(%#v) = %s, want %s", tc.in, h, tc.want)
			}
			// Appending must keep what is already in the buffer.
			prefix := []byte{0xde, 0xad}
			got2, err := AppendCBOR(slices.Clone(prefix), tc.in)
			if err != nil || !bytes.Equal(got2[:2], prefix) || !bytes.Equal(got2[2:], got) {
				t.Errorf("append to prefix = %x, %v", got2, err)
			}
		})
	}
}

type (
	userID    int64
	userName  string
	ratio     float32
	optIn     bool
	tags      []string
	attrs     map[string]any
	shortName string
	// level marshals itself as text, which wins over its kind.
	level int
	// failing cannot be encoded by encoding/json.
	failing struct{}
)

func (l level) MarshalText() ([]byte, error) { return []byte([]string{"debug", "info"}[l]), nil }

func (failing) MarshalJSON() ([]byte, error) { return nil, errors.New("no JSON form") }

// Values and types of the goValueCases.
var (
	goNewYear = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	goHalf    = goNewYear.Add(500 * time.Millisecond)
	goMaxInt  = int64(math.MaxInt64)
)

type (
	goAccount struct {
		ID    int64   `json:"id"`
		Name  string  `json:"name"`
		Ratio float32 `json:"-"`
	}
	goStamped struct {
		At time.Time `json:"at"`
	}
	goWithRatio struct {
		R float32 `json:"r"`
	}
)

// goValueCases are Go values beyond the JSON-like types, each with the
// encoding of the exact value it holds, written out by hand.
var goValueCases = []struct {
	name string
	in   any
	want string // hex
}{
	// 64-bit integers and float32 keep their exact value.
	{"max int64", goMaxInt, "1b7fffffffffffffff"},
	{"2^53+1", int64(1<<53 + 1), "1b0020000000000001"},
	{"min int64", int64(math.MinInt64), "3b7fffffffffffffff"},
	{"max uint64", uint64(math.MaxUint64), "1bffffffffffffffff"},
	{"float32 272180.5625", float32(272180.5625), "fa4884e692"},
	{"float32 0.1 widened", float32(0.1), "fa3dcccccd"},
	{"json.Number max int64", json.Number("9223372036854775807"), "1b7fffffffffffffff"},
	{"json.Number 2^53+1", json.Number("9007199254740993"), "1b0020000000000001"},

	// Times: tag 1 over the POSIX time in seconds.
	{"time whole second", goNewYear, "c11a65920080"},
	{"time zone does not matter", goNewYear.In(time.FixedZone("x", 3600)), "c11a65920080"},
	{"time half second", goHalf, "c1fb41d9648020200000"},
	{"time nanoseconds", goNewYear.Add(123456789), "c1fb41d964802007e6b7"},
	{"time before the epoch", time.Unix(-1, 0), "c120"},
	{"time a quarter second before the epoch", time.Unix(-1, 750_000_000), "c1f9b400"},
	{"zero time", time.Time{}, "c13b0000000e7791f6ff"},
	// The sum the specification spells out, to the last bit: seconds
	// plus nanoseconds/1e9 (nanoseconds*1e-9 ends in ...db).
	{"time rounding", time.Unix(-1, 265609), "c1fbbfeffdd2fa4101dc"},
	{"time pointer", &goNewYear, "c11a65920080"},
	{"nil time pointer", (*time.Time)(nil), "f6"},
	{"time in a map", map[string]any{"t": goNewYear}, "a16174c11a65920080"},
	{"time pointer in a list", []any{&goHalf}, "81c1fb41d9648020200000"},
	{"times in a typed list", []time.Time{goNewYear}, "81c11a65920080"},

	// Named types count as their kind.
	{"named int64", userID(1<<53 + 1), "1b0020000000000001"},
	{"named string", userName("ada"), "63616461"},
	{"named float32", ratio(0.1), "fa3dcccccd"},
	{"named bool", optIn(true), "f5"},
	{"named slice", tags{"a", "b"}, "8261616162"},
	{"named map", attrs{"id": userID(7)}, "a162696407"},
	{"string list", []string{"a", "b"}, "8261616162"},
	{"int64 list", []int64{goMaxInt}, "811b7fffffffffffffff"},
	{"float32 list", []float32{0.1}, "81fa3dcccccd"},
	{"array", [2]uint8{1, 2}, "820102"},
	{"string map", map[string]string{"a": "b"}, "a161616162"},
	{"int64 map", map[string]int64{"id": goMaxInt}, "a16269641b7fffffffffffffff"},
	{"named keys", map[shortName]int{"b": 1, "a": 2}, "a2616102616201"},
	{"nested typed", map[string]any{"ids": []uint64{math.MaxUint64}}, "a163696473811bffffffffffffffff"},
	{"nil typed slice", []string(nil), "f6"},
	{"nil typed map", map[string]int(nil), "f6"},

	// Everything else in its encoding/json form, numbers exact.
	{"struct", goAccount{ID: goMaxInt, Name: "x"}, "a26269641b7fffffffffffffff646e616d656178"},
	{"struct pointer", &goAccount{ID: 1, Name: "x"}, "a262696401646e616d656178"},
	{"time in a struct is text", goStamped{goNewYear}, "a1626174" + "74" + hex.EncodeToString([]byte("2024-01-01T00:00:00Z"))},
	{"float32 in a struct is its JSON text", goWithRatio{0.1}, "a16172fb3fb999999999999a"},
	{"struct in a map", map[string]any{"a": goAccount{ID: 2}}, "a16161a262696402646e616d6560"},
	{"int pointer", &goMaxInt, "1b7fffffffffffffff"},
	{"nil pointer", (*int)(nil), "f6"},
	{"bytes as base64", []byte("hi"), "6461476b3d"},
	{"integer keys", map[int]string{1: "a"}, "a161316161"},
	{"marshals itself", level(1), "64696e666f"},
	{"empty struct", struct{}{}, "a0"},

	// Text is valid UTF-8, one U+FFFD for each bad byte.
	{"invalid UTF-8", "a\xffb", "65" + "61efbfbd62"},
	{"truncated sequence", "\xe2\x82", "66efbfbdefbfbd"},
	{"invalid named string", userName("\xff"), "63efbfbd"},
	{"invalid key", map[string]any{"\xff": 1}, "a163efbfbd01"},
	{"invalid in a list", []string{"\xff"}, "8163efbfbd"},
	// Keys that become the same text: the greatest key as given wins,
	// as when encoding/json writes them in order and a decoder keeps
	// the last.
	{"colliding keys", map[string]any{"\xfe": 2, "\xff": 1}, "a163efbfbd01"},
	{"colliding with valid U+FFFD", map[string]any{"\ufffd": 1, "\xff": 2}, "a163efbfbd02"},
	{"colliding typed keys", map[string]int{"\xff": 1, "\ufffd": 2, "\xfe": 3}, "a163efbfbd01"},
}

func TestAppendCBORGoValues(t *testing.T) {
	for _, tc := range goValueCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := AppendCBOR(nil, tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if h := hex.EncodeToString(got); h != tc.want {
				t.Errorf("AppendCBOR(%#v) = %s, want %s", tc.in, h, tc.want)
			}
			// A value encodes the same inside a container.
			inArray, err := AppendCBOR(nil, []any{tc.in})
			if err != nil || inArray[0] != 0x81 || !bytes.Equal(inArray[1:], got) {
				t.Errorf("in an array: %x, %v; alone: %x", inArray, err, got)
			}
			h, err := HashValue(V3, tc.in)
			switch {
			case tc.want == "f6":
				if !errors.Is(err, ErrNullInput) {
					t.Errorf("HashValue(V3) err = %v, want ErrNullInput", err)
				}
			case err != nil || h != murmur3.Sum32(got):
				t.Errorf("HashValue(V3) = %#x, %v; want the hash of the encoding %#x", h, err, murmur3.Sum32(got))
			}
		})
	}
}

func TestAppendCBORUnsupported(t *testing.T) {
	selfHolding := map[string]any{}
	selfHolding["me"] = selfHolding
	tests := []struct {
		in       any
		typeName string
	}{
		{complex(1, 2), "complex128"},
		{make(chan int), "chan int"},
		{func() {}, "func()"},
		{map[any]any{"a": 1}, "map[interface {}]interface {}"},
		{struct{ C chan int }{}, "struct { C chan int }"},
		{failing{}, "fractional.failing"},
		{map[string]any{"a": []any{1, complex64(1)}}, "complex64"},
		{[]any{map[string]any{"x": failing{}}}, "fractional.failing"},
		{[]complex128{1}, "complex128"},
		{selfHolding, "nested deeper"},
	}
	for _, tc := range tests {
		dst := []byte{1, 2}
		got, err := AppendCBOR(dst, tc.in)
		if !errors.Is(err, ErrUnsupportedInput) {
			t.Errorf("AppendCBOR(%T) err = %v, want ErrUnsupportedInput", tc.in, err)
			continue
		}
		if !strings.Contains(err.Error(), tc.typeName) {
			t.Errorf("error %q does not name %s", err, tc.typeName)
		}
		if !bytes.Equal(got, dst) {
			t.Errorf("dst changed on error: %x", got)
		}
		if _, err := HashValue(V3, tc.in); !errors.Is(err, ErrUnsupportedInput) {
			t.Errorf("HashValue(V3, %T) err = %v, want ErrUnsupportedInput", tc.in, err)
		}
	}
	for _, bad := range []json.Number{"abc", "", "1e400", "--1"} {
		if _, err := AppendCBOR(nil, bad); !errors.Is(err, ErrUnsupportedInput) {
			t.Errorf("AppendCBOR(json.Number(%q)) err = %v, want ErrUnsupportedInput", bad, err)
		}
		if _, err := AppendCBOR(nil, []any{bad}); !errors.Is(err, ErrUnsupportedInput) {
			t.Errorf("AppendCBOR([json.Number(%q)]) err = %v, want ErrUnsupportedInput", bad, err)
		}
	}
}

// A value encodes the same alone and as an element of every kind of
// container, since one function writes it in all these places. This keeps
// it so should a container ever encode its elements by code of its own, as
// the library that once encoded containers did, for every Go type a context
// may hold.
func TestScalarMatchesNested(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	values := nestedValues()
	for range 2000 {
		values = append(values, randScalar(r))
	}
	for _, x := range values {
		top, err := AppendCBOR(nil, x)
		if err != nil {
			t.Fatalf("%#v: %v", x, err)
		}
		places := []struct {
			name string
			in   any
			head []byte
		}{
			{"in an array", []any{x}, []byte{0x81}},
			{"in a map", map[string]any{"k": x}, []byte{0xa1, 0x61, 'k'}},
			{"in a list in a list", []any{[]any{x}}, []byte{0x81, 0x81}},
			{"in a map in a list", []any{map[string]any{"k": x}}, []byte{0x81, 0xa1, 0x61, 'k'}},
			{"in an array type, by reflection", [1]any{x}, []byte{0x81}},
			{"in a map in a map", map[string]any{"k": map[string]any{"k": x}}, []byte{0xa1, 0x61, 'k', 0xa1, 0x61, 'k'}},
			{"in a named map, by reflection", attrs{"k": x}, []byte{0xa1, 0x61, 'k'}},
		}
		for _, p := range places {
			got, err := AppendCBOR(nil, p.in)
			if err != nil || !bytes.Equal(got, append(p.head, top...)) {
				t.Errorf("%#v: alone %x, %s %x (%v)", x, top, p.name, got, err)
			}
		}
	}
}

// nestedValues holds a value of every Go type the provider accepts in a
// context, with the edge values of each.
func nestedValues() []any {
	newYear := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	half := newYear.Add(500 * time.Millisecond)
	maxInt := int64(math.MaxInt64)
	return []any{
		nil, true, false, "", "x", "\xff\xfe", strings.Repeat("é", 12), strings.Repeat("a", 300),
		0.0, math.Copysign(0, -1), 1.0, -1.0, 1.5, 65504.0, 65505.0, 0x1p-24, 0x1p-25,
		0x1p-149, 0x1p-150, 1e20, -1e20, 0x1p63, -0x1p63, 0x1p64, 0x1p64 - 2048, -0x1p63 - 2048,
		math.MaxFloat64, math.SmallestNonzeroFloat64, math.Inf(1), math.Inf(-1), math.NaN(),
		float32(0.1), float32(math.MaxFloat32), float32(0x1p-149), float32(3),
		float32(math.NaN()), float32(math.Inf(-1)), float32(math.Copysign(0, -1)),
		int(5), int8(-128), int16(-300), int32(math.MinInt32), int64(math.MinInt64), int64(math.MaxInt64),
		uint(7), uint8(255), uint16(65535), uint32(math.MaxUint32), uint64(math.MaxUint64), uintptr(9),
		json.Number("12"), json.Number("-12.5"), json.Number("1e20"), json.Number("18446744073709551615"),
		json.Number("18446744073709551616"), json.Number("-9223372036854775808"), json.Number("-9223372036854775809"),
		json.Number("-0"), json.Number("1.0"), json.Number("1E2"), json.Number("0.1"), json.Number("-1.5e-7"),
		// Named types, times and pointers.
		userID(-5), userName("\xff"), ratio(0.1), optIn(false), level(0), shortName("s"),
		newYear, half, &newYear, (*time.Time)(nil), &maxInt, (*int)(nil),
		// Containers and values with a JSON form only.
		[]int{1}, []string(nil), map[string]int{"a": 1}, map[string]any(nil), tags{"x"}, attrs{"k": userID(3)},
		[2]uint8{1, 2}, []byte("hi"), map[int]string{1: "a"}, struct {
			A int64 `json:"a"`
		}{maxInt},
		[]any{1, "a", nil, []any{map[string]any{"\xff": 1.5}}},
	}
}

// refEncMode is the library's core deterministic mode, built separately from
// the package's so a misconfiguration there would show.
var refEncMode = func() cbor.EncMode {
	em, err := cbor.EncOptions{
		Sort:          cbor.SortCoreDeterministic,
		ShortestFloat: cbor.ShortestFloat16,
		NaNConvert:    cbor.NaNConvert7e00,
		InfConvert:    cbor.InfConvertFloat16,
		IndefLength:   cbor.IndefLengthForbidden,
	}.EncMode()
	if err != nil {
		panic(err)
	}
	return em
}()

// refNormalise is an independent statement of the number normalisation,
// using exact big-number arithmetic instead of float comparisons.
func refNormalise(x any) any {
	switch v := x.(type) {
	case float64:
		return refNormFloat(v)
	case float32:
		return refNormFloat(float64(v))
	case int:
		return int64(v)
	case int8:
		return int64(v)
	case int16:
		return int64(v)
	case int32:
		return int64(v)
	case uint:
		return uint64(v)
	case uint8:
		return uint64(v)
	case uint16:
		return uint64(v)
	case uint32:
		return uint64(v)
	case json.Number:
		if bi, ok := new(big.Int).SetString(string(v), 10); ok {
			if bi.IsInt64() {
				return bi.Int64()
			}
			if bi.IsUint64() {
				return bi.Uint64()
			}
		}
		f, err := v.Float64()
		if err != nil {
			panic(err)
		}
		return refNormFloat(f)
	case []any:
		if v == nil {
			return nil
		}
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = refNormalise(e)
		}
		return out
	case map[string]any:
		if v == nil {
			return nil
		}
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = refNormalise(e)
		}
		return out
	}
	return x
}

func refNormFloat(f float64) any {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return f
	}
	bf := new(big.Float).SetFloat64(f)
	if !bf.IsInt() {
		return f
	}
	bi, _ := bf.Int(nil)
	if bi.IsUint64() {
		return bi.Uint64()
	}
	if bi.IsInt64() {
		return bi.Int64()
	}
	return f
}

// refEncode is a minimal independent encoder for normalised values: it
// builds containers itself, sorting map entries by their encoded keys, and
// leaves scalars to the library.
func refEncode(t testing.TB, x any) []byte {
	head := func(major byte, n int) []byte {
		m := major << 5
		u := uint64(n)
		switch {
		case u < 24:
			return []byte{m | byte(u)}
		case u < 1<<8:
			return []byte{m | 24, byte(u)}
		case u < 1<<16:
			return []byte{m | 25, byte(u >> 8), byte(u)}
		default:
			return []byte{m | 26, byte(u >> 24), byte(u >> 16), byte(u >> 8), byte(u)}
		}
	}
	switch v := x.(type) {
	case []any:
		out := head(4, len(v))
		for _, e := range v {
			out = append(out, refEncode(t, e)...)
		}
		return out
	case map[string]any:
		type entry struct{ k, v []byte }
		entries := make([]entry, 0, len(v))
		for k, e := range v {
			entries = append(entries, entry{refEncode(t, k), refEncode(t, e)})
		}
		slices.SortFunc(entries, func(a, b entry) int { return bytes.Compare(a.k, b.k) })
		out := head(5, len(v))
		for _, e := range entries {
			out = append(out, e.k...)
			out = append(out, e.v...)
		}
		return out
	}
	b, err := refEncMode.Marshal(x)
	if err != nil {
		t.Fatalf("reference encoding of %#v: %v", x, err)
	}
	return b
}

func TestAppendCBORRandomized(t *testing.T) {
	r := rand.New(rand.NewPCG(2024, 6))
	for i := range 20000 {
		x := randScalar(r)
		got, err := AppendCBOR(nil, x)
		if err != nil {
			t.Fatalf("%#v: %v", x, err)
		}
		want, err := refEncMode.Marshal(refNormalise(x))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("scalar %d %T %#v: got %x, want %x", i, x, x, got, want)
		}
	}
	for i := range 3000 {
		x := randValue(r, 0)
		got, err := AppendCBOR(nil, x)
		if err != nil {
			t.Fatalf("%#v: %v", x, err)
		}
		want := refEncode(t, refNormalise(x))
		if !bytes.Equal(got, want) {
			t.Fatalf("value %d %#v:\n got %x\nwant %x", i, x, got, want)
		}
		// Map iteration order varies between runs; the encoding must not.
		again, _ := AppendCBOR(nil, x)
		if !bytes.Equal(got, again) {
			t.Fatalf("value %d encodes differently on a second run", i)
		}
		h, err := HashValue(V3, x)
		if bytes.Equal(got, []byte{0xf6}) {
			if !errors.Is(err, ErrNullInput) {
				t.Fatalf("HashValue(V3, %#v) err = %v, want ErrNullInput", x, err)
			}
		} else if err != nil || h != murmur3.Sum32(got) {
			t.Fatalf("HashValue(V3, %#v) does not hash the encoding: %v", x, err)
		}
	}
}

func randScalar(r *rand.Rand) any {
	switch r.IntN(6) {
	case 0, 1:
		return randFloat(r)
	case 2:
		return randInt(r)
	case 3:
		return randString(r)
	case 4:
		return r.IntN(2) == 0
	default:
		switch r.IntN(3) {
		case 0:
			return float32(randFloat(r))
		case 1:
			return json.Number(randNumberText(r))
		default:
			return nil
		}
	}
}

func randFloat(r *rand.Rand) float64 {
	sign := 1.0
	if r.IntN(2) == 0 {
		sign = -1
	}
	switch r.IntN(10) {
	case 0: // exact float16 values, subnormals included
		return float64(float16.Frombits(uint16(r.Uint32()) & 0x7bff).Float32())
	case 1: // one float64 ulp off a float16 value
		f := float64(float16.Frombits(uint16(r.Uint32()) & 0x7bff).Float32())
		return math.Nextafter(f, sign*math.Inf(1))
	case 2: // exact float32 values, subnormals included
		return float64(math.Float32frombits(r.Uint32()&^(0xff<<23) | uint32(r.IntN(255))<<23))
	case 3: // one float64 ulp off a float32 value
		f := float64(math.Float32frombits(r.Uint32()&^(0xff<<23) | uint32(r.IntN(255))<<23))
		return math.Nextafter(f, sign*math.Inf(1))
	case 4: // any finite float64
		for {
			f := math.Float64frombits(r.Uint64())
			if !math.IsNaN(f) && !math.IsInf(f, 0) {
				return f
			}
		}
	case 5: // whole floats around the integer range limits
		bases := []float64{0x1p63, 0x1p64, 0x1p53, 0x1p32, 0x1p16}
		f := sign * bases[r.IntN(len(bases))]
		for range r.IntN(4) {
			f = math.Nextafter(f, math.Inf(2*r.IntN(2)-1))
		}
		return f
	case 6: // small whole numbers and integer width boundaries
		bounds := []float64{0, 1, 23, 24, 255, 256, 65535, 65536, 1<<32 - 1, 1 << 32}
		return sign * (bounds[r.IntN(len(bounds))] + float64(r.IntN(3)-1))
	case 7: // float64 subnormals
		return sign * math.Float64frombits(r.Uint64()&(1<<52-1))
	case 8: // decimal-looking values
		return sign * math.Round(r.Float64()*1e6) / math.Pow(10, float64(r.IntN(8)))
	default:
		specials := []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1),
			math.MaxFloat64, math.SmallestNonzeroFloat64, 65504, 65505, 0x1p-24, 0x1p-14}
		return specials[r.IntN(len(specials))]
	}
}

func randInt(r *rand.Rand) any {
	bounds := []int64{0, 23, 24, 255, 256, 65535, 65536, 1<<32 - 1, 1 << 32, math.MaxInt64}
	n := bounds[r.IntN(len(bounds))] + int64(r.IntN(3)-1)
	if r.IntN(2) == 0 {
		n = -n
	}
	if r.IntN(4) == 0 {
		n = int64(r.Uint64())
	}
	switch r.IntN(10) {
	case 0:
		return int(n)
	case 1:
		return int8(n)
	case 2:
		return int16(n)
	case 3:
		return int32(n)
	case 4:
		return uint(n)
	case 5:
		return uint8(n)
	case 6:
		return uint16(n)
	case 7:
		return uint32(n)
	case 8:
		return uint64(n)
	default:
		return n
	}
}

func randNumberText(r *rand.Rand) string {
	switch r.IntN(3) {
	case 0:
		b, _ := json.Marshal(randFloat(r))
		if s := string(b); s != "" && s != "null" {
			return s
		}
		return "0"
	case 1:
		return new(big.Int).SetUint64(r.Uint64()).String()
	default:
		return "-" + new(big.Int).SetUint64(r.Uint64()>>1).String()
	}
}

var runeRanges = [][2]rune{{0, 0x7f}, {0x80, 0x7ff}, {0x800, 0xd7ff}, {0xe000, 0xfffd}, {0x10000, 0x10ffff}}

func randString(r *rand.Rand) string {
	lengths := []int{0, 1, 22, 23, 24, 25, 254, 255, 256, 257}
	n := lengths[r.IntN(len(lengths))]
	if r.IntN(200) == 0 {
		n = 65535 + r.IntN(3)
	}
	return randStringN(r, n)
}

// randStringN returns a string of exactly n bytes mixing ASCII with
// multi-byte and astral-plane characters.
func randStringN(r *rand.Rand, n int) string {
	if n > 1000 {
		// Repeating a random chunk keeps the long head-width cases cheap.
		chunk := randStringN(r, 100)
		s := strings.Repeat(chunk, n/100)
		return s + strings.Repeat("a", n-len(s))
	}
	var sb strings.Builder
	for sb.Len() < n {
		rg := runeRanges[r.IntN(len(runeRanges))]
		if r.IntN(2) == 0 {
			rg = runeRanges[0]
		}
		c := rg[0] + rune(r.IntN(int(rg[1]-rg[0]+1)))
		if sb.Len()+utf8.RuneLen(c) > n {
			c = 'a'
		}
		sb.WriteRune(c)
	}
	return sb.String()
}

func randValue(r *rand.Rand, depth int) any {
	if depth > 3 || r.IntN(3) == 0 {
		return randScalar(r)
	}
	n := r.IntN(6)
	if depth < 2 && r.IntN(20) == 0 {
		// Containers of 24+ entries need a two-byte head.
		n = 24 + r.IntN(3)
	}
	if r.IntN(2) == 0 {
		if n == 0 && r.IntN(4) == 0 {
			return []any(nil)
		}
		a := make([]any, n)
		for i := range a {
			a[i] = randValue(r, depth+1)
		}
		return a
	}
	if n == 0 && r.IntN(4) == 0 {
		return map[string]any(nil)
	}
	m := make(map[string]any, n)
	for range n {
		var k string
		switch r.IntN(3) {
		case 0:
			k = string(rune('a' + r.IntN(26)))
		case 1:
			k = randStringN(r, r.IntN(30))
		default:
			k = string([]rune{rune(0x80 + r.IntN(0x2000)), rune(0x10000 + r.IntN(0x1000))}[:1+r.IntN(2)])
		}
		m[k] = randValue(r, depth+1)
	}
	return m
}
