package source

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flagsnap/flagsnap/internal/logtest"
)

// waitTimeout bounds every wait; a passing wait takes milliseconds.
const waitTimeout = 5 * time.Second

// testDebounce keeps the suite fast while still leaving a writer room to
// finish a burst.
const testDebounce = 10 * time.Millisecond

// call is one call a Source made on its Sink.
type call struct {
	kind    string // "update", "lost", "fatal" or "unchanged"
	flags   string
	syncCtx map[string]any
	orig    string
	err     error
	at      time.Time
}

func (c call) String() string {
	switch {
	case c.kind == "update" && c.syncCtx != nil:
		return fmt.Sprintf("update(%q, %v)", c.flags, c.syncCtx)
	case c.kind == "update":
		return fmt.Sprintf("update(%q)", c.flags)
	}
	return fmt.Sprintf("%s(%v)", c.kind, c.err)
}

// recorder is a Sink that remembers its calls and lets a test wait for
// them. It also notices if it is ever called concurrently.
type recorder struct {
	mu     sync.Mutex
	calls  []call
	notify chan struct{} // closed and replaced on every call

	inside   atomic.Int32
	overlaps atomic.Int32
}

func newRecorder() *recorder { return &recorder{notify: make(chan struct{})} }

func (r *recorder) record(c call) {
	if r.inside.Add(1) != 1 {
		r.overlaps.Add(1)
	}
	defer r.inside.Add(-1)
	c.at = time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, c)
	close(r.notify)
	r.notify = make(chan struct{})
}

func (r *recorder) Update(u Update) error {
	r.record(call{kind: "update", flags: string(u.Flags), syncCtx: u.SyncContext, orig: u.Origin})
	return nil
}
func (r *recorder) Lost(err error)  { r.record(call{kind: "lost", err: err}) }
func (r *recorder) Fatal(err error) { r.record(call{kind: "fatal", err: err}) }
func (r *recorder) Unchanged()      { r.record(call{kind: "unchanged"}) }

func (r *recorder) snapshot() []call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// waitFor returns the calls as soon as cond holds for them, and fails the
// test if it does not within waitTimeout.
func (r *recorder) waitFor(t *testing.T, what string, cond func([]call) bool) []call {
	t.Helper()
	deadline := time.NewTimer(waitTimeout)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		calls, ch := slices.Clone(r.calls), r.notify
		r.mu.Unlock()
		if cond(calls) {
			return calls
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("timed out after %v waiting for %s; sink got %v", waitTimeout, what, calls)
		}
	}
}

// waitLatestUpdate waits until the latest call is an Update carrying flags,
// and returns it.
func (r *recorder) waitLatestUpdate(t *testing.T, flags string) call {
	t.Helper()
	calls := r.waitUpdate(t, flags)
	return calls[len(calls)-1]
}

// waitKind waits until the latest call is of kind, and returns it.
func (r *recorder) waitKind(t *testing.T, kind string) call {
	t.Helper()
	calls := r.waitFor(t, kind, func(calls []call) bool {
		n := len(calls)
		return n > 0 && calls[n-1].kind == kind
	})
	return calls[len(calls)-1]
}

// waitUpdate waits until the latest call is an Update carrying want.
func (r *recorder) waitUpdate(t *testing.T, want string) []call {
	t.Helper()
	return r.waitFor(t, fmt.Sprintf("update(%q)", want), func(calls []call) bool {
		n := len(calls)
		return n > 0 && calls[n-1].kind == "update" && calls[n-1].flags == want
	})
}

// waitLost waits until the latest call is a Lost.
func (r *recorder) waitLost(t *testing.T) error {
	t.Helper()
	return r.waitKind(t, "lost").err
}

func count(calls []call, kind string) int {
	n := 0
	for _, c := range calls {
		if c.kind == kind {
			n++
		}
	}
	return n
}

func updates(calls []call) []string {
	var out []string
	for _, c := range calls {
		if c.kind == "update" {
			out = append(out, c.flags)
		}
	}
	return out
}

// running is one Source under test, with a recorder as its sink, run
// until the test ends.
type running struct {
	rec    *recorder
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
}

