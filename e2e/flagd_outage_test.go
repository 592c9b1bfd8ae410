package e2e

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap"
	"github.com/flagsnap/flagsnap/internal/blackhole"
	"github.com/flagsnap/flagsnap/internal/flagdtest"
	"github.com/flagsnap/flagsnap/internal/logtest"
	"github.com/flagsnap/flagsnap/syncserver"
)

// hugeEnv asks for the cases with a million flags, which need minutes and
// several GB of memory.
const hugeEnv = "FLAGSNAP_TEST_HUGE"

// manyFlags is a flag document of n flags, every tenth with a rule.
func manyFlags(n int) []byte {
	var b bytes.Buffer
	b.Grow(n * 150)
	b.WriteString(`{"flags":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		if i%10 == 0 {
			fmt.Fprintf(&b, `"flag-%07d":{"state":"ENABLED","variants":{"on":true,"off":false},"defaultVariant":"off","targeting":{"if":[{"ends_with":[{"var":"email"},"@example.com"]},"on",null]}}`, i)
			continue
		}
		fmt.Fprintf(&b, `"flag-%07d":{"state":"ENABLED","variants":{"on":true,"off":false},"defaultVariant":"on"}`, i)
	}
	b.WriteString(`}}`)
	return b.Bytes()
}

// newFlagd runs a flagd daemon on the flag file at path until the test
// ends, and returns it once its sync and OFREP ports answer.
func newFlagd(t *testing.T, bin, path string, args ...string) *flagdtest.Daemon {
	t.Helper()
	d := flagdtest.Start(t, bin, "", append([]string{"-f", "file:" + path}, args...)...)
	waitServing(t, d)
	return d
}

// waitServing waits until d's sync and OFREP ports answer, and returns
// when the sync port first accepted a connection: what a provider that
// follows d waits for, without the OFREP port and the polls after it.
func waitServing(t *testing.T, d *flagdtest.Daemon) (syncAccepted time.Time) {
	t.Helper()
	d.WaitUntil(t, 60*time.Second, func() bool {
		c, err := net.DialTimeout("tcp", d.SyncAddr(), time.Second)
		if err != nil {
			return false
		}
		_ = c.Close()
		if syncAccepted.IsZero() {
			syncAccepted = time.Now()
		}
		resp, err := http.Get(d.OFREPURL() + "/")
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return true
	})
	return syncAccepted
}

func flagdBin(t *testing.T) string {
	t.Helper()
	bin := os.Getenv(flagdBinEnv)
	if bin == "" {
		t.Skipf("%s is not set: no flagd daemon to run", flagdBinEnv)
	}
	return bin
}

func writeFlags(t *testing.T, doc []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "flags.json")
	if err := os.WriteFile(path, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// following is the options of a user who points a provider at a server
// and sets nothing else.
func following(port int, more ...flagsnap.Option) []flagsnap.Option {
	return append([]flagsnap.Option{flagsnap.WithoutEnv(), flagsnap.WithResolver(flagsnap.ResolverInProcess),
		flagsnap.WithHost("127.0.0.1"), flagsnap.WithPort(port)}, more...)
}

// expectEvent takes the next event within d and fails unless it is want.
func expectEvent(t *testing.T, p *flagsnap.Provider, want openfeature.EventType, d time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	select {
	case ev := <-p.EventChannel():
		if ev.EventType != want {
			t.Fatalf("got %s %q, want %s", ev.EventType, ev.Message, want)
		}
		return time.Since(start)
	case <-time.After(d):
		t.Fatalf("no %s within %v", want, d)
		return 0
	}
}

// Flag sets far past gRPC's 4 MiB default load with default options,
// through flagd and through our own server; a million flags when asked.
func TestLargeFlagSetsWithDefaults(t *testing.T) {
	sizes := []int{100_000}
	if os.Getenv(hugeEnv) != "" {
		sizes = append(sizes, 1_000_000)
	}
	for _, n := range sizes {
		doc := manyFlags(n)
		t.Run(fmt.Sprintf("syncserver/%d", n), func(t *testing.T) {
			srv, err := syncserver.New(syncserver.WithFlags(doc))
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			if err := srv.ListenTCP("127.0.0.1:0"); err != nil {
				t.Fatal(err)
			}
			loadAndCheck(t, srv.Port(), n)
		})
		t.Run(fmt.Sprintf("flagd/%d", n), func(t *testing.T) {
			f := newFlagd(t, flagdBin(t), writeFlags(t, doc))
			loadAndCheck(t, f.SyncPort, n)
		})
	}
}

func loadAndCheck(t *testing.T, port, n int) {
	t.Helper()
	start := time.Now()
	// The deadline is generous: the size limit is under test, not the
	// time, which the benchmarks measure.
	p := newDaemonProvider(t, following(port, flagsnap.WithDeadline(5*time.Minute))...)
	last := fmt.Sprintf("flag-%07d", n-1)
	if p.BooleanEvaluation(context.Background(), last, false, nil).Error() != nil {
		// flagd sends an empty set while it is still reading a large
		// file (after 5s of it); the real one follows.
		t.Logf("READY without the flags after %v: waiting for them", time.Since(start))
		select {
		case ev := <-p.EventChannel():
			if ev.EventType != openfeature.ProviderConfigChange {
				t.Fatalf("got %s %q, want the flags", ev.EventType, ev.Message)
			}
		case <-time.After(5 * time.Minute):
			t.Fatal("the flags did not come within 5 minutes")
		}
	}
	took := time.Since(start)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("%d flags in force after %v (heap %d MB)", n, took, ms.HeapAlloc>>20)
	if d := p.BooleanEvaluation(context.Background(), last, false, nil); !d.Value || d.Error() != nil {
		t.Errorf("%s: %+v", last, d.ProviderResolutionDetail)
	}
}

// A flagd whose network goes silent is STALE within 30s with default
// options, ERROR after the grace period, and READY within 5s of healing.
func TestFlagdDaemonSilentPartition(t *testing.T) {
	bin := flagdBin(t)
	t.Parallel()
	f := newFlagd(t, bin, writeFlags(t, manyFlags(10)))
	proxy, err := blackhole.New(f.SyncAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	p := newDaemonProvider(t, following(proxy.Port())...)

	proxy.Blackhole()
	stale := expectEvent(t, p, openfeature.ProviderStale, 30*time.Second)
	grace := expectEvent(t, p, openfeature.ProviderError, 15*time.Second)
	if d := p.BooleanEvaluation(context.Background(), "flag-0000001", false, nil); !d.Value {
		t.Errorf("evaluation while ERROR: %+v", d.ProviderResolutionDetail)
	}
	time.Sleep(5 * time.Second)
	proxy.Heal()
	back := expectEvent(t, p, openfeature.ProviderReady, 10*time.Second)
	t.Logf("STALE %v after the partition, ERROR %v after that, READY %v after healing", stale, grace, back)
	if back > 5*time.Second {
		t.Errorf("READY %v after healing, want within 5s", back)
	}
}

// A healthy idle connection to flagd costs no GOAWAY and no flag set sent
// again: the liveness check stays within flagd's keepalive enforcement.
func TestFlagdDaemonIdleConnection(t *testing.T) {
	bin := flagdBin(t)
	if testing.Short() {
		t.Skip("watches an idle connection for a minute")
	}
	t.Parallel()
	f := newFlagd(t, bin, writeFlags(t, manyFlags(10)))
	var logs logtest.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	p := newDaemonProvider(t, following(f.SyncPort, flagsnap.WithLogger(logger))...)
	select {
	case ev := <-p.EventChannel():
		t.Errorf("event %s %q on an idle connection", ev.EventType, ev.Message)
	case <-time.After(70 * time.Second):
	}
	if n := logs.Count(`msg="flags loaded"`); n != 1 {
		t.Errorf("the flags came %d times in a minute, want once:\n%s", n, logs.String())
	}
	if strings.Contains(logs.String(), "ended gracefully") {
		t.Errorf("flagd ended the stream on an idle connection:\n%s", logs.String())
	}
}

// flagd restarted within the 10s grace period: STALE, then READY within a
// second of flagd's sync port accepting again, and no ERROR; restarted
// later: ERROR at the grace period, READY within a second all the same.
func TestFlagdDaemonRestart(t *testing.T) {
	bin := flagdBin(t)
	for _, tc := range []struct {
		down      time.Duration
		wantError bool
	}{{time.Second, false}, {6 * time.Second, false}, {12 * time.Second, true}} {
		t.Run(tc.down.String(), func(t *testing.T) {
			t.Parallel()
			f := newFlagd(t, bin, writeFlags(t, manyFlags(10)))
			p := newDaemonProvider(t, following(f.SyncPort)...)
			f.Kill(t)
			downAt := time.Now()
			expectEvent(t, p, openfeature.ProviderStale, 5*time.Second)
			if tc.wantError {
				expectEvent(t, p, openfeature.ProviderError, 15*time.Second)
			}
			time.Sleep(tc.down - time.Since(downAt))
			f.Restart(t)
			listening := waitServing(t, f)
			// What waiting for OFREP took after the sync port accepted
			// counts too: READY may have come meanwhile.
			start := time.Now()
			back := expectEvent(t, p, openfeature.ProviderReady, 10*time.Second) + start.Sub(listening)
			t.Logf("down %v: READY %v after flagd's sync port accepted again", tc.down, back)
			if back > time.Second {
				t.Errorf("down %v: READY %v after flagd's sync port accepted again, want within 1s", tc.down, back)
			}
		})
	}
}
