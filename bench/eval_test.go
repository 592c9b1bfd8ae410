package bench

import (
	"context"
	"github.com/flagsnap/flagsnap/bench/flaggen"
	"testing"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap"
	"github.com/flagsnap/flagsnap/fractional"
)

// row is one evaluation of the matrix.
type row struct {
	id   string
	flag string
	ctx  openfeature.FlattenedContext
	str  bool // a string flag; the others are boolean
}

var evalRows = []row{
	{"E1_static_empty", "static", flaggen.EmptyContext, false},
	{"E2_static_small", "static", flaggen.SmallContext, false},
	{"E3_static_large", "static", flaggen.LargeContext, false},
	{"E4_simple_small", "simple", flaggen.SmallContext, false},
	{"E5_simple_large", "simple", flaggen.LargeContext, false},
	{"E6_complex_small", "complex", flaggen.SmallContext, true},
	{"E7_complex_large", "complex", flaggen.LargeContext, true},
	{"E8_match", "role", flaggen.SmallContext, true},
	{"E9_no_match", "role", flaggen.NoMatchContext, true},
	{"E10_disabled", "disabled", flaggen.EmptyContext, false},
	{"E11_missing", "missing", flaggen.EmptyContext, false},
}

var opRows = []row{
	{"O1_fractional2", "frac2", flaggen.FractionalContext, true},
	{"O2_fractional8", "frac8", flaggen.FractionalContext, true},
	{"O1s_fractional2_string", "frac2s", flaggen.FractionalContext, true},
	{"O2s_fractional8_string", "frac8s", flaggen.FractionalContext, true},
	{"O3_semver_eq", "semverEq", flaggen.SemverEqContext, false},
	{"O4_semver_range", "semverRange", flaggen.SemverRangeContext, false},
	{"O5_starts_with", "startsWith", flaggen.StartsWithContext, false},
	{"O6_ends_with", "endsWith", flaggen.EndsWithContext, false},
}

var fractionalRows = map[string]bool{"frac2": true, "frac8": true, "frac2s": true, "frac8s": true}

func run(b *testing.B, p resolver, r row) {
	ctx := context.Background()
	b.ReportAllocs()
	if r.str {
		for b.Loop() {
			p.StringEvaluation(ctx, r.flag, "", r.ctx)
		}
		return
	}
	for b.Loop() {
		p.BooleanEvaluation(ctx, r.flag, false, r.ctx)
	}
}

// BenchmarkProviderNoAlloc is every E and O row at the provider's methods,
// as OpenFeature calls them. None may allocate. The fractional rows run in
// each bucketing version.
func BenchmarkProviderNoAlloc(b *testing.B) { providerRows(b) }

// providerRows runs the rows of BenchmarkProviderNoAlloc on providers
// built with opts.
func providerRows(b *testing.B, opts ...flagsnap.Option) {
	p, _ := provider(b, []byte(evalFlags), fractional.V2, opts...)
	for _, r := range evalRows {
		b.Run(r.id, func(b *testing.B) { run(b, p, r) })
	}
	for _, v := range []fractional.Version{fractional.V1, fractional.V2, fractional.V3} {
		pv, _ := provider(b, []byte(evalFlags), v, opts...)
		for _, r := range opRows {
			if !fractionalRows[r.flag] && v != fractional.V2 {
				continue
			}
			name := r.id
			if fractionalRows[r.flag] {
				name += "_" + v.String()
			}
			b.Run(name, func(b *testing.B) { run(b, pv, r) })
		}
	}
}

// BenchmarkFloor is the same rows on the floor provider.
func BenchmarkFloor(b *testing.B) {
	f := newFloor()
	for _, r := range append(append([]row{}, evalRows...), opRows...) {
		b.Run(r.id, func(b *testing.B) { run(b, f, r) })
	}
}

// BenchmarkClient is the rows through an OpenFeature client, for flagsnap
// and for the floor provider behind the same client: the difference is
// what flagsnap adds to OpenFeature's own work. The two run row by row,
// one after the other, so that the heap and the machine's state, which
// change over a run and weigh on OpenFeature's allocations, are alike for
// both.
func BenchmarkClient(b *testing.B) {
	p, _ := provider(b, []byte(evalFlags), fractional.V2)
	type side struct {
		name   string
		client *openfeature.Client
	}
	var sides []side
	for _, pr := range []struct {
		name string
		p    openfeature.FeatureProvider
	}{{"flagsnap", p}, {"floor", newFloor()}} {
		domain := "bench-" + pr.name
		if err := openfeature.SetNamedProviderAndWait(domain, pr.p); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			if err := openfeature.SetNamedProviderAndWait(domain, openfeature.NoopProvider{}); err != nil {
				b.Error(err)
			}
		})
		sides = append(sides, side{pr.name, openfeature.NewClient(domain)})
	}
	ctx := context.Background()
	for _, r := range append(append([]row{}, evalRows...), opRows...) {
		ec := toEvalCtx(r.ctx)
		for _, sd := range sides {
			client := sd.client
			b.Run(sd.name+"/"+r.id, func(b *testing.B) {
				b.ReportAllocs()
				if r.str {
					for b.Loop() {
						_, _ = client.StringValueDetails(ctx, r.flag, "", ec)
					}
					return
				}
				for b.Loop() {
					_, _ = client.BooleanValueDetails(ctx, r.flag, false, ec)
				}
			})
		}
	}
}
