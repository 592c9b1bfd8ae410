package bench

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/flagsnap/flagsnap"
	"github.com/flagsnap/flagsnap/fractional"
)

// matrixOverride forces the static flag off and adds a flag of its own.
const matrixOverride = `{"flags": {
  "static": {"state": "ENABLED", "defaultVariant": "off", "variants": {"on": true, "off": false}},
  "local":  {"state": "ENABLED", "defaultVariant": "on", "variants": {"on": true}}
}}`

// BenchmarkOverrideNoAlloc is every E and O row with an override file
// layered over the flags: the static flag (E1–E3) answers from the
// override, every other from the source. An evaluation costs what it costs
// without one, and none may allocate.
func BenchmarkOverrideNoAlloc(b *testing.B) {
	path := filepath.Join(b.TempDir(), "override.json")
	if err := os.WriteFile(path, []byte(matrixOverride), 0o644); err != nil {
		b.Fatal(err)
	}
	p, _ := provider(b, []byte(evalFlags), fractional.V2, flagsnap.WithOverrideFile(path))
	waitForOverride(b, p)
	for _, r := range append(append([]row{}, evalRows...), opRows...) {
		b.Run(r.id, func(b *testing.B) { run(b, p, r) })
	}
}

// waitForOverride waits, at most 5s, for the provider's override to be
// layered: Init waits for the source alone.
func waitForOverride(b *testing.B, p *flagsnap.Provider) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		st := p.SourceStatus()
		if len(st.Overrides) == 1 && st.Overrides[0].State == flagsnap.LayerServing {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("override not layered within 5s: %+v", st.Overrides)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
