package bench

import (
	"context"
	"fmt"
	"testing"

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

// BenchmarkUsage is what a snapshot and a reset cost, for the standard
// mix of flags, every one of them evaluated.
func BenchmarkUsage(b *testing.B) {
	for _, n := range []int{100, 1000, 10_000} {
		p, _ := provider(b, generate(n, 0), fractional.V2)
		ctx := context.Background()
		for i := range n {
			p.BooleanEvaluation(ctx, fmt.Sprintf("flag_%d", i), false, smallCtx)
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
