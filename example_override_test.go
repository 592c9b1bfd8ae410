package flagsnap_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap"
)

// An override file turns off one flag of the provider's source, whatever
// that source is; the flags it does not define are the source's.
func ExampleWithOverrideFile() {
	dir, err := os.MkdirTemp("", "flagsnap-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	flags := filepath.Join(dir, "flags.json")
	override := filepath.Join(dir, "override.json")
	write := func(path, doc string) {
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	write(flags, `{"flags": {
	  "new-checkout": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "on"},
	  "banner-color": {"state": "ENABLED", "variants": {"red": "red", "blue": "blue"}, "defaultVariant": "blue"}
	}}`)
	write(override, `{"flags": {
	  "new-checkout": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off"}
	}}`)

	provider, err := flagsnap.NewProvider(
		flagsnap.WithoutEnv(),
		flagsnap.WithFile(flags),
		flagsnap.WithOverrideFile(override),
	)
	if err != nil {
		log.Fatal(err)
	}
	if err := provider.Init(openfeature.EvaluationContext{}); err != nil {
		log.Fatal(err)
	}
	defer provider.Shutdown()

	// Init waits for the source's flags, not for the overrides': wait
	// until the override file has been read.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if st := provider.SourceStatus(); len(st.Overrides) == 1 && st.Overrides[0].State != flagsnap.LayerWaiting {
			break
		}
	}

	ctx := context.Background()
	checkout := provider.BooleanEvaluation(ctx, "new-checkout", true, nil)
	banner := provider.StringEvaluation(ctx, "banner-color", "none", nil)
	fmt.Println("new-checkout:", checkout.Value, checkout.Variant)
	fmt.Println("banner-color:", banner.Value, banner.Variant)

	st := provider.SourceStatus()
	fmt.Println(st.Overrides[0].State, st.Overrides[0].Flags, "flag")
	fmt.Println("new-checkout is defined by", filepath.Base(st.Overridden["new-checkout"]))
	// Output:
	// new-checkout: false off
	// banner-color: blue blue
	// serving 1 flag
	// new-checkout is defined by override.json
}
