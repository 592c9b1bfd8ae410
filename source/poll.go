package source

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/flagsnap/flagsnap/internal/flagddefault"
)

// ErrNotModified is what a [Fetcher] returns when the document is still
// the one it fetched last (an HTTP 304, an object whose ETag is the same).
var ErrNotModified = errors.New("not modified")

// Version names the content an origin served, so that the next fetch can
// ask for it only if it changed: an HTTP ETag and Last-Modified, or an
// object's ETag and modification time. The zero Version asks for the
// document whatever it is.
type Version struct {
	ETag     string
	Modified string
}

// Fetcher reads a flag document from an origin that has to be asked for
// it, such as a URL or an object in a bucket.
type Fetcher interface {
	// Fetch returns the document and its version, or ErrNotModified when
	// since names the version the origin still has. It bounds its own
	// wait, and returns at once when ctx ends.
	Fetch(ctx context.Context, since Version) ([]byte, Version, error)
}

// PollSink is a [Sink] that also counts the polls that found the flags
// unchanged. [Poll] calls Unchanged after such a poll when its sink
// implements PollSink.
type PollSink interface {
	Sink
	Unchanged()
}

// RetryAfter is implemented by fetch errors that say how long the origin
// asked to be left alone (HTTP's Retry-After); [Poll] waits at least that
// long, up to maxRetryAfter, before asking again.
type RetryAfter interface {
	RetryAfter() time.Duration
}

const (
	// maxRetryAfter bounds the wait an origin may ask for, so that a
	// mistaken header cannot silence a source for hours.
	maxRetryAfter = 5 * time.Minute
	// pollJitter spreads each wait by a tenth either way, so that a fleet
	// started together drifts apart rather than polling in step.
	pollJitter = 0.1
	// firstRetryShare is the first retry's wait as a share of the
	// interval; each failure doubles it, up to the interval.
	firstRetryShare = 8
)

// PollConfig configures a [Poll] source.
type PollConfig struct {
	// Fetcher reads the document. Required.
	Fetcher Fetcher
	// Origin names where the documents come from, in updates and
	// messages: a URL. Required.
	Origin string
	// Interval is the time between polls; 0 means the default, 5s, as
	// flagd's own polling sources.
	Interval time.Duration
	// Logger receives diagnostics; nil means silent.
	Logger *slog.Logger
}

// Poll is a [Source] that asks a [Fetcher] for the document every
// Interval and delivers it when it changed.
//
// The first fetch happens as soon as Run starts; the second comes at a
// random point within the first interval, and each later one after the
// interval give or take a tenth, so a fleet of providers started together
// does not poll in lockstep. A document whose version or content is the
// one delivered last is not delivered again. A failed fetch is reported
// through [Sink.Lost] (once for each different failure) and retried
// sooner than the interval, with a backoff that starts at an eighth of it
// and doubles up to it, and never before an origin's Retry-After. After a
// failure the next fetch asks for the document unconditionally, so that
// recovery delivers it even when it did not change.
type Poll struct {
	fetcher  Fetcher
	origin   string
	interval time.Duration
	log      *slog.Logger
	seed     maphash.Seed
	started  atomic.Bool
}

