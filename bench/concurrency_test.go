package bench

import (
	"context"
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