// runSource runs src until the test ends, then checks that it stopped when
// told to and never called its sink concurrently.
func runSource(t *testing.T, src Source) *running {
	t.Helper()
	r := &running{rec: newRecorder(), done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { r.done <- src.Run(ctx, r.rec) }()
	t.Cleanup(func() {
		r.stop(t)
		if n := r.rec.overlaps.Load(); n > 0 {
			t.Errorf("sink was called concurrently %d times", n)
		}
	})
	return r
}

// stop cancels Run and waits for it, returning how long that took.
func (r *running) stop(t *testing.T) time.Duration {
	t.Helper()
	var took time.Duration
	r.once.Do(func() {
		begin := time.Now()
		r.cancel()
		select {
		case err := <-r.done:
			took = time.Since(begin)
			if err != nil {
				t.Errorf("Run returned %v after cancel, want nil", err)
			}
		case <-time.After(waitTimeout):
			t.Errorf("Run did not return within %v of cancel", waitTimeout)
		}
	})
	return took
}

// waitReturn waits for Run to return on its own.
func (r *running) waitReturn(t *testing.T) error {
	t.Helper()
	var err error
	r.once.Do(func() {
		select {
		case err = <-r.done:
		case <-time.After(waitTimeout):
			t.Fatalf("Run did not return within %v", waitTimeout)
		}
	})
	return err
}

// runAlone calls src.Run on a recorder of its own, with a context already
// done when done is set and never done otherwise, and returns what Run
// returned and what the sink got. Either way Run must return by itself: if
// it has not within waitTimeout, the test fails, and Run is cancelled so
// that it leaves nothing running.
func runAlone(t *testing.T, src Source, done bool) ([]call, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if done {
		cancel()
	}
	rec := newRecorder()
	ret := make(chan error, 1)
	go func() { ret <- src.Run(ctx, rec) }()
	select {
	case err := <-ret:
		return rec.snapshot(), err
	case <-time.After(waitTimeout):
	}
	cancel()
	select {
	case <-ret:
		t.Fatalf("Run did not return within %v by itself; sink got %v", waitTimeout, rec.snapshot())
	case <-time.After(waitTimeout):
		t.Fatalf("Run did not return within %v, even once cancelled", waitTimeout)
	}
	return nil, nil
}

// harness runs one File under test.
type harness struct {
	*running
	f     *File
	reads atomic.Int64 // reads attempted, successful or not
}

// start builds a File from cfg (filling in a short Debounce and a PollInterval
// long enough that only the watcher can notice changes, unless cfg says
// otherwise), lets setup replace its hooks, and runs it until the test ends.
func start(t *testing.T, cfg FileConfig, setup func(*File)) *harness {
	t.Helper()
	if cfg.Debounce == 0 {
		cfg.Debounce = testDebounce
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = time.Minute
	}
	f, err := NewFile(cfg)
	if err != nil {
		t.Fatalf("NewFile: %v", err)
	}
	h := &harness{f: f}
	if setup != nil {
		setup(f)
	}
	read := f.readFile
	f.readFile = func(p string) ([]byte, error) {
		h.reads.Add(1)
		return read(p)
	}
	// Registered before runSource's cleanup, so it runs after the source
	// has stopped.
	t.Cleanup(func() {
		if n := count(h.rec.snapshot(), "fatal"); n > 0 {
			t.Errorf("a file source never gives up, yet it called Fatal %d times", n)
		}
	})
	h.running = runSource(t, f)
	return h
}

// waitReads waits until the File has attempted n reads in all.
func (h *harness) waitReads(t *testing.T, n int64) {
	t.Helper()
	waitUntil(t, func() bool { return h.reads.Load() >= n }, func() string {
		return fmt.Sprintf("%d reads; got %d", n, h.reads.Load())
	})
}

// waitUntil polls cond, for state that gives no notice when it changes, and
// fails the test if cond does not hold within waitTimeout. what describes
// the wait as it stands when it fails.
func waitUntil(t *testing.T, cond func() bool, what func() string) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", waitTimeout, what())
		}
		time.Sleep(time.Millisecond)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitForLog waits until substr has been logged at least n times.
func waitForLog(t *testing.T, logs *logtest.Buffer, substr string, n int) {
	t.Helper()
	waitUntil(t, func() bool { return logs.Count(substr) >= n }, func() string {
		return fmt.Sprintf("%d log lines with %s:\n%s", n, substr, logs.String())
	})
}
