package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap"
	"github.com/flagsnap/flagsnap/fractional"
	"github.com/flagsnap/flagsnap/internal/flagdtest"
)

// ofrepFlags is the number of flags of the OFREP rows, of the standard mix.
const ofrepFlags = 1000

// ofrepContext has what every kind of flag of the mix reads.
var ofrepContext = map[string]any{"targetingKey": "user-123", "tier": "premium", "role": "admin",
	"region": "us-east", "score": 85, "version": "1.2.3", "email": "user@example.com"}

// BenchmarkEvaluateAll is every flag of the 1,000-flag set for one
// context: in one bulk evaluation (bulk), and one typed evaluation per
// flag (each). ns/flag compares them; bulk allocates nothing.
func BenchmarkEvaluateAll(b *testing.B) {
	p, _ := provider(b, generate(ofrepFlags, 0), fractional.V2)
	ctx := context.Background()
	all, err := p.EvaluateAll(ctx, ofrepContext)
	if err != nil {
		b.Fatal(err)
	}
	perFlag := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(all.Flags)), "ns/flag")
	}
	b.Run("bulk", func(b *testing.B) {
		var dst flagsnap.AllFlags
		b.ReportAllocs()
		for b.Loop() {
			_ = p.EvaluateAllInto(&dst, ctx, ofrepContext)
		}
		perFlag(b)
	})
	b.Run("each", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for i := range all.Flags {
				f := &all.Flags[i]
				switch f.Value.(type) {
				case string:
					p.StringEvaluation(ctx, f.Key, "", ofrepContext)
				default:
					p.BooleanEvaluation(ctx, f.Key, false, ofrepContext)
				}
			}
		}
		perFlag(b)
	})
}

// BenchmarkOFREP is OFREP's bulk endpoint (all 1,000 flags) and single
// endpoint (one flag with targeting) over loopback HTTP, 8 connections,
// served by OFREPHandler and, when FLAGD_BIN names a flagd binary, by
// flagd's OFREP on the same file. Reported: requests per second and the
// latency percentiles of the requests.
func BenchmarkOFREP(b *testing.B) {
	doc := generate(ofrepFlags, 0)
	p, _ := provider(b, doc, fractional.V2)
	srv := httptest.NewServer(flagsnap.OFREPHandler(p))
	defer srv.Close()
	key := targetedFlag(b, p)
	body, err := json.Marshal(map[string]any{"context": ofrepContext})
	if err != nil {
		b.Fatal(err)
	}
	servers := []struct{ name, base string }{{"flagsnap", srv.URL}}
	if bin := os.Getenv("FLAGD_BIN"); bin != "" {
		servers = append(servers, struct{ name, base string }{"flagd", startFlagdOFREP(b, bin, doc)})
	}
	for _, s := range servers {
		b.Run("bulk/"+s.name, func(b *testing.B) { load(b, s.base+"/ofrep/v1/evaluate/flags", body, 8) })
		b.Run("single/"+s.name, func(b *testing.B) { load(b, s.base+"/ofrep/v1/evaluate/flags/"+key, body, 8) })
	}
}

// targetedFlag is the first flag, in key order, that the context matches
// by a rule: the single endpoint's row evaluates targeting.
func targetedFlag(b *testing.B, p *flagsnap.Provider) string {
	all, err := p.EvaluateAll(context.Background(), ofrepContext)
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range all.Flags {
		if f.Reason == openfeature.TargetingMatchReason {
			return f.Key
		}
	}
	b.Fatal("no flag of the set matches the context by a rule")
	return ""
}

