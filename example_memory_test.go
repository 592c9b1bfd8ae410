package flagsnap_test

import (
	"context"
	"fmt"
	"log"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap"
	"github.com/flagsnap/flagsnap/source"
)

// Flags from memory: no file to write, and Init returns as soon as they
// are compiled.
func ExampleWithFlags() {
	provider, err := flagsnap.NewProvider(flagsnap.WithFlags([]byte(`{"flags": {
	  "banner-color": {"state": "ENABLED", "variants": {"red": "red", "blue": "blue"}, "defaultVariant": "blue"}
	}}`)))
	if err != nil {
		log.Fatal(err)
	}
	if err := provider.Init(openfeature.EvaluationContext{}); err != nil {
		log.Fatal(err)
	}
	defer provider.Shutdown()

	d := provider.StringEvaluation(context.Background(), "banner-color", "none", nil)
	fmt.Println(d.Value, d.Variant, d.Reason)
	// Output: blue blue STATIC
}

// A memory source changes the flags of a running provider: when Set
// returns, the provider serves the new flags, and a document it rejects is
// Set's error, with the flags in force kept.
func Example_memorySource() {
	flags := source.NewMemory([]byte(`{"flags": {
	  "banner-color": {"state": "ENABLED", "variants": {"red": "red", "blue": "blue"}, "defaultVariant": "blue"}
	}}`))
	provider, err := flagsnap.NewProvider(flagsnap.WithSource(flags))
	if err != nil {
		log.Fatal(err)
	}
	if err := provider.Init(openfeature.EvaluationContext{}); err != nil {
		log.Fatal(err)
	}
	defer provider.Shutdown()
	color := func() string {
		return provider.StringEvaluation(context.Background(), "banner-color", "none", nil).Value
	}
	fmt.Println(color())

	err = flags.Set([]byte(`{"flags": {
	  "banner-color": {"state": "ENABLED", "variants": {"red": "red", "blue": "blue"}, "defaultVariant": "red"}
	}}`))
	fmt.Println(color(), err)

	err = flags.Set([]byte(`{"flags": {"banner-color": `))
	fmt.Println(color(), "rejected:", err != nil)
	// Output:
	// blue
	// red <nil>
	// red rejected: true
}
