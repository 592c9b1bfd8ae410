// Package flagddefault holds the defaults of flagd's provider configuration
// table in one place: the provider's exported Default constants and the
// sources' fallbacks for settings left zero both read them, so the two
// cannot drift apart.
package flagddefault

import "time"

const (
	Host           = "localhost"
	RPCPort        = 8013 // flagd's evaluation port
	InProcessPort  = 8015 // flagd's sync port
	Deadline       = 500 * time.Millisecond
	StreamDeadline = 600 * time.Second
	RetryBackoff   = 1 * time.Second
	// RetryBackoffMax and RetryGracePeriod follow flagd's provider
	// specification since 2026-08-17 (flagd issue 2027): with the older
	// 12 s and 5 s, a server restarted within seconds became an ERROR.
	RetryBackoffMax  = 5 * time.Second
	RetryGracePeriod = 10 * time.Second
	FilePollInterval = 5 * time.Second
	PollInterval     = 5 * time.Second // of a URL or an object, as flagd's http sync
	// MaxMessageSize is 1 GiB, far above gRPC's own 4 MiB, which large
	// flag sets exceed.
	MaxMessageSize = 1 << 30
	// FractionalVersion is fractional.V2, the bucketing deployed flagd
	// uses; the evaluator's own default is this too, so that a flag set
	// loaded without the provider buckets users as the provider does. It
	// is a number because package source reads this package and must not
	// depend on the bucketing.
	FractionalVersion = 2
)
