package source

import (
	"os/exec"
	"strings"
	"testing"
)

// A source delivers bytes and parses nothing, so it depends on neither the
// evaluator nor the bucketing: the arrow points from the provider to both.
func TestSourceDependsOnNoEvaluator(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the dependencies with")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/flagsnap/flagsnap/") && !strings.HasPrefix(dep, "github.com/flagsnap/flagsnap/internal/") && dep != "github.com/flagsnap/flagsnap/source" {
			t.Errorf("package source depends on %s", dep)
		}
	}
}
