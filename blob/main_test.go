package blob_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every source stopped, every store closed: nothing may be left running.
// The SDKs' pooled connections end as each test's store closes them from
// its side, so no goroutine of theirs needs ignoring. One goroutine is
// older than any test: OpenCensus starts its stats worker when its
// package initialises, and only the GCS emulator's Pub/Sub client brings
// that package into the test binary.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"))
}
