package source

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func memDoc(variant string) string {
	return `{"flags": {"color": {"state": "ENABLED", "variants": {"red": "red", "blue": "blue"}, "defaultVariant": "` + variant + `"}}}`
}

// errRejected is what judge's sinks answer for a document they refuse.
var errRejected = errors.New("rejected by the sink")

// brokenDoc is a document that rejectBroken refuses. The source itself
// never looks inside a document.
const brokenDoc = `{"flags": {"color": "broken"}}`

func mustMemory(t *testing.T, doc string) *Memory {
	t.Helper()
	return NewMemory([]byte(doc))
}

// judge is a recorder whose Update answers with verdict, as a provider's
// sink answers with its load error.
type judge struct {
	*recorder
	verdict func(Update) error
}

func (j *judge) Update(u Update) error {
	j.recorder.Update(u)
	return j.verdict(u)
}

func rejectBroken(u Update) error {
	if string(u.Flags) == brokenDoc {
		return errRejected
	}
	return nil
}

// runJudge runs m into a judge until the test ends.
func runJudge(t *testing.T, m *Memory, verdict func(Update) error) *judge {
	t.Helper()
	j := &judge{recorder: newRecorder(), verdict: verdict}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx, j) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return j
}

// The source hands on whatever it holds: deciding whether it is a flag set
// is the sink's business, so NewMemory takes anything.
func TestNewMemoryParsesNothing(t *testing.T) {
	for _, doc := range []string{memDoc("red"), `{"flags": 1}`, `{"flags": {`, ``, "flags:\n  - ["} {
		r := runSource(t, NewMemory([]byte(doc)))
		r.rec.waitUpdate(t, doc)
	}
}

func TestMemoryRunDeliversTheDocument(t *testing.T) {
	r := runSource(t, mustMemory(t, memDoc("red")))
	c := r.rec.waitLatestUpdate(t, memDoc("red"))
	if c.orig != MemoryOrigin || c.syncCtx != nil {
		t.Errorf("update origin %q, sync context %v", c.orig, c.syncCtx)
	}
}

// After Set returns, the sink has the flags: no wait in between.
func TestMemorySetIsSynchronous(t *testing.T) {
	m := mustMemory(t, memDoc("red"))
	r := runSource(t, m)
	r.rec.waitUpdate(t, memDoc("red"))
	for _, v := range []string{"blue", "red", "blue"} {
		if err := m.Set([]byte(memDoc(v))); err != nil {
			t.Fatal(err)
		}
		calls := r.rec.snapshot()
		if last := calls[len(calls)-1]; last.kind != "update" || last.flags != memDoc(v) {
			t.Fatalf("after Set(%s) the sink's last call is %v", v, last)
		}
	}
	if got := updates(r.rec.snapshot()); len(got) != 4 {
		t.Errorf("%d updates, want 4: %q", len(got), got)
	}
}

// Set returns the sink's verdict; a rejected document is not kept, and a
// loss and a recovery deliver the one in force before it.
func TestMemorySetReturnsTheSinksVerdict(t *testing.T) {
	m := mustMemory(t, memDoc("red"))
	j := runJudge(t, m, rejectBroken)
	j.waitUpdate(t, memDoc("red"))

	err := m.Set([]byte(brokenDoc))
	if !errors.Is(err, errRejected) || !strings.HasPrefix(err.Error(), "source: Memory.Set: ") {
		t.Fatalf("Set of a document the sink rejects: %v", err)
	}
	if calls := j.snapshot(); len(calls) != 2 || calls[1].flags != brokenDoc {
		t.Fatalf("the sink was not asked: %v", calls)
	}
	m.Lost(errors.New("gone"))
	if err := m.Restore(); err != nil {
		t.Fatal(err)
	}
	j.waitLatestUpdate(t, memDoc("red"))

	if err := m.Set([]byte(memDoc("blue"))); err != nil {
		t.Fatal(err)
	}
	m.Lost(errors.New("gone"))
	if err := m.Restore(); err != nil {
		t.Fatal(err)
	}
	calls := j.snapshot()
	if last := calls[len(calls)-1]; last.kind != "update" || last.flags != memDoc("blue") {
		t.Errorf("Restore delivered %v, want the last accepted document", last)
	}
}

