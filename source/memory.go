package source

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
)

// MemoryOrigin is the Origin of every Update a Memory delivers.
const MemoryOrigin = "memory"

// Memory is a source whose flag document is held in memory and replaced by
// its owner, for tests and for programs that build their flags themselves.
// Everything it does happens before its methods return: when Set returns,
// the sink has the new flags, so a provider running the source already
// serves them.
//
// Set, Lost and Restore may be called from any goroutine, before, during
// and after Run; they are serialized, so the sink is never called
// concurrently.
type Memory struct {
	started atomic.Bool

	mu      sync.Mutex
	doc     []byte // the document in force, a copy of the caller's
	lost    error  // non-nil while a loss is simulated
	sink    Sink   // set while Run runs
	stopped bool   // Run has returned: nobody will hear of the flags again
}

// errStopped is Set's answer once Run has returned.
var errStopped = errors.New("the source has stopped: no sink receives its flags")

// NewMemory returns a source holding doc, a flag document in JSON or YAML.
// The document is not parsed here: the sink that Run delivers it to
// decides whether it loads (a provider's Init fails with the reason).
func NewMemory(doc []byte) *Memory {
	return &Memory{doc: slices.Clone(doc)}
}

// Run implements [Source]. It delivers the document at once (or reports
// the loss, after Lost), then delivers what Set, Lost and Restore say
// until ctx is done. It starts no goroutine, and once it has returned the
// sink is not called again.
func (m *Memory) Run(ctx context.Context, sink Sink) error {
	if !m.started.CompareAndSwap(false, true) {
		return errors.New("source: Memory.Run called more than once")
	}
	m.mu.Lock()
	if ctx.Err() == nil {
		m.sink = sink
		if m.lost != nil {
			sink.Lost(m.lost)
		} else {
			// A sink that rejects the first document reports it itself;
			// there is no caller here to tell.
			_ = m.deliver(m.doc)
		}
	}
	m.mu.Unlock()

	<-ctx.Done()

	// Taking the lock waits for a Set that is still talking to the sink.
	m.mu.Lock()
	m.sink, m.stopped = nil, true
	m.mu.Unlock()
	return nil
}

// Set replaces the document. While Run runs, Set returns once the sink has
// decided on it: nil when the sink serves the new flags, or the sink's
// reason for rejecting them (the document in force then stays). Before
// Run, the document is kept unchecked for Run to deliver. After Run has
// returned, every Set is an error.
//
// A document accepted while Run runs ends a loss simulated with Lost, as
// new flags from a real origin mean it is reachable again.
func (m *Memory) Set(doc []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped {
		return fmt.Errorf("source: Memory.Set: %w", errStopped)
	}
	if m.sink == nil {
		m.doc = slices.Clone(doc)
		return nil
	}
	doc = slices.Clone(doc)
	if err := m.deliver(doc); err != nil {
		return fmt.Errorf("source: Memory.Set: %w", err)
	}
	m.doc, m.lost = doc, nil
	return nil
}

// deliver hands doc to the sink and returns its verdict. It is called with
// mu held and a sink.
func (m *Memory) deliver(doc []byte) error {
	return m.sink.Update(Update{Flags: doc, Origin: MemoryOrigin})
}

// Lost simulates a source that can no longer reach its origin: the sink
// hears of it through [Sink.Lost] before Lost returns (a provider reports
// STALE, then ERROR after its grace period) and keeps its flags. Called
// before Run, Run starts by reporting the loss and delivers no flags until
// Restore or Set. A nil err is replaced by a generic one.
func (m *Memory) Lost(err error) {
	if err == nil {
		err = errors.New("flag source lost")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lost = err
	if m.sink != nil {
		m.sink.Lost(err)
	}
}

// Restore ends a loss simulated with Lost: the document in force is
// delivered again, as a source that is back delivers what it has (a
// provider reports READY). It returns the sink's verdict, as Set does
// (the loss goes on if the sink rejects the document), and does nothing
// when no loss is simulated.
func (m *Memory) Restore() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lost == nil {
		return nil
	}
	if m.sink != nil {
		if err := m.deliver(m.doc); err != nil {
			return fmt.Errorf("source: Memory.Restore: %w", err)
		}
	}
	m.lost = nil
	return nil
}
