package source

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// retryDelay is the wait before the reconnect attempt that follows failure
// n (from 0) of an outage that began age ago. The first comes after a
// quarter of RetryBackoff, so a server that restarts at once is found at
// once. Then the wait is a sixteenth of the outage's age, at least half of
// RetryBackoff and at most RetryBackoffMax: a server back after a few
// seconds (a restart, a rollout) is found within a second of accepting
// streams again, well inside the provider's grace period, and a long
// outage is asked less and less often.
func (g *GRPC) retryDelay(n int, age time.Duration) time.Duration {
	d := g.retryBackoff / 4
	if n > 0 {
		d = min(max(age/16, g.retryBackoff/2), g.retryMax)
	}
	return jitter(d)
}

// jitter spreads d by retryJitter either way, never under minRetryDelay.
func jitter(d time.Duration) time.Duration {
	j := float64(d) * (1 + retryJitter*(2*rand.Float64()-1))
	if j >= math.MaxInt64 {
		return math.MaxInt64
	}
	return max(time.Duration(j), minRetryDelay)
}

// gracefulEnd tells whether a stream ended in an orderly way rather than
// because the server or the connection failed:
//   - the server sent GOAWAY (it rotates connections, is draining, or
//     enforces a keepalive policy our pings broke: "too_many_pings"); gRPC
//     reports the GOAWAY in the status of the streams the connection ends,
//     or ends streams it never processed as draining;
//   - a stream deadline passed, ours (StreamDeadline) or the server's own
//     (flagd ends its streams with DeadlineExceeded when it has one).
//
// A server that is going away for good refuses the reopened stream, which
// is then reported as lost: no outage goes unreported because of this.
func gracefulEnd(err error) bool {
	st, ok := status.FromError(err)
	if !ok {
		return false
	}
	switch st.Code() {
	case codes.DeadlineExceeded:
		return true
	case codes.Unavailable:
		msg := st.Message()
		return strings.Contains(msg, "received prior goaway") || strings.Contains(msg, "the connection is draining")
	}
	return false
}

// MessageTooLargeError is what a GRPC, HTTP or File source reports
// through Sink.Lost when the flag set is larger than its limit
// (GRPCConfig.MaxMessageSize, HTTPConfig.MaxBodySize, FileConfig.MaxSize):
// the flags already delivered stay in force. A GRPC source asks again
// only after RetryBackoffMax.
type MessageTooLargeError struct {
	Target string // the server, URL, object or file
	Size   int    // the message's size in bytes, as the server announced it; -1 when unknown
	Limit  int    // the source's bound
	// Setting names the setting of the bound, for the message:
	// "GRPCConfig.MaxMessageSize", "HTTPConfig.MaxBodySize"...
	Setting string
	Err     error // gRPC's status, or nil
}

func (e *MessageTooLargeError) Error() string {
	msg := fmt.Sprintf("source: the flag set from %s is %d bytes, over the limit of %d bytes", e.Target, e.Size, e.Limit)
	if e.Size < 0 {
		msg = fmt.Sprintf("source: the flag set from %s is over the limit of %d bytes", e.Target, e.Limit)
	}
	if e.Setting != "" {
		msg += " (" + e.Setting + ")"
	}
	return msg
}

func (e *MessageTooLargeError) Unwrap() error { return e.Err }

// tooLargeError recognises gRPC's refusal of a message over the receive
// limit: ResourceExhausted, with the sizes only in its text ("grpc:
// received message larger than max (20858880 vs. 4194304)").
func tooLargeError(err error, g *GRPC) *MessageTooLargeError {
	st, ok := status.FromError(err)
	if !ok || st.Code() != codes.ResourceExhausted {
		return nil
	}
	_, after, found := strings.Cut(st.Message(), "larger than max (")
	if !found {
		return nil
	}
	e := &MessageTooLargeError{Target: g.target, Limit: g.maxMessage, Setting: "GRPCConfig.MaxMessageSize", Err: err}
	var limit int
	if n, _ := fmt.Sscanf(after, "%d vs. %d)", &e.Size, &limit); n == 2 {
		e.Limit = limit
	}
	return e
}
