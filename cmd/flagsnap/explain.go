package main

import (
	"strconv"

	"github.com/flagsnap/flagsnap/evaluator"
	"github.com/flagsnap/flagsnap/internal/jsonline"
)

// fractionalWeights are the buckets of the first fractional operation the
// flag's rule evaluates for ctx, as shares of their total weight; nil when
// it evaluates none.
func fractionalWeights(set *evaluator.FlagSet, key string, ctx map[string]any) []weight {
	x, err := set.Explain(key, ctx)
	if err != nil || x.Rule == nil {
		return nil
	}
	b := firstBucketing(x.Rule)
	if b == nil || b.Total == 0 {
		return nil
	}
	out := make([]weight, len(b.Buckets))
	for i, bk := range b.Buckets {
		out[i] = weight{variant: variantLabel(bk.Variant), share: float64(bk.Weight) / float64(b.Total)}
	}
	return out
}

func firstBucketing(s *evaluator.Step) *evaluator.Bucketing {
	if s.Bucketing != nil {
		return s.Bucketing
	}
	for i := range s.Args {
		if b := firstBucketing(&s.Args[i]); b != nil {
			return b
		}
	}
	return nil
}

// variantLabel is the variant a bucket's value names, as the evaluator
// reads a rule's result: a string is the name, true and false name the
// variants "true" and "false", a number the variant of its spelling, null
// the default.
func variantLabel(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case bool:
		return strconv.FormatBool(t)
	case nil:
		return labelDefault
	}
	return jsonline.String(v)
}
