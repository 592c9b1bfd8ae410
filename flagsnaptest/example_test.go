package flagsnaptest_test

import (
	"context"
	"testing"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap"
	"github.com/flagsnap/flagsnap/flagsnaptest"
)

// A test of what happens when bad flags arrive: the provider rejects
// them, keeps serving the flags in force and reports ERROR, and the client
// shows it as soon as TrySet returns.
func ExampleFlags_TrySet() {
	var t *testing.T // the test's own

	flags := flagsnaptest.New(t, []byte(`{"flags": {"new-checkout": {
		"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "on"}}}`),
		flagsnap.WithStrictValidation())

	// "maybe" is not one of the variants, which strict validation rejects.
	err := flags.TrySet([]byte(`{"flags": {"new-checkout": {
		"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "maybe"}}}`))
	if err == nil {
		t.Fatal("the provider accepted a default variant that does not exist")
	}
	client := flags.Client()
	if s := client.State(); s != openfeature.ErrorState {
		t.Errorf("state %s after a rejected flag set, want ERROR", s)
	}
	if !client.Boolean(context.Background(), "new-checkout", false, openfeature.EvaluationContext{}) {
		t.Error("the flags in force were dropped")
	}

	// Good flags bring the client back to READY by the time TrySet returns.
	if err := flags.TrySet([]byte(`{"flags": {"new-checkout": {
		"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off"}}}`)); err != nil {
		t.Fatal(err)
	}
	if s := client.State(); s != openfeature.ReadyState {
		t.Errorf("state %s after good flags, want READY", s)
	}
}
