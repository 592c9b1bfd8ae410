package flagsnap

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"
)

func numbered(n int) openfeature.Event {
	return openfeature.Event{ProviderEventDetails: openfeature.ProviderEventDetails{Message: strconv.Itoa(n)}}
}

func TestEmitterDropsTheOldestPastItsBound(t *testing.T) {
	e := newEmitter()
	e.send(numbered(-1)) // closed: dropped
	e.open()
	const extra = 5
	for n := range maxQueuedEvents + extra {
		e.send(numbered(n))
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.pump(ctx)
	}()
	defer func() {
		cancel()
		<-done
	}()
	ev := events{t: t, ch: e.out}
	for n := extra; n < maxQueuedEvents+extra; n++ {
		if got := ev.next().Message; got != strconv.Itoa(n) {
			t.Fatalf("event %q, want %d", got, n)
		}
	}
	ev.none(20 * time.Millisecond)

	// Closing drops what is queued and what comes later.
	e.close()
	e.send(numbered(0))
	ev.none(20 * time.Millisecond)
}