// NewPoll checks cfg and returns a Poll source. It does not fetch.
func NewPoll(cfg PollConfig) (*Poll, error) {
	switch {
	case cfg.Fetcher == nil:
		return nil, errors.New("source: PollConfig.Fetcher is required")
	case cfg.Origin == "":
		return nil, errors.New("source: PollConfig.Origin is required")
	case cfg.Interval < 0:
		return nil, fmt.Errorf("source: PollConfig.Interval must not be negative, got %v", cfg.Interval)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Poll{
		fetcher:  cfg.Fetcher,
		origin:   cfg.Origin,
		interval: cmp.Or(cfg.Interval, flagddefault.PollInterval),
		log:      log,
		seed:     maphash.MakeSeed(),
	}, nil
}

// Origin returns where the documents come from, as configured.
func (p *Poll) Origin() string { return p.origin }

// Interval returns the time between polls.
func (p *Poll) Interval() time.Duration { return p.interval }

// Run implements [Source]: it fetches at once, then every interval, until
// ctx is done. Sink calls happen on the goroutine that called Run.
func (p *Poll) Run(ctx context.Context, sink Sink) error {
	if !p.started.CompareAndSwap(false, true) {
		return errors.New("source: Poll.Run called more than once")
	}
	r := &poller{p: p, sink: sink}
	if ctx.Err() != nil {
		return nil
	}
	wait := r.poll(ctx)
	if r.failures == 0 {
		wait = randomPhase(p.interval)
	}
	for sleep(ctx, wait) {
		wait = r.poll(ctx)
	}
	return nil
}

// poller is the state of one Run.
type poller struct {
	p    *Poll
	sink Sink

	since    Version // what the next fetch asks to be told only if changed
	failures int     // fetches failed in a row

	// delivered is set once a document went to the sink; lastLen and
	// lastSum identify it. lostMsg is the failure last reported, empty
	// while the origin answers.
	delivered bool
	lastLen   int
	lastSum   uint64
	lostMsg   string
}

// poll fetches once, tells the sink what came of it, and returns the wait
// before the next poll.
func (r *poller) poll(ctx context.Context) time.Duration {
	doc, v, err := r.p.fetcher.Fetch(ctx, r.since)
	if ctx.Err() != nil {
		return 0
	}
	switch {
	case errors.Is(err, ErrNotModified):
		r.failures = 0
		r.unchanged()
	case err != nil:
		return r.fail(err)
	default:
		r.failures = 0
		r.since = v
		r.deliver(doc)
	}
	return spread(r.p.interval)
}

// deliver hands doc to the sink, unless it is the document delivered last
// and the origin was not lost in between.
func (r *poller) deliver(doc []byte) {
	sum := maphash.Bytes(r.p.seed, doc)
	if r.delivered && r.lostMsg == "" && len(doc) == r.lastLen && sum == r.lastSum {
		r.unchanged()
		return
	}
	if r.lostMsg != "" {
		r.p.log.Info("flag source answering again", "origin", r.p.origin)
	} else {
		r.p.log.Debug("flag document changed", "origin", r.p.origin, "bytes", len(doc))
	}
	r.delivered, r.lastLen, r.lastSum, r.lostMsg = true, len(doc), sum, ""
	// A rejected document is remembered too: it is reported once, not at
	// every poll, and the flags in force stay until another arrives.
	_ = r.sink.Update(Update{Flags: doc, Origin: r.p.origin})
}

func (r *poller) unchanged() {
	if ps, ok := r.sink.(PollSink); ok {
		ps.Unchanged()
	}
}

// fail reports a failed fetch, unless it is the failure already reported,
// and returns the wait before the retry.
func (r *poller) fail(err error) time.Duration {
	r.failures++
	// Whatever the origin has when it answers again must be delivered,
	// to tell the sink it is back.
	r.since = Version{}
	delay := r.backoff()
	var ra RetryAfter
	if errors.As(err, &ra) {
		delay = max(delay, min(ra.RetryAfter(), maxRetryAfter))
	}
	if msg := err.Error(); msg != r.lostMsg {
		r.lostMsg = msg
		r.p.log.Warn("flag source lost", "origin", r.p.origin, "error", err, "retry_in", delay.Round(time.Millisecond).String())
		r.sink.Lost(err)
	}
	return delay
}

// backoff is the wait after the latest of r.failures failures in a row:
// an eighth of the interval, doubled for each further failure, spread so
// that a fleet that failed together does not retry together, and never
// longer than the interval.
func (r *poller) backoff() time.Duration {
	d := r.p.interval / firstRetryShare
	for i := 1; i < r.failures && d < r.p.interval; i++ {
		d *= 2
	}
	return min(spread(d), r.p.interval)
}

// randomPhase is the wait before the second poll: anywhere in the first
// interval, so that a fleet started together polls at its own phases.
func randomPhase(interval time.Duration) time.Duration {
	return time.Duration(rand.Int64N(int64(interval))) + 1
}

// spread returns d give or take pollJitter of it, and at least a
// millisecond. Past the longest duration it stays at d: the sum would wrap
// around to a negative wait, which is a poll at once.
func spread(d time.Duration) time.Duration {
	j := time.Duration(float64(d) * pollJitter * (2*rand.Float64() - 1))
	if j > 0 && d > math.MaxInt64-j {
		return d
	}
	return max(d+j, time.Millisecond)
}
