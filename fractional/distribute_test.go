package fractional

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

func TestPick(t *testing.T) {
	w := []uint32{1, 0, 2, 1} // total 4
	tests := []struct {
		name  string
		v     Version
		hash  uint32
		ws    []uint32
		total uint32
		want  int
	}{
		{"v2 first", V2, 0, w, 4, 0},
		{"v2 end of first", V2, 1<<30 - 1, w, 4, 0},
		{"v2 skips zero weight", V2, 1 << 30, w, 4, 2},
		{"v2 third", V2, 3<<30 - 1, w, 4, 2},
		{"v2 last", V2, 3 << 30, w, 4, 3},
		{"v2 max hash", V2, math.MaxUint32, w, 4, 3},
		{"v3 as v2", V3, 1 << 30, w, 4, 2},
		{"v1 first", V1, 0, w, 4, 0},
		{"v1 skips zero weight", V1, 0x20000000, w, 4, 2},
		{"v1 negative hash mirrors", V1, 0xe0000000, w, 4, 2},
		{"v1 last", V1, 0x70000000, w, 4, 3},
		{"v1 max int32 is no result", V1, 0x7fffffff, w, 4, -1},
		{"v1 min int32 is no result", V1, 0x80000000, w, 4, -1},
		{"zero total", V2, 5, w, 0, -1},
		{"empty weights", V2, 5, nil, 4, -1},
		{"total too large for weights", V2, math.MaxUint32, []uint32{1}, 4, -1},
		{"invalid version", Version(0), 0, w, 4, -1},
		{"invalid version 4", Version(4), 0, w, 4, -1},
		{"single", V2, math.MaxUint32, []uint32{MaxWeight}, MaxWeight, 0},
	}
	for _, tc := range tests {
		if got := Pick(tc.v, tc.hash, tc.ws, tc.total); got != tc.want {
			t.Errorf("%s: Pick(%s, %#x, %v, %d) = %d, want %d", tc.name, tc.v, tc.hash, tc.ws, tc.total, got, tc.want)
		}
	}
}

// Choose answers the bucket Pick selects together with the point the hash
// falls on, which the same arithmetic computes.
func TestChoose(t *testing.T) {
	w := []uint32{1, 0, 2, 1} // total 4; V1 ends 25, 25, 75, 100
	tests := []struct {
		name  string
		v     Version
		hash  uint32
		ws    []uint32
		total uint32
		want  Choice
	}{
		{"v2 first", V2, 0, w, 4, Choice{0, 0, 0}},
		{"v2 skips zero weight", V2, 1 << 30, w, 4, Choice{1 << 30, 1, 2}},
		{"v2 max hash", V2, math.MaxUint32, w, 4, Choice{math.MaxUint32, 3, 3}},
		{"v2 large total", V2, 0x80000000, []uint32{MaxWeight}, MaxWeight, Choice{0x80000000, 1073741823, 0}},
		{"v3 as v2", V3, 3 << 30, w, 4, Choice{3 << 30, 3, 3}},
		{"v1 percentage", V1, 0x20000000, w, 4, Choice{0x20000000, 25.000000011641532, 2}},
		{"v1 negative hash mirrors", V1, 0xe0000000, w, 4, Choice{0xe0000000, 25.000000011641532, 2}},
		{"v1 max int32 is 100%", V1, 0x7fffffff, w, 4, Choice{0x7fffffff, 100, -1}},
		{"v1 min int32 is beyond 100%", V1, 0x80000000, w, 4, Choice{0x80000000, 100.00000004656613, -1}},
		{"zero total", V2, 5, w, 0, Choice{5, 0, -1}},
		{"total too large for weights", V2, math.MaxUint32, []uint32{1}, 4, Choice{math.MaxUint32, 3, -1}},
		{"invalid version", Version(4), 7, w, 4, Choice{7, 0, -1}},
	}
	for _, tc := range tests {
		got := Choose(tc.v, tc.hash, tc.ws, tc.total)
		if got != tc.want {
			t.Errorf("%s: Choose(%s, %#x, %v, %d) = %+v, want %+v", tc.name, tc.v, tc.hash, tc.ws, tc.total, got, tc.want)
		}
		if p := Pick(tc.v, tc.hash, tc.ws, tc.total); p != got.Index {
			t.Errorf("%s: Pick = %d, Choose's Index %d", tc.name, p, got.Index)
		}
	}
	tb, err := NewTable([]float64{1, 0, 2, 1})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tb.Choose(V1, 0x20000000), (Choice{0x20000000, 25.000000011641532, 2}); got != want {
		t.Errorf("Table.Choose = %+v, want %+v", got, want)
	}
	if got := (*Table)(nil).Choose(V2, 9); got != (Choice{9, 0, -1}) {
		t.Errorf("nil Table.Choose = %+v", got)
	}
}

func TestAppendEnds(t *testing.T) {
	tests := []struct {
		name  string
		v     Version
		ws    []uint32
		total uint32
		want  []float64
	}{
		{"v2 running sum", V2, []uint32{1, 0, 2, 1}, 4, []float64{1, 1, 3, 4}},
		{"v3 as v2", V3, []uint32{5, 5}, 10, []float64{5, 10}},
		{"v1 percentages", V1, []uint32{1, 0, 2, 1}, 4, []float64{25, 25, 75, 100}},
		// The rounding of each share carries into the next end, as Choose
		// sums them.
		{"v1 thirds", V1, []uint32{1, 1, 1}, 3, []float64{33.333333333333336, 66.66666666666667, 100}},
		{"zero total", V2, []uint32{1}, 0, nil},
		{"invalid version", Version(0), []uint32{1}, 1, nil},
	}
	for _, tc := range tests {
		prefix := []float64{-1}
		got := AppendEnds(prefix, tc.v, tc.ws, tc.total)
		if !slices.Equal(got, append([]float64{-1}, tc.want...)) {
			t.Errorf("%s: AppendEnds = %v, want -1 then %v", tc.name, got, tc.want)
		}
	}
}

