package e2e

import (
	"os"
	"path/filepath"
	"testing"
)

// Where the suite looks for the testbed, and what it says when there is
// none: a skip that names the place and the variable, or, for a variable
// that names no testbed, a failure.
func TestLocateTestbed(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "flagsnap")
	bed := filepath.Join(base, "shared", "flagd-testbed")
	elsewhere := filepath.Join(base, "elsewhere")
	for _, d := range []string{root, elsewhere, filepath.Join(bed, "gherkin"), filepath.Join(bed, "flags"), filepath.Join(bed, "launchpad", "configs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	const set = "; set FLAGD_TESTBED_DIR to a checkout of https://github.com/open-feature/flagd-testbed"
	tests := []struct {
		name, env, root   string
		dir, skip, fail   string
		withoutTheTestbed bool
	}{
		{name: "beside the module", root: root, dir: bed},
		{name: "named by the variable", env: bed, dir: bed},
		{name: "named relative to the module root", env: "../shared/flagd-testbed", root: root, dir: bed},
		{name: "a variable naming no testbed", env: elsewhere, root: root,
			fail: "FLAGD_TESTBED_DIR=" + elsewhere + ": not a flagd-testbed checkout (no gherkin/, flags/ and launchpad/configs/ in " + elsewhere + ")"},
		{name: "none beside the module", root: root, withoutTheTestbed: true,
			skip: "flagd-testbed not found at " + bed + set + " to run the conformance suite"},
		{name: "no module root", withoutTheTestbed: true,
			skip: "flagd-testbed not found: no module root to look beside" + set},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.withoutTheTestbed {
				if err := os.RemoveAll(bed); err != nil {
					t.Fatal(err)
				}
			}
			dir, skip, fail := locateTestbed(tt.env, tt.root)
			if dir != tt.dir || skip != tt.skip || fail != tt.fail {
				t.Errorf("got\n%q, %q, %q\nwant\n%q, %q, %q", dir, skip, fail, tt.dir, tt.skip, tt.fail)
			}
		})
	}
}
