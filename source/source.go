package source

import (
	"context"
	"time"
)

// Source produces complete flag sets and reports when it loses and regains
// its origin.
type Source interface {
	// Run delivers to sink until ctx is done, then returns once every
	// goroutine it started has finished. It is called at most once. The
	// error is nil when Run stopped because ctx was done.
	Run(ctx context.Context, sink Sink) error
}

// Sink receives what a Source produces. A Source calls its methods from one
// goroutine at a time, in the order things happened; the methods return
// quickly and never block on the source's behalf.
type Sink interface {
	// Update delivers a complete flag document. It also means the source
	// is (again) connected to its origin. It returns once the flags are in
	// force, or with the reason they were not (the flags in force then
	// stay): parsing and validation happen in the sink, so a source with a
	// caller waiting on the outcome, such as [Memory.Set], passes the
	// verdict on. Sources that have nobody to tell may ignore it; the sink
	// reports a rejected flag set itself.
	Update(Update) error
	// Lost reports that the source cannot currently reach its origin (a
	// deleted or unreadable file, a broken stream). The flags already
	// delivered stay in force; the next Update means recovery.
	Lost(err error)
	// Fatal reports that the source has given up for good, for example
	// because the server refused it with a status configured as fatal. No
	// more calls follow.
	Fatal(err error)
}

// Remedy is what an error a source reports (to Sink.Lost or as Run's
// error) may say of itself: what to change so that flags come, in a few
// words ("check the bucket and key"). A provider whose Init gives up
// quotes it as the error's "To fix", as it advises for its own sources;
// an empty remedy says nothing.
type Remedy interface {
	Remedy() string
}

// Update is one complete flag set from a source.
type Update struct {
	// Flags is the flag document, JSON or YAML.
	Flags []byte
	// SyncContext is the evaluation data the source adds to every
	// evaluation (a gRPC sync_context), or nil when it has none.
	SyncContext map[string]any
	// Origin names where the flags came from, for messages: a file path,
	// a server address.
	Origin string
}

// sleep waits d, reporting false if ctx ended first. Both sources wait
// this way between attempts, so cancelling Run never waits out a delay.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
