package flagsnap

// The sink a source reports to: new flag sets, losses and fatal failures,
// and what each does to the run's state.

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap/evaluator"
	"github.com/flagsnap/flagsnap/source"
)

// sink is how a source reaches a run.
type sink run

var _ source.PollSink = (*sink)(nil)

// errShutDown is the verdict on flags that arrive after Shutdown.
var errShutDown = errors.New("flagsnap: the provider has shut down")

// Update puts the flags in force, or rejects them (reporting it) and keeps
// the flags in force, and tells the source which: a source whose caller
// waits on it (source.Memory's Set) passes on the provider's own verdict,
// load options included.
func (s *sink) Update(u source.Update) error {
	r := (*run)(s)
	// Polls, reconnects and streams reopened after a graceful end deliver
	// the flags in force again; recognising them costs a hash instead of
	// a full load.
	r.p.stats.delivered()
	r.mu.Lock()
	last, main := r.lastCompiled, r.main
	r.mu.Unlock()
	var digest [sha256.Size]byte
	var hashing sync.WaitGroup
	if last.set != nil {
		digest = sha256.Sum256(u.Flags)
		if main == last.set && digest == last.digest && reflect.DeepEqual(u.SyncContext, last.syncCtx) {
			if _, _, ok := r.accept(last.set, u.Flags, u.Origin, digest); !ok {
				return errShutDown
			}
			return nil
		}
	} else {
		// Nothing to recognise: the digest is taken while the set
		// compiles, on a core its sequential parts leave idle.
		hashing.Go(func() { digest = sha256.Sum256(u.Flags) })
	}
	prev := main
	if prev == nil {
		prev = r.p.flags() // an earlier run's, after Shutdown and Init again
	}
	set, err := r.p.compile(u.Flags, u.SyncContext, prev)
	hashing.Wait()
	if err != nil {
		r.rejected(u.Origin, err)
		return err
	}
	if set.Len() == 0 && (prev == nil || prev.Len() > 0) {
		// flagd sends an empty set while it is still reading a large
		// file: every flag of the source is missing until the real one
		// arrives, which is worth a word. It is compared with the
		// source's last set, not with the one in force, which holds the
		// overrides' flags too.
		r.p.log.Warn("the flag source delivered an empty flag set; every flag is missing until it sends flags", slog.String("origin", u.Origin))
	}
	r.mu.Lock()
	r.lastCompiled.set, r.lastCompiled.digest, r.lastCompiled.syncCtx = set, digest, u.SyncContext
	r.mu.Unlock()
	return s.acceptAndCache(set, u, digest)
}

// maxLoggedKeys is how many changed keys a "flags changed" line names.
const maxLoggedKeys = 20

// changedKeys are the attributes naming the changed keys: the first
// maxLoggedKeys, then how many more.
func changedKeys(changes []string) []any {
	attrs := []any{slog.Int("changed", len(changes)), slog.String("keys", strings.Join(changes[:min(len(changes), maxLoggedKeys)], ","))}
	if n := len(changes) - maxLoggedKeys; n > 0 {
		attrs = append(attrs, slog.Int("more", n))
	}
	return attrs
}

// acceptAndCache puts set, compiled from u, whose SHA-256 is digest, in
// force unless the run has ended, and writes u to the cache file.
func (s *sink) acceptAndCache(set *evaluator.FlagSet, u source.Update, digest [sha256.Size]byte) error {
	r := (*run)(s)
	p := r.p
	changes, first, ok := r.accept(set, u.Flags, u.Origin, digest)
	if !ok {
		return errShutDown
	}
	attrs := []any{slog.String("origin", u.Origin), slog.Int("flags", set.Len())}
	switch {
	case first:
		// The one line that says the provider works, and how: the
		// handler adds the source.
		p.log.Info("flags loaded", append(attrs, slog.String("resolver", p.resolverName()))...)
	case len(changes) > 0:
		// One line per change of the flags in force, naming what changed:
		// what an operator looks for after an incident.
		p.log.Info("flags changed", append(attrs, changedKeys(changes)...)...)
	default:
		p.log.Debug("flags loaded", append(attrs, slog.Int("changed", 0))...)
	}
	// Written outside the run's lock: a slow disk must not hold up Init's
	// deadline, Shutdown or the other reports.
	if p.cfg.CacheFile != "" {
		if err := writeCache(p.cfg.CacheFile, u); err != nil {
			p.log.Warn("flag cache not written", slog.String("path", p.cfg.CacheFile), slog.String("error", err.Error()))
		}
	}
	return nil
}

