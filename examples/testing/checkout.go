// Package checkout is code that reads a feature flag, with the tests a
// user of flagsnap would write for it (checkout_test.go): each test gives
// the flags it needs from memory, to a client of its own, so the tests run
// in parallel and never sleep.
//
//	go test ./examples/testing
package checkout

import (
	"context"

	"github.com/open-feature/go-sdk/openfeature"
)

// Page renders the checkout page. It takes its OpenFeature client from
// whoever builds it, the application or a test, rather than from
// OpenFeature's global functions, so that each test can give it a client
// with flags of its own.
type Page struct {
	Flags *openfeature.Client
}

// ButtonLabel is the label of the checkout button for a user: the new
// checkout's when the new-checkout flag is on for them.
func (p *Page) ButtonLabel(ctx context.Context, userID, email string) string {
	user := openfeature.NewEvaluationContext(userID, map[string]any{"email": email})
	if p.Flags.Boolean(ctx, "new-checkout", false, user) {
		return "Buy now"
	}
	return "Proceed to checkout"
}
