package flagsnap

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/flagsnap/flagsnap/fractional"
	"github.com/flagsnap/flagsnap/sync"
)

// Option configures a Provider. Options are applied in order after the
// FLAGD_* environment variables, so an explicit option wins over its
// variable; FromEnv applies the variables again at its own position.
type Option func(*config)

// Defaults, as in flagd's provider configuration table for the in-process
// resolver.
const (
	DefaultHost              = "localhost"
	DefaultPort              = 8015
	DefaultDeadline          = 500 * time.Millisecond
	DefaultStreamDeadline    = 600 * time.Second
	DefaultRetryBackoff      = 1 * time.Second
	DefaultRetryBackoffMax   = 12 * time.Second
	DefaultRetryGracePeriod  = 5 * time.Second
	DefaultFilePollInterval  = 5 * time.Second
	DefaultFractionalVersion = fractional.V2
)

// The environment variables, named as flagd's providers name them.
const (
	EnvHost                  = "FLAGD_HOST"
	EnvPort                  = "FLAGD_PORT"
	EnvSyncPort              = "FLAGD_SYNC_PORT" // wins over FLAGD_PORT
	EnvTargetURI             = "FLAGD_TARGET_URI"
	EnvTLS                   = "FLAGD_TLS"
	EnvSocketPath            = "FLAGD_SOCKET_PATH"
	EnvServerCertPath        = "FLAGD_SERVER_CERT_PATH"
	EnvDeadlineMs            = "FLAGD_DEADLINE_MS"
	EnvStreamDeadlineMs      = "FLAGD_STREAM_DEADLINE_MS"
	EnvRetryBackoffMs        = "FLAGD_RETRY_BACKOFF_MS"
	EnvRetryBackoffMaxMs     = "FLAGD_RETRY_BACKOFF_MAX_MS"
	EnvRetryGracePeriod      = "FLAGD_RETRY_GRACE_PERIOD" // seconds
	EnvKeepAliveTimeMs       = "FLAGD_KEEP_ALIVE_TIME_MS"
	EnvSourceSelector        = "FLAGD_SOURCE_SELECTOR"
	EnvProviderID            = "FLAGD_PROVIDER_ID"
	EnvOfflineFlagSourcePath = "FLAGD_OFFLINE_FLAG_SOURCE_PATH"
	EnvOfflinePollMs         = "FLAGD_OFFLINE_POLL_MS"
	EnvFatalStatusCodes      = "FLAGD_FATAL_STATUS_CODES" // e.g. PERMISSION_DENIED,UNAUTHENTICATED
	EnvCacheFile             = "FLAGD_CACHE_FILE"
	EnvFractionalVersion     = "FLAGD_FRACTIONAL_VERSION" // v1, v2 or v3
)

type config struct {
	filePath     string
	fileSet      bool
	pollInterval time.Duration
	source       sync.Source
	sourceSet    bool
	version      fractional.Version
	strict       bool
	deadline     time.Duration
	grace        time.Duration
	enricher     func(map[string]any) map[string]any
	logger       *slog.Logger
	cacheFile    string

	// gRPC sync
	host            string
	port            int
	targetURI       string
	socketPath      string
	tls             bool
	caCertPath      string
	selector        string
	providerID      string
	streamDeadline  time.Duration
	retryBackoff    time.Duration
	retryBackoffMax time.Duration
	keepAlive       time.Duration
	fatalCodes      []codes.Code
	dialOptions     []grpc.DialOption

	errs []error // every invalid option or variable, reported together
}

func defaultConfig() config {
	return config{
		host:            DefaultHost,
		port:            DefaultPort,
		streamDeadline:  DefaultStreamDeadline,
		retryBackoff:    DefaultRetryBackoff,
		retryBackoffMax: DefaultRetryBackoffMax,
		pollInterval:    DefaultFilePollInterval,
		version:         DefaultFractionalVersion,
		deadline:        DefaultDeadline,
		grace:           DefaultRetryGracePeriod,
		logger:          slog.New(slog.DiscardHandler),
	}
}

func (c *config) fail(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf(format, args...))
}