// A Restore the sink rejects leaves the loss in place.
func TestMemoryRestoreReturnsTheSinksVerdict(t *testing.T) {
	m := mustMemory(t, memDoc("red"))
	reject := atomic.Bool{}
	j := runJudge(t, m, func(Update) error {
		if reject.Load() {
			return errRejected
		}
		return nil
	})
	j.waitUpdate(t, memDoc("red"))
	m.Lost(errors.New("gone"))
	reject.Store(true)
	if err := m.Restore(); !errors.Is(err, errRejected) {
		t.Fatalf("Restore = %v, want the sink's verdict", err)
	}
	reject.Store(false)
	if err := m.Restore(); err != nil {
		t.Fatalf("the loss did not go on: Restore = %v", err)
	}
	if n := count(j.snapshot(), "update"); n != 3 {
		t.Errorf("%d updates, want 3: %v", n, j.snapshot())
	}
}

func TestMemorySetBeforeRun(t *testing.T) {
	m := mustMemory(t, memDoc("red"))
	if err := m.Set([]byte(memDoc("blue"))); err != nil {
		t.Fatal(err)
	}
	// Before Run there is no sink to judge: the document waits for one.
	if err := m.Set([]byte(brokenDoc)); err != nil {
		t.Fatal(err)
	}
	if err := m.Set([]byte(memDoc("blue"))); err != nil {
		t.Fatal(err)
	}
	r := runSource(t, m)
	calls := r.rec.waitUpdate(t, memDoc("blue"))
	if len(calls) != 1 {
		t.Errorf("Run's first calls: %v", calls)
	}
}

// The caller's buffer is copied: changing it later changes nothing.
func TestMemoryCopiesTheDocument(t *testing.T) {
	doc := []byte(memDoc("red"))
	m := NewMemory(doc)
	copy(doc, "XXXX")
	r := runSource(t, m)
	r.rec.waitUpdate(t, memDoc("red"))

	doc = []byte(memDoc("blue"))
	if err := m.Set(doc); err != nil {
		t.Fatal(err)
	}
	copy(doc, "XXXX")
	m.Lost(nil)
	if err := m.Restore(); err != nil {
		t.Fatal(err)
	}
	r.rec.waitLatestUpdate(t, memDoc("blue"))
}

func TestMemoryLostAndRestore(t *testing.T) {
	m := mustMemory(t, memDoc("red"))
	r := runSource(t, m)
	r.rec.waitUpdate(t, memDoc("red"))

	// Restore without a loss does nothing.
	if err := m.Restore(); err != nil {
		t.Fatal(err)
	}
	gone := errors.New("gone")
	m.Lost(gone)
	calls := r.rec.snapshot()
	if last := calls[len(calls)-1]; last.kind != "lost" || last.err != gone {
		t.Fatalf("after Lost the sink's calls are %v", calls)
	}
	m.Lost(nil)
	calls = r.rec.snapshot()
	if last := calls[len(calls)-1]; last.kind != "lost" || last.err == nil {
		t.Fatalf("Lost(nil) reported %v, want a reason", last)
	}
	if err := m.Restore(); err != nil {
		t.Fatal(err)
	}
	if err := m.Restore(); err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(r.rec.snapshot())
	want := fmt.Sprint([]call{
		{kind: "update", flags: memDoc("red")},
		{kind: "lost", err: gone},
		{kind: "lost", err: errors.New("flag source lost")},
		{kind: "update", flags: memDoc("red")},
	})
	if got != want {
		t.Errorf("sink got\n%s\nwant\n%s", got, want)
	}
}

// A Set during a loss ends it: new flags mean the origin is back.
func TestMemorySetEndsALoss(t *testing.T) {
	m := mustMemory(t, memDoc("red"))
	r := runSource(t, m)
	r.rec.waitUpdate(t, memDoc("red"))
	m.Lost(errors.New("gone"))
	if err := m.Set([]byte(memDoc("blue"))); err != nil {
		t.Fatal(err)
	}
	before := len(r.rec.snapshot())
	if err := m.Restore(); err != nil {
		t.Fatal(err)
	}
	if n := len(r.rec.snapshot()); n != before {
		t.Errorf("Restore after a Set delivered again: %v", r.rec.snapshot())
	}
}

