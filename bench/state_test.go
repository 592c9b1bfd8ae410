package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap"
	"github.com/flagsnap/flagsnap/evaluator"
	"github.com/flagsnap/flagsnap/fractional"
	"github.com/flagsnap/flagsnap/source"
)

// hugeEnv enables the rows with a million flags, which need minutes and
// gigabytes.
const hugeEnv = "FLAGSNAP_BENCH_HUGE"

// BenchmarkUpdate is the S rows: a flag set delivered to a running
// provider, from the source to the new flags in force (parse, compile,
// change detection, swap).
func BenchmarkUpdate(b *testing.B) {
	sizes := []struct {
		id string
		n  int
	}{
		{"S1_5", 5}, {"S2_50", 50}, {"S3_200", 200}, {"S6_1000", 1000},
		{"S7_10000", 10_000}, {"S8_100000", 100_000}, {"S9_1000000", 1_000_000},
	}
	for _, s := range sizes {
		b.Run(s.id, func(b *testing.B) {
			if s.n > 100_000 && os.Getenv(hugeEnv) == "" {
				b.Skipf("set %s=1 to load a million flags", hugeEnv)
			}
			// Two documents that differ in one flag, so that every
			// delivery is a real change.
			docs := [2][]byte{generate(s.n, 0), generate(s.n, 1)}
			_, sink := provider(b, docs[1], fractional.V2)
			b.ReportAllocs()
			b.SetBytes(int64(len(docs[0])))
			i := 0
			for b.Loop() {
				sink.Update(source.Update{Flags: docs[i%2], Origin: "bench"})
				i++
			}
		})
	}
	// S4: the same document again, as a poll or a reconnect delivers it.
	b.Run("S4_unchanged_1000", func(b *testing.B) {
		doc := generate(1000, 0)
		_, sink := provider(b, doc, fractional.V2)
		b.ReportAllocs()
		for b.Loop() {
			sink.Update(source.Update{Flags: doc, Origin: "bench"})
		}
	})
	// S5 and S10: one flag of 1,000 and of 10,000 changed. Every S row
	// but S4 is such an update; these say so in their names.
	for _, s := range []struct {
		id string
		n  int
	}{{"S5_one_changed_in_1000", 1000}, {"S10_one_changed_in_10000", 10_000}} {
		b.Run(s.id, func(b *testing.B) {
			docs := [2][]byte{generate(s.n, 0), generate(s.n, 1)}
			_, sink := provider(b, docs[1], fractional.V2)
			b.ReportAllocs()
			b.SetBytes(int64(len(docs[0])))
			i := 0
			for b.Loop() {
				sink.Update(source.Update{Flags: docs[i%2], Origin: "bench"})
				i++
			}
		})
	}
	// S11 is the yardstick of S10: reading the same document, a file at
	// rest, and checking that it is JSON, the least any reader does.
	b.Run("S11_read_10000", func(b *testing.B) {
		path := filepath.Join(b.TempDir(), "flags.json")
		if err := os.WriteFile(path, generate(10_000, 0), 0o644); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			doc, err := os.ReadFile(path)
			if err != nil || !json.Valid(doc) {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(doc)))
		}
	})
}

// BenchmarkLoad is evaluator.Load alone for the same sizes, the part of an
// update that does not depend on the provider. From 100,000 flags on, it
// also reports the heap the flag set holds after garbage collection
// (steady-MiB) and the most the heap held during the load (peak-MiB), both
// less the document and what was there before.
func BenchmarkLoad(b *testing.B) {
	for _, n := range []int{5, 1000, 10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			if n > 100_000 && os.Getenv(hugeEnv) == "" {
				b.Skipf("set %s=1 to load a million flags", hugeEnv)
			}
			doc := generate(n, 0)
			b.ReportAllocs()
			b.SetBytes(int64(len(doc)))
			if n < 100_000 {
				for b.Loop() {
					if _, err := evaluator.Load(doc); err != nil {
						b.Fatal(err)
					}
				}
				return
			}
			steady := loadWithHeap(b, func() func() {
				set, err := evaluator.Load(doc)
				if err != nil {
					b.Fatal(err)
				}
				return func() { runtime.KeepAlive(set) }
			})
			b.ReportMetric(float64(steady)/float64(n), "steady-B/flag")
		})
	}
}