func (c *config) check() error {
	if c.fileSet && c.sourceSet {
		c.fail("WithFile and WithSource are exclusive: give one source of flags")
	}
	if c.retryBackoffMax < c.retryBackoff {
		c.fail("the maximum retry backoff (%v) is shorter than the initial one (%v)", c.retryBackoffMax, c.retryBackoff)
	}
	return errors.Join(c.errs...)
}

func positive(c *config, name string, d time.Duration) bool {
	if d < 0 {
		c.fail("%s must not be negative, got %v", name, d)
		return false
	}
	return true
}

// WithFile reads the flags from a JSON or YAML file, watched for changes.
func WithFile(path string) Option {
	return func(c *config) {
		if path == "" {
			c.fail("WithFile: the path is empty")
			return
		}
		c.filePath, c.fileSet = path, true
	}
}

// WithFilePollInterval sets how often the flag file is re-read whatever
// the file-system notifications say (default 5s), so that changes on file
// systems that lose notifications still arrive.
func WithFilePollInterval(d time.Duration) Option {
	return func(c *config) {
		if d == 0 {
			c.fail("WithFilePollInterval must be positive")
			return
		}
		if positive(c, "WithFilePollInterval", d) {
			c.pollInterval = d
		}
	}
}

// WithSource reads the flags from any implementation of sync.Source.
func WithSource(s sync.Source) Option {
	return func(c *config) {
		if s == nil {
			c.fail("WithSource: the source is nil")
			return
		}
		c.source, c.sourceSet = s, true
	}
}

// WithFractionalVersion selects the bucketing of the fractional operator.
// fractional.V2, the default, matches every flagd daemon and provider in
// use today; fractional.V3 hashes typed values and moves users to new
// buckets; fractional.V1 keeps the buckets of old releases.
func WithFractionalVersion(v fractional.Version) Option {
	return func(c *config) {
		if !v.Valid() {
			c.fail("WithFractionalVersion: unknown version %d", uint8(v))
			return
		}
		c.version = v
	}
}

// WithStrictValidation rejects a whole flag set when any flag in it has a
// problem, as flagd does, instead of loading the other flags.
func WithStrictValidation() Option {
	return func(c *config) { c.strict = true }
}

// WithDeadline bounds how long Init waits for the first flag set (default
// 500ms). When it passes, Init fails and the provider keeps trying.
func WithDeadline(d time.Duration) Option {
	return func(c *config) {
		if d == 0 {
			c.fail("WithDeadline must be positive")
			return
		}
		if positive(c, "WithDeadline", d) {
			c.deadline = d
		}
	}
}

// WithRetryGracePeriod sets how long a lost source stays STALE before the
// provider reports ERROR (default 5s). Flags keep being served throughout.
func WithRetryGracePeriod(d time.Duration) Option {
	return func(c *config) {
		if positive(c, "WithRetryGracePeriod", d) {
			c.grace = d
		}
	}
}

// WithContextEnricher adds values to the data of every evaluation. The
// function is called once per flag set with the source's sync context (nil
// when the source has none) and returns the values to add; the sync
// context itself is merged over them. Callers' context values come last.
func WithContextEnricher(fn func(syncContext map[string]any) map[string]any) Option {
	return func(c *config) {
		if fn == nil {
			c.fail("WithContextEnricher: the function is nil")
			return
		}
		c.enricher = fn
	}
}

// WithLogger receives what the provider has to say (rejected flag sets,
// broken flags, lost sources). The provider is silent without it.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l == nil {
			c.fail("WithLogger: the logger is nil")
			return
		}
		c.logger = l
	}
}

// WithHost sets the sync server's host (default localhost).
func WithHost(host string) Option {
	return func(c *config) {
		if host == "" {
			c.fail("WithHost: the host is empty")
			return
		}
		c.host = host
	}
}

// WithPort sets the sync server's port (default 8015).
func WithPort(port int) Option {
	return func(c *config) {
		if port <= 0 || port > 65535 {
			c.fail("WithPort: %d is not a TCP port", port)
			return
		}
		c.port = port
	}
}

