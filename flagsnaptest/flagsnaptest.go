package flagsnaptest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"
	"github.com/open-feature/go-sdk/openfeature/isolated"

	"github.com/flagsnap/flagsnap"
	"github.com/flagsnap/flagsnap/source"
)

// WaitTimeout bounds how long a method, or a call on Source, waits for the
// client to show the outcome of what it did, and how long Await waits for
// a state. They return as soon as the client shows it, so a wait that runs
// out is a bug, and fails the test.
const WaitTimeout = 5 * time.Second

// Client returns an OpenFeature client whose provider serves doc, a flag
// document in JSON or YAML, on an OpenFeature API of its own. The provider
// is ready when Client returns, and it and the API are shut down when the
// test ends. A document that does not load fails the test. opts are
// given to flagsnap.NewProvider, for example WithStrictValidation.
func Client(t testing.TB, doc []byte, opts ...flagsnap.Option) *openfeature.Client {
	t.Helper()
	return New(t, doc, opts...).Client()
}

// Flags is a provider serving flags from memory for one test, bound to an
// OpenFeature API of its own, with a client of that API. Its methods that
// take no t fail the test given to New, so they belong on the test's
// goroutine, as t.Fatal does.
type Flags struct {
	t        testing.TB
	source   *source.Memory // the test's; a relay passes its calls on to the provider's
	provider *flagsnap.Provider
	api      *openfeature.EvaluationAPI
	client   *openfeature.Client

	// unsettled says why a call on the source returned without the client
	// showing its outcome, until a method or the end of the test reports
	// it: the call itself has no test to fail.
	unsettled *firstError
}

type firstError struct {
	mu  sync.Mutex
	msg string
}

// New returns a ready provider serving doc, as Client does, with the
// means to change its flags and to see what it reports.
func New(t testing.TB, doc []byte, opts ...flagsnap.Option) *Flags {
	t.Helper()
	// The provider runs a memory source of its own, which the test's
	// reaches through a relay. The relay is what waits for the client
	// after each call, so that the test's calls on Source wait too; and
	// the provider still sees a *source.Memory, which it names "memory"
	// in its messages and events.
	providerSource := source.NewMemory(doc)
	// The memory source comes last, so that it wins over any source in
	// opts.
	// The environment stays out: a developer's or a CI machine's FLAGD_*
	// variables must not change, or break, a test's provider.
	providerOpts := append([]flagsnap.Option{flagsnap.WithoutEnv()}, opts...)
	provider, err := flagsnap.NewProvider(append(providerOpts, flagsnap.WithSource(providerSource))...)
	if err != nil {
		t.Fatalf("flagsnaptest: %v", err)
	}
	api := isolated.NewAPI()
	f := &Flags{t: t, source: source.NewMemory(doc), provider: provider, api: api, client: api.NewClient(), unsettled: &firstError{}}

	ctx, cancel := context.WithCancel(context.Background())
	r := &relay{flags: f, providerSource: providerSource, ctx: ctx, started: make(chan struct{})}
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		_ = f.source.Run(ctx, r)
	}()
	t.Cleanup(func() {
		// Once the relay has stopped, the test's source answers every
		// call with an error, as a source whose provider has shut down.
		cancel()
		<-ran
		// Shutting the API down shuts the provider down and stops the
		// SDK's goroutines for it.
		if err := api.Shutdown(context.Background()); err != nil {
			t.Errorf("flagsnaptest: shutting down: %v", err)
		}
		if msg := f.takeUnsettled(); msg != "" {
			t.Errorf("flagsnaptest: %s", msg)
		}
	})
	// The test's source hands the relay its document before anything
	// else; the provider's source has it already.
	<-r.started
	if err := api.SetProviderAndWait(context.Background(), provider); err != nil {
		t.Fatalf("flagsnaptest: %v", err)
	}
	return f
}

// Client is a client of the API the provider is bound to.
func (f *Flags) Client() *openfeature.Client { return f.client }

// API is the OpenFeature API of this test alone, for code under test that
// makes its own clients or registers handlers.
func (f *Flags) API() *openfeature.EvaluationAPI { return f.api }

// Provider is the provider serving the flags.
func (f *Flags) Provider() *flagsnap.Provider { return f.provider }

// Source is the memory source behind the provider. Its calls return once
// the client shows their outcome, as the methods of Flags do, but fail no
// test: Set returns the provider's verdict, as TrySet does.
func (f *Flags) Source() *source.Memory { return f.source }

// Set replaces the flags. When it returns, the provider serves the new
// ones (the next evaluation sees them), the client is READY, and the
// PROVIDER_CONFIGURATION_CHANGED event the change caused, if any, has been
// handed to the client's handlers (OpenFeature runs each on a goroutine of
// its own). A document the provider rejects fails the test; TrySet is for
// those.
func (f *Flags) Set(doc []byte) {
	f.t.Helper()
	if err := f.TrySet(doc); err != nil {
		f.t.Fatalf("flagsnaptest: %v", err)
	}
}

