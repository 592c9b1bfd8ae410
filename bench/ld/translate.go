package ld

import (
	"fmt"

	"github.com/launchdarkly/go-jsonstream/v3/jwriter"
	"github.com/launchdarkly/go-sdk-common/v3/ldattr"
	"github.com/launchdarkly/go-sdk-common/v3/ldvalue"
	"github.com/launchdarkly/go-server-sdk-evaluation/v3/ldbuilders"
	"github.com/launchdarkly/go-server-sdk-evaluation/v3/ldmodel"

	"github.com/flagsnap/flagsnap/bench/flaggen"
)

// weightScale is what a LaunchDarkly rollout's weights add up to.
const weightScale = 100_000

// Translate returns f as a LaunchDarkly flag that serves the same variant
// for the same context, except that a fractional flag splits the targeting
// keys in the same proportions but by LaunchDarkly's hash.
//
// Only what LaunchDarkly's evaluator needs is set: flags from LaunchDarkly
// also carry a salt, rule ids and event settings, which would make its
// figures larger, never smaller.
func Translate(f *flaggen.Flag) (ldmodel.FeatureFlag, error) {
	values := make([]ldvalue.Value, len(f.Variants))
	for i, v := range f.Variants {
		values[i] = ldvalue.CopyArbitraryValue(v.Value)
	}
	def, err := variation(f, f.Default)
	if err != nil {
		return ldmodel.FeatureFlag{}, err
	}
	b := ldbuilders.NewFlagBuilder(f.Key).Version(1).On(true).Variations(values...).OffVariation(def)
	switch f.Kind {
	case flaggen.Static:
		b.FallthroughVariation(def)
	case flaggen.Equals, flaggen.In, flaggen.AndOr:
		match, noMatch, err := outcomes(f)
		if err != nil {
			return ldmodel.FeatureFlag{}, err
		}
		// An or of ands is a rule per and, each a list of clauses that
		// must all match; the first matching rule wins and the rest
		// fall through, as the if of flagd's targeting does.
		for _, and := range f.Rule {
			clauses := make([]ldmodel.Clause, len(and))
			for i, c := range and {
				if c.Op != "==" && c.Op != "in" {
					return ldmodel.FeatureFlag{}, fmt.Errorf("%s: condition %q", f.Key, c.Op)
				}
				// LaunchDarkly's "in" is true when the attribute equals
				// any of the values, which is == for a single value.
				vs := make([]ldvalue.Value, len(c.Values))
				for j, v := range c.Values {
					vs[j] = ldvalue.String(v)
				}
				clauses[i] = ldbuilders.Clause(c.Attribute, ldmodel.OperatorIn, vs...)
			}
			b.AddRule(ldbuilders.NewRuleBuilder().Variation(match).Clauses(clauses...))
		}
		b.FallthroughVariation(noMatch)
	case flaggen.SemVer:
		match, noMatch, err := outcomes(f)
		if err != nil {
			return ldmodel.FeatureFlag{}, err
		}
		rules, err := semVerRules(f.SemVerOp, f.SemVer)
		if err != nil {
			return ldmodel.FeatureFlag{}, fmt.Errorf("%s: %w", f.Key, err)
		}
		for _, c := range rules {
			b.AddRule(ldbuilders.NewRuleBuilder().Variation(match).Clauses(c))
		}
		b.FallthroughVariation(noMatch)
	case flaggen.Fractional:
		buckets, err := rollout(f)
		if err != nil {
			return ldmodel.FeatureFlag{}, err
		}
		vr := ldbuilders.Rollout(buckets...)
		// flagd buckets by the targeting key, which is the context's
		// key in LaunchDarkly.
		vr.Rollout.BucketBy = ldattr.NewLiteralRef(ldattr.KeyAttr)
		b.Fallthrough(vr)
	default:
		return ldmodel.FeatureFlag{}, fmt.Errorf("%s: kind %v", f.Key, f.Kind)
	}
	return b.Build(), nil
}

func variation(f *flaggen.Flag, name string) (int, error) {
	for i, v := range f.Variants {
		if v.Name == name {
			return i, nil
		}
	}
	return 0, fmt.Errorf("%s: no variant %q", f.Key, name)
}

func outcomes(f *flaggen.Flag) (match, noMatch int, err error) {
	if match, err = variation(f, f.Match); err != nil {
		return 0, 0, err
	}
	noMatch, err = variation(f, f.NoMatch)
	return match, noMatch, err
}

// semVerRules returns clauses any of which matching means the version
// satisfies op: LaunchDarkly compares versions only by =, < and >.
func semVerRules(op, version string) ([]ldmodel.Clause, error) {
	v := ldvalue.String(version)
	clause := func(o ldmodel.Operator) ldmodel.Clause {
		return ldbuilders.Clause(flaggen.SemVerAttribute, o, v)
	}
	switch op {
	case "=":
		return []ldmodel.Clause{clause(ldmodel.OperatorSemVerEqual)}, nil
	case "!=":
		return []ldmodel.Clause{ldbuilders.Negate(clause(ldmodel.OperatorSemVerEqual))}, nil
	case "<":
		return []ldmodel.Clause{clause(ldmodel.OperatorSemVerLessThan)}, nil
	case ">":
		return []ldmodel.Clause{clause(ldmodel.OperatorSemVerGreaterThan)}, nil
	case "<=":
		return []ldmodel.Clause{clause(ldmodel.OperatorSemVerEqual), clause(ldmodel.OperatorSemVerLessThan)}, nil
	case ">=":
		return []ldmodel.Clause{clause(ldmodel.OperatorSemVerEqual), clause(ldmodel.OperatorSemVerGreaterThan)}, nil
	}
	return nil, fmt.Errorf("sem_ver operator %q has no LaunchDarkly equivalent", op)
}

// rollout scales flagd's relative weights to LaunchDarkly's; the last
// bucket takes what rounding leaves, as LaunchDarkly itself would.
func rollout(f *flaggen.Flag) ([]ldmodel.WeightedVariation, error) {
	total := 0
	for _, k := range f.Buckets {
		total += k.Weight
	}
	if total <= 0 {
		return nil, fmt.Errorf("%s: fractional weights add up to %d", f.Key, total)
	}
	out := make([]ldmodel.WeightedVariation, len(f.Buckets))
	left := weightScale
	for i, k := range f.Buckets {
		idx, err := variation(f, k.Variant)
		if err != nil {
			return nil, err
		}
		w := k.Weight * weightScale / total
		if i == len(f.Buckets)-1 {
			w = left
		}
		left -= w
		out[i] = ldbuilders.Bucket(idx, w)
	}
	return out, nil
}

// Document writes flags as LaunchDarkly's SDK receives a whole data set
// ({"flags": {key: flag}, "segments": {}}), each flag in LaunchDarkly's
// own serialization.
func Document(flags []flaggen.Flag) ([]byte, error) {
	w := jwriter.NewWriter()
	obj := w.Object()
	fs := obj.Name("flags").Object()
	for i := range flags {
		ff, err := Translate(&flags[i])
		if err != nil {
			return nil, err
		}
		ldmodel.MarshalFeatureFlagToJSONWriter(ff, fs.Name(ff.Key))
	}
	fs.End()
	segments := obj.Name("segments").Object()
	segments.End()
	obj.End()
	if err := w.Error(); err != nil {
		return nil, err
	}
	return w.Bytes(), nil
}
