package e2e

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap"
)

// overrideBase and overrideOver are two flag files that define "checkout"
// and "color" each, with a "staff" evaluator and flag-set metadata of
// their own; "limit" is only the base's and "banner" only the override's.
const (
	overrideBase = `{"metadata": {"flagSetId": "base", "team": "core"},
 "$evaluators": {"staff": {"ends_with": [{"var": "email"}, "@example.com"]}},
 "flags": {
  "checkout": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off", "targeting": {"if": [{"$ref": "staff"}, "on", "off"]}},
  "color": {"state": "ENABLED", "variants": {"red": "red", "blue": "blue"}, "defaultVariant": "red"},
  "limit": {"state": "ENABLED", "variants": {"low": 10, "high": 99}, "defaultVariant": "low", "metadata": {"owner": "base"}}}}`
	overrideOver = `{"metadata": {"flagSetId": "ops", "incident": "INC-1"},
 "$evaluators": {"staff": {"ends_with": [{"var": "email"}, "@ops.example.com"]}},
 "flags": {
  "checkout": {"state": "DISABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off"},
  "color": {"state": "ENABLED", "variants": {"red": "red", "blue": "blue"}, "defaultVariant": "blue", "targeting": {"if": [{"$ref": "staff"}, "red", "blue"]}},
  "banner": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "on"}}}`
)

// TestOverridesAsFlagdMergesSources checks an override file against the
// flagd daemon given the same two files as two sources, the later winning
// by key: each flag answers as flagd's does, its $ref resolved in its own
// file and its metadata merged with its own file's.
func TestOverridesAsFlagdMergesSources(t *testing.T) {
	bin := os.Getenv(flagdBinEnv)
	if bin == "" {
		t.Skipf("%s is not set: no flagd daemon to compare with", flagdBinEnv)
	}
	dir := t.TempDir()
	base, over := filepath.Join(dir, "base.json"), filepath.Join(dir, "over.json")
	for path, doc := range map[string]string{base: overrideBase, over: overrideOver} {
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d := newFlagd(t, bin, base, "-f", "file:"+over)
	// Each side has read both files once it knows a key of each.
	waitFlags(t, d.OFREPPort, []string{"limit"})
	waitFlags(t, d.OFREPPort, []string{"banner"})
	p := newDaemonProvider(t, flagsnap.WithoutEnv(), flagsnap.WithDeadline(5*time.Second),
		flagsnap.WithFile(base), flagsnap.WithOverrideFile(over))
	waitOverrideServing(t, p)
	keys := []string{"checkout", "color", "limit", "banner"}
	kinds := map[string]string{"checkout": "bool", "color": "string", "limit": "int", "banner": "bool"}
	sets := map[string]string{"checkout": "ops", "color": "ops", "limit": "base", "banner": "ops"}
	for _, ec := range []openfeature.FlattenedContext{{}, {"email": "a@example.com"}, {"email": "b@ops.example.com"}} {
		for _, key := range keys {
			got, flagd := resolveAs(p, kinds[key], key, ec), askFlagd(t, d.OFREPPort, key, ec)
			if !sameAsFlagd(got, flagd) {
				t.Errorf("%s %v: flagsnap %+v, flagd %+v", key, ec, got, flagd)
			}
			if set := got.Metadata["flagSetId"]; set != sets[key] {
				t.Errorf("%s: flagSetId %v, want %s's", key, set, sets[key])
			}
		}
	}
}

// waitOverrideServing waits, up to five seconds, for p's one override to
// be layered: readiness is the main source's, and the override file may be
// read just after it.
func waitOverrideServing(t *testing.T, p *flagsnap.Provider) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		st := p.SourceStatus()
		if len(st.Overrides) == 1 && st.Overrides[0].State == flagsnap.LayerServing {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the override is not layered after 5s: %+v", st.Overrides)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
