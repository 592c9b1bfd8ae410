package flagsnap

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap/syncserver"
)

// A flag file with what flagd re-encodes: flags without a default variant
// (absent and null), a $ref, flag-set metadata.
const flagdShapedFile = `{
  "metadata": {"team": "checkout"},
  "$evaluators": {"staff": {"ends_with": [{"var": "email"}, "@example.com"]}},
  "flags": {
    "no-default": {"state": "ENABLED", "variants": {"on": true, "off": false}},
    "null-default": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": null,
      "targeting": {"if": [{"$ref": "staff"}, "on"]}},
    "with-default": {"state": "ENABLED", "variants": {"a": "A", "b": "B"}, "defaultVariant": "b",
      "targeting": {"if": [{"$ref": "staff"}, "a"]}, "metadata": {"owner": "ada"}}
  }
}`

// The same flags from a file and from a server that re-encodes them as the
// flagd daemon does resolve identically.
func TestFlagdEncodedFlagsEvaluateAsTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flags.json")
	if err := os.WriteFile(path, []byte(flagdShapedFile), 0o644); err != nil {
		t.Fatal(err)
	}
	fromFile, _ := grpcProvider(t, WithFile(path))
	s := serve(t, syncserver.WithFlags([]byte(flagdShapedFile)), syncserver.WithFlagdEncoding(path), syncserver.WithSyncContext(map[string]any{}))
	fromFlagd, _ := grpcProvider(t, fast(s)...)

	ctx := context.Background()
	contexts := []openfeature.FlattenedContext{
		nil,
		{"targetingKey": "u1", "email": "ada@example.com"},
		{"targetingKey": "u2", "email": "bob@example.org"},
	}
	for _, ec := range contexts {
		for _, key := range []string{"no-default", "null-default"} {
			want := fromFile.BooleanEvaluation(ctx, key, true, ec)
			got := fromFlagd.BooleanEvaluation(ctx, key, true, ec)
			if got.Error() != nil || got.Value != want.Value || got.Variant != want.Variant || got.Reason != want.Reason {
				t.Errorf("%s %v: from flagd %+v, from the file %+v", key, ec, got.ProviderResolutionDetail, want.ProviderResolutionDetail)
			}
		}
		want := fromFile.StringEvaluation(ctx, "with-default", "?", ec)
		got := fromFlagd.StringEvaluation(ctx, "with-default", "?", ec)
		if got.Error() != nil || got.Value != want.Value || got.Reason != want.Reason || got.FlagMetadata["owner"] != "ada" || got.FlagMetadata["team"] != "checkout" {
			t.Errorf("with-default %v: from flagd %+v, from the file %+v", ec, got.ProviderResolutionDetail, want.ProviderResolutionDetail)
		}
	}
	if r := fromFlagd.BooleanEvaluation(ctx, "no-default", true, nil); r.Reason != openfeature.DefaultReason || !r.Value {
		t.Errorf("a flag without a default variant: %+v, want the code default with DEFAULT", r.ProviderResolutionDetail)
	}
}

// A server that ends its streams gracefully, for whatever reason, causes no
// events: the provider stays READY and serves the same flags.
func TestGracefulStreamEndsCauseNoEvents(t *testing.T) {
	s := serve(t, syncserver.WithFlags([]byte(flagsV1)), syncserver.WithFlagdEncoding("flags.json"), syncserver.WithSyncContext(map[string]any{}))
	p, ev := grpcProvider(t, fast(s)...)
	for i := 2; i <= 4; i++ {
		if _, err := s.GoAwayTooManyPings(); err != nil {
			t.Fatal(err)
		}
		waitSyncCalls(t, s, i)
		// The next GOAWAY must find the reopened stream delivered: one
		// that ends before it has is not graceful but a lost server.
		waitReceived(t, p, uint64(i))
	}
	ev.none(500 * time.Millisecond)
	if c := color(p); c == "" {
		t.Errorf("no flags served")
	}
	// A real outage is still reported at once.
	s.Stop()
	if e := ev.next(); e.EventType != openfeature.ProviderStale {
		t.Errorf("after the server stopped: %s, want STALE", e.EventType)
	}
}

// waitReceived waits until p has received n flag sets from its source.
func waitReceived(t *testing.T, p *Provider, n uint64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for p.SourceStatus().Received < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d flag sets received within 5s, want %d", p.SourceStatus().Received, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitSyncCalls waits until s has received n SyncFlags calls.
func waitSyncCalls(t *testing.T, s *syncserver.Server, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := 0
		for _, r := range s.Requests() {
			if r.Method == "SyncFlags" {
				got++
			}
		}
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d SyncFlags calls within 5s, want %d", got, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
