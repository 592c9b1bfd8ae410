package fractional_test

import (
	"fmt"
	"math"
	"time"

	"github.com/flagsnap/flagsnap/fractional"
)

// A flag with {"fractional": [["heads"], ["tails", 1]]} and no bucketing
// expression buckets each user by the flag key and the targeting key.
func Example() {
	variants := []string{"heads", "tails"}
	table, err := fractional.NewTable([]float64{1, 1})
	if err != nil {
		panic(err)
	}
	for _, v := range []fractional.Version{fractional.V1, fractional.V2, fractional.V3} {
		for _, user := range []string{"jon@company.com", "jane@company.com"} {
			h := fractional.HashDefault(v, "fractional-flag-shorthand", user)
			fmt.Println(v, user, variants[table.Pick(v, h)])
		}
	}
	// Output:
	// v1 jon@company.com heads
	// v1 jane@company.com tails
	// v2 jon@company.com heads
	// v2 jane@company.com tails
	// v3 jon@company.com tails
	// v3 jane@company.com tails
}

// In V3 the bucketing value keeps its type: the number 42 and the string
// "42" are different inputs, while 42 and 42.0 are the same number.
func ExampleHashValue() {
	table, err := fractional.NewTable([]float64{50, 50})
	if err != nil {
		panic(err)
	}
	for _, x := range []any{int64(42), 42.0, "42"} {
		h, err := fractional.HashValue(fractional.V3, x)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%T %v -> bucket %d\n", x, x, table.Pick(fractional.V3, h))
	}
	_, err = fractional.HashValue(fractional.V3, nil)
	fmt.Println(err)
	// Output:
	// int64 42 -> bucket 0
	// float64 42 -> bucket 0
	// string 42 -> bucket 1
	// fractional: bucketing value is null
}

// V3 hashes the caller's Go value exactly, so a 64-bit id or a float32
// lands where the same value does in a provider in any language, and not
// where the number JSON would carry for it lands. A time is tag 1 over its
// epoch seconds.
func ExampleHashValue_exact() {
	table, err := fractional.NewTable([]float64{50, 30, 20})
	if err != nil {
		panic(err)
	}
	variants := []string{"a", "b", "c"}
	for _, x := range []any{int64(9223372036854775807), float32(272180.5625), 9223372036854775808.0, 272180.56} {
		h, err := fractional.HashValue(fractional.V3, x)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%T %v -> %s\n", x, x, variants[table.Pick(fractional.V3, h)])
	}
	b, err := fractional.AppendCBOR(nil, time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		panic(err)
	}
	fmt.Printf("%x\n", b)
	// Output:
	// int64 9223372036854775807 -> a
	// float32 272180.56 -> a
	// float64 9.223372036854776e+18 -> b
	// float64 272180.56 -> b
	// c11a65920080
}

func ExampleAppendCBOR() {
	b, err := fractional.AppendCBOR(nil, map[string]any{"b": 1.5, "a": math.Copysign(0, -1), "aa": []any{2.0}})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%x\n", b)
	// Output:
	// a36161006162f93e006261618102
}