// WithTargetURI connects to a gRPC target instead of host and port, for
// custom name resolution. "envoy://host:port/authority" dials host:port
// and sends the given authority, for proxies that route by it.
func WithTargetURI(uri string) Option {
	return func(c *config) {
		if err := checkTargetURI(uri); err != nil {
			c.fail("WithTargetURI: %v", err)
			return
		}
		c.targetURI = uri
	}
}

func checkTargetURI(uri string) error {
	if uri == "" {
		return errors.New("the URI is empty")
	}
	u, err := url.Parse(uri)
	if err != nil {
		return fmt.Errorf("%q is not a URI: %v", uri, err)
	}
	if u.Scheme == "envoy" && (u.Host == "" || strings.Trim(u.Path, "/") == "") {
		return fmt.Errorf("%q: an envoy target is envoy://host:port/authority", uri)
	}
	return nil
}

// WithSocketPath connects to the sync server over a unix socket.
func WithSocketPath(path string) Option {
	return func(c *config) {
		if path == "" {
			c.fail("WithSocketPath: the path is empty")
			return
		}
		c.socketPath = path
	}
}

// WithTLS connects with TLS, trusting the CA certificates in the PEM file
// caCertPath, or the system's roots when it is empty.
func WithTLS(caCertPath string) Option {
	return func(c *config) { c.tls, c.caCertPath = true, caCertPath }
}

// WithSelector asks the sync server for one flag set (sent as the request's
// selector and as the flagd-selector header).
func WithSelector(selector string) Option {
	return func(c *config) { c.selector = selector }
}

// WithProviderID identifies this provider to the sync server.
func WithProviderID(id string) Option {
	return func(c *config) { c.providerID = id }
}

// WithStreamDeadline bounds each sync stream (default 600s); a stream that
// reaches it is reopened at once, without reporting the source as lost.
// Zero means no deadline.
func WithStreamDeadline(d time.Duration) Option {
	return func(c *config) {
		if positive(c, "WithStreamDeadline", d) {
			c.streamDeadline = d
		}
	}
}

// WithRetryBackoff sets the delay before reconnecting to a lost server,
// which doubles after each failed attempt up to max (defaults 1s and 12s).
func WithRetryBackoff(initial, max time.Duration) Option {
	return func(c *config) {
		if initial <= 0 || max <= 0 {
			c.fail("WithRetryBackoff: delays must be positive, got %v and %v", initial, max)
			return
		}
		c.retryBackoff, c.retryBackoffMax = initial, max
	}
}

// WithKeepAlive sends HTTP/2 keepalive pings at this interval (default 0:
// none).
func WithKeepAlive(d time.Duration) Option {
	return func(c *config) {
		if positive(c, "WithKeepAlive", d) {
			c.keepAlive = d
		}
	}
}

// WithFatalStatusCodes lists gRPC status codes that, received before the
// first successful connection, make the provider give up for good
// (PROVIDER_FATAL) instead of retrying.
func WithFatalStatusCodes(list ...codes.Code) Option {
	return func(c *config) { c.fatalCodes = append([]codes.Code(nil), list...) }
}

// WithGRPCDialOptions adds dial options to the provider's own (transport
// credentials, keepalive, retry policy), for example interceptors.
func WithGRPCDialOptions(opts ...grpc.DialOption) Option {
	return func(c *config) { c.dialOptions = append(c.dialOptions, opts...) }
}

// WithCacheFile keeps the last flag set accepted from the sync server (and
// its sync context) in a file, written atomically. When Init cannot reach
// the server within the deadline, the provider serves the cached flags and
// reports STALE until the server delivers. An unreadable cache is ignored.
func WithCacheFile(path string) Option {
	return func(c *config) {
		if path == "" {
			c.fail("WithCacheFile: the path is empty")
			return
		}
		c.cacheFile = path
	}
}

// FromEnv applies the FLAGD_* environment variables at this position in
// the option list. They are always applied first; give FromEnv last to
// let them win over explicit options.
func FromEnv() Option {
	return func(c *config) { c.applyEnv() }
}

