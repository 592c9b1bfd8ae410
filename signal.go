package flagsnap

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
)

// signal wakes every goroutine waiting on it at once: each notify closes
// the channel that wait handed out, and the next wait gets a new one. It
// lets OFREP's event streams sleep until the flags change or the provider
// shuts down, without polling and without a goroutine per stream.
type signal struct {
	mu sync.Mutex
	ch chan struct{}
}

// wait returns a channel that is closed at the next notify.
func (s *signal) wait() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

// notify wakes every waiter.
func (s *signal) notify() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}

// newInstanceID is a random name for a provider, 8 hex digits.
func newInstanceID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// running reports whether the provider has been started and not shut down.
func (p *Provider) running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.run != nil
}
