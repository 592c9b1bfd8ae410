package fractional_test

import (
	"fmt"
	"math"

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

func ExampleAppendCBOR() {
	b, err := fractional.AppendCBOR(nil, map[string]any{"b": 1.5, "a": math.Copysign(0, -1), "aa": []any{2.0}})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%x\n", b)
	// Output:
	// a36161006162f93e006261618102
}
