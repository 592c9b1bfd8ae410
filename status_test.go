package flagsnap

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
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
