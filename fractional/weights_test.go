package fractional

import (
	"errors"
	"math"
	"slices"
	"testing"
)

func TestWeight(t *testing.T) {
	tests := []struct {
		in      float64
		want    uint32
		wantErr error
	}{
		{0, 0, nil},
		{1, 1, nil},
		{25, 25, nil},
		{-50, 0, nil},
		{math.Copysign(0, -1), 0, nil},
		{-1e300, 0, nil},
		{MaxWeight, MaxWeight, nil},
		{MaxWeight + 1, 0, ErrWeightTooLarge},
		{1e300, 0, ErrWeightTooLarge},
		{0.5, 0, ErrWeightNotWhole},
		{-0.5, 0, ErrWeightNotWhole},
		{2.0000001, 0, ErrWeightNotWhole},
		{math.NaN(), 0, ErrWeightNotWhole},
		{math.Inf(1), 0, ErrWeightNotWhole},
		{math.Inf(-1), 0, ErrWeightNotWhole},
	}
	for _, tc := range tests {
		got, err := Weight(tc.in)
		if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
			t.Errorf("Weight(%v) err = %v, want %v", tc.in, err, tc.wantErr)
		}
		if got != tc.want {
			t.Errorf("Weight(%v) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestSum(t *testing.T) {
	tests := []struct {
		in      []uint32
		want    uint32
		wantErr error
	}{
		{[]uint32{25, 25, 25, 25}, 100, nil},
		{[]uint32{0, 7}, 7, nil},
		{[]uint32{MaxWeight}, MaxWeight, nil},
		{[]uint32{MaxWeight - 1, 1}, MaxWeight, nil},
		{[]uint32{MaxWeight, 1}, 0, ErrSumTooLarge},
		{[]uint32{math.MaxUint32, math.MaxUint32, math.MaxUint32}, 0, ErrSumTooLarge},
		{[]uint32{0, 0}, 0, ErrNoWeight},
		{nil, 0, ErrNoWeight},
	}
	for _, tc := range tests {
		got, err := Sum(tc.in)
		if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
			t.Errorf("Sum(%v) err = %v, want %v", tc.in, err, tc.wantErr)
		}
		if got != tc.want {
			t.Errorf("Sum(%v) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestNewTable(t *testing.T) {
	tests := []struct {
		name      string
		in        []float64
		weights   []uint32
		total     uint32
		wantErr   error
		pickIndex int // bucket chosen by every version for hash 12345
	}{
		{"single bucket", []float64{1}, []uint32{1}, 1, nil, 0},
		{"negative clamped", []float64{-50, 100}, []uint32{0, 100}, 100, nil, 1},
		{"zero first", []float64{0, 0, 3}, []uint32{0, 0, 3}, 3, nil, 2},
		{"max single", []float64{MaxWeight}, []uint32{MaxWeight}, MaxWeight, nil, 0},
		{"all zero", []float64{0, 0}, nil, 0, ErrNoWeight, -1},
		{"all negative", []float64{-1, -2}, nil, 0, ErrNoWeight, -1},
		{"no buckets", nil, nil, 0, ErrNoWeight, -1},
		{"sum overflow", []float64{MaxWeight, 1}, nil, 0, ErrSumTooLarge, -1},
		{"sum overflow many", []float64{1 << 30, 1 << 30}, nil, 0, ErrSumTooLarge, -1},
		{"weight overflow", []float64{1, MaxWeight + 1}, nil, 0, ErrWeightTooLarge, -1},
		{"not whole", []float64{1, 2.5}, nil, 0, ErrWeightNotWhole, -1},
		{"NaN", []float64{math.NaN()}, nil, 0, ErrWeightNotWhole, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tb, err := NewTable(tc.in)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || tb != nil {
					t.Fatalf("NewTable = %v, %v; want nil, %v", tb, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(tb.Weights(), tc.weights) || tb.Total() != tc.total || tb.Len() != len(tc.in) {
				t.Fatalf("table = %v/%d/%d, want %v/%d", tb.Weights(), tb.Total(), tb.Len(), tc.weights, tc.total)
			}
			for _, v := range []Version{V1, V2, V3} {
				if got := tb.Pick(v, 12345); got != tc.pickIndex {
					t.Errorf("%s: Pick = %d, want %d", v, got, tc.pickIndex)
				}
			}
		})
	}
}

func TestNewTableCopiesInput(t *testing.T) {
	in := []float64{1, 2}
	tb, err := NewTable(in)
	if err != nil {
		t.Fatal(err)
	}
	in[0] = 100
	if w := tb.Weights(); w[0] != 1 {
		t.Errorf("table changed with its input: %v", w)
	}
	if w := tb.Weights(); cap(w) != len(w) {
		t.Errorf("Weights() has spare capacity %d, appends would write into the table", cap(w))
	}
}

func TestNilTable(t *testing.T) {
	var tb *Table
	if tb.Len() != 0 || tb.Total() != 0 || tb.Weights() != nil || tb.Pick(V2, 1) != -1 {
		t.Error("nil table must be empty and pick nothing")
	}
}
