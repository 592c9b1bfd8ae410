package flagsnap_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap"
)

// The quick start of the README: flags from a file, evaluated through the
// OpenFeature client.
func Example() {
	dir, err := os.MkdirTemp("", "flagsnap-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "flags.json")
	err = os.WriteFile(path, []byte(`{
	  "flags": {
	    "new-checkout": {
	      "state": "ENABLED",
	      "variants": {"on": true, "off": false},
	      "defaultVariant": "off",
	      "targeting": {"if": [{"ends_with": [{"var": "email"}, "@example.com"]}, "on"]}
	    }
	  }
	}`), 0o644)
	if err != nil {
		log.Fatal(err)
	}

	provider, err := flagsnap.NewProvider(flagsnap.WithFile(path))
	if err != nil {
		log.Fatal(err)
	}
	if err := openfeature.SetProviderAndWait(provider); err != nil {
		log.Fatal(err)
	}
	defer openfeature.Shutdown()

	client := openfeature.NewDefaultClient()
	user := openfeature.NewEvaluationContext("user-1", map[string]any{"email": "ada@example.com"})
	details, err := client.BooleanValueDetails(context.Background(), "new-checkout", false, user)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(details.Value, details.Variant, details.Reason)
	// Output: true on TARGETING_MATCH
}
