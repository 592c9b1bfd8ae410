package flagsnap

// What Init says when no flags came within its deadline: what was tried,
// what went wrong last, and what to change.

import (
	"fmt"
	"strings"

	"github.com/open-feature/go-sdk/openfeature"
)

// initError is what Init answers when no flags came within the deadline,
// and what its PROVIDER_ERROR event and the log say: what was tried, what
// went wrong last, and what to change. A reason that waiting will not heal
// (a flag set that does not load, or that is too large) is an
// *openfeature.ProviderInitError with its code.
func (r *run) initError(cause error) error {
	o := r.p.origin
	heard := "nothing heard from it yet"
	if cause != nil {
		heard = cause.Error()
	}
	msg := fmt.Sprintf("flagsnap: no flags within %v from %s: %s. To fix: %s. The provider keeps trying and reports READY when flags arrive",
		r.p.cfg.Deadline, o.description, heard, o.remedy(cause))
	switch {
	case r.rejectedSet:
		return &openfeature.ProviderInitError{ErrorCode: openfeature.ParseErrorCode, Message: msg}
	case strings.Contains(heard, "over the limit"):
		return &openfeature.ProviderInitError{ErrorCode: openfeature.GeneralCode, Message: msg}
	}
	return &initFailure{msg: msg, cause: cause}
}

// initFailure is an Init that gave up for now; the cause stays reachable
// with errors.Is and errors.As.
type initFailure struct {
	msg   string
	cause error
}

func (e *initFailure) Error() string { return e.msg }
func (e *initFailure) Unwrap() error { return e.cause }