func TestMemoryLostBeforeRun(t *testing.T) {
	m := mustMemory(t, memDoc("red"))
	gone := errors.New("gone")
	m.Lost(gone)
	r := runSource(t, m)
	if err := r.rec.waitLost(t); err != gone {
		t.Fatalf("Run reported %v", err)
	}
	if err := m.Restore(); err != nil {
		t.Fatal(err)
	}
	calls := r.rec.snapshot()
	if fmt.Sprint(calls) != fmt.Sprint([]call{{kind: "lost", err: gone}, {kind: "update", flags: memDoc("red")}}) {
		t.Errorf("sink got %v", calls)
	}
}

func TestMemoryAfterRun(t *testing.T) {
	m := mustMemory(t, memDoc("red"))
	r := runSource(t, m)
	r.rec.waitUpdate(t, memDoc("red"))
	r.stop(t)
	before := len(r.rec.snapshot())

	err := m.Set([]byte(memDoc("blue")))
	if !errors.Is(err, errStopped) {
		t.Errorf("Set after Run returned: %v", err)
	}
	m.Lost(errors.New("late"))
	if err := m.Restore(); err != nil {
		t.Errorf("Restore after Run returned: %v", err)
	}
	if n := len(r.rec.snapshot()); n != before {
		t.Errorf("the sink was called after Run returned: %v", r.rec.snapshot()[before:])
	}
}

func TestMemoryRunsOnce(t *testing.T) {
	m := mustMemory(t, memDoc("red"))
	runSource(t, m).rec.waitUpdate(t, memDoc("red"))
	calls, err := runAlone(t, m, false)
	if err == nil || len(calls) != 0 {
		t.Errorf("second Run = %v, sink got %v", err, calls)
	}
}

func TestMemoryRunWithAContextAlreadyDone(t *testing.T) {
	m := mustMemory(t, memDoc("red"))
	calls, err := runAlone(t, m, true)
	if err != nil || len(calls) != 0 {
		t.Errorf("Run = %v, sink got %v", err, calls)
	}
	if err := m.Set([]byte(memDoc("blue"))); !errors.Is(err, errStopped) {
		t.Errorf("Set after Run returned: %v", err)
	}
}

// Sets from many goroutines reach the sink one at a time (runSource fails
// the test on an overlap), each before its Set returns.
func TestMemoryConcurrentSets(t *testing.T) {
	m := mustMemory(t, memDoc("red"))
	r := runSource(t, m)
	r.rec.waitUpdate(t, memDoc("red"))
	const writers, sets = 8, 25
	errs := make(chan error, writers)
	for w := range writers {
		go func() {
			for i := range sets {
				doc := memDoc(fmt.Sprintf("v%d-%d", w, i))
				if err := m.Set([]byte(doc)); err != nil {
					errs <- err
					return
				}
				if i%5 == 0 {
					m.Lost(nil)
				} else if err := m.Restore(); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := len(updates(r.rec.snapshot())); n < 1+writers*sets {
		t.Errorf("%d updates, want at least %d", n, 1+writers*sets)
	}
}

// Run does not return while a Set is still talking to the sink, so that a
// sink is never called after its source has stopped.
func TestMemoryRunWaitsForASetInProgress(t *testing.T) {
	m := mustMemory(t, memDoc("red"))
	entered, release := make(chan struct{}), make(chan struct{})
	j := &judge{recorder: newRecorder(), verdict: func(u Update) error {
		if string(u.Flags) == memDoc("blue") {
			close(entered)
			<-release
		}
		return nil
	}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx, j) }()
	j.waitKind(t, "update")

	set := make(chan error, 1)
	go func() { set <- m.Set([]byte(memDoc("blue"))) }()
	select {
	case <-entered:
	case <-time.After(waitTimeout):
		t.Fatal("Set did not reach the sink")
	}
	cancel()
	select {
	case <-done:
		t.Fatal("Run returned while the sink was still busy with a Set")
	case <-time.After(20 * time.Millisecond):
	}
	close(release)
	for _, ch := range []chan error{set, done} {
		select {
		case err := <-ch:
			if err != nil {
				t.Error(err)
			}
		case <-time.After(waitTimeout):
			t.Fatal("Set or Run did not return once the sink was done")
		}
	}
}
