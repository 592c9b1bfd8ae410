package fractional

import (
	"math"
	"math/rand/v2"
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
