package bench

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/flagsnap/flagsnap"
	"github.com/flagsnap/flagsnap/fractional"
	"github.com/flagsnap/flagsnap/source"
)

// BenchmarkParallel is the C rows: evaluations from every GOMAXPROCS
// goroutine at once (run with -cpu 1,2 to compare one goroutine with two),
// with and without a flag set replaced continuously meanwhile.
func BenchmarkParallel(b *testing.B) { parallelRows(b) }

// parallelRows runs the rows of BenchmarkParallel on providers built
// with opts.
func parallelRows(b *testing.B, opts ...flagsnap.Option) {
	rows := []struct {
		id      string
		r       row
		updates bool
	}{
		{"C1_static", evalRows[1], false},
		{"C2_targeting", evalRows[5], false},
		{"C3_static_during_updates", evalRows[1], true},
		{"C4_targeting_during_updates", evalRows[5], true},
	}
	for _, c := range rows {
		b.Run(c.id, func(b *testing.B) {
			p, sink := provider(b, []byte(evalFlags), fractional.V2, opts...)
			if c.updates {
				stop := make(chan struct{})
				done := make(chan struct{})
				// A flag set that changes one flag, swapped in again and
				// again for as long as the benchmark runs.
				docs := [2][]byte{[]byte(evalFlags), []byte(changedEvalFlags)}
				go func() {
					defer close(done)
					for i := 0; ; i++ {
						select {
						case <-stop:
							return
						default:
						}
						sink.Update(source.Update{Flags: docs[i%2], Origin: "bench"})
						time.Sleep(100 * time.Microsecond)
					}
				}()
				b.Cleanup(func() { close(stop); <-done })
			}
			ctx := context.Background()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if c.r.str {
						p.StringEvaluation(ctx, c.r.flag, "", c.r.ctx)
					} else {
						p.BooleanEvaluation(ctx, c.r.flag, false, c.r.ctx)
					}
				}
			})
		})
	}
}

// BenchmarkHotFlagScaling is one flag evaluated by one goroutine and by
// two at once (GOMAXPROCS 2), by turns in bursts, with usage counting on
// (H1) and off (H2): a machine whose speed drifts moves both alike, as in
// BenchmarkUsageCost. Reported: nanoseconds per evaluation on one core
// and on two, and the scaling (the first over the second).
func BenchmarkHotFlagScaling(b *testing.B) {
	for _, c := range []struct {
		id   string
		opts []flagsnap.Option
	}{{"H1_counting", nil}, {"H2_without_counting", []flagsnap.Option{flagsnap.WithoutUsage()}}} {
		b.Run(c.id, func(b *testing.B) {
			p, _ := provider(b, []byte(evalFlags), fractional.V2, c.opts...)
			r := evalRows[1]
			const burst = 200_000
			burstOf := func(goroutines int) time.Duration {
				var wg sync.WaitGroup
				start := time.Now()
				for range goroutines {
					wg.Go(func() { evaluate(p, r, burst/goroutines) })
				}
				wg.Wait()
				return time.Since(start)
			}
			burstOf(2) // the flag is hot from now on, as in a service
			var one, two time.Duration
			for b.Loop() {
				one += burstOf(1)
				two += burstOf(2)
			}
			evals := float64(b.N * burst)
			b.ReportMetric(float64(one.Nanoseconds())/evals, "1core-ns/eval")
			b.ReportMetric(float64(two.Nanoseconds())/evals, "2cores-ns/eval")
			b.ReportMetric(float64(one)/float64(two), "scaling")
		})
	}
}
