package e2e

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/open-feature/go-sdk/openfeature"
)

var eventTypes = map[string]openfeature.EventType{
	"ready":  openfeature.ProviderReady,
	"error":  openfeature.ProviderError,
	"stale":  openfeature.ProviderStale,
	"change": openfeature.ProviderConfigChange,
}

// eventLog records what the scenario's event handlers receive. A step that
// waits for an event of a type consumes every one received so far, so the
// next wait for that type needs a new one: "ready, then error, then ready
// again" cannot be satisfied by the first READY.
type eventLog struct {
	mu      sync.Mutex
	wake    chan struct{} // closed and replaced at every event
	pending map[openfeature.EventType][]openfeature.EventDetails
	last    map[openfeature.EventType][]openfeature.EventDetails // consumed by the last wait
	hooked  map[openfeature.EventType]bool
	seen    []string // every event, for messages
	start   time.Time
}

func newEventLog() *eventLog {
	return &eventLog{
		wake:    make(chan struct{}),
		pending: map[openfeature.EventType][]openfeature.EventDetails{},
		last:    map[openfeature.EventType][]openfeature.EventDetails{},
		hooked:  map[openfeature.EventType]bool{},
		start:   time.Now(),
	}
}

func (l *eventLog) record(t openfeature.EventType, d openfeature.EventDetails) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending[t] = append(l.pending[t], d)
	l.seen = append(l.seen, fmt.Sprintf("%s at %v (%s)", t, time.Since(l.start).Round(time.Millisecond), d.Message))
	close(l.wake)
	l.wake = make(chan struct{})
}

// await waits until an event of type t has been received, or deadline.
func (l *eventLog) await(t openfeature.EventType, deadline time.Time) error {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for {
		l.mu.Lock()
		if p := l.pending[t]; len(p) > 0 {
			l.last[t] = p
			l.pending[t] = nil
			l.mu.Unlock()
			return nil
		}
		wake := l.wake
		l.mu.Unlock()
		select {
		case <-wake:
		case <-timer.C:
			l.mu.Lock()
			defer l.mu.Unlock()
			return fmt.Errorf("no %s event by %v after the scenario started; events so far: %s",
				t, deadline.Sub(l.start).Round(time.Millisecond), strings.Join(l.seen, "; "))
		}
	}
}

func eventType(name string) (openfeature.EventType, error) {
	t, ok := eventTypes[name]
	if !ok {
		return "", fmt.Errorf("unknown event type %q", name)
	}
	return t, nil
}

// hook adds the scenario's handler for t to the client, once. OpenFeature
// calls a handler added while the provider is already in the matching state
// at once, which the scenarios rely on ("a ready event handler" after the
// provider is ready).
func (s *scenario) hook(t openfeature.EventType) {
	s.events.mu.Lock()
	done := s.events.hooked[t]
	s.events.hooked[t] = true
	s.events.mu.Unlock()
	if done {
		return
	}
	cb := func(d openfeature.EventDetails) { s.events.record(t, d) }
	s.client.AddHandler(t, &cb)
}

func (s *scenario) anEventHandler(name string) error {
	t, err := eventType(name)
	if err != nil {
		return err
	}
	s.hook(t)
	return nil
}

// eventDeadline leaves an event eventSlack to arrive once its cause is
// over: now, or when a lost connection is due back.
func (s *scenario) eventDeadline() time.Time {
	from := time.Now()
	if s.lp != nil {
		if back := s.lp.back(); back.After(from) {
			from = back
		}
	}
	return from.Add(eventSlack)
}

func (s *scenario) theHandlerShouldHaveRun(name string) error {
	return s.awaitHandler(name, s.eventDeadline())
}

func (s *scenario) theHandlerShouldHaveRunWithin(name string, ms int) error {
	return s.awaitHandler(name, time.Now().Add(time.Duration(ms)*time.Millisecond))
}

// awaitHandler waits for the scenario's handler for name, which an earlier
// step must have added, to be called.
func (s *scenario) awaitHandler(name string, deadline time.Time) error {
	t, err := eventType(name)
	if err != nil {
		return err
	}
	if !s.hooked(t) {
		return fmt.Errorf("no %s event handler was added", name)
	}
	return s.events.await(t, deadline)
}

// anEventWasFired observes events through a handler as well; one is added
// if the scenario has none for the type.
func (s *scenario) anEventWasFired(name string) error {
	t, err := eventType(name)
	if err != nil {
		return err
	}
	s.hook(t)
	return s.events.await(t, s.eventDeadline())
}

func (s *scenario) hooked(t openfeature.EventType) bool {
	s.events.mu.Lock()
	defer s.events.mu.Unlock()
	return s.events.hooked[t]
}

func (s *scenario) theFlagShouldBeInThePayload() error {
	if s.flag == nil {
		return errors.New("no flag was named")
	}
	s.events.mu.Lock()
	batch := s.events.last[openfeature.ProviderConfigChange]
	s.events.mu.Unlock()
	if len(batch) == 0 {
		return errors.New("no change event was observed")
	}
	var changes [][]string
	for _, d := range batch {
		if slices.Contains(d.FlagChanges, s.flag.key) {
			return nil
		}
		changes = append(changes, d.FlagChanges)
	}
	return fmt.Errorf("flag %q is not among the changed flags %q", s.flag.key, changes)
}

func (s *scenario) theClientShouldBeFatal() error {
	if st := s.client.State(); st != openfeature.FatalState {
		return fmt.Errorf("client state %s, want %s", st, openfeature.FatalState)
	}
	return nil
}
