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

func ExampleFlagSet_Explain() {
	set, err := evaluator.Load([]byte(`{"flags": {
	  "banner": {
	    "state": "ENABLED",
	    "variants": {"red": "red", "blue": "blue"},
	    "defaultVariant": "red",
	    "targeting": {"if": [
	      {"==": [{"var": "country"}, "NL"]}, "blue",
	      {"fractional": [["red", 50], ["blue", 50]]}
	    ]}
	  }}}`))
	if err != nil {
		panic(err)
	}
	x, err := set.Explain("banner", map[string]any{"targetingKey": "user-1", "country": "FR"})
	if err != nil {
		panic(err)
	}
	fmt.Print(x)
	// Output:
	// flag "banner" (fractional v2): variant "red", value "red", reason TARGETING_MATCH
	// if → "red"
	//   == → false
	//     var country → "FR"
	//     "NL"
	//   "blue" (not evaluated)
	//   fractional → "red"
	//     bucketing value: flag key + targeting key = "banner" + "user-1"
	//     bytes (UTF-8, 12): 62616e6e6572757365722d31
	//     hash: 718406224 (0x2ad20250)
	//     bucket: 16 of 100 = (hash × 100) >> 32
	//     buckets (total weight 100):
	//     → "red"   weight 50  [0, 50)
	//       "blue"  weight 50  [50, 100)
}
