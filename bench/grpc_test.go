package bench

import (
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap"
	"github.com/flagsnap/flagsnap/syncserver"
)

// BenchmarkGRPCLoad is the G rows: a provider following a sync server on
// loopback, from construction to READY, for flag sets past gRPC's 4 MiB
// default, with default options. The server re-encodes the set as flagd
// does (about 207 bytes a flag). Reported: time, the heap held once the
// provider is ready (after GC) and the peak heap during the load, both
// less what the server holds.
func BenchmarkGRPCLoad(b *testing.B) {
	for _, g := range []struct {
		id string
		n  int
	}{{"G1_100000", 100_000}, {"G2_1000000", 1_000_000}} {
		b.Run(g.id, func(b *testing.B) {
			if g.n > 100_000 && os.Getenv(hugeEnv) == "" {
				b.Skipf("set %s=1 to load a million flags", hugeEnv)
			}
			srv, err := syncserver.New(syncserver.WithFlags(generate(g.n, 0)), syncserver.WithFlagdEncoding("bench"))
			if err != nil {
				b.Fatal(err)
			}
			defer srv.Close()
			if err := srv.ListenTCP("127.0.0.1:0"); err != nil {
				b.Fatal(err)
			}
			loadWithHeap(b, func() func() { return follow(b, srv.Port()).Shutdown })
		})
	}
}

func follow(b *testing.B, port int) *flagsnap.Provider {
	p, err := flagsnap.NewProvider(flagsnap.WithoutEnv(), flagsnap.WithResolver(flagsnap.ResolverInProcess),
		flagsnap.WithHost("127.0.0.1"), flagsnap.WithPort(port), flagsnap.WithDeadline(5*time.Minute))
	if err != nil {
		b.Fatal(err)
	}
	if err := p.Init(openfeature.EvaluationContext{}); err != nil {
		b.Fatal(err)
	}
	return p
}

// loadWithHeap times load in b's loop, and reports the heap what it made
// holds once done, after garbage collection (steady-MiB), and the most the
// heap held while it ran (peak-MiB), both above the heap before. release,
// which load returns, frees what it made, untimed. It returns the steady
// heap in bytes.
func loadWithHeap(b *testing.B, load func() (release func())) uint64 {
	var steady, peak uint64
	for b.Loop() {
		b.StopTimer()
		base := heapInUse()
		watch := startPeakWatch()
		b.StartTimer()
		release := load()
		b.StopTimer()
		peak = watch.stop() - base
		steady = heapInUse() - base
		release()
		b.StartTimer()
	}
	b.ReportMetric(float64(steady)/(1<<20), "steady-MiB")
	b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
	return steady
}

// peakWatch samples the heap every few milliseconds: the runtime keeps no
// high-water mark of its own. peak is the heap's objects, garbage not yet
// collected included; live is the most that a collection during the watch
// found reachable, which is what the code holds.
type peakWatch struct {
	done chan struct{}
	wg   sync.WaitGroup
	peak uint64
	live uint64
}

func startPeakWatch() *peakWatch {
	w := &peakWatch{done: make(chan struct{})}
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			w.peak = max(w.peak, sample[0].Value.Uint64())
			w.live = max(w.live, sample[1].Value.Uint64())
			select {
			case <-w.done:
				return
			case <-t.C:
			}
		}
	}()
	return w
}

func (w *peakWatch) stop() uint64 {
	close(w.done)
	w.wg.Wait()
	runtime.KeepAlive(w)
	return w.peak
}

// BenchmarkFollowers is the F rows: an edit on a sync server reaching
// many providers that follow it, each with its own connection, as the pods
// of a deployment do, from the edit to each provider's
// CONFIGURATION_CHANGED. The providers share this process and its two
// cores with the server, so each one's compile of the 50-flag set counts.
func BenchmarkFollowers(b *testing.B) {
	for _, n := range []int{300, 1000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			docs := [2][]byte{generate(50, 0), generate(50, 1)}
			srv, err := syncserver.New(syncserver.WithFlags(docs[0]))
			if err != nil {
				b.Fatal(err)
			}
			defer srv.Close()
			if err := srv.ListenTCP("127.0.0.1:0"); err != nil {
				b.Fatal(err)
			}
			providers := make([]*flagsnap.Provider, n)
			for i := range providers {
				providers[i] = follow(b, srv.Port())
				defer providers[i].Shutdown()
			}
			var lat []time.Duration
			i := 0
			for b.Loop() {
				i++
				at := make([]time.Time, n)
				var wg sync.WaitGroup
				for j, p := range providers {
					wg.Go(func() { at[j] = changed(b, p) })
				}
				edit := time.Now()
				srv.SetFlags(docs[i%2])
				wg.Wait()
				for _, t := range at {
					lat = append(lat, t.Sub(edit))
				}
			}
			slices.Sort(lat)
			b.ReportMetric(lat[len(lat)/2].Seconds(), "p50-s")
			b.ReportMetric(lat[len(lat)*99/100].Seconds(), "p99-s")
			b.ReportMetric(lat[len(lat)-1].Seconds(), "max-s")
		})
	}
}

// changed waits for p's next CONFIGURATION_CHANGED and returns when it
// came; the zero time if it did not.
func changed(b *testing.B, p *flagsnap.Provider) time.Time {
	select {
	case ev := <-p.EventChannel():
		if ev.EventType != openfeature.ProviderConfigChange {
			b.Errorf("got %s %q", ev.EventType, ev.Message)
		}
		return time.Now()
	case <-time.After(time.Minute):
		b.Error("no CONFIGURATION_CHANGED within a minute")
		return time.Time{}
	}
}