// accept puts a compiled flag set, and the document doc it was compiled
// from, in force and reports it, unless the run has ended. It returns the keys of the flags that changed, which Init's
// flags are not compared for, and whether set is the first of the run
// from the source.
func (r *run) accept(set *evaluator.FlagSet, doc []byte, origin string, digest [sha256.Size]byte) (changes []string, first, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state == stateFatal {
		return nil, false, false
	}
	first, r.loaded = !r.loaded, true
	// The new flags are compiled and in force before anyone hears of them.
	r.p.loadedAt.Store(time.Now().UnixNano())
	set, old := r.putMain(set, doc)
	if r.state != stateStarting {
		// Init's flags are announced by READY, which lists none; sorting
		// the keys of a large first set would lengthen every start.
		added, removed, changed := set.Changes(old)
		changes = slices.Concat(added, removed, changed)
		if old != nil && !reflect.DeepEqual(old.Enrichment(), set.Enrichment()) {
			// Every flag may evaluate differently with other enrichment.
			changes = unionKeys(old, set)
		}
	}
	// A source that comes back after a loss has reconnected; one whose
	// flag set was rejected has only sent a better one.
	lost := r.state == stateStale || r.state == stateError && !r.rejectedSet
	r.p.stats.appliedSet(digest, lost)
	r.lastErr, r.rejectedSet = nil, false

	switch {
	case r.state == stateStarting:
		// Init returns nil and OpenFeature announces READY itself.
		r.markReady()
	case r.state == stateReady:
		if len(changes) > 0 {
			r.emit(openfeature.ProviderConfigChange, "flags changed", changes, "")
		}
	default: // back from a loss, a rejected flag set or a failed Init
		r.markReady()
		r.emit(openfeature.ProviderReady, "flags loaded from "+origin, nil, "")
		r.emit(openfeature.ProviderConfigChange, "flags loaded from "+origin, changes, "")
	}
	r.state = stateReady
	r.signalStateChange()
	return changes, first, true
}

// tooLarge handles a flag set the source refused for its size: like a
// flag set that does not parse, it is an error at once, not a loss that
// may heal within the grace period, since the server will send the same
// set again.
func (r *run) tooLarge(e *source.MessageTooLargeError) {
	fix := "raise it with flagsnap.WithMaxMessageSize"
	if r.p.origin.kind == originCustom {
		fix = "raise the limit of the source (blob.WithMaxSize for an object)"
	}
	size := fmt.Sprintf("is %d bytes, over", e.Size)
	if e.Size < 0 {
		size = "is over"
	}
	err := fmt.Errorf("the flag set from %s %s the limit of %d bytes: %s", e.Target, size, e.Limit, fix)
	r.p.log.Error("flag set refused; the previous flags stay in force", slog.String("origin", e.Target),
		slog.Int("size", e.Size), slog.Int("limit", e.Limit), slog.String("error", err.Error()))
	r.p.stats.failed(err, true)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastErr = err
	if r.state == stateStarting || r.state == stateFatal || r.state == stateInitError {
		return // Init reports it, or has: the flags' arrival will be news
	}
	r.state = stateError
	r.emit(openfeature.ProviderError, err.Error(), nil, openfeature.GeneralCode)
	r.signalStateChange()
}

// rejected handles a flag set that does not parse: the flags in force stay,
// and the reason is logged and reported.
func (r *run) rejected(origin string, err error) {
	r.p.log.Error("flag set rejected; the previous flags stay in force", slog.String("origin", origin), slog.String("error", err.Error()))
	r.p.stats.failed(err, true)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastErr, r.rejectedSet = err, true
	if r.state == stateStarting || r.state == stateFatal {
		return // Init reports it
	}
	r.state = stateError
	r.emit(openfeature.ProviderError, fmt.Sprintf("flag set from %s rejected: %v", origin, err), nil, openfeature.ParseErrorCode)
	r.signalStateChange()
}

// Lost reports a source that lost its origin: STALE at once, and ERROR
// when the supervisor sees the grace period pass.
func (s *sink) Lost(err error) {
	r := (*run)(s)
	var tooLarge *source.MessageTooLargeError
	if errors.As(err, &tooLarge) {
		r.tooLarge(tooLarge)
		return
	}
	r.p.stats.failed(err, false)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastErr, r.rejectedSet = err, false
	switch r.state {
	case stateReady:
		r.p.log.Warn(fmt.Sprintf("flag source lost: STALE now, ERROR if it is still lost in %v; evaluations answer from the flags in force", r.p.cfg.RetryGracePeriod),
			slog.String("error", errText(err)))
		r.state = stateStale
		r.emit(openfeature.ProviderStale, "flag source lost: "+errText(err), nil, "")
		r.signalStateChange()
	case stateError:
		// Already reported; a lost source stays an error.
	}
}

// Unchanged counts a poll that found the flags unchanged.
func (s *sink) Unchanged() { (*run)(s).p.stats.polledUnchanged() }

// Fatal reports a source that gave up for good.
func (s *sink) Fatal(err error) {
	r := (*run)(s)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state == stateFatal {
		return
	}
	r.p.log.Error("flag source failed for good: giving up, no more attempts", slog.String("error", errText(err)))
	r.p.stats.failed(err, false)
	if err == nil {
		// Init and giveUpInit tell a fatal source by a non-nil fatalErr.
		err = errors.New("the flag source gave up without a reason")
	}
	starting := r.state == stateStarting
	r.state = stateFatal
	r.fatalErr = err
	// Closing gaveUp ends the wait of any Init, the first or one called
	// again after the first gave up, as markReady does for flags.
	close(r.gaveUp)
	if starting {
		return // Init reports it
	}
	r.emit(openfeature.ProviderError, "flag source failed: "+errText(err), nil, openfeature.ProviderFatalCode)
	r.signalStateChange()
}
