package fractional

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/fxamacker/cbor/v2"
)

var fuzzDecMode = func() cbor.DecMode {
	dm, err := cbor.DecOptions{
		DefaultMapType:   reflect.TypeFor[map[string]any](),
		MaxNestedLevels:  65535,
		MaxArrayElements: math.MaxInt32,
		MaxMapPairs:      math.MaxInt32,
	}.DecMode()
	if err != nil {
		panic(err)
	}
	return dm
}()

func FuzzAppendCBOR(f *testing.F) {
	for _, seed := range []string{
		`null`, `true`, `0`, `-0.0`, `1.5`, `65504`, `65505.0`, `1e20`, `-1e20`,
		`18446744073709551615`, `18446744073709551616`, `-9223372036854775808`,
		`-9223372036854775809`, `4.9406564584124654e-324`, `"café"`, `""`,
		`[]`, `{}`, `[1, [], 3]`, `{"b": 2, "a": 1}`, `{"a": 1, "a": 2}`,
		`{"ÿ": 2, "aaa": 1, "": null}`, `{"x": [{"a": {"b": []}}]}`,
		`[[[[[[[[[[[[]]]]]]]]]]]]`, `{"k": [0.1, 2.5e-8, 3.4028234663852886e+38]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var x any
		if err := json.Unmarshal(data, &x); err != nil {
			return
		}
		enc, err := AppendCBOR(nil, x)
		if err != nil {
			t.Fatalf("AppendCBOR(%s): %v", data, err)
		}
		again, err := AppendCBOR(nil, x)
		if err != nil || !bytes.Equal(enc, again) {
			t.Fatalf("AppendCBOR(%s) not deterministic: %x then %x (%v)", data, enc, again, err)
		}
		var back any
		if err := fuzzDecMode.Unmarshal(enc, &back); err != nil {
			t.Fatalf("decoding %x (from %s): %v", enc, data, err)
		}
		if want := refNormalise(x); !reflect.DeepEqual(back, want) {
			t.Fatalf("round trip of %s:\n got %#v\nwant %#v", data, back, want)
		}

		// The json.Number path must be equally robust.
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var n any
		if err := dec.Decode(&n); err != nil {
			return
		}
		encN, err := AppendCBOR(nil, n)
		if err != nil {
			t.Fatalf("AppendCBOR(%s with json.Number): %v", data, err)
		}
		againN, _ := AppendCBOR(nil, n)
		if !bytes.Equal(encN, againN) {
			t.Fatalf("AppendCBOR(%s with json.Number) not deterministic", data)
		}
		if err := fuzzDecMode.Unmarshal(encN, new(any)); err != nil {
			t.Fatalf("decoding %x (from %s with json.Number): %v", encN, data, err)
		}
	})
}

// FuzzPick derives weights from raw bytes, five at a time: a selector byte
// choosing the kind of weight and four bytes of magnitude.
func FuzzPick(f *testing.F) {
	f.Add(uint32(0), uint32(0), []byte{2, 0, 0, 0, 25, 2, 0, 0, 0, 25})
	f.Add(uint32(0x80000000), uint32(100), []byte{2, 0, 0, 0, 1})
	f.Add(uint32(0x7fffffff), uint32(7), []byte{0, 0, 0, 0, 50, 2, 0, 0, 0, 100})
	f.Add(uint32(math.MaxUint32), uint32(math.MaxUint32), []byte{3, 0x7f, 0xff, 0xff, 0xff, 2, 0, 0, 0, 1})
	f.Add(uint32(12345), uint32(3), []byte{4, 0, 0, 0, 1})
	f.Add(uint32(1), uint32(1), []byte{1, 0, 0, 0, 0, 1, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, hash, anyTotal uint32, raw []byte) {
		var weights []float64
		for len(raw) >= 5 {
			mag := binary.BigEndian.Uint32(raw[1:5])
			var w float64
			switch raw[0] % 7 {
			case 0:
				w = -float64(mag)
			case 1:
				w = 0
			case 2:
				w = float64(mag % 1000)
			case 3:
				w = float64(mag) // may exceed MaxWeight
			case 4:
				w = float64(mag) + 0.5
			case 5:
				w = float64(mag) * 1e10
			default:
				w = math.Float64frombits(uint64(mag) << 32)
			}
			weights = append(weights, w)
			raw = raw[5:]
		}

		tb, err := NewTable(weights)
		if err != nil {
			if !errors.Is(err, ErrWeightNotWhole) && !errors.Is(err, ErrWeightTooLarge) &&
				!errors.Is(err, ErrSumTooLarge) && !errors.Is(err, ErrNoWeight) {
				t.Fatalf("NewTable(%v): unexpected error %v", weights, err)
			}
			if tb != nil {
				t.Fatal("table returned with an error")
			}
		} else {
			checkTablePicks(t, tb, len(weights), hash)
		}

		// Pick must stay safe with a total that does not match the weights.
		ws := make([]uint32, len(weights))
		for i, w := range weights {
			ws[i] = uint32(int64(math.Max(0, math.Min(w, math.MaxUint32))))
		}
		for _, v := range []Version{0, V1, V2, V3, 200} {
			idx := Pick(v, hash, ws, anyTotal)
			if idx < -1 || idx >= len(ws) || (idx >= 0 && ws[idx] == 0) {
				t.Fatalf("%s: Pick = %d for weights %v total %d", v, idx, ws, anyTotal)
			}
		}
	})
}

// checkTablePicks checks a table NewTable built from n weights, and what
// it picks for hash in every version.
func checkTablePicks(t *testing.T, tb *Table, n int, hash uint32) {
	t.Helper()
	ws := tb.Weights()
	var sum uint64
	for _, w := range ws {
		sum += uint64(w)
	}
	if sum != uint64(tb.Total()) || sum == 0 || sum > MaxWeight || len(ws) != n {
		t.Fatalf("table %v total %d inconsistent", ws, tb.Total())
	}
	for _, v := range []Version{V1, V2, V3} {
		idx := tb.Pick(v, hash)
		if idx != tb.Pick(v, hash) {
			t.Fatalf("%s: Pick not deterministic", v)
		}
		checkChoice(t, v, hash, ws, tb.Total(), idx)
		if idx == -1 {
			if v != V1 {
				t.Fatalf("%s: no bucket for hash %#x in valid table %v", v, hash, ws)
			}
			continue
		}
		if idx < 0 || idx >= len(ws) || ws[idx] == 0 {
			t.Fatalf("%s: Pick = %d for weights %v", v, idx, ws)
		}
	}
}

// checkChoice checks that Choose selects what Pick does, at a point within
// the range AppendEnds gives the bucket, or beyond every range for none.
func checkChoice(t *testing.T, v Version, hash uint32, ws []uint32, total uint32, idx int) {
	t.Helper()
	c := Choose(v, hash, ws, total)
	if c.Index != idx || c.Hash != hash {
		t.Fatalf("%s: Choose = %+v, Pick = %d", v, c, idx)
	}
	ends := AppendEnds(nil, v, ws, total)
	start, end := 0.0, ends[len(ends)-1]
	if idx >= 0 {
		end = ends[idx]
		if idx > 0 {
			start = ends[idx-1]
		}
	}
	if (idx >= 0 && (c.Bucket < start || c.Bucket >= end)) || (idx < 0 && c.Bucket < end) {
		t.Fatalf("%s: point %v, bucket %d, ends %v", v, c.Bucket, idx, ends)
	}
}
