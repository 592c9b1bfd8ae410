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
	if err := run(context.Background(), []string{"-once"}, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []string{
		"new-checkout for user-2: false (variant off, reason TARGETING_MATCH)",
		"PROVIDER_CONFIGURATION_CHANGED [new-checkout]",
		"new-checkout for user-2: true (variant on, reason STATIC)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}