// TrySet offers doc to the provider and returns its verdict: nil, or why
// it rejected the document, for tests of what happens when bad flags
// arrive. It returns once the client shows the verdict: READY with the new
// flags served and their PROVIDER_CONFIGURATION_CHANGED, if any, handed to
// the client's handlers, or ERROR with the flags in force kept.
func (f *Flags) TrySet(doc []byte) error {
	f.t.Helper()
	err := f.source.Set(doc)
	f.reportUnsettled()
	return err
}

// Lost simulates a source that can no longer be reached, and returns once
// the client reports it: STALE, or ERROR when the grace period
// (flagsnap.WithRetryGracePeriod) has already passed, or when the client
// was ERROR already (after a rejected document: a loss does not hide it).
// The flags in force are still served. A nil err is replaced by a generic
// one.
func (f *Flags) Lost(err error) {
	f.t.Helper()
	f.source.Lost(err)
	f.reportUnsettled()
}

// Restore ends a loss simulated with Lost and returns once the client
// reports READY and the PROVIDER_CONFIGURATION_CHANGED of the recovery has
// been handed to the client's handlers.
func (f *Flags) Restore() {
	f.t.Helper()
	if err := f.source.Restore(); err != nil {
		f.t.Fatalf("flagsnaptest: %v", err)
	}
	f.reportUnsettled()
	// A source that was not lost has nothing to restore, and the client
	// stays as it was: after a rejected document, that is ERROR.
	if s := f.client.State(); s != openfeature.ReadyState {
		f.t.Fatalf("flagsnaptest: Restore: the client is %s, and no loss simulated with Lost was left to end", s)
	}
}

// Await returns once the client reports state (READY, STALE, ERROR or
// FATAL), for example ERROR once a loss has outlasted the grace period. It
// fails the test if that takes longer than WaitTimeout.
func (f *Flags) Await(state openfeature.State) {
	f.t.Helper()
	switch state {
	case openfeature.ReadyState, openfeature.StaleState, openfeature.ErrorState, openfeature.FatalState:
	default:
		f.t.Fatalf("flagsnaptest: Await(%q): a provider does not report that state", state)
	}
	w := f.watch()
	defer w.stop()
	if err := w.until(context.Background(), WaitTimeout, string(state), state); err != nil {
		f.t.Fatalf("flagsnaptest: %v", err)
	}
}

// reportUnsettled fails the test if a call on the source did not see its
// outcome.
func (f *Flags) reportUnsettled() {
	f.t.Helper()
	if msg := f.takeUnsettled(); msg != "" {
		f.t.Fatalf("flagsnaptest: %s", msg)
	}
}

func (f *Flags) takeUnsettled() string {
	u := f.unsettled
	u.mu.Lock()
	defer u.mu.Unlock()
	msg := u.msg
	u.msg = ""
	return msg
}

// setUnsettled keeps the first reason: what follows it is its consequence.
func (f *Flags) setUnsettled(err error) {
	u := f.unsettled
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.msg == "" {
		u.msg = err.Error()
	}
}

// watch is a wait for the client's state, and for the
// CONFIGURATION_CHANGED events handed to its handlers.
type watch struct {
	client  *openfeature.Client
	wake    chan struct{}
	state   openfeature.EventCallback // for the events that set the state
	change  openfeature.EventCallback // for CONFIGURATION_CHANGED
	changes atomic.Uint64             // CONFIGURATION_CHANGED events seen
}

// stateEvents are the events that set the client's state.
var stateEvents = []openfeature.EventType{openfeature.ProviderReady, openfeature.ProviderStale, openfeature.ProviderError}

// watch starts a wait for the client's state. OpenFeature stores the
// state an event sets before it starts any handler of the event, so a
// handler of ours wakes the wait with the state already readable. The
// handlers are in place before the wait acts, so none is missed.
func (f *Flags) watch() *watch {
	w := &watch{client: f.client, wake: make(chan struct{}, 1)}
	state := func(openfeature.EventDetails) { w.wakeUp() }
	change := func(openfeature.EventDetails) {
		w.changes.Add(1)
		w.wakeUp()
	}
	w.state, w.change = &state, &change
	for _, t := range stateEvents {
		f.client.AddHandler(t, w.state)
	}
	f.client.AddHandler(openfeature.ProviderConfigChange, w.change)
	return w
}

func (w *watch) wakeUp() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// stop removes the wait's handlers. Removing one takes the lock that
// OpenFeature holds while it starts an event's handlers, so once stop has
// returned every handler of the events the wait saw has been started.
func (w *watch) stop() {
	for _, t := range stateEvents {
		w.client.RemoveHandler(t, w.state)
	}
	w.client.RemoveHandler(openfeature.ProviderConfigChange, w.change)
}

