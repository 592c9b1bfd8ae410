package blob_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap"
	"github.com/flagsnap/flagsnap/blob"
)

const (
	flagsV1 = `{"flags": {
  "color": {"state": "ENABLED", "variants": {"red": "red", "blue": "blue"}, "defaultVariant": "red"},
  "old":   {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on"}
}}`
	// flagsV2 changes color, removes old and adds limit.
	flagsV2 = `{"flags": {
  "color": {"state": "ENABLED", "variants": {"red": "red", "blue": "blue"}, "defaultVariant": "blue"},
  "limit": {"state": "ENABLED", "variants": {"low": 10, "high": 100}, "defaultVariant": "low"}
}}`
	corrupt = `{"flags": {"color": `

	// interval is the tests' poll interval, grace their provider's grace
	// period; waitFor bounds every wait for an event or a count.
	interval = 100 * time.Millisecond
	grace    = 300 * time.Millisecond
	waitFor  = 10 * time.Second
)

// stores are the object stores the tests run against; a store that
// cannot run here skips its subtests.
var stores = []struct {
	name string
	open func(t *testing.T) *store
}{
	{"s3", s3Store},
	{"gcs", gcsStore},
	{"azure", azureStore},
}

// forEachStore runs test against every store, each in a subtest.
func forEachStore(t *testing.T, test func(t *testing.T, st *store)) {
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) { test(t, s.open(t)) })
	}
}

// startProvider opens the object key of st and runs a provider on it
// until the test ends; Init's error is returned, not fatal.
func startProvider(t *testing.T, st *store, key string, blobOpts []blob.Option, opts ...flagsnap.Option) (*flagsnap.Provider, events, error) {
	t.Helper()
	src, err := blob.Open(context.Background(), st.url(key), append([]blob.Option{blob.WithPollInterval(interval)}, blobOpts...)...)
	if err != nil {
		t.Fatal(err)
	}
	p, err := flagsnap.NewProvider(append([]flagsnap.Option{flagsnap.WithSource(src), flagsnap.WithDeadline(waitFor)}, opts...)...)
	if err != nil {
		src.Close()
		t.Fatal(err)
	}
	t.Cleanup(p.Shutdown)
	err = p.Init(openfeature.EvaluationContext{})
	return p, events{t: t, ch: p.EventChannel()}, err
}

func color(p *flagsnap.Provider) string {
	return p.StringEvaluation(context.Background(), "color", "none", nil).Value
}

// events takes a provider's events, each wait bounded.
type events struct {
	t  *testing.T
	ch <-chan openfeature.Event
}

func (e events) next() openfeature.Event {
	e.t.Helper()
	select {
	case ev := <-e.ch:
		return ev
	case <-time.After(waitFor):
		e.t.Fatalf("no event within %v", waitFor)
		return openfeature.Event{}
	}
}

// expect takes the next event and fails unless it is of type want.
func (e events) expect(want openfeature.EventType) openfeature.Event {
	e.t.Helper()
	ev := e.next()
	if ev.EventType != want {
		e.t.Fatalf("got %s %q, want %s", ev.EventType, ev.Message, want)
	}
	return ev
}

// changed expects CONFIGURATION_CHANGED naming exactly the flags keys.
func (e events) changed(keys ...string) {
	e.t.Helper()
	ev := e.expect(openfeature.ProviderConfigChange)
	got := slices.Sorted(slices.Values(ev.FlagChanges))
	if !slices.Equal(got, slices.Sorted(slices.Values(keys))) {
		e.t.Fatalf("CONFIGURATION_CHANGED names %v, want %v", got, keys)
	}
}

func (e events) none(within time.Duration) {
	e.t.Helper()
	select {
	case ev := <-e.ch:
		e.t.Fatalf("unexpected event %s %q %v", ev.EventType, ev.Message, ev.FlagChanges)
	case <-time.After(within):
	}
}

