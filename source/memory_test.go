package source

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flagsnap/flagsnap/evaluator"
)

func memDoc(variant string) string {
	return `{"flags": {"color": {"state": "ENABLED", "variants": {"red": "red", "blue": "blue"}, "defaultVariant": "` + variant + `"}}}`
}

// brokenFlag loads with the default options (the flag answers PARSE_ERROR)
// but not in strict mode.
const brokenFlag = `{"flags": {"color": {"state": "ENABLED", "variants": {"red": "red"}, "defaultVariant": "green"}}}`

func mustMemory(t *testing.T, doc string) *Memory {
	t.Helper()
	m, err := NewMemory([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// judge is a recorder that is an Acceptor: it records what it is given
// and answers with verdict.
type judge struct {
	*recorder
	verdict func(Update) error
}

func (j *judge) Accept(u Update) error {
	j.record(call{kind: "accept", flags: string(u.Flags), orig: u.Origin})
	return j.verdict(u)
}

// strictJudge rejects what the strict mode rejects, as a provider with
// WithStrictValidation does.
func strictJudge(u Update) error {
	_, err := evaluator.Load(u.Flags, evaluator.WithStrict())
	return err
}

func TestNewMemoryChecksTheDocument(t *testing.T) {
	var syntax *evaluator.SyntaxError
	var document *evaluator.DocumentError
	tests := []struct {
		name   string
		doc    string
		target any // nil: accepted
	}{
		{"JSON", memDoc("red"), nil},
		{"YAML", "flags:\n  color:\n    state: ENABLED\n    variants: {red: red}\n    defaultVariant: red\n", nil},
		{"no flags", `{}`, &document},
		{"flags of the wrong type", `{"flags": 1}`, &document},
		{"bad JSON", `{"flags": {`, &syntax},
		{"bad YAML", "flags:\n  - [", &syntax},
		{"empty", ``, &document},
		// One broken flag does not reject a document outside strict mode.
		{"broken flag", brokenFlag, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := NewMemory([]byte(tt.doc))
			if tt.target == nil {
				if err != nil || m == nil {
					t.Fatalf("NewMemory: %v", err)
				}
				return
			}
			if m != nil || !errors.As(err, tt.target) || !strings.HasPrefix(err.Error(), "sync: NewMemory: ") {
				t.Fatalf("NewMemory = %v, %v; want a %T", m, err, tt.target)
			}
		})
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

func TestMemorySetRejectsWhatDoesNotLoad(t *testing.T) {
	m := mustMemory(t, memDoc("red"))
	r := runSource(t, m)
	r.rec.waitUpdate(t, memDoc("red"))
	before := len(r.rec.snapshot())
	err := m.Set([]byte(`{"flags": [`))
	var syntax *evaluator.SyntaxError
	if !errors.As(err, &syntax) || !strings.HasPrefix(err.Error(), "sync: Memory.Set: ") {
		t.Fatalf("Set of bad JSON: %v", err)
	}
	if n := len(r.rec.snapshot()); n != before {
		t.Fatalf("a rejected document reached a plain sink: %v", r.rec.snapshot()[before:])
	}
	// The document in force is still the first one: a loss and a
	// recovery deliver it again.
	m.Lost(errors.New("gone"))
	if err := m.Restore(); err != nil {
		t.Fatal(err)
	}
	r.rec.waitLatestUpdate(t, memDoc("red"))
}

// A sink that is an Acceptor judges every document itself, and Set returns
// its verdict; a rejected document is not kept.
func TestMemorySetReturnsTheAcceptorsVerdict(t *testing.T) {
	m := mustMemory(t, memDoc("red"))
	j := &judge{recorder: newRecorder(), verdict: strictJudge}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx, j) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	j.waitKind(t, "accept")

	err := m.Set([]byte(brokenFlag))
	var invalid *evaluator.ValidationError
	if !errors.As(err, &invalid) {
		t.Fatalf("Set of a document strict mode rejects: %v", err)
	}
	if calls := j.snapshot(); len(calls) != 2 || calls[1].kind != "accept" || calls[1].flags != brokenFlag {
		t.Fatalf("the acceptor was not asked: %v", calls)
	}
	if err := m.Set([]byte(memDoc("blue"))); err != nil {
		t.Fatal(err)
	}
	// Update is never used for an Acceptor.
	if n := count(j.snapshot(), "update"); n != 0 {
		t.Errorf("%d updates to an acceptor", n)
	}
	m.Lost(errors.New("gone"))
	if err := m.Restore(); err != nil {
		t.Fatal(err)
	}
	calls := j.snapshot()
	if last := calls[len(calls)-1]; last.kind != "accept" || last.flags != memDoc("blue") {
		t.Errorf("Restore delivered %v, want the last accepted document", last)
	}
}

func TestMemorySetBeforeRun(t *testing.T) {
	m := mustMemory(t, memDoc("red"))
	if err := m.Set([]byte(memDoc("blue"))); err != nil {
		t.Fatal(err)
	}
	if err := m.Set([]byte(`{"flags": 1}`)); err == nil {
		t.Fatal("Set before Run took a document that is not a flag set")
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
	m, err := NewMemory(doc)
	if err != nil {
		t.Fatal(err)
	}
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
	j.waitKind(t, "accept")

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
