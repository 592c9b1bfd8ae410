package flagsnap

import (
	"context"
	"testing"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap/evaluator"
	"github.com/flagsnap/flagsnap/source"
)

// fiveFlags is a small but ordinary flag set: a static flag, targeting on
// an attribute, a shared evaluator, a rollout and a version check.
var fiveFlags = []byte(`{
  "$evaluators": {"staff": {"ends_with": [{"var": "email"}, "@example.com"]}},
  "flags": {
    "new-checkout": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off",
                     "targeting": {"if": [{"$ref": "staff"}, "on"]}},
    "banner-color": {"state": "ENABLED", "variants": {"red": "red", "blue": "blue"}, "defaultVariant": "red"},
    "page-size":    {"state": "ENABLED", "variants": {"small": 10, "large": 50}, "defaultVariant": "small",
                     "targeting": {"if": [{"in": [{"var": "tier"}, ["gold", "platinum"]]}, "large"]}},
    "search":       {"state": "ENABLED", "variants": {"legacy": "legacy", "vector": "vector"}, "defaultVariant": "legacy",
                     "targeting": {"fractional": [["legacy", 80], ["vector", 20]]}},
    "offline-mode": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off",
                     "targeting": {"if": [{"sem_ver": [{"var": "appVersion"}, ">=", "2.4.0"]}, "on"]}}
  }
}`)

// BenchmarkStartFromMemory measures what a test pays for a provider of its
// own: construction from an in-memory flag set, Init, the first
// evaluation, and the Shutdown that stops its goroutines again. WithFlags
// compiles the flags once; a source.Memory, which a test can Set, checks
// them when it is built and the provider compiles them at Init.
func BenchmarkStartFromMemory(b *testing.B) {
	ctx := context.Background()
	flat := openfeature.FlattenedContext{"targetingKey": "user-1", "email": "ada@example.com"}
	set, err := evaluator.Load(fiveFlags, evaluator.WithStrict())
	if err != nil || set.Len() != 5 {
		b.Fatalf("the flag set does not load whole: %v", err)
	}
	start := func(b *testing.B, opt func() (Option, error)) {
		b.ReportAllocs()
		for b.Loop() {
			o, err := opt()
			if err != nil {
				b.Fatal(err)
			}
			p, err := NewProvider(o)
			if err != nil {
				b.Fatal(err)
			}
			if err := p.Init(openfeature.EvaluationContext{}); err != nil {
				b.Fatal(err)
			}
			p.BooleanEvaluation(ctx, "new-checkout", false, flat)
			p.Shutdown()
		}
	}
	b.Run("WithFlags", func(b *testing.B) {
		start(b, func() (Option, error) { return WithFlags(fiveFlags), nil })
	})
	b.Run("Memory", func(b *testing.B) {
		start(b, func() (Option, error) {
			return WithSource(source.NewMemory(fiveFlags)), nil
		})
	})
	// Init alone (with the evaluation and the Shutdown): the flags of
	// WithFlags are compiled by NewProvider and serve every Init.
	b.Run("WithFlags-init", func(b *testing.B) {
		p, err := NewProvider(WithFlags(fiveFlags))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if err := p.Init(openfeature.EvaluationContext{}); err != nil {
				b.Fatal(err)
			}
			p.BooleanEvaluation(ctx, "new-checkout", false, flat)
			p.Shutdown()
		}
	})
	// Compiling the flags alone: the floor of the first two.
	b.Run("load", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = evaluator.Load(fiveFlags)
		}
	})
}
