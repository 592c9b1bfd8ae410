// Package flagsnaptest gives tests OpenFeature clients whose flags come
// from memory, with no file, no server and no waiting.
//
// Each call to [Client] or [New] builds a provider of its own, on a
// [github.com/flagsnap/flagsnap/source.Memory] source, and binds it to an
// OpenFeature API of its own (the SDK's isolated API), so tests that run
// in parallel each see their own flags. The provider and the API are shut
// down when the test ends.
//
//	func TestCheckout(t *testing.T) {
//		t.Parallel()
//		client := flagsnaptest.Client(t, []byte(`{"flags": {"new-checkout": {
//			"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "on"}}}`))
//		if got := Checkout(client); got != "new" {
//			t.Errorf("Checkout = %q", got)
//		}
//	}
//
// The code under test must take its client (or the API) from the test, not
// from OpenFeature's global functions: a global provider is one for the
// whole process, which parallel tests cannot share.
//
// [Flags.Set] changes the flags in the middle of a test, and [Flags.TrySet]
// offers flags the provider may reject; [Flags.Lost] and [Flags.Restore]
// simulate a source that goes away and comes back. Each returns once the
// client shows the outcome, and so do the calls on [Flags.Source]: the
// next evaluation sees the flags in force, and the client's State is what
// the provider reports (READY, STALE or ERROR), so the test can check it
// at once.
//
// The handlers that code registers with OpenFeature are another matter:
// the SDK runs each on a goroutine of its own, which nothing can wait for.
// When a method returns, a handler may not have run yet, and a
// CONFIGURATION_CHANGED event may still be on its way. A test of what a
// handler does waits for the handler, for example on a channel it sends
// to.
package flagsnaptest
