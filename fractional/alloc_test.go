package fractional

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/twmb/murmur3"
)

func TestZeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation changes allocation counts")
	}
	s40 := strings.Repeat("0123456789", 4)
	s256 := strings.Repeat("x", 256)
	ws := []uint32{10, 20, 30, 40}
	tb := mustTable(t, 10, 20, 30, 40)
	var sink uint32
	var idx int
	check := func(name string, f func()) {
		t.Helper()
		if n := testing.AllocsPerRun(100, f); n != 0 {
			t.Errorf("%s: %v allocations per run, want 0", name, n)
		}
	}
	for _, v := range []Version{V1, V2, V3} {
		check("HashString "+v.String()+" 40 bytes", func() { sink += HashString(v, s40) })
		check("HashString "+v.String()+" 256 bytes", func() { sink += HashString(v, s256) })
		check("HashDefault "+v.String(), func() { sink += HashDefault(v, "fractional-flag-shorthand", "jon@company.com") })
		check("Pick "+v.String(), func() { idx += Pick(v, sink, ws, 100) })
		check("Table.Pick "+v.String(), func() { idx += tb.Pick(v, sink) })
		check("Choose "+v.String(), func() { idx += Choose(v, sink, ws, 100).Index })
		check("Table.Choose "+v.String(), func() { idx += tb.Choose(v, sink).Index })
	}
	// Boxing happens at the call site; values already held in an interface,
	// as context values are, hash without further allocation.
	newYear := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, x := range []any{
		"user-1", int64(1) << 40, int64(math.MaxInt64), uint64(math.MaxUint64), int8(-3), 2.5, float32(272180.5625), true,
		json.Number("9007199254740993"), json.Number("0.5"), json.Number("18446744073709551615"),
		newYear, newYear.Add(time.Millisecond), &newYear, userID(12345678901), optIn(true), ratio(0.1),
	} {
		check(fmt.Sprintf("HashValue v3 %T %v", x, x), func() {
			h, _ := HashValue(V3, x)
			sink += h
		})
	}
	_, _ = sink, idx
}

func TestHashStringStackLimit(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation changes allocation counts")
	}
	s := strings.Repeat("x", stackBufSize-maxHead)
	if s != strings.Repeat("x", 311) {
		t.Fatal("documented limit of HashString is out of date")
	}
	var sink uint32
	if n := testing.AllocsPerRun(100, func() { sink += HashString(V3, s) }); n != 0 {
		t.Errorf("HashString(V3, 311 bytes): %v allocations, want 0", n)
	}
	// Past the buffer the result must not change, only where it is built.
	long := s + "y"
	want := murmur3.Sum32(append([]byte{0x79, 0x01, 0x38}, long...))
	if got := HashString(V3, long); got != want {
		t.Errorf("HashString(V3, 312 bytes) = %#x, want %#x", got, want)
	}
	_ = sink
}

func TestLongDefaultInputs(t *testing.T) {
	flagKey := strings.Repeat("f", 200)
	key := strings.Repeat("k", 200)
	if got, want := HashDefault(V2, flagKey, key), murmur3.StringSum32(flagKey+key); got != want {
		t.Errorf("HashDefault(V2) long = %#x, want %#x", got, want)
	}
	enc := append([]byte{0x82, 0x78, 200}, flagKey...)
	enc = append(append(enc, 0x78, 200), key...)
	if got, want := HashDefault(V3, flagKey, key), murmur3.Sum32(enc); got != want {
		t.Errorf("HashDefault(V3) long = %#x, want %#x", got, want)
	}
	short := append([]byte{0x82, 0x61, 'f'}, 0x60)
	if got, want := HashDefault(V3, "f", ""), murmur3.Sum32(short); got != want {
		t.Errorf("HashDefault(V3, f, \"\") = %#x, want %#x", got, want)
	}
}
