package flagsnap

// Bulk evaluation: every flag of the set in force for one context, as
// OpenFeature's typed methods would answer each, from one snapshot.

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap/evaluator"
)

// ErrNotReady is what EvaluateAll returns before the first flag set is in
// force.
var ErrNotReady = errors.New("flagsnap: no flags have been loaded yet")

// AllFlags is every flag of one flag set evaluated for one context, in key
// order: what EvaluateAll returns, and what EvaluateAllInto fills again.
type AllFlags struct {
	Flags []FlagEvaluation
	// Metadata is the flag set's metadata. It is shared with the flag
	// set and must not be modified.
	Metadata map[string]any

	// in is the snapshot the flags were evaluated from.
	in *inForce
}

// FlagEvaluation is one flag's answer in a bulk evaluation: what the typed
// method of the flag's own type would answer, but for the value, which is
// nil (the caller's default, OFREP's code default) when the flag served
// no variant: a disabled flag, a flag without a default variant, an
// error.
type FlagEvaluation struct {
	Key string
	// Value is the variant's value: bool, string, int64 (a whole number)
	// or float64, map[string]any or []any. It is shared with the flag set
	// and must not be modified.
	Value        any
	Variant      string
	Reason       openfeature.Reason
	ErrorCode    openfeature.ErrorCode // "" when the evaluation succeeded
	ErrorMessage string
	// FlagMetadata is the flag's metadata over its flag set's, shared
	// with the flag set: it must not be modified.
	FlagMetadata openfeature.FlagMetadata

	// index is the flag's in its set; variant is the variant whose value
	// was served, -1 when none was (a variant whose value is null is
	// served too).
	index, variant int32
}

// EvaluateAll evaluates every flag of the set in force for evalCtx, from
// one snapshot: never half of one flag set and half of the next. Each
// flag answers as the typed method of its own type would. The evaluations
// count in Usage as bulk evaluations (FlagUsage.Bulk), apart from those of
// code. Before the first flag set it returns ErrNotReady.
func (p *Provider) EvaluateAll(ctx context.Context, evalCtx openfeature.FlattenedContext) (*AllFlags, error) {
	all := &AllFlags{}
	if err := p.EvaluateAllInto(all, ctx, evalCtx); err != nil {
		return nil, err
	}
	return all, nil
}

// EvaluateAllInto is EvaluateAll into dst, whose Flags it reuses: a caller
// that keeps dst from call to call allocates nothing once it has grown to
// the flag set's size, but for the messages of flags that fail.
func (p *Provider) EvaluateAllInto(dst *AllFlags, _ context.Context, evalCtx openfeature.FlattenedContext) error {
	in := p.snap.Load()
	if in == nil {
		dst.Flags, dst.Metadata, dst.in = dst.Flags[:0], nil, nil
		return ErrNotReady
	}
	in.evaluateAll(dst, in.sortedIndexes(), evalCtx)
	return nil
}

// evaluateAll evaluates the flags at indexes, in that order, into dst.
func (in *inForce) evaluateAll(dst *AllFlags, indexes []int32, evalCtx map[string]any) {
	dst.Metadata, dst.in = in.set.Metadata(), in
	dst.Flags = slices.Grow(dst.Flags[:0], len(indexes))[:len(indexes)]
	for n, i := range indexes {
		e := in.set.EvaluateAt(int(i), evalCtx)
		in.fillEvaluation(&dst.Flags[n], &e)
	}
	if in.counts != nil {
		in.counts.Bulk(indexes)
	}
}

// fillEvaluation writes e, an evaluation of a flag of in, as f.
func (in *inForce) fillEvaluation(f *FlagEvaluation, e *evaluator.Evaluation) {
	*f = FlagEvaluation{
		Key:          in.set.FlagKey(e.Index()),
		Value:        e.Value(),
		Variant:      e.Variant(),
		Reason:       reasons[e.Reason()&7],
		FlagMetadata: e.Metadata(),
		index:        int32(e.Index()),
		variant:      int32(e.VariantIndex()),
	}
	if err := e.Err(); err != nil {
		f.ErrorCode, f.ErrorMessage, f.variant = errorCodes[err.Code&7], err.Error(), -1
	}
}

// errorCodes spells the evaluator's error codes, looked up as reasons is.
var errorCodes = [8]openfeature.ErrorCode{
	evaluator.CodeFlagNotFound: openfeature.FlagNotFoundCode,
	evaluator.CodeParseError:   openfeature.ParseErrorCode,
	evaluator.CodeTypeMismatch: openfeature.TypeMismatchCode,
	evaluator.CodeGeneral:      openfeature.GeneralCode,
}

// sortedIndexes is the indexes of the set's flags in key order, sorted on
// the set's first bulk evaluation and kept with it.
func (in *inForce) sortedIndexes() []int32 {
	if s := in.sorted.Load(); s != nil {
		return *s
	}
	s := make([]int32, in.set.Len())
	for i := range s {
		s[i] = int32(i)
	}
	slices.SortFunc(s, func(a, b int32) int { return strings.Compare(in.set.FlagKey(int(a)), in.set.FlagKey(int(b))) })
	in.sorted.Store(&s)
	return s
}
