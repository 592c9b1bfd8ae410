package fractional

import (
	"errors"
	"fmt"
	"math"
)

// MaxWeight is the largest accepted weight and the largest accepted sum of
// weights. The bound keeps the V1 percentage and the V2/V3 product
// hash*total within exact arithmetic and matches flagd's signed 32-bit limit.
const MaxWeight = math.MaxInt32

// Errors reported while validating weights. They are sentinels for use with
// errors.Is; returned errors may wrap them with the offending value.
var (
	// ErrWeightNotWhole reports a weight that is fractional, NaN or infinite.
	ErrWeightNotWhole = errors.New("fractional: weight is not a whole number")
	// ErrWeightTooLarge reports a single weight above MaxWeight.
	ErrWeightTooLarge = errors.New("fractional: weight exceeds 2147483647")
	// ErrSumTooLarge reports weights whose sum exceeds MaxWeight.
	ErrSumTooLarge = errors.New("fractional: sum of weights exceeds 2147483647")
	// ErrNoWeight reports that there is no bucket with a positive weight, so
	// no bucket can ever be selected.
	ErrNoWeight = errors.New("fractional: no bucket has a positive weight")
)

// Weight validates one bucket weight. Negative weights are not an error:
// flagd treats them as 0, which disables the bucket.
func Weight(w float64) (uint32, error) {
	if math.IsNaN(w) || math.IsInf(w, 0) || w != math.Trunc(w) {
		return 0, fmt.Errorf("%w: %v", ErrWeightNotWhole, w)
	}
	if w <= 0 {
		return 0, nil
	}
	if w > MaxWeight {
		return 0, fmt.Errorf("%w: %v", ErrWeightTooLarge, w)
	}
	return uint32(w), nil
}

// Sum returns the total of weights. A total of 0 is an error because no
// bucket could win; a total above MaxWeight is an error because flagd
// rejects it.
func Sum(weights []uint32) (uint32, error) {
	var total uint64
	for _, w := range weights {
		total += uint64(w)
		if total > MaxWeight {
			// Stopping early keeps the accumulator from overflowing however
			// many maximal weights are passed.
			return 0, ErrSumTooLarge
		}
	}
	if total == 0 {
		return 0, ErrNoWeight
	}
	return uint32(total), nil
}

// Table is a validated list of bucket weights together with their total. It
// is immutable once built and safe for concurrent use, so a flag whose
// weights are constants can build it once and reuse it for every evaluation.
type Table struct {
	weights []uint32
	total   uint32
}

// NewTable validates weights with Weight and their total with Sum. The
// returned table keeps bucket order: Pick returns indexes into weights.
func NewTable(weights []float64) (*Table, error) {
	ws := make([]uint32, len(weights))
	for i, f := range weights {
		w, err := Weight(f)
		if err != nil {
			return nil, fmt.Errorf("bucket %d: %w", i, err)
		}
		ws[i] = w
	}
	total, err := Sum(ws)
	if err != nil {
		return nil, err
	}
	return &Table{weights: ws, total: total}, nil
}

// Len returns the number of buckets, including those with weight 0.
func (t *Table) Len() int {
	if t == nil {
		return 0
	}
	return len(t.weights)
}

// Weights returns the validated weights, negative inputs already clamped to
// 0. The slice is shared with the table and must not be modified.
func (t *Table) Weights() []uint32 {
	if t == nil {
		return nil
	}
	return t.weights[:len(t.weights):len(t.weights)]
}

// Total returns the sum of the weights, always in [1, MaxWeight] for a table
// returned by NewTable.
func (t *Table) Total() uint32 {
	if t == nil {
		return 0
	}
	return t.total
}

// Pick returns the index of the bucket selected by hash under version v, or
// -1 when there is none (see the package-level Pick).
func (t *Table) Pick(v Version, hash uint32) int {
	if t == nil {
		return -1
	}
	return Pick(v, hash, t.weights, t.total)
}

// Choose is Pick together with the point the hash falls on (see the
// package-level Choose).
func (t *Table) Choose(v Version, hash uint32) Choice {
	if t == nil {
		return Choice{Hash: hash, Index: -1}
	}
	return Choose(v, hash, t.weights, t.total)
}
