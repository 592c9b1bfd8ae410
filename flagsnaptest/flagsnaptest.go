package flagsnaptest

import (
	"context"
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"
	"github.com/open-feature/go-sdk/openfeature/isolated"

	"github.com/flagsnap/flagsnap"
	"github.com/flagsnap/flagsnap/source"
)

// WaitTimeout bounds how long Lost, Restore and Await wait for the client
// to report a state. They return as soon as it does, which takes
// microseconds.
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
	source   *source.Memory
	provider *flagsnap.Provider
	api      *openfeature.EvaluationAPI
	client   *openfeature.Client
}

// New returns a ready provider serving doc, as Client does, with the
// means to change its flags and to see what it reports.
func New(t testing.TB, doc []byte, opts ...flagsnap.Option) *Flags {
	t.Helper()
	source := source.NewMemory(doc)
	// The memory source comes last, so that it wins over any source in
	// opts.
	// The environment stays out: a developer's or a CI machine's FLAGD_*
	// variables must not change, or break, a test's provider.
	all := append([]flagsnap.Option{flagsnap.WithoutEnv()}, opts...)
	provider, err := flagsnap.NewProvider(append(all, flagsnap.WithSource(source))...)
	if err != nil {
		t.Fatalf("flagsnaptest: %v", err)
	}
	api := isolated.NewAPI()
	t.Cleanup(func() {
		// Shutting the API down shuts the provider down and stops the
		// SDK's goroutines for it.
		if err := api.Shutdown(context.Background()); err != nil {
			t.Errorf("flagsnaptest: shutting down: %v", err)
		}
	})
	if err := api.SetProviderAndWait(context.Background(), provider); err != nil {
		t.Fatalf("flagsnaptest: %v", err)
	}
	return &Flags{t: t, source: source, provider: provider, api: api, client: api.NewClient()}
}

// Client is a client of the API the provider is bound to.
func (f *Flags) Client() *openfeature.Client { return f.client }

// API is the OpenFeature API of this test alone, for code under test that
// makes its own clients or registers handlers.
func (f *Flags) API() *openfeature.EvaluationAPI { return f.api }

// Provider is the provider serving the flags.
func (f *Flags) Provider() *flagsnap.Provider { return f.provider }

// Source is the memory source the provider runs. Its Set returns the
// provider's verdict on a document rather than failing the test, for tests
// of what happens when bad flags arrive.
func (f *Flags) Source() *source.Memory { return f.source }

// Set replaces the flags. When it returns, the provider serves the new
// ones: the next evaluation sees them. A document the provider rejects
// fails the test. The client's events and state follow shortly after, as
// OpenFeature delivers events on goroutines of its own.
func (f *Flags) Set(doc []byte) {
	f.t.Helper()
	if err := f.source.Set(doc); err != nil {
		f.t.Fatalf("flagsnaptest: %v", err)
	}
}

// Lost simulates a source that can no longer be reached, and returns once
// the client reports it: STALE, or ERROR when the grace period
// (flagsnap.WithRetryGracePeriod) has already passed. The flags in force
// are still served. A nil err is replaced by a generic one.
func (f *Flags) Lost(err error) {
	f.t.Helper()
	f.await("STALE or ERROR", func(s openfeature.State) bool {
		return s == openfeature.StaleState || s == openfeature.ErrorState
	}, func() { f.source.Lost(err) }, openfeature.ProviderStale, openfeature.ProviderError)
}

// Restore ends a loss simulated with Lost and returns once the client
// reports READY.
func (f *Flags) Restore() {
	f.t.Helper()
	f.await(string(openfeature.ReadyState), func(s openfeature.State) bool { return s == openfeature.ReadyState }, func() {
		if err := f.source.Restore(); err != nil {
			f.t.Fatalf("flagsnaptest: %v", err)
		}
	}, openfeature.ProviderReady)
}

// Await returns once the client reports state (READY, STALE, ERROR or
// FATAL), for example ERROR once a loss has outlasted the grace period. It
// fails the test if that takes longer than WaitTimeout.
func (f *Flags) Await(state openfeature.State) {
	f.t.Helper()
	events := map[openfeature.State]openfeature.EventType{
		openfeature.ReadyState: openfeature.ProviderReady,
		openfeature.StaleState: openfeature.ProviderStale,
		openfeature.ErrorState: openfeature.ProviderError,
		openfeature.FatalState: openfeature.ProviderError,
	}
	ev, ok := events[state]
	if !ok {
		f.t.Fatalf("flagsnaptest: Await(%q): a provider does not report that state", state)
	}
	f.await(string(state), func(s openfeature.State) bool { return s == state }, nil, ev)
}

// await does act, then waits until the client's state satisfies ok. The
// state changes with the events of the given types, so each of them wakes
// the wait: handlers are registered before act, so none is missed.
func (f *Flags) await(what string, ok func(openfeature.State) bool, act func(), types ...openfeature.EventType) {
	f.t.Helper()
	wake := make(chan struct{}, 1)
	handler := func(openfeature.EventDetails) {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	for _, t := range types {
		f.client.AddHandler(t, &handler)
		defer f.client.RemoveHandler(t, &handler)
	}
	if act != nil {
		act()
	}
	timeout := time.NewTimer(WaitTimeout)
	defer timeout.Stop()
	for !ok(f.client.State()) {
		select {
		case <-wake:
		case <-timeout.C:
			f.t.Fatalf("flagsnaptest: the client is %s after %v, want %s", f.client.State(), WaitTimeout, what)
		}
	}
}