// A chosen point lies in the range AppendEnds gives its bucket, and a
// point no bucket covers selects none.
func TestChoiceWithinEnds(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for range 2000 {
		ws := make([]uint32, 1+r.IntN(6))
		for i := range ws {
			ws[i] = uint32(r.IntN(3)) * uint32(1+r.IntN(1000))
		}
		ws[r.IntN(len(ws))]++
		total, err := Sum(ws)
		if err != nil {
			t.Fatal(err)
		}
		hash := r.Uint32()
		for _, v := range []Version{V1, V2, V3} {
			c := Choose(v, hash, ws, total)
			ends := AppendEnds(nil, v, ws, total)
			if c.Index < 0 {
				if c.Bucket < ends[len(ends)-1] {
					t.Fatalf("%s %#x %v: point %v covered by %v, yet no bucket", v, hash, ws, c.Bucket, ends)
				}
				continue
			}
			start := 0.0
			if c.Index > 0 {
				start = ends[c.Index-1]
			}
			if c.Bucket < start || c.Bucket >= ends[c.Index] || ws[c.Index] == 0 {
				t.Fatalf("%s %#x %v: point %v in bucket %d, ends %v", v, hash, ws, c.Bucket, c.Index, ends)
			}
		}
	}
}

// V2 must honour weights exactly: with total T, hash h selects the bucket
// containing floor(h*T/2^32), so the boundaries can be computed directly.
func TestPickV2ExactBoundaries(t *testing.T) {
	ws := []uint32{3, 0, 5, 1 << 20, 7}
	total, err := Sum(ws)
	if err != nil {
		t.Fatal(err)
	}
	var start uint64
	for i, w := range ws {
		if w == 0 {
			continue
		}
		// Smallest hash whose bucket value is >= start, and the largest
		// whose bucket value is < start+w.
		first := uint32((start<<32 + uint64(total) - 1) / uint64(total))
		last := uint32(((start+uint64(w))<<32 - 1) / uint64(total))
		if got := Pick(V2, first, ws, total); got != i {
			t.Errorf("first hash %#x of bucket %d picked %d", first, i, got)
		}
		if got := Pick(V2, last, ws, total); got != i {
			t.Errorf("last hash %#x of bucket %d picked %d", last, i, got)
		}
		if first > 0 {
			if got := Pick(V2, first-1, ws, total); got == i {
				t.Errorf("hash %#x before bucket %d picked it", first-1, i)
			}
		}
		start += uint64(w)
	}
}

// Each version must split a large population within one percentage point
// of the configured weights.
func TestDistribution(t *testing.T) {
	const n = 100_000
	tables := [][]float64{{50, 30, 20}, {10, 10, 80}}
	type keyed struct {
		name string
		v    Version
		hash func(r *rand.Rand, i int) uint32
	}
	stringKey := func(v Version) func(r *rand.Rand, i int) uint32 {
		return func(r *rand.Rand, i int) uint32 {
			return HashString(v, "user-"+strconv.FormatUint(r.Uint64(), 36))
		}
	}
	cases := []keyed{
		{"v1 strings", V1, stringKey(V1)},
		{"v2 strings", V2, stringKey(V2)},
		{"v3 strings", V3, stringKey(V3)},
		{"v3 integers", V3, func(r *rand.Rand, i int) uint32 {
			h, err := HashValue(V3, r.Int64())
			if err != nil {
				t.Fatal(err)
			}
			return h
		}},
		{"v3 small integers", V3, func(r *rand.Rand, i int) uint32 {
			h, err := HashValue(V3, int64(i))
			if err != nil {
				t.Fatal(err)
			}
			return h
		}},
		{"v2 default input", V2, func(r *rand.Rand, i int) uint32 {
			return HashDefault(V2, "my-flag", strconv.Itoa(i))
		}},
		{"v3 default input", V3, func(r *rand.Rand, i int) uint32 {
			return HashDefault(V3, "my-flag", strconv.Itoa(i))
		}},
	}
	for _, weights := range tables {
		tb := mustTable(t, weights...)
		for _, c := range cases {
			t.Run(c.name+"/"+strconv.FormatFloat(weights[0], 'f', -1, 64), func(t *testing.T) {
				r := rand.New(rand.NewPCG(1, 2))
				counts := make([]int, tb.Len())
				for i := range n {
					idx := tb.Pick(c.v, c.hash(r, i))
					if idx < 0 {
						// V1 loses three hashes in 2^32; none is
						// expected among 10^5 keys.
						t.Fatalf("key %d: no bucket", i)
					}
					counts[idx]++
				}
				for i, w := range weights {
					got := 100 * float64(counts[i]) / n
					if math.Abs(got-w) > 1 {
						t.Errorf("bucket %d: %.2f%%, want %.0f%% ± 1", i, got, w)
					}
				}
			})
		}
	}
}
