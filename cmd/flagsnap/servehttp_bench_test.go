package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap"
	"github.com/flagsnap/flagsnap/bench/flaggen"
)

// fleetEnv runs BenchmarkServeFleet, which takes about a minute and a
// thousand connections.
const fleetEnv = "FLAGSNAP_BENCH_FLEET"

// BenchmarkServeFleet is a fleet of 1,000 providers polling one
// flagsnap serve --http every second, as the pods of a deployment would,
// for a 50-flag set. serve runs as a process of its own, so that its CPU
// is its own; the providers share this process and the machine's cores
// with it. Reported:
//   - while nothing changes (every poll answered 304), serve's CPU per
//     poll and the response time a provider saw, p50 and p99, over a 10s
//     window;
//   - from an edit of the served file to each provider serving it, p50,
//     p99 and the last.
func BenchmarkServeFleet(b *testing.B) {
	if os.Getenv(fleetEnv) == "" {
		b.Skipf("set %s=1 to run 1,000 providers against flagsnap serve for about a minute", fleetEnv)
	}
	const fleet = 1000
	bin := binary(b)
	path := filepath.Join(b.TempDir(), "flags.json")
	if err := os.WriteFile(path, flaggen.Generate(50, 0), 0o600); err != nil {
		b.Fatal(err)
	}
	serve, url := startServeProcess(b, bin, path)
	for b.Loop() {
		rt := &timedTransport{next: http.DefaultTransport.(*http.Transport).Clone()}
		rt.next.MaxIdleConnsPerHost = fleet
		changed := make([]atomic.Int64, fleet)
		done := make(chan struct{})
		providers := startFleet(b, url, rt, changed, done)

		time.Sleep(3 * time.Second) // every provider past its random first wait
		rt.reset()
		cpu0 := processCPU(b, serve.Process.Pid)
		time.Sleep(10 * time.Second)
		cpu := processCPU(b, serve.Process.Pid) - cpu0
		polls, p50, p99 := rt.summary()
		b.ReportMetric(float64(cpu.Microseconds())/float64(polls), "serve-cpu-µs/poll")
		b.ReportMetric(float64(polls)/10, "polls/s")
		b.ReportMetric(p50.Seconds()*1000, "p50-ms")
		b.ReportMetric(p99.Seconds()*1000, "p99-ms")

		edit := time.Now()
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, flaggen.Generate(50, 1), 0o600); err != nil {
			b.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			b.Fatal(err)
		}
		delays := awaitFleet(b, edit, changed)
		b.ReportMetric(delays[len(delays)/2].Seconds()*1000, "edit-p50-ms")
		b.ReportMetric(delays[len(delays)*99/100].Seconds()*1000, "edit-p99-ms")
		b.ReportMetric(delays[len(delays)-1].Seconds()*1000, "edit-max-ms")
		close(done)
		for _, p := range providers {
			p.Shutdown()
		}
		rt.next.CloseIdleConnections()
	}
}

// startServeProcess runs flagsnap serve on path with --http, and returns
// the process and the address of its flags.
func startServeProcess(b *testing.B, bin, path string) (*exec.Cmd, string) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "serve", path, "--addr", "127.0.0.1:0", "--http", addr)
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	url := "http://" + addr + "/flags.json"
	deadline := time.Now().Add(wait)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			return cmd, url
		}
		if time.Now().After(deadline) {
			b.Fatalf("flagsnap serve did not answer on %s: %v", url, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startFleet starts a provider for each of changed, polling url every
// second through rt; each records in its entry of changed when it was
// told of a change, until done is closed.
func startFleet(b *testing.B, url string, rt http.RoundTripper, changed []atomic.Int64, done <-chan struct{}) []*flagsnap.Provider {
	providers := make([]*flagsnap.Provider, len(changed))
	for i := range providers {
		p, err := flagsnap.NewProvider(flagsnap.WithoutEnv(), flagsnap.WithURL(url), flagsnap.WithPollInterval(time.Second),
			flagsnap.WithHTTPClient(&http.Client{Transport: rt}), flagsnap.WithDeadline(wait), flagsnap.WithoutUsage())
		if err != nil {
			b.Fatal(err)
		}
		if err := p.Init(openfeature.EvaluationContext{}); err != nil {
			b.Fatal(err)
		}
		go func() {
			for {
				select {
				case ev := <-p.EventChannel():
					if ev.EventType == openfeature.ProviderConfigChange {
						changed[i].CompareAndSwap(0, time.Now().UnixNano())
					}
				case <-done:
					return
				}
			}
		}()
		providers[i] = p
	}
	return providers
}

// awaitFleet waits until every provider was told of the change made at
// edit, and returns how long each took, sorted.
func awaitFleet(b *testing.B, edit time.Time, changed []atomic.Int64) []time.Duration {
	deadline := time.Now().Add(30 * time.Second)
	for {
		delays := make([]time.Duration, 0, len(changed))
		for i := range changed {
			if at := changed[i].Load(); at != 0 {
				delays = append(delays, time.Unix(0, at).Sub(edit))
			}
		}
		if len(delays) == len(changed) {
			slices.Sort(delays)
			return delays
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d providers serve the edit after 30s", len(delays), len(changed))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// timedTransport records how long each round trip took.
type timedTransport struct {
	next *http.Transport
	mu   sync.Mutex
	took []time.Duration
}

func (t *timedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := t.next.RoundTrip(r)
	d := time.Since(start)
	t.mu.Lock()
	t.took = append(t.took, d)
	t.mu.Unlock()
	return resp, err
}

func (t *timedTransport) reset() {
	t.mu.Lock()
	t.took = t.took[:0]
	t.mu.Unlock()
}

// summary is the round trips since the reset: how many, p50 and p99.
func (t *timedTransport) summary() (int, time.Duration, time.Duration) {
	t.mu.Lock()
	took := slices.Clone(t.took)
	t.mu.Unlock()
	if len(took) == 0 {
		return 0, 0, 0
	}
	slices.Sort(took)
	return len(took), took[len(took)/2], took[len(took)*99/100]
}

// processCPU is the CPU time the process pid has used, user and system,
// from /proc (Linux), in clock ticks of 10ms.
func processCPU(b *testing.B, pid int) time.Duration {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Skipf("no /proc to read serve's CPU time from: %v", err)
	}
	// The command name, field 2, may hold spaces; fields 14 and 15 (utime,
	// stime) count from after its closing parenthesis.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
