package flagsnaptest

import (
	"testing"

	"go.uber.org/goleak"
)

// Every provider and API a test makes is shut down when the test ends:
// nothing of them may be left running.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
