package ld

import (
	"github.com/flagsnap/flagsnap/bench/flaggen"

	"github.com/launchdarkly/go-sdk-common/v3/ldvalue"
	"github.com/launchdarkly/go-server-sdk-evaluation/v3/ldbuilders"
	"github.com/launchdarkly/go-server-sdk-evaluation/v3/ldmodel"
)

// evalFlags are the flags of the E and O rows, as bench evaluates them.
const evalFlags = flaggen.Matrix

// ldEvalFlag is a flag of evalFlags in LaunchDarkly's model, with the
// flagd names of its variations, index for index.
type ldEvalFlag struct {
	flag  ldmodel.FeatureFlag
	names []string
}

var (
	onOffNames  = []string{"on", "off"}
	onOffValues = []any{true, false}
	twoBuckets  = []string{"control", "treatment"}
	eightBucket = []string{"v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8"}
)

// ldEvalFlags returns evalFlags flag for flag as LaunchDarkly would hold
// them: built, which runs ldmodel.PreprocessFlag as the SDK does when it
// receives a flag, and with no salt, rule ids or event settings, as
// Translate. Variations keep flagd's order of variants.
func ldEvalFlags() map[string]ldEvalFlag {
	flags := map[string]ldEvalFlag{}
	add := func(key string, names []string, values []any, build func(*ldbuilders.FlagBuilder)) {
		vs := make([]ldvalue.Value, len(values))
		for i, v := range values {
			vs[i] = ldvalue.CopyArbitraryValue(v)
		}
		b := ldbuilders.NewFlagBuilder(key).Version(1).On(true).Variations(vs...)
		build(b)
		flags[key] = ldEvalFlag{flag: b.Build(), names: names}
	}
	// onWhen is flagd's {"if": [cond, "on", "off"]}: a rule of clauses,
	// all of which must match, and off as the fallthrough.
	onWhen := func(key string, clauses ...ldmodel.Clause) {
		add(key, onOffNames, onOffValues, func(b *ldbuilders.FlagBuilder) {
			b.AddRule(ldRule(0, clauses...)).FallthroughVariation(1)
		})
	}

	add("static", onOffNames, onOffValues, func(b *ldbuilders.FlagBuilder) { b.FallthroughVariation(0) })
	onWhen("simple", ldClause("tier", ldmodel.OperatorIn, "premium"))
	add("complex", []string{"premium", "standard", "basic"}, []any{"premium-tier", "standard-tier", "basic-tier"},
		func(b *ldbuilders.FlagBuilder) {
			// The or is a rule per operand: clauses of one rule are anded.
			b.AddRule(ldRule(0, ldClause("tier", ldmodel.OperatorIn, "premium"), ldClause("score", ldmodel.OperatorGreaterThan, 90))).
				AddRule(ldRule(1, ldClause("tier", ldmodel.OperatorIn, "standard"))).
				AddRule(ldRule(1, ldClause("score", ldmodel.OperatorGreaterThan, 50))).
				FallthroughVariation(2)
		})
	add("role", []string{"admin", "user"}, []any{"admin-value", "user-value"}, func(b *ldbuilders.FlagBuilder) {
		b.AddRule(ldRule(0, ldClause("role", ldmodel.OperatorIn, "admin"))).FallthroughVariation(1)
	})
	// Off with no off variation: LaunchDarkly answers no variation and its
	// SDK the caller's default, which is what flagd does for DISABLED.
	add("disabled", onOffNames, onOffValues, func(b *ldbuilders.FlagBuilder) { b.On(false) })
	for _, key := range []string{"frac2", "frac2s"} {
		add(key, twoBuckets, []any{"control", "treatment"}, func(b *ldbuilders.FlagBuilder) {
			b.Fallthrough(ldRollout(50, 50))
		})
	}
	for _, key := range []string{"frac8", "frac8s"} {
		add(key, eightBucket, []any{"v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8"}, func(b *ldbuilders.FlagBuilder) {
			b.Fallthrough(ldRollout(12, 13, 12, 13, 12, 13, 12, 13))
		})
	}
	onWhen("semverEq", ldClause("version", ldmodel.OperatorSemVerEqual, "1.2.3"))
	// ^1.2.0 is >= 1.2.0 and < 2.0.0; >= is "not less than", one clause
	// rather than a rule for = and another for >.
	onWhen("semverRange", ldClause("version", ldmodel.OperatorSemVerLessThan, "2.0.0"),
		ldbuilders.Negate(ldClause("version", ldmodel.OperatorSemVerLessThan, "1.2.0")))
	onWhen("startsWith", ldClause("email", ldmodel.OperatorStartsWith, "admin"))
	onWhen("endsWith", ldClause("email", ldmodel.OperatorEndsWith, "@example.com"))
	return flags
}

func ldRule(variation int, clauses ...ldmodel.Clause) *ldbuilders.RuleBuilder {
	return ldbuilders.NewRuleBuilder().Variation(variation).Clauses(clauses...)
}

func ldClause(attr string, op ldmodel.Operator, value any) ldmodel.Clause {
	return ldbuilders.Clause(attr, op, ldvalue.CopyArbitraryValue(value))
}

// ldRollout is a fallthrough rollout over the variations in order, by
// flagd's percentages; without bucketBy LaunchDarkly buckets by the
// context's key, which is flagd's targeting key.
func ldRollout(percents ...int) ldmodel.VariationOrRollout {
	buckets := make([]ldmodel.WeightedVariation, len(percents))
	for i, p := range percents {
		buckets[i] = ldbuilders.Bucket(i, p*weightScale/100)
	}
	return ldbuilders.Rollout(buckets...)
}
