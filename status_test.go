package flagsnap

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap/source"
	"github.com/flagsnap/flagsnap/syncserver"
)

func digestOf(doc string) string {
	d := sha256.Sum256([]byte(doc))
	return hex.EncodeToString(d[:])
}

// SourceStatus follows a memory source through a rejected set, a good one,
// a loss and a recovery.
func TestSourceStatusThroughALife(t *testing.T) {
	m := source.NewMemory([]byte(flagsV1))
	p, err := NewProvider(WithSource(m), WithRetryGracePeriod(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if st := p.SourceStatus(); st.State != SourceStopped || st.Flags != 0 || st.Source != "memory" {
		t.Errorf("before Init: %+v", st)
	}
	start := time.Now()
	if err := p.Init(openfeature.EvaluationContext{}); err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown()
	st := p.SourceStatus()
	if st.State != SourceServing || st.Flags != 3 || st.Digest != digestOf(flagsV1) || st.Received != 1 || st.Applied != 1 ||
		st.Rejected != 0 || st.AppliedAt.Before(start) || st.LastError != "" {
		t.Errorf("after Init: %+v", st)
	}

	if err := m.Set([]byte(`{"flags": [`)); err == nil {
		t.Fatal("a broken document was taken")
	}
	st = p.SourceStatus()
	if st.State != SourceError || st.Flags != 3 || st.Rejected != 1 || st.Received != 2 || !strings.Contains(st.LastError, "JSON") || st.LastErrorAt.IsZero() {
		t.Errorf("after a rejected set: %+v", st)
	}
	if err := m.Set([]byte(flagsV2)); err != nil {
		t.Fatal(err)
	}
	st = p.SourceStatus()
	if st.State != SourceServing || st.Digest != digestOf(flagsV2) || st.Applied != 2 || st.Reconnects != 0 {
		t.Errorf("after a good set: %+v", st)
	}
	m.Lost(errors.New("unplugged"))
	st = p.SourceStatus()
	if st.State != SourceStale || st.LastError != "unplugged" || st.Flags != 3 {
		t.Errorf("after a loss: %+v", st)
	}
	if err := m.Restore(); err != nil {
		t.Fatal(err)
	}
	if st = p.SourceStatus(); st.State != SourceServing || st.Reconnects != 1 || st.Received != 4 || st.Applied != 3 {
		t.Errorf("after the recovery: %+v", st)
	}
	p.Shutdown()
	if st = p.SourceStatus(); st.State != SourceStopped {
		t.Errorf("after Shutdown: %+v", st)
	}
}

// A provider following a server it cannot reach is connecting, with the
// cause; the status names the server and the selector.
func TestSourceStatusOfAServer(t *testing.T) {
	s := serve(t, syncserver.WithSelectorFlags("team-a", []byte(flagsV1)))
	s.Stop()
	p, err := NewProvider(WithoutEnv(), WithResolver(ResolverInProcess), WithHost("127.0.0.1"), WithPort(s.Port()),
		WithSelector("team-a"), WithDeadline(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown()
	_ = p.Init(openfeature.EvaluationContext{})
	st := p.SourceStatus()
	if st.State != SourceConnecting || st.Source != s.Addr() || st.Selector != "team-a" || !strings.Contains(st.LastError, "connection refused") {
		t.Errorf("%+v", st)
	}
}

// SourceStatus may be called while the flags change and evaluations run.
func TestSourceStatusConcurrently(t *testing.T) {
	p, m, _ := onMemory(t)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				_ = p.SourceStatus()
				_ = color(p)
			}
		})
	}
	for i := range 50 {
		if err := m.Set([]byte([]string{flagsV1, flagsV2}[i%2])); err != nil {
			t.Error(err)
		}
	}
	close(stop)
	wg.Wait()
	if st := p.SourceStatus(); st.Applied != 51 {
		t.Errorf("%d applied, want 51", st.Applied)
	}
}

// What a readiness handler reads: the flags that are broken, whole or in
// part, and no time of a last error before there is one.
func TestSourceStatusForReadiness(t *testing.T) {
	const doc = `{"flags": {
	  "ok":      {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on"},
	  "whole":   {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "off"},
	  "partly":  {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on", "targeting": {"if": [{"ends_witth": [{"var": "email"}, "x"]}, "on", null]}},
	  "partly2": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on", "targeting": {"nope": 1}}
	}}`
	m := source.NewMemory([]byte(doc))
	p, err := NewProvider(WithSource(m), WithRetryGracePeriod(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Init(openfeature.EvaluationContext{}); err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown()
	tests := []struct {
		name          string
		doc           string // set before reading, if any
		whole, partly int
		lastErrorAt   bool
	}{
		{"loaded", "", 1, 2, false},
		{"a set that does not load keeps the counts", `{"flags": [`, 1, 2, true},
		{"a sound set", flagsV1, 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.doc != "" {
				_ = m.Set([]byte(tt.doc))
			}
			st := p.SourceStatus()
			if st.BrokenFlags != tt.whole || st.PartlyBrokenFlags != tt.partly {
				t.Errorf("broken %d, partly %d; want %d, %d", st.BrokenFlags, st.PartlyBrokenFlags, tt.whole, tt.partly)
			}
			b, err := json.Marshal(st)
			if err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf(`"brokenFlags":%d,"partlyBrokenFlags":%d,`, tt.whole, tt.partly)
			if !strings.Contains(string(b), want) || strings.Contains(string(b), `"lastErrorAt"`) != tt.lastErrorAt {
				t.Errorf("JSON %s: want %s, and lastErrorAt %v", b, want, tt.lastErrorAt)
			}
		})
	}
}

// A selector that a variable sets for a source that reads none (a file)
// filters nothing, and the status does not show it.
func TestSourceStatusShowsOnlySettingsThatApply(t *testing.T) {
	t.Setenv(EnvSourceSelector, "team-a")
	path := filepath.Join(t.TempDir(), "flags.json")
	if err := os.WriteFile(path, []byte(flagsV1), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := NewProvider(WithFile(path))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown()
	if err := p.Init(openfeature.EvaluationContext{}); err != nil {
		t.Fatal(err)
	}
	if st := p.SourceStatus(); st.Selector != "" {
		t.Errorf("a file's status shows the selector %q", st.Selector)
	}
}
