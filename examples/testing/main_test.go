package checkout

import (
	"testing"

	"go.uber.org/goleak"
)

// Every provider a test starts is stopped when the test ends.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
