package evaluator

import (
	"testing"

	"go.uber.org/goleak"
)

// Loading a large flag set compiles on several goroutines, which must all
// have ended when Load returns.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// flag returns the flag with key, or nil.
func (s *FlagSet) flag(key string) *flag { return s.index.get(key) }