// eventually polls cond every few milliseconds until it holds, for at
// most waitFor.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, waitFor)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The life of a provider on an object: served, polled without downloads
// while unchanged, changed, deleted, recreated, corrupted, repaired.
func TestProviderFollowsTheObject(t *testing.T) {
	forEachStore(t, func(t *testing.T, st *store) {
		const key = "prod/flags.json"
		st.put(t, key, flagsV1)
		p, ev, err := startProvider(t, st, key, nil, flagsnap.WithRetryGracePeriod(grace))
		if err != nil {
			t.Fatalf("Init: %v", err)
		}
		if c := color(p); c != "red" {
			t.Fatalf("color %q, want red", c)
		}
		if s := p.SourceStatus(); s.Source != st.origin(key) || s.State != flagsnap.SourceServing {
			t.Fatalf("status names %q, %s; want %q, serving", s.Source, s.State, st.origin(key))
		}

		t.Log("unchanged: attribute reads only, no event")
		eventually(t, "three unchanged polls", func() bool { return p.SourceStatus().Unchanged >= 3 })
		ev.none(interval)
		if attrs, downloads := st.requests.counts(key); downloads != 1 || attrs < 4 {
			t.Errorf("%d attribute reads and %d downloads for four polls, the last three unchanged; want at least 4 and 1", attrs, downloads)
		}

		t.Log("changed: one poll later, CONFIGURATION_CHANGED")
		before, _ := st.requests.counts(key)
		st.put(t, key, flagsV2)
		ev.changed("color", "limit", "old")
		// The poll under way when the object changed, and the next one.
		if after, _ := st.requests.counts(key); after-before > 2 {
			t.Errorf("the change took %d polls to arrive, want at most 2", after-before)
		}
		if c := color(p); c != "blue" {
			t.Fatalf("color %q after the change, want blue", c)
		}

		t.Log("deleted: STALE, then ERROR after the grace period, the flags kept")
		st.remove(t, key)
		if e := ev.expect(openfeature.ProviderStale); !strings.Contains(e.Message, "no object at "+st.origin(key)) {
			t.Errorf("STALE %q, want it to name the missing object", e.Message)
		}
		ev.expect(openfeature.ProviderError)
		if c := color(p); c != "blue" {
			t.Errorf("color %q with the object gone, want the flags in force", c)
		}

		t.Log("recreated: READY")
		st.put(t, key, flagsV1)
		ev.expect(openfeature.ProviderReady)
		ev.changed("color", "limit", "old")

		t.Log("corrupt: ERROR with PARSE_ERROR, the flags kept")
		st.put(t, key, corrupt)
		if e := ev.expect(openfeature.ProviderError); e.ErrorCode != openfeature.ParseErrorCode {
			t.Errorf("ERROR %s %q, want PARSE_ERROR", e.ErrorCode, e.Message)
		}
		if c := color(p); c != "red" {
			t.Errorf("color %q after a corrupt object, want the flags in force", c)
		}
		st.put(t, key, flagsV2)
		ev.expect(openfeature.ProviderReady)
		ev.changed("color", "limit", "old")
		if s := p.SourceStatus(); s.Rejected != 1 || s.Reconnects != 1 {
			t.Errorf("status %+v, want one rejected set and one reconnect", s)
		}
	})
}

// Init names the object and says what to change when there is nothing
// there.
func TestInitSaysWhatToChange(t *testing.T) {
	forEachStore(t, func(t *testing.T, st *store) {
		_, _, err := startProvider(t, st, "missing.json", nil, flagsnap.WithDeadline(2*time.Second))
		if err == nil {
			t.Fatal("Init succeeded without an object")
		}
		// The "To fix" is the object error's own advice, not a generic one.
		for _, want := range []string{"no object at " + st.origin("missing.json"), "To fix: check the bucket and key"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("Init: %v\nwant %q", err, want)
			}
		}
		var oe *blob.ObjectError
		if !errors.As(err, &oe) {
			t.Errorf("Init: %v, want a *blob.ObjectError within", err)
		}
	})
}

// An object over WithMaxSize is refused from its attributes, without a
// download, and the provider says so.
func TestObjectOverTheLimitIsNotDownloaded(t *testing.T) {
	st := s3Store(t)
	st.put(t, "flags.json", flagsV1)
	_, _, err := startProvider(t, st, "flags.json", []blob.Option{blob.WithMaxSize(16)}, flagsnap.WithDeadline(2*time.Second))
	if err == nil || !strings.Contains(err.Error(), "over the limit of 16 bytes") || !strings.Contains(err.Error(), st.origin("flags.json")) {
		t.Fatalf("Init: %v, want the object over the limit of 16 bytes", err)
	}
	if _, downloads := st.requests.counts("flags.json"); downloads != 0 {
		t.Errorf("%d downloads of an object over the limit, want none", downloads)
	}
}

// An override file over an object: it wins by key, and applies while the
// object is gone, the provider's state staying the object's.
func TestOverrideOverAnObject(t *testing.T) {
	forEachStore(t, func(t *testing.T, st *store) {
		const key = "prod/flags.json"
		st.put(t, key, flagsV1)
		over := filepath.Join(t.TempDir(), "override.json")
		p, ev, err := startProvider(t, st, key, nil, flagsnap.WithRetryGracePeriod(grace), flagsnap.WithOverrideFile(over))
		if err != nil {
			t.Fatalf("Init: %v", err)
		}
		st.remove(t, key)
		ev.expect(openfeature.ProviderStale)
		ev.expect(openfeature.ProviderError)
		if err := os.WriteFile(over, []byte(`{"flags": {"color": {"state": "ENABLED", "variants": {"red": "red", "blue": "blue"}, "defaultVariant": "blue"}}}`), 0o644); err != nil {
			t.Fatal(err)
		}
		ev.changed("color")
		if c := color(p); c != "blue" {
			t.Errorf("color %q, want the override's blue", c)
		}
		if s := p.SourceStatus(); s.State != flagsnap.SourceError || s.Overridden["color"] != over {
			t.Errorf("status %s, overridden %v; want error, color by the override", s.State, s.Overridden)
		}
	})
}