// applyEnv reads every variable that is set; a value that does not parse
// is an error naming the variable.
func (c *config) applyEnv() {
	if v, ok := lookupEnv(EnvOfflineFlagSourcePath); ok {
		if v == "" {
			c.fail("%s is set but empty", EnvOfflineFlagSourcePath)
		} else {
			c.filePath, c.fileSet = v, true
		}
	}
	envDuration(c, EnvOfflinePollMs, time.Millisecond, false, &c.pollInterval)
	envDuration(c, EnvDeadlineMs, time.Millisecond, false, &c.deadline)
	envDuration(c, EnvRetryGracePeriod, time.Second, true, &c.grace)
	envDuration(c, EnvStreamDeadlineMs, time.Millisecond, true, &c.streamDeadline)
	envDuration(c, EnvRetryBackoffMs, time.Millisecond, false, &c.retryBackoff)
	envDuration(c, EnvRetryBackoffMaxMs, time.Millisecond, false, &c.retryBackoffMax)
	envDuration(c, EnvKeepAliveTimeMs, time.Millisecond, true, &c.keepAlive)
	envString(c, EnvHost, false, &c.host)
	envString(c, EnvSocketPath, false, &c.socketPath)
	envString(c, EnvServerCertPath, true, &c.caCertPath)
	envString(c, EnvSourceSelector, true, &c.selector)
	envString(c, EnvProviderID, true, &c.providerID)
	envString(c, EnvCacheFile, false, &c.cacheFile)
	if v, ok := lookupEnv(EnvTargetURI); ok {
		if err := checkTargetURI(v); err != nil {
			c.fail("%s: %v", EnvTargetURI, err)
		} else {
			c.targetURI = v
		}
	}
	for _, name := range []string{EnvPort, EnvSyncPort} { // the sync port wins
		if v, ok := lookupEnv(name); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n <= 0 || n > 65535 {
				c.fail("%s=%q is not a TCP port", name, v)
				continue
			}
			c.port = n
		}
	}
	if v, ok := lookupEnv(EnvTLS); ok {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			c.fail("%s=%q is not true or false", EnvTLS, v)
		} else {
			c.tls = b
		}
	}
	if v, ok := lookupEnv(EnvFatalStatusCodes); ok {
		codes, err := parseStatusCodes(v)
		if err != nil {
			c.fail("%s: %v", EnvFatalStatusCodes, err)
		} else {
			c.fatalCodes = codes
		}
	}
	if v, ok := lookupEnv(EnvFractionalVersion); ok {
		fv, err := fractional.ParseVersion(v)
		if err != nil {
			c.fail("%s: %v", EnvFractionalVersion, err)
		} else {
			c.version = fv
		}
	}
}

// envString reads a string variable; an empty value is an error unless
// emptyOK.
func envString(c *config, name string, emptyOK bool, dst *string) {
	v, ok := lookupEnv(name)
	if !ok {
		return
	}
	if v == "" && !emptyOK {
		c.fail("%s is set but empty", name)
		return
	}
	*dst = v
}

// parseStatusCodes reads a comma-separated list of gRPC status code names
// (PERMISSION_DENIED, UNAUTHENTICATED, …); case and spaces do not matter.
func parseStatusCodes(list string) ([]codes.Code, error) {
	var out []codes.Code
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		var code codes.Code
		if err := code.UnmarshalJSON([]byte(strconv.Quote(strings.ToUpper(name)))); err != nil {
			return nil, fmt.Errorf("%q is not a gRPC status code name (such as PERMISSION_DENIED)", name)
		}
		out = append(out, code)
	}
	return out, nil
}

// envDuration reads a whole number of units from the variable name.
func envDuration(c *config, name string, unit time.Duration, zeroOK bool, dst *time.Duration) {
	v, ok := lookupEnv(name)
	if !ok {
		return
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	switch {
	case err != nil:
		c.fail("%s=%q is not a whole number", name, v)
	case n < 0 || (n == 0 && !zeroOK):
		c.fail("%s=%q must be positive", name, v)
	default:
		*dst = time.Duration(n) * unit
	}
}

// lookupEnv is os.LookupEnv; tests use t.Setenv.
var lookupEnv = os.LookupEnv
