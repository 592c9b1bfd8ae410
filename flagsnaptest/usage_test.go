package flagsnaptest_test

import (
	"context"
	"testing"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap"
	"github.com/flagsnap/flagsnap/flagsnaptest"
)

const checkoutFlags = `{"flags": {
  "new-checkout": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off",
                   "targeting": {"if": [{"ends_with": [{"var": "email"}, "@example.com"]}, "on"]}},
  "banner": {"state": "ENABLED", "variants": {"red": "red"}, "defaultVariant": "red"}
}}`

// checkout is code under test: it reads new-checkout, and a flag whose key
// it misspells.
func checkout(ctx context.Context, client *openfeature.Client, email string) string {
	user := openfeature.NewEvaluationContext("user-1", map[string]any{"email": email})
	if client.Boolean(ctx, "new-checkout", false, user) {
		return "new"
	}
	if client.Boolean(ctx, "new-chekout-fallback", false, user) {
		return "fallback"
	}
	return "old"
}

func TestUsageShowsWhatTheCodeRead(t *testing.T) {
	flags := flagsnaptest.New(t, []byte(checkoutFlags))
	ctx := context.Background()
	if u := flags.Usage(); u.Flags["new-checkout"].Evaluations != 0 || len(u.Flags) != 2 {
		t.Fatalf("before the code ran: %+v", u)
	}
	checkout(ctx, flags.Client(), "ada@example.com")
	checkout(ctx, flags.Client(), "bob@example.org")
	u := flags.Usage()
	nc := u.Flags["new-checkout"]
	if nc.Evaluations != 2 || nc.Variants["on"] != 1 || nc.Variants["off"] != 1 {
		t.Errorf("new-checkout: %+v", nc)
	}
	if u.Flags["banner"].Evaluations != 0 {
		t.Errorf("banner was read: %+v", u.Flags["banner"])
	}
	if u.Missing["new-chekout-fallback"] != 1 {
		t.Errorf("missing keys: %v", u.Missing)
	}
	flags.Provider().ResetUsage()
	if u := flags.Usage(); u.Flags["new-checkout"].Evaluations != 0 || len(u.Missing) != 0 {
		t.Errorf("after ResetUsage: %+v", u)
	}
}

func TestUsageWithoutUsage(t *testing.T) {
	flags := flagsnaptest.New(t, []byte(checkoutFlags), flagsnap.WithoutUsage())
	checkout(context.Background(), flags.Client(), "ada@example.com")
	if u := flags.Usage(); len(u.Flags) != 0 {
		t.Errorf("counted without usage: %+v", u)
	}
}

// A test that a code path reads a flag, and only with the variant it
// expects.
func ExampleFlags_Usage() {
	var t *testing.T // the test's own

	flags := flagsnaptest.New(t, []byte(checkoutFlags))
	checkout(context.Background(), flags.Client(), "ada@example.com")

	u := flags.Usage().Flags["new-checkout"]
	if u.Evaluations != 1 || u.Variants["on"] != 1 {
		t.Errorf("checkout read new-checkout as %+v, want once, on", u)
	}
}