// load posts body to url b.N times from conns connections at once, and
// reports requests per second, the 50th and 99th percentile latencies and
// the size of an answer.
func load(b *testing.B, url string, body []byte, conns int) {
	tr := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	post := func() (int, error) {
		resp, err := client.Post(url, "application/json", bytes.NewReader(body))
		if err != nil {
			return 0, err
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("%s answered %s", url, resp.Status)
		}
		return int(n), err
	}
	size, err := post()
	if err != nil {
		b.Fatal(err)
	}
	latencies := make([]time.Duration, b.N)
	var next atomic.Int64
	var failed atomic.Pointer[error]
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(b.N); i = next.Add(1) - 1 {
				t0 := time.Now()
				if _, err := post(); err != nil {
					failed.Store(&err)
					return
				}
				latencies[i] = time.Since(t0)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err := failed.Load(); err != nil {
		b.Fatal(*err)
	}
	slices.Sort(latencies)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
	b.ReportMetric(ms(latencies[len(latencies)/2]), "p50-ms")
	b.ReportMetric(ms(latencies[len(latencies)*99/100]), "p99-ms")
	b.ReportMetric(float64(size), "B/answer")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// startFlagdOFREP runs flagd on doc until the benchmark ends and returns
// its OFREP base URL once it answers.
func startFlagdOFREP(b *testing.B, bin string, doc []byte) string {
	path := filepath.Join(b.TempDir(), "flags.json")
	if err := os.WriteFile(path, doc, 0o644); err != nil {
		b.Fatal(err)
	}
	d := flagdtest.Start(b, bin, "", "-f", "file:"+path)
	// flagd's OFREP answers before flagd has read the file: wait for an
	// answer that lists flags.
	d.WaitUntil(b, 30*time.Second, func() bool {
		resp, err := http.Post(d.OFREPURL()+"/ofrep/v1/evaluate/flags", "application/json", strings.NewReader(`{"context":{}}`))
		if err != nil {
			return false
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK && bytes.Contains(answer, []byte(`"key"`))
	})
	return d.OFREPURL()
}

// BenchmarkOFREPEvents is the time from a change of a flag file to each
// of 1,000 open event streams having its refetchEvaluation event: the
// file source noticing the change, loading 1,000 flags, and the event
// written to every stream. Reported: the 50th and 99th percentiles over
// every stream of every change.
func BenchmarkOFREPEvents(b *testing.B) {
	const streams = 1000
	path := filepath.Join(b.TempDir(), "flags.json")
	docs := [][]byte{generate(ofrepFlags, 0), generate(ofrepFlags, 1)}
	if err := os.WriteFile(path, docs[0], 0o644); err != nil {
		b.Fatal(err)
	}
	p, err := flagsnap.NewProvider(flagsnap.WithoutEnv(), flagsnap.WithFile(path), flagsnap.WithDeadline(time.Minute))
	if err != nil {
		b.Fatal(err)
	}
	if err := p.Init(openfeature.EvaluationContext{}); err != nil {
		b.Fatal(err)
	}
	defer p.Shutdown()
	srv := httptest.NewServer(flagsnap.OFREPHandler(p))
	defer srv.Close()
	tr := &http.Transport{MaxIdleConnsPerHost: streams}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	got := make(chan time.Time, streams)
	for range streams {
		resp, err := client.Get(srv.URL + "/ofrep/v1/events")
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		go func() {
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				if strings.HasPrefix(sc.Text(), "data: ") {
					got <- time.Now()
				}
			}
		}()
	}
	var latencies []time.Duration
	b.ResetTimer()
	for i := range b.N {
		changed := time.Now()
		if err := os.WriteFile(path, docs[(i+1)%2], 0o644); err != nil {
			b.Fatal(err)
		}
		timeout := time.After(30 * time.Second)
		for range streams {
			select {
			case at := <-got:
				latencies = append(latencies, at.Sub(changed))
			case <-timeout:
				b.Fatalf("change %d: %d of %d streams had their event within 30s", i, len(latencies)%streams, streams)
			}
		}
	}
	b.StopTimer()
	slices.Sort(latencies)
	b.ReportMetric(ms(latencies[len(latencies)/2]), "p50-ms")
	b.ReportMetric(ms(latencies[len(latencies)*99/100]), "p99-ms")
}
