package evaluator_test

import (
	"fmt"

	"github.com/flagsnap/flagsnap/evaluator"
)

func Example() {
	set, err := evaluator.Load([]byte(`{
	  "$evaluators": {"staff": {"ends_with": [{"var": "email"}, "@example.com"]}},
	  "flags": {
	    "new-checkout": {
	      "state": "ENABLED",
	      "variants": {"on": true, "off": false},
	      "defaultVariant": "off",
	      "targeting": {"if": [{"$ref": "staff"}, "on"]}
	    },
	    "theme": {
	      "state": "ENABLED",
	      "variants": {"light": "light", "dark": "dark"},
	      "defaultVariant": "light"
	    }
	  }
	}`))
	if err != nil {
		panic(err)
	}

	staff := set.ResolveBool("new-checkout", false, map[string]any{"email": "ada@example.com"})
	guest := set.ResolveBool("new-checkout", false, map[string]any{"email": "bob@elsewhere.org"})
	theme := set.ResolveString("theme", "system", nil)
	missing := set.ResolveString("nope", "fallback", nil)

	fmt.Println(staff.Value, staff.Variant, staff.Reason)
	fmt.Println(guest.Value, guest.Variant, guest.Reason)
	fmt.Println(theme.Value, theme.Variant, theme.Reason)
	fmt.Println(missing.Value, missing.Reason, missing.Err.Code)
	// Output:
	// true on TARGETING_MATCH
	// false off DEFAULT
	// light light STATIC
	// fallback ERROR FLAG_NOT_FOUND
}

func ExampleFlagSet_Changes() {
	before, _ := evaluator.Load([]byte(`{"flags": {
	  "a": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on"},
	  "b": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on"}}}`))
	after, _ := evaluator.Load([]byte(`{"flags": {
	  "b": {"state": "DISABLED", "variants": {"on": true}, "defaultVariant": "on"},
	  "c": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on"}}}`))

	added, removed, changed := after.Changes(before)
	fmt.Println(added, removed, changed)
	// Output: [c] [a] [b]
}
