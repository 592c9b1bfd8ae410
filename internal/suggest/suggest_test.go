package suggest

import (
	"strings"
	"testing"
)

func TestNearest(t *testing.T) {
	candidates := []string{"on", "off", "enabled", "disabled", "starts_with", "ends_with", "none", "some"}
	for _, tt := range []struct{ name, want string }{
		{"startswith", "starts_with"},
		{"StartsWith", "starts_with"},
		{"ends-with", "ends_with"},
		{"ends_witth", "ends_with"},
		{"disabeld", "disabled"},
		{"enabeld", "enabled"},
		{"ENABLED", "enabled"},
		{"ÉNABLED", ""}, // É is not E
		{"of", ""},      // too short to be sure
		{"nope", ""},    // another word
		{"nome", ""},    // as near "none" as "some"
		{"xyzzy", ""},
		{"", ""},
		{strings.Repeat("x", MaxNameLen+1), ""},
	} {
		if got := Nearest(tt.name, candidates); got != tt.want {
			t.Errorf("Nearest(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestNearestBounds(t *testing.T) {
	many := make([]string, MaxCandidates+1)
	for i := range many {
		many[i] = "flag-" + strings.Repeat("z", i%7)
	}
	many[0] = "checkout"
	if got := Nearest("chekout", many); got != "" {
		t.Errorf("past MaxCandidates: %q, want none", got)
	}
	if got := Nearest("chekout", many[:MaxCandidates]); got != "checkout" {
		t.Errorf("at MaxCandidates: %q, want checkout", got)
	}
	// A long candidate is left out by its length alone.
	if got := Nearest("checkout", []string{strings.Repeat("checkout", 1000), "checkuot"}); got != "checkuot" {
		t.Errorf("got %q", got)
	}
}

func TestHint(t *testing.T) {
	for _, tt := range []struct{ name, want string }{
		{"new-chekout", `did you mean "new-checkout"?`},
		{"banner", ""},
	} {
		if got := Hint(tt.name, []string{"new-checkout", "old-checkout-flow"}); got != tt.want {
			t.Errorf("Hint(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestNearestAllocatesOnce(t *testing.T) {
	candidates := []string{"new-checkout", "New_Banner", "dark-mode", "ends_with"}
	allocs := testing.AllocsPerRun(100, func() { Nearest("new-chekout", candidates) })
	// The normal forms and the rows of the table, grown on the first
	// candidates and reused for the others.
	if allocs > 8 {
		t.Errorf("%v allocations", allocs)
	}
}
