package checkout

import (
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap/flagsnaptest"
)

// A handler registered on the test's client runs when the flags change;
// the test waits for it on a channel, since OpenFeature runs handlers on
// goroutines of their own.
func TestHandlerOnTheTestsClient(t *testing.T) {
	flags := flagsnaptest.New(t, newCheckout(false))
	changed := make(chan openfeature.EventDetails, 1)
	onChange := func(d openfeature.EventDetails) { changed <- d }
	flags.Client().AddHandler(openfeature.ProviderConfigChange, &onChange)

	flags.Set(newCheckout(true))
	select {
	case d := <-changed:
		if len(d.FlagChanges) != 1 || d.FlagChanges[0] != "new-checkout" {
			t.Errorf("FlagChanges = %v, want [new-checkout]", d.FlagChanges)
		}
	case <-time.After(flagsnaptest.WaitTimeout):
		t.Fatal("the handler on the test's client did not run")
	}
}
