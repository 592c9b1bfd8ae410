package source

import (
	"testing"

	"go.uber.org/goleak"
)

// Run must leave nothing behind once its context is done: no watcher
// goroutine, no timer goroutine.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
