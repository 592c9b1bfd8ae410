package flagsnap

// The run: one lifetime of a provider from Init to Shutdown, and the
// states it reports to OpenFeature (starting, ready, stale, error, fatal),
// with the supervisor that turns a loss past the grace period into ERROR.

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap/evaluator"
	"github.com/flagsnap/flagsnap/source"
)

// run is one lifetime of the provider, from Init to Shutdown: the source's
// goroutine, the grace-period supervisor and the event pump.
type run struct {
	p            *Provider
	ctx          context.Context
	cancel       context.CancelFunc
	wg           sync.WaitGroup
	stateChanged chan struct{} // wakes the supervisor after a state change

	ready    chan struct{} // closed once flags are served: see markReady
	gaveUp   chan struct{} // closed once the source has given up
	fatalErr error         // the source's last word; set once, under mu

	// lastCompiled is the flag set Update compiled last, with what it was
	// compiled from, to recognise the same update when it comes again;
	// under mu.
	lastCompiled struct {
		set     *evaluator.FlagSet
		digest  [sha256.Size]byte
		syncCtx map[string]any
	}

	mu          sync.Mutex
	state       state
	readyClosed bool // ready is closed
	loaded      bool // a flag set from the source has been put in force
	lastErr     error
	rejectedSet bool // lastErr is a flag set that did not load

	// main is the main source's flag set in force, and mainDoc its
	// document; the set in force is main with the overrides over it.
	main    *evaluator.FlagSet
	mainDoc *docKeeper
	// overrides are the layers over main, lowest first; shadowed is the
	// keys of main an override answers for, with its name (overlay.go).
	overrides []*overrideLayer
	shadowed  map[string]string
	// lastLayers is the set layered last, and the layers it was made of.
	lastLayers struct {
		of  []evaluator.Layer
		set *evaluator.FlagSet
	}
}

// state is what the run last reported to OpenFeature.
type state uint8

const (
	stateStarting state = iota // no flags yet, Init waiting: it reports the first outcome
	stateReady
	stateStale     // source lost, within the grace period
	stateError     // lost beyond the grace period, or a flag set was rejected
	stateFatal     // the source gave up
	stateInitError // Init gave up before the first flag set
)

// start runs src for a new run, and the overrides over it, with the
// goroutines that serve them.
func (p *Provider) start(src source.Source, overrides []*overrideLayer) *run {
	ctx, cancel := context.WithCancel(context.Background())
	r := &run{
		p: p, ctx: ctx, cancel: cancel,
		stateChanged: make(chan struct{}, 1),
		ready:        make(chan struct{}),
		gaveUp:       make(chan struct{}),
		overrides:    overrides,
	}
	p.events.open()
	r.wg.Add(3)
	go func() {
		defer r.wg.Done()
		p.events.pump(ctx)
	}()
	go func() {
		defer r.wg.Done()
		r.supervise()
	}()
	p.startUsage(r)
	go func() {
		defer r.wg.Done()
		// A source that stops by itself has given up, whether or not it
		// said so with Fatal first; Fatal reports it once either way.
		if err := src.Run(ctx, (*sink)(r)); err != nil && ctx.Err() == nil {
			(*sink)(r).Fatal(err)
		}
	}()
	r.runOverrides()
	return r
}

