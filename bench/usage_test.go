package bench

import (
	"context"
	"fmt"
	"github.com/flagsnap/flagsnap/bench/flaggen"
	"testing"
	"time"

	"github.com/flagsnap/flagsnap"
	"github.com/flagsnap/flagsnap/fractional"
)

// Counting evaluations (Provider.Usage) is on by default, and so in
// BenchmarkProviderNoAlloc and BenchmarkParallel. The same rows without it
// give what it costs:
//
//	go test -run '^$' -bench 'ProviderNoAlloc|Parallel' -cpu 1,2,4 ./bench/

// BenchmarkProviderNoAllocWithoutUsage is BenchmarkProviderNoAlloc with
// WithoutUsage.
func BenchmarkProviderNoAllocWithoutUsage(b *testing.B) { providerRows(b, flagsnap.WithoutUsage()) }

// BenchmarkParallelWithoutUsage is BenchmarkParallel with WithoutUsage.
func BenchmarkParallelWithoutUsage(b *testing.B) { parallelRows(b, flagsnap.WithoutUsage()) }

// BenchmarkUsageCost is what counting adds to an evaluation, measured in
// one run as the difference between two providers, one counting and one
// WithoutUsage, evaluated by turns in bursts of a thousand: a machine
// whose speed drifts from run to run (a shared one) moves both alike.
// It reports ns per evaluation with counting (on), without (off) and the
// difference (added).
func BenchmarkUsageCost(b *testing.B) {
	on, _ := provider(b, []byte(evalFlags), fractional.V2)
	off, _ := provider(b, []byte(evalFlags), fractional.V2, flagsnap.WithoutUsage())
	for _, r := range append(append([]row{}, evalRows...), opRows...) {
		b.Run(r.id, func(b *testing.B) {
			const burst = 1000
			var spent [2]time.Duration
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				for k := range 2 {
					p := [2]resolver{on, off}[(i+k)%2]
					start := time.Now()
					evaluate(p, r, burst)
					spent[(i+k)%2] += time.Since(start)
				}
				i++
			}
			evals := float64(i * burst)
			b.ReportMetric(float64(spent[0].Nanoseconds())/evals, "on-ns/eval")
			b.ReportMetric(float64(spent[1].Nanoseconds())/evals, "off-ns/eval")
			b.ReportMetric(float64((spent[0]-spent[1]).Nanoseconds())/evals, "added-ns/eval")
		})
	}
}

// evaluate evaluates r's flag n times.
func evaluate(p resolver, r row, n int) {
	ctx := context.Background()
	if r.str {
		for range n {
			p.StringEvaluation(ctx, r.flag, "", r.ctx)
		}
		return
	}
	for range n {
		p.BooleanEvaluation(ctx, r.flag, false, r.ctx)
	}
}

// BenchmarkUsage is what a snapshot and a reset cost, for the standard
// mix of flags, every one of them evaluated.
func BenchmarkUsage(b *testing.B) {
	for _, n := range []int{100, 1000, 10_000} {
		p, _ := provider(b, generate(n, 0), fractional.V2)
		ctx := context.Background()
		for i := range n {
			p.BooleanEvaluation(ctx, fmt.Sprintf("flag_%d", i), false, flaggen.SmallContext)
		}
		b.Run(fmt.Sprintf("snapshot_%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p.Usage()
			}
		})
		b.Run(fmt.Sprintf("reset_%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p.ResetUsage()
			}
		})
	}
}