// BenchmarkHeap is the M rows: the heap a loaded flag set holds, after
// garbage collection, reported per flag.
func BenchmarkHeap(b *testing.B) {
	for _, m := range []struct {
		id string
		n  int
	}{{"M1_1000", 1000}, {"M2_10000", 10_000}, {"M3_100000", 100_000}, {"M4_1000000", 1_000_000}} {
		b.Run(m.id, func(b *testing.B) {
			if m.n > 100_000 && os.Getenv(hugeEnv) == "" {
				b.Skipf("set %s=1 to load a million flags", hugeEnv)
			}
			doc := generate(m.n, 0)
			var perFlag float64
			for b.Loop() {
				before := heapInUse()
				set, err := evaluator.Load(doc)
				if err != nil {
					b.Fatal(err)
				}
				after := heapInUse()
				runtime.KeepAlive(set)
				perFlag = float64(after-before) / float64(m.n)
			}
			b.ReportMetric(perFlag, "B/flag")
			b.ReportMetric(perFlag*float64(m.n)/(1<<20), "MiB")
		})
	}
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// smallFile is a five-flag file, as a service or a test starts with.
const smallFile = `{"flags": {
  "a": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "on"},
  "b": {"state": "ENABLED", "variants": {"x": "x", "y": "y"}, "defaultVariant": "x",
    "targeting": {"if": [{"==": [{"var": "tier"}, "premium"]}, "y"]}},
  "c": {"state": "ENABLED", "variants": {"one": 1, "two": 2}, "defaultVariant": "one"},
  "d": {"state": "DISABLED", "variants": {"on": true}, "defaultVariant": "on"},
  "e": {"state": "ENABLED", "variants": {"a": "a", "b": "b"}, "defaultVariant": "a",
    "targeting": {"fractional": [{"var": "targetingKey"}, ["a", 50], ["b", 50]]}}
}}`

// BenchmarkInitFile is a provider reading a small file that nobody is
// writing to: construction, Init until the flags are in force and one
// evaluation. Shutdown is not timed: closing the file watcher waits for
// the kernel to release the inotify instance, about 15ms on Linux.
func BenchmarkInitFile(b *testing.B) {
	path := filepath.Join(b.TempDir(), "flags.json")
	if err := os.WriteFile(path, []byte(smallFile), 0o644); err != nil {
		b.Fatal(err)
	}
	written := time.Now().Add(-time.Minute)
	if err := os.Chtimes(path, written, written); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		p, err := flagsnap.NewProvider(flagsnap.WithFile(path))
		if err != nil {
			b.Fatal(err)
		}
		if err := p.Init(openfeature.EvaluationContext{}); err != nil {
			b.Fatal(err)
		}
		p.BooleanEvaluation(ctx, "a", false, nil)
		b.StopTimer()
		p.Shutdown()
		b.StartTimer()
	}
}

// BenchmarkReplace is a provider whose whole flag set is replaced by
// another of as many flags, none of which it can take from the set in
// force: the heap held with one set in force (held-MiB), and while the
// other replaces it the most that the collector found reachable
// (live-MiB) and the heap's peak with the garbage of the load not yet
// collected (peak-MiB), all above the heap before the provider. The
// replacement runs with GOGC=5, for collections often enough to see the
// most reachable heap; its time is not a load's. sets is
// live over held: the set in force and the one being loaded, 2 at most;
// a third copy would take it towards 3.
func BenchmarkReplace(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			if n > 100_000 && os.Getenv(hugeEnv) == "" {
				b.Skipf("set %s=1 to replace a million flags", hugeEnv)
			}
			first := generate(n, 0)
			// Other keys: every flag is new, and compiled.
			docs := [2][]byte{first, bytes.ReplaceAll(first, []byte(`"flag_`), []byte(`"next_`))}
			var held, peak, live uint64
			i := 0
			for b.Loop() {
				b.StopTimer()
				base := heapInUse()
				_, sink := provider(b, docs[i%2], fractional.V2)
				held = heapInUse() - base
				// Frequent collections, so that one sees the heap near
				// its most reachable: the swap, with both sets built.
				gc := debug.SetGCPercent(5)
				watch := startPeakWatch()
				b.StartTimer()
				if err := sink.Update(source.Update{Flags: docs[(i+1)%2], Origin: "bench"}); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				peak = watch.stop() - base
				debug.SetGCPercent(gc)
				live = watch.live - base
				i++
				b.StartTimer()
			}
			b.ReportMetric(float64(held)/(1<<20), "held-MiB")
			b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
			b.ReportMetric(float64(live)/(1<<20), "live-MiB")
			b.ReportMetric(float64(live)/float64(held), "sets")
		})
	}
}
