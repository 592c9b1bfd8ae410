package ld

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap"
	"github.com/flagsnap/flagsnap/bench/flaggen"
)

var dir string

func TestMain(m *testing.M) {
	var err error
	dir, err = os.MkdirTemp("", "flagsnap-bench-ld-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// files holds the two documents of a size, written once per process:
// generating and translating 100,000 flags takes longer than loading them.
var files sync.Map // n → *fileSet

type fileSet struct {
	once      sync.Once
	flagd, ld string
	err       error
}

// paths returns a flagd document of the standard mix of n flags and the
// same flags in LaunchDarkly's format, both at rest: written a minute
// ago, so that flagsnap reads its file once, as it would a file deployed
// with the application, rather than waiting for a recent write to settle.
func paths(tb testing.TB, n int) (flagdPath, ldPath string) {
	tb.Helper()
	v, _ := files.LoadOrStore(n, new(fileSet))
	fs := v.(*fileSet)
	fs.once.Do(func() {
		doc, err := Document(flaggen.Flags(n, 0))
		if err != nil {
			fs.err = err
			return
		}
		fs.flagd = filepath.Join(dir, fmt.Sprintf("flagd-%d.json", n))
		fs.ld = filepath.Join(dir, fmt.Sprintf("launchdarkly-%d.json", n))
		gen := flaggen.Generate(n, 0)
		written := time.Now().Add(-time.Minute)
		for path, data := range map[string][]byte{fs.flagd: gen, fs.ld: doc} {
			if fs.err = os.WriteFile(path, data, 0o644); fs.err != nil {
				return
			}
			if fs.err = os.Chtimes(path, written, written); fs.err != nil {
				return
			}
		}
	})
	if fs.err != nil {
		tb.Fatal(fs.err)
	}
	return fs.flagd, fs.ld
}

// loadFlagsnap is flagsnap from construction to READY on a file. The
// deadline is raised from its 500ms default because Init is to wait for
// the flags however long they take, which is what is measured.
func loadFlagsnap(tb testing.TB, path string, opts ...flagsnap.Option) *flagsnap.Provider {
	p, err := flagsnap.NewProvider(append([]flagsnap.Option{flagsnap.WithFile(path), flagsnap.WithDeadline(time.Minute)}, opts...)...)
	if err != nil {
		tb.Fatal(err)
	}
	if err := p.Init(openfeature.EvaluationContext{}); err != nil {
		tb.Fatal(err)
	}
	return p
}

func loadLD(tb testing.TB, path string) map[string]Item {
	flags, err := Load(path)
	if err != nil {
		tb.Fatal(err)
	}
	return flags
}

// BenchmarkLoadVsLD loads the same flags, each engine from its own format
// at rest, until it can evaluate: flagsnap's provider reading the flagd
// file and LaunchDarkly's evaluator data read and unmarshalled as its SDK
// does. heap-B/flag is the heap that the ready result holds (the whole
// provider for flagsnap), after garbage collection, divided by the flags.
func BenchmarkLoadVsLD(b *testing.B) {
	sizes := []int{10_000, 100_000}
	b.Run("flagsnap", func(b *testing.B) {
		for _, n := range sizes {
			b.Run(fmt.Sprint(n), func(b *testing.B) {
				path, _ := paths(b, n)
				before := heapInUse()
				p := loadFlagsnap(b, path)
				after := heapInUse()
				runtime.KeepAlive(p)
				p.Shutdown()
				b.ReportAllocs()
				for b.Loop() {
					p := loadFlagsnap(b, path)
					// Shutdown waits for the kernel to release the file
					// watcher, about 15ms, which is not loading.
					b.StopTimer()
					p.Shutdown()
					b.StartTimer()
				}
				b.ReportMetric(perFlag(before, after, n), "heap-B/flag")
			})
		}
	})
	b.Run("launchdarkly", func(b *testing.B) {
		for _, n := range sizes {
			b.Run(fmt.Sprint(n), func(b *testing.B) {
				_, path := paths(b, n)
				before := heapInUse()
				flags := loadLD(b, path)
				after := heapInUse()
				runtime.KeepAlive(flags)
				if len(flags) != n {
					b.Fatalf("%d flags loaded, want %d", len(flags), n)
				}
				b.ReportAllocs()
				for b.Loop() {
					loadLD(b, path)
				}
				b.ReportMetric(perFlag(before, after, n), "heap-B/flag")
			})
		}
	})
}

// BenchmarkHeapEvaluatedVsLD is the heap held once each of 10,000 flags
// has been evaluated once, from one goroutine: flagsnap's provider with
// usage counting (on, the default) and without it, and LaunchDarkly's
// evaluator data, whose evaluations keep nothing. counting-B/flag is what
// counting adds. Run it with -cpu 2,16: GOMAXPROCS is set before the
// provider is built.
func BenchmarkHeapEvaluatedVsLD(b *testing.B) {
	const n = 10_000
	flagdPath, ldPath := paths(b, n)
	ctx := context.Background()
	evalCtx := map[string]any{"targetingKey": "user-123", "tier": "premium", "role": "admin", "region": "us-east", "version": "1.2.3"}
	evaluated := func(opts ...flagsnap.Option) float64 {
		before := heapInUse()
		p := loadFlagsnap(b, flagdPath, opts...)
		defer p.Shutdown()
		for _, f := range flaggen.Flags(n, 0) {
			// Each flag read as its type, as code reads it.
			if _, isString := f.Variants[0].Value.(string); isString {
				p.StringEvaluation(ctx, f.Key, "", evalCtx)
			} else {
				p.BooleanEvaluation(ctx, f.Key, false, evalCtx)
			}
		}
		after := heapInUse()
		runtime.KeepAlive(p)
		return perFlag(before, after, n)
	}
	var on, off, ld float64
	evaluated() // the first provider of a process also sets up what the others share
	for b.Loop() {
		on = evaluated()
		off = evaluated(flagsnap.WithoutUsage())
		before := heapInUse()
		flags := loadLD(b, ldPath)
		ld = perFlag(before, heapInUse(), n)
		runtime.KeepAlive(flags)
	}
	b.ReportMetric(on, "counting-on-B/flag")
	b.ReportMetric(off, "counting-off-B/flag")
	b.ReportMetric(on-off, "counting-B/flag")
	b.ReportMetric(ld, "ld-B/flag")
	b.ReportMetric(on/ld, "on/ld")
}

func perFlag(before, after uint64, n int) float64 {
	return (float64(after) - float64(before)) / float64(n)
}

// heapInUse is bench's heapInUse, so that heap-B/flag compares with the
// M rows of the benchmark matrix.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
