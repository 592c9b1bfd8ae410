package bench

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap"
)

// BenchmarkHTTPLoad is a flag set fetched over HTTP on loopback, from
// construction to READY, with default options but the deadline. Reported,
// as for BenchmarkGRPCLoad: time, the heap held once the provider is
// ready (after GC) and the peak heap during the load, both less what the
// server holds.
func BenchmarkHTTPLoad(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("H%d", n), func(b *testing.B) {
			doc := generate(n, 0)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("ETag", `"bench"`)
				w.Write(doc)
			}))
			defer srv.Close()
			loadWithHeap(b, func() func() {
				p, err := flagsnap.NewProvider(flagsnap.WithoutEnv(), flagsnap.WithURL(srv.URL), flagsnap.WithDeadline(time.Minute))
				if err != nil {
					b.Fatal(err)
				}
				if err := p.Init(openfeature.EvaluationContext{}); err != nil {
					b.Fatal(err)
				}
				return p.Shutdown
			})
			b.ReportMetric(float64(len(doc))/(1<<20), "doc-MiB")
		})
	}
}
