package blob

import (
	"fmt"
	"strings"
	"time"

	"gocloud.dev/gcerrors"
)

// URLError is a URL that [Open] cannot make a source of: it does not
// parse, names no object, or gocloud.dev cannot open its bucket.
type URLError struct {
	URL    string // as given, or without its query once it parsed
	Reason string // what is wrong, and what to write instead
	Err    error  // the parser's or gocloud.dev's error, or nil
}

func (e *URLError) Error() string {
	msg := fmt.Sprintf("blob: %s: %s", e.URL, e.Reason)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *URLError) Unwrap() error { return e.Err }

// ObjectError is a poll that brought no flag document: the object is
// missing, the store refused the credentials, or did not answer. Its
// message says what to change; the store's own error is in Err.
type ObjectError struct {
	URL     string             // the object, as [Source.Origin] names it
	Code    gcerrors.ErrorCode // gocloud.dev's classification of Err
	Timeout time.Duration      // the bound of each poll, for DeadlineExceeded
	Err     error
}

func (e *ObjectError) Error() string {
	// The messages for the usual failures leave the store's text out: it
	// carries a request id that differs every time, and the source
	// reports each different failure anew.
	switch e.Code {
	case gcerrors.NotFound:
		return fmt.Sprintf("blob: no object at %s: %s", e.URL, e.Remedy())
	case gcerrors.PermissionDenied:
		return fmt.Sprintf("blob: %s refused access: %s", e.URL, e.Remedy())
	case gcerrors.DeadlineExceeded:
		return fmt.Sprintf("blob: no answer from %s within %v: %s", e.URL, e.Timeout, e.Remedy())
	}
	return fmt.Sprintf("blob: reading %s: %v", e.URL, e.Err)
}

// Remedy says what to change for the usual failures, "" for the others:
// a provider's Init error quotes it as its "To fix" (source.Remedy).
func (e *ObjectError) Remedy() string {
	switch e.Code {
	case gcerrors.NotFound:
		remedy := "check the bucket and key"
		if e.scheme() == "gs" {
			// GCS answers a read the credentials may not make as if the
			// object were missing.
			remedy += ", and that the credentials of the environment (" + schemes["gs"] + ") may read it"
		}
		return remedy
	case gcerrors.PermissionDenied:
		return fmt.Sprintf("check the credentials of the environment (%s) and that they may read the object", schemes[e.scheme()])
	case gcerrors.DeadlineExceeded:
		return "check the endpoint and the network, or raise the bound with blob.WithTimeout"
	}
	return ""
}

func (e *ObjectError) Unwrap() error { return e.Err }

func (e *ObjectError) scheme() string {
	s, _, _ := strings.Cut(e.URL, "://")
	return s
}
