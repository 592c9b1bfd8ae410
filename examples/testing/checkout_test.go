package checkout

import (
	"testing"

	"github.com/flagsnap/flagsnap/flagsnaptest"
)

// newCheckout is a flag set where the new checkout is on for everyone or
// for no one, as the test needs.
func newCheckout(on bool) []byte {
	variant := "off"
	if on {
		variant = "on"
	}
	return []byte(`{"flags": {"new-checkout": {
		"state": "ENABLED",
		"variants": {"on": true, "off": false},
		"defaultVariant": "` + variant + `"}}}`)
}

func TestButtonLabel(t *testing.T) {
	tests := []struct {
		name string
		on   bool
		want string
	}{
		{"new checkout", true, "Buy now"},
		{"old checkout", false, "Proceed to checkout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // each test has a provider and a client of its own
			page := &Page{Flags: flagsnaptest.Client(t, newCheckout(tt.on))}
			if got := page.ButtonLabel(t.Context(), "user-1", "ada@example.com"); got != tt.want {
				t.Errorf("ButtonLabel = %q, want %q", got, tt.want)
			}
		})
	}
}

// A flag can change in the middle of a test, and a rule can target users.
func TestButtonLabelFollowsTheFlag(t *testing.T) {
	t.Parallel()
	flags := flagsnaptest.New(t, newCheckout(false))
	page := &Page{Flags: flags.Client()}
	if got := page.ButtonLabel(t.Context(), "user-1", "ada@example.com"); got != "Proceed to checkout" {
		t.Errorf("before the rollout: %q", got)
	}

	// Staff first. When Set returns, the page sees the new flags.
	flags.Set([]byte(`{"flags": {"new-checkout": {
		"state": "ENABLED",
		"variants": {"on": true, "off": false},
		"defaultVariant": "off",
		"targeting": {"if": [{"ends_with": [{"var": "email"}, "@example.com"]}, "on"]}}}}`))
	if got := page.ButtonLabel(t.Context(), "user-1", "ada@example.com"); got != "Buy now" {
		t.Errorf("staff during the rollout: %q", got)
	}
	if got := page.ButtonLabel(t.Context(), "user-2", "bob@example.org"); got != "Proceed to checkout" {
		t.Errorf("customers during the rollout: %q", got)
	}
}
