package leaktest

import (
	"fmt"
	"os"
	"testing"

	"github.com/open-feature/go-sdk/openfeature"
	"go.uber.org/goleak"
)

// Run runs m's tests, shuts OpenFeature down (its API keeps goroutines for
// the providers it was given), and then looks for goroutines left running.
// It returns the exit code for os.Exit: the tests' own, or 1 for a leak
// after tests that passed.
func Run(m *testing.M) int {
	code := m.Run()
	openfeature.Shutdown()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goroutines left behind: %v\n", err)
			return 1
		}
	}
	return code
}
