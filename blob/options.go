package blob

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/flagsnap/flagsnap/internal/flagddefault"
)

const (
	// defaultInterval is the time between polls, as flagd's own polling
	// sources and the library's URL source.
	defaultInterval = flagddefault.PollInterval
	// defaultTimeout bounds each poll, the download included: long enough
	// for a first request that resolves credentials, short enough that a
	// store that hangs is reported lost well within a poll or two.
	defaultTimeout = 10 * time.Second
	// defaultMaxSize bounds the document, as the library's other sources.
	defaultMaxSize = flagddefault.MaxMessageSize
)

// Option configures [Open].
type Option func(*config)

type config struct {
	interval time.Duration
	timeout  time.Duration
	maxSize  int64
	log      *slog.Logger
	err      error // the first option that was wrong
}

func (c *config) fail(format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf("blob: "+format, args...)
	}
}

func newConfig(opts []Option) (config, error) {
	c := config{interval: defaultInterval, timeout: defaultTimeout, maxSize: defaultMaxSize}
	for _, o := range opts {
		if o == nil {
			c.fail("an Option is nil")
			continue
		}
		o(&c)
	}
	return c, c.err
}

// WithPollInterval sets the time between polls of the object's attributes
// (default 5s). A change arrives within one interval; each poll that finds
// the object unchanged costs one attribute request and no download.
func WithPollInterval(d time.Duration) Option {
	return func(c *config) {
		if d <= 0 {
			c.fail("WithPollInterval must be positive, got %v", d)
			return
		}
		c.interval = d
	}
}

// WithTimeout bounds each poll, the attribute request and any download
// together (default 10s). A poll that runs out of time is a failure: the
// flags in force stay and the poll is retried.
func WithTimeout(d time.Duration) Option {
	return func(c *config) {
		if d <= 0 {
			c.fail("WithTimeout must be positive, got %v", d)
			return
		}
		c.timeout = d
	}
}

// WithMaxSize bounds the flag document, in bytes (default 1 GiB). A larger
// object is not downloaded; the source reports it as a
// [*github.com/flagsnap/flagsnap/source.MessageTooLargeError] and the flags
// in force stay.
func WithMaxSize(n int64) Option {
	return func(c *config) {
		if n <= 0 {
			c.fail("WithMaxSize must be positive, got %d", n)
			return
		}
		c.maxSize = n
	}
}

// WithLogger sends the source's diagnostics (a lost object, its return,
// each change at debug level) to l; without it the source is silent.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.log = l }
}