// until waits until the client's state is one of want, for at most
// bound, or until ctx is done.
func (w *watch) until(ctx context.Context, bound time.Duration, what string, want ...openfeature.State) error {
	timeout := time.NewTimer(bound)
	defer timeout.Stop()
	for {
		s := w.client.State()
		for _, ok := range want {
			if s == ok {
				return nil
			}
		}
		select {
		case <-w.wake:
		case <-ctx.Done():
			return nil
		case <-timeout.C:
			return fmt.Errorf("the client is %s after %v, want %s", w.client.State(), bound, what)
		}
	}
}

// untilChanges waits until the wait has seen n CONFIGURATION_CHANGED
// events, for at most bound, or until ctx is done.
func (w *watch) untilChanges(ctx context.Context, bound time.Duration, n uint64) error {
	timeout := time.NewTimer(bound)
	defer timeout.Stop()
	for w.changes.Load() < n {
		select {
		case <-w.wake:
		case <-ctx.Done():
			return nil
		case <-timeout.C:
			return fmt.Errorf("%d of the %d CONFIGURATION_CHANGED events the provider sent reached the client within %v", w.changes.Load(), n, bound)
		}
	}
	return nil
}

// relay passes the test's source's calls on to the provider's source, and
// returns from each once the client shows its outcome.
//
// OpenFeature hands a provider's events to one goroutine, which sets the
// client's state from each in the order the provider sent them: a call
// has settled once the state its last state event sets is readable. The
// relay knows that state from the provider's verdict and the state the
// client showed before the call, which is the provider's own, since every
// earlier call waited for its own. Only the end of the grace period
// changes the state on its own, and that turns STALE into ERROR, which
// changes none of these answers. CONFIGURATION_CHANGED sets no state: the
// provider counts those it sends in SourceStatus, and a call has settled
// once as many as it caused have been handed to the client's handlers.
type relay struct {
	flags          *Flags
	providerSource *source.Memory
	ctx            context.Context // done when the test ends
	started        chan struct{}   // closed once the first document has come
}

var _ source.Sink = (*relay)(nil)

// Update is called with the test's source's lock held, so calls reach it
// one at a time.
func (r *relay) Update(u source.Update) error {
	select {
	case <-r.started:
	default:
		close(r.started)
		return nil
	}
	sent := r.flags.provider.SourceStatus().ConfigChanges
	w := r.flags.watch()
	defer w.stop()
	err := r.providerSource.Set(u.Flags)
	if err != nil {
		// The provider's source says which call failed; the test's will
		// say it again.
		if inner := errors.Unwrap(err); inner != nil {
			err = inner
		}
		// A rejected flag set is an ERROR, whatever the state before.
		r.awaitOutcome(w, fmt.Sprintf("the provider rejected the flags (%v)", err), "ERROR", openfeature.ErrorState)
		return err
	}
	// Accepted flags are READY: at once if the client was READY already,
	// else after the provider's READY event.
	r.awaitOutcome(w, "the provider accepted the flags", "READY", openfeature.ReadyState)
	r.awaitChanges(w, sent)
	return nil
}

// awaitChanges waits until the CONFIGURATION_CHANGED events the provider
// sent since it had sent sent have reached the client's handlers.
func (r *relay) awaitChanges(w *watch, sent uint64) {
	n := r.flags.provider.SourceStatus().ConfigChanges - sent
	if err := w.untilChanges(r.ctx, WaitTimeout, n); err != nil {
		r.flags.setUnsettled(err)
	}
}

func (r *relay) Lost(err error) {
	before := r.flags.client.State()
	w := r.flags.watch()
	defer w.stop()
	r.providerSource.Lost(err)
	var tooLarge *source.MessageTooLargeError
	switch {
	case errors.As(err, &tooLarge):
		// A flag set too large to take is an error at once, as a
		// rejected one.
		r.awaitOutcome(w, fmt.Sprintf("the source refused a flag set (%v)", err), "ERROR", openfeature.ErrorState)
	case before == openfeature.ReadyState:
		// The grace period may be so short that ERROR follows at once.
		r.awaitOutcome(w, fmt.Sprintf("the source was lost (%v)", err), "STALE or ERROR", openfeature.StaleState, openfeature.ErrorState)
	}
	// A STALE or ERROR client stays as it is: the provider sends nothing.
}

// Fatal is never called: a memory source does not give up.
func (r *relay) Fatal(error) {}

// awaitOutcome waits until the client is in one of want after happened
// (what names them), and keeps the reason for the test when it is not:
// the call on the source that waits has no test to fail.
func (r *relay) awaitOutcome(w *watch, happened, what string, want ...openfeature.State) {
	if err := w.until(r.ctx, WaitTimeout, what, want...); err != nil {
		r.flags.setUnsettled(fmt.Errorf("%s, but %w", happened, err))
	}
}
