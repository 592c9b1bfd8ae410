package main

import (
	"bytes"
	"context"
	"regexp"
	"testing"

	"go.uber.org/goleak"
)

// run shuts OpenFeature down and closes what it started; nothing may be
// left running once it returns.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// searchEngine is the one line that depends on the clock: the rollout's
// weights move every second, so either variant may come out, but always by
// targeting.
var searchEngine = regexp.MustCompile(`(?m)^  search-engine (vector variant=vector|legacy variant=legacy) reason=TARGETING_MATCH$`)

func TestRunOnce(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"-once", "-flags", "flags.json"}, &out); err != nil {
		t.Fatal(err)
	}
	got := searchEngine.ReplaceAllString(out.String(), "  search-engine (rollout)")
	const want = `user-1
  new-checkout  true   variant=on     reason=TARGETING_MATCH
  banner-color  red    variant=red    reason=TARGETING_MATCH
  dark-mode     true   variant=on     reason=TARGETING_MATCH
  search-engine (rollout)
user-2
  new-checkout  false  variant=off    reason=TARGETING_MATCH
  banner-color  red    variant=red    reason=TARGETING_MATCH
  dark-mode     false  variant=off    reason=TARGETING_MATCH
  search-engine (rollout)
user-3
  new-checkout  false  variant=off    reason=TARGETING_MATCH
  banner-color  blue   variant=blue   reason=TARGETING_MATCH
  dark-mode     true   variant=on     reason=TARGETING_MATCH
  search-engine (rollout)
user-4
  new-checkout  true   variant=on     reason=TARGETING_MATCH
  banner-color  red    variant=red    reason=TARGETING_MATCH
  dark-mode     false  variant=off    reason=TARGETING_MATCH
  search-engine (rollout)
`
	if got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}
}