// stop ends the run: nothing more is reported, and it waits, until ctx
// ends, for every goroutine of the run to return.
func (r *run) stop(ctx context.Context) error {
	r.mu.Lock()
	r.state = stateFatal // nothing more is reported
	r.mu.Unlock()
	r.p.events.close()
	r.cancel()
	done := make(chan struct{})
	go func() {
		r.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// giveUpInit ends Init's wait without flags from the source. With cached
// flags (compiled from doc) it serves them and reports STALE; it answers
// nil as well when the flags arrived in the meantime.
func (r *run) giveUpInit(cached *evaluator.FlagSet, doc []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.readyClosed {
		return nil
	}
	if r.fatalErr != nil {
		return &openfeature.ProviderInitError{ErrorCode: openfeature.ProviderFatalCode, Message: r.fatalErr.Error()}
	}
	if r.state == stateFatal {
		// Shut down meanwhile: stop waits for the run's goroutines, and
		// none may start now.
		return errors.New("flagsnap: the provider was shut down during Init")
	}
	if cached != nil {
		r.p.loadedAt.Store(time.Now().UnixNano())
		r.putMain(cached, doc)
		r.markReady()
		r.state = stateStale
		// OpenFeature announces READY when Init returns; STALE must come
		// after it, so it is sent a moment later, and the grace period
		// runs from then.
		time.AfterFunc(initAnnounceDelay, r.announceCached)
		return nil
	}
	r.state = stateInitError
	err := r.initError(r.lastErr)
	r.p.log.Error(err.Error())
	return err
}

// initAnnounceDelay separates the READY that OpenFeature sends when Init
// returns from the STALE that follows when cached flags are served.
const initAnnounceDelay = 50 * time.Millisecond

// announceCached reports the cached flags Init served, unless flags have
// arrived or the run has ended since.
func (r *run) announceCached() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state == stateStale {
		r.emit(openfeature.ProviderStale, "serving cached flags: the source is unavailable: "+errText(r.lastErr), nil, "")
		r.signalStateChange()
	}
}

// supervise turns a lost source into ERROR once the grace period has
// passed without a new flag set.
func (r *run) supervise() {
	var timer *time.Timer
	var expired <-chan time.Time
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-r.stateChanged:
			r.mu.Lock()
			stale := r.state == stateStale
			r.mu.Unlock()
			switch {
			case stale && timer == nil:
				timer = time.NewTimer(r.p.cfg.RetryGracePeriod)
				expired = timer.C
			case !stale && timer != nil:
				timer.Stop()
				timer, expired = nil, nil
			}
		case <-expired:
			timer, expired = nil, nil
			r.mu.Lock()
			if r.state == stateStale {
				r.state = stateError
				r.p.log.Error(fmt.Sprintf("flag source still lost after the grace period of %v: ERROR now; evaluations answer from the flags in force", r.p.cfg.RetryGracePeriod),
					slog.String("error", errText(r.lastErr)))
				r.emit(openfeature.ProviderError, "flag source lost for longer than the grace period: "+errText(r.lastErr), nil, "")
			}
			r.mu.Unlock()
		}
	}
}

// compress compresses the document k keeps on a goroutine of the run,
// which stop waits for: compressing a document that a newer one has
// replaced, or once the run has ended, would be work for nothing.
func (r *run) compress(k *docKeeper) {
	r.wg.Go(func() {
		k.compress(func() bool {
			in := r.p.snap.Load()
			return in == nil || in.doc != k
		}, func() bool { return r.ctx.Err() != nil })
	})
}

// markReady records that the run serves flags. Closing ready ends the wait
// of any Init, including one called again after the first gave up, which
// would otherwise sit out its whole deadline with flags in force.
func (r *run) markReady() {
	if !r.readyClosed {
		r.readyClosed = true
		close(r.ready)
	}
}

// signalStateChange wakes the supervisor to look at the new state; a
// signal already pending covers this one.
func (r *run) signalStateChange() {
	select {
	case r.stateChanged <- struct{}{}:
	default:
	}
}

// emit sends an event. Its metadata names the source, and for an error
// repeats the code: the OpenFeature Go SDK hands handlers the message, the
// flag changes and the metadata, but not ErrorCode.
func (r *run) emit(t openfeature.EventType, msg string, changes []string, code openfeature.ErrorCode) {
	if t == openfeature.ProviderConfigChange {
		// Counted before it is sent, so that whoever caused it can tell
		// from SourceStatus that it is on its way.
		r.p.stats.announcedChange()
	}
	meta := map[string]any{"source": r.p.origin.name}
	if t == openfeature.ProviderError {
		if code == "" {
			code = openfeature.GeneralCode
		}
		meta["errorCode"] = string(code)
	}
	r.p.events.send(openfeature.Event{
		ProviderName: Name,
		EventType:    t,
		ProviderEventDetails: openfeature.ProviderEventDetails{
			Message:       msg,
			FlagChanges:   changes,
			ErrorCode:     code,
			EventMetadata: meta,
		},
	})
}

// errText is err's message for a sentence, also when there is no error.
func errText(err error) string {
	if err == nil {
		return "unknown reason"
	}
	return err.Error()
}
