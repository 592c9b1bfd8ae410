package flagsnap

import (
	"context"
	"testing"

	"github.com/open-feature/go-sdk/openfeature"
)

// BenchmarkProvider measures an evaluation through the provider's methods,
// as OpenFeature calls them, and through an OpenFeature client (whose own
// work, hooks and context merging, is most of that number).
func BenchmarkProvider(b *testing.B) {
	src := newFakeSource()
	p, err := NewProvider(WithSource(src))
	if err != nil {
		b.Fatal(err)
	}
	defer p.Shutdown()
	go func() {
		s := <-src.sinks
		s.Update(update(flagsV1))
	}()
	if err := p.Init(openfeature.EvaluationContext{}); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	flat := openfeature.FlattenedContext{"targetingKey": "user-1", "tier": "gold"}
	b.Run("static", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p.StringEvaluation(ctx, "color", "", flat)
		}
	})
	b.Run("targeting", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p.BooleanEvaluation(ctx, "beta", false, flat)
		}
	})
	// Errors are answers too: an application asking for a flag that is not
	// there, or with the wrong type, does so on every evaluation.
	b.Run("not-found", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p.BooleanEvaluation(ctx, "absent", false, flat)
		}
	})
	b.Run("type-mismatch", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p.StringEvaluation(ctx, "beta", "", flat)
		}
	})
	domain := "bench-provider"
	if err := openfeature.SetNamedProviderAndWait(domain, p); err != nil {
		b.Fatal(err)
	}
	client := openfeature.NewClient(domain)
	ec := openfeature.NewEvaluationContext("user-1", map[string]any{"tier": "gold"})
	b.Run("client", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = client.BooleanValue(ctx, "beta", false, ec)
		}
	})
	if err := openfeature.SetNamedProviderAndWait(domain, openfeature.NoopProvider{}); err != nil {
		b.Fatal(err)
	}
}
