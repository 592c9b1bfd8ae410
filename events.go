package flagsnap

// The queue that hands the provider's events to OpenFeature without ever
// blocking the sender.

import (
	"context"
	"sync"

	"github.com/open-feature/go-sdk/openfeature"
)

// maxQueuedEvents bounds the events waiting for a reader; past it the
// oldest are dropped, so that a provider nobody listens to cannot grow
// without limit.
const maxQueuedEvents = 1024

// emitter hands events to OpenFeature without ever blocking the sender:
// events queue up and a pump goroutine delivers them in order.
type emitter struct {
	out    chan openfeature.Event
	queued chan struct{} // tells the pump that events are waiting

	mu     sync.Mutex
	queue  []openfeature.Event
	closed bool
}

// newEmitter returns an emitter that drops what it is sent until open.
func newEmitter() *emitter {
	return &emitter{out: make(chan openfeature.Event, 16), queued: make(chan struct{}, 1), closed: true}
}

// open starts accepting events, for a new run.
func (e *emitter) open() {
	e.mu.Lock()
	e.closed, e.queue = false, nil
	e.mu.Unlock()
}

// close drops what is queued and everything sent later.
func (e *emitter) close() {
	e.mu.Lock()
	e.closed, e.queue = true, nil
	e.mu.Unlock()
}

// send queues ev for the pump, dropping the oldest when the queue is full.
func (e *emitter) send(ev openfeature.Event) {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return
	}
	if len(e.queue) == maxQueuedEvents {
		e.queue = e.queue[1:]
	}
	e.queue = append(e.queue, ev)
	e.mu.Unlock()
	select {
	case e.queued <- struct{}{}:
	default:
	}
}

// pump delivers queued events until ctx is done.
func (e *emitter) pump(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-e.queued:
		}
		for {
			e.mu.Lock()
			if e.closed || len(e.queue) == 0 {
				e.mu.Unlock()
				break
			}
			ev := e.queue[0]
			e.queue = e.queue[1:]
			e.mu.Unlock()
			select {
			case e.out <- ev:
			case <-ctx.Done():
				return
			}
		}
	}
}
