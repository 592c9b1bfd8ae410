package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// run shuts OpenFeature down and closes what it started; nothing may be
// left running once it returns.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestRunOnce(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"-once", "-flags", "flags.json"}, &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"user-1\n  new-checkout  true   variant=on     reason=TARGETING_MATCH",
		"user-2\n  new-checkout  false  variant=off    reason=TARGETING_MATCH",
		"dark-mode     true   variant=on     reason=TARGETING_MATCH",
		"search-engine",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "ERROR") {
		t.Errorf("an evaluation failed:\n%s", got)
	}
}
