package flagsnap

// The options of NewProvider and NewConfig: each sets part of the
// configuration and checks its value as it is given.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/open-feature/go-sdk/openfeature"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/flagsnap/flagsnap/fractional"
	"github.com/flagsnap/flagsnap/source"
)

// Option configures a Provider.
//
// Options are applied in order after the FLAGD_* environment variables, so
// an option wins over its variable, and a variable fills only what the
// options leave unset. That includes where the flags come from: once the
// options choose a file (WithFile, WithResolver(ResolverFile)), a sync
// server (WithResolver(ResolverInProcess) or ResolverRPC, WithHost,
// WithPort, WithTargetURI, WithSocketPath, WithTLS), a URL (WithURL) or
// flags in memory (WithFlags, WithSource), the variables that would choose another are
// ignored: FLAGD_RESOLVER when it names another kind of source, and
// FLAGD_OFFLINE_FLAG_SOURCE_PATH unless a file was chosen. The variables
// of the chosen kind still fill the rest (FLAGD_OFFLINE_POLL_MS for a
// file; FLAGD_HOST, FLAGD_PORT or FLAGD_RESOLVER=in-process for a server).
// An ignored variable is still checked: a value that does not parse is an
// error. FromEnv applies the variables again at its own position, where
// they win over the options before it, the choice of source included.
//
// Options that contradict each other are an error naming both: a file with
// flags in memory or with a server option, WithFlags with WithSource, the
// file resolver with a server option, WithFlags or WithSource with
// WithResolver, WithURL with any other choice. As in flagd's providers, WithResolver(ResolverInProcess)
// with WithFile is the file resolver (older configurations ask for a file
// that way), and a socket path, a target URI and a host and port may be
// given together: the socket path wins, then the target URI. Options that
// only tune a source (WithSelector, WithCacheFile, WithFilePollInterval,
// WithPollInterval, WithHTTPHeader, WithRetryBackoff, ...) choose none, and are unused by the sources they do
// not apply to.
type Option func(*config)

// durationOption is the option named name that sets the field returned by
// field to d. A negative d is an error, and so is zero unless zeroOK.
func durationOption(name string, d time.Duration, zeroOK bool, field func(*Config) *time.Duration) Option {
	return func(c *config) {
		switch {
		case d < 0:
			c.fail("%s must not be negative, got %v", name, d)
		case d == 0 && !zeroOK:
			c.fail("%s must be positive", name)
		default:
			*field(&c.Config) = d
		}
	}
}

// textOption is the option named name that sets the field returned by
// field to v, which must not be empty; what names v in the error.
func textOption(name, what, v string, field func(*Config) *string) Option {
	return func(c *config) {
		if v == "" {
			c.fail("%s: the %s is empty", name, what)
			return
		}
		*field(&c.Config) = v
	}
}

// WithResolver chooses how flags are obtained: ResolverInProcess (a sync
// server), ResolverFile, or ResolverRPC, flagd's default, which flagsnap
// refuses because it evaluates in-process.
func WithResolver(r Resolver) Option {
	return func(c *config) {
		parsed, err := ParseResolver(string(r))
		if err != nil {
			c.fail("WithResolver: %v", err)
			return
		}
		switch parsed {
		case ResolverFile:
			c.chooseSource("WithResolver(ResolverFile)", kindFile, "reads the flags from a file")
		case ResolverInProcess:
			c.chooseSource("WithResolver(ResolverInProcess)", kindServer, "follows a sync server")
		default:
			c.chooseSource("WithResolver(ResolverRPC)", kindServer, "asks a flagd server")
		}
		c.Resolver, c.resolverFromEnv = parsed, false
	}
}

// WithFile reads the flags from a JSON or YAML file, watched for changes
// (the file resolver).
func WithFile(path string) Option {
	return func(c *config) {
		if path == "" {
			c.fail("WithFile: the path is empty")
			return
		}
		c.chooseSource("WithFile", kindFile, "reads the flags from a file")
		c.OfflineFlagSourcePath, c.pathFromEnv = path, false
	}
}

// WithFilePollInterval sets how often the flag file is re-read whatever
// the file-system notifications say (default 5s), so that changes on file
// systems that lose notifications still arrive.
func WithFilePollInterval(d time.Duration) Option {
	set := durationOption("WithFilePollInterval", d, false, func(c *Config) *time.Duration { return &c.OfflinePollInterval })
	return func(c *config) {
		c.readBy("WithFilePollInterval", kindFile)
		set(c)
	}
}

// WithURL reads the flags from an http or https URL: a CDN, a config
// service, a raw file in a Git host, or `flagsnap serve --http`. The URL
// is asked every WithPollInterval (default 5s) with the ETag and
// Last-Modified of its last answer, so an unchanged document costs the
// server a 304 and the provider nothing. Each request is bounded by
// WithDeadline, the document by WithMaxMessageSize; WithCertPath trusts
// other certificate authorities for https, and WithHTTPHeader,
// WithAuthorizationFile and WithHTTPClient shape the requests. A server
// that fails (refused, timed out, 5xx, 429) leaves the flags in force, as
// a lost file does: STALE, ERROR after the grace period, READY when it
// answers again; a document that does not load is rejected as a bad file
// is. It is an error with another choice of source.
func WithURL(rawURL string) Option {
	return func(c *config) {
		if rawURL == "" {
			c.fail("WithURL: the URL is empty")
			return
		}
		if u, err := url.Parse(rawURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			hint := ""
			if !strings.Contains(rawURL, "://") {
				hint = fmt.Sprintf(": did you mean http://%s?", rawURL)
			}
			c.fail("WithURL: %q is not an http:// or https:// URL%s", rawURL, hint)
			return
		}
		c.chooseSource("WithURL", kindURL, "reads the flags from a URL")
		c.URL = rawURL
	}
}

// WithPollInterval sets how often the URL of WithURL is asked for the
// flags (default 5s, as flagd's http sync). Each provider starts its polls
// at a random point of the first interval and spreads each wait by a
// tenth, so that a fleet started together does not poll in lockstep.
func WithPollInterval(d time.Duration) Option {
	set := durationOption("WithPollInterval", d, false, func(c *Config) *time.Duration { return &c.PollInterval })
	return func(c *config) {
		c.readBy("WithPollInterval", kindURL)
		set(c)
	}
}

// WithHTTPHeader sends a header with every request to the URL of WithURL;
// given again, it adds another (a second value for the same name too).
func WithHTTPHeader(name, value string) Option {
	return func(c *config) {
		c.readBy("WithHTTPHeader", kindURL)
		if name == "" {
			c.fail("WithHTTPHeader: the header name is empty")
			return
		}
		if c.HTTPHeader == nil {
			c.HTTPHeader = http.Header{}
		}
		c.HTTPHeader.Add(name, value)
	}
}

// WithAuthorizationFile sends the content of the file at path as the
// Authorization header of every request to the URL of WithURL. The file is
// read for every request, so a rotated token (a Kubernetes projected
// service-account token) is used as soon as it is written; a file that
// holds a bare token, one word, is sent as "Bearer <token>".
func WithAuthorizationFile(path string) Option {
	return textOption("WithAuthorizationFile", "path", path, func(c *Config) *string { return &c.AuthorizationFile })
}

// WithHTTPClient makes the requests to the URL of WithURL through client,
// for a proxy, mTLS or a transport of your own. Redirects are still
// followed at most 5 times and never from https to http. Give the
// certificate authorities to the client's transport rather than with
// WithCertPath.
func WithHTTPClient(client *http.Client) Option {
	return func(c *config) {
		if client == nil {
			c.fail("WithHTTPClient: the client is nil")
			return
		}
		c.httpClient = client
	}
}

// WithCertPath trusts the certificate authorities in the PEM file at path,
// instead of the system's, for a sync server with TLS and for an https URL
// (FLAGD_SERVER_CERT_PATH). It chooses no source, and turns no TLS on.
func WithCertPath(path string) Option {
	return textOption("WithCertPath", "path", path, func(c *Config) *string { return &c.CertPath })
}

// WithSource reads the flags from any implementation of source.Source; it
// is an error with WithFlags, WithFile, WithResolver or a server option,
// and FLAGD_RESOLVER and FLAGD_OFFLINE_FLAG_SOURCE_PATH are ignored. The
// provider runs the source once: after Shutdown, Init fails with
// PROVIDER_FATAL, where the file and gRPC sources are built anew for
// every Init.
func WithSource(s source.Source) Option {
	return func(c *config) {
		if s == nil {
			c.fail("WithSource: the source is nil")
			return
		}
		c.chooseSource("WithSource", kindMemory, "reads the flags from your source")
		c.source, c.flags = s, nil
	}
}

// WithOverrideFile layers the flag file at path over the flags of the
// provider's source, whatever that is: a flag key the file defines
// replaces that whole flag of the source, as flagd merges its sources.
// It is how a flag is turned off during an incident while the source may
// be down, and how a developer forces a few flags over the team's.
//
// The file is watched as WithFile's is. An override applies, and is
// withdrawn, whatever state the source is in: its lifecycle and readiness
// stay the source's. A file that does not exist means no overrides until
// it does; a document that does not load, or has a broken flag, is
// refused, logged with its path and problem, and the last good overrides
// stay. Given more than once, a later override wins over an earlier one.
// FLAGSNAP_OVERRIDE_FILE names one too, replaced by the options as the
// FLAGD_* variables are (see FromEnv).
func WithOverrideFile(path string) Option {
	return func(c *config) {
		if path == "" {
			c.fail("WithOverrideFile: the path is empty")
			return
		}
		c.addOverride(overrideSpec{path: path})
	}
}

// WithOverrideSource is WithOverrideFile for any source: its flag sets
// are layered over the provider's source's, as an override file's are.
func WithOverrideSource(src source.Source) Option {
	return func(c *config) {
		if src == nil {
			c.fail("WithOverrideSource: the source is nil")
			return
		}
		c.addOverride(overrideSpec{src: src})
	}
}

// addOverride layers o over the overrides given before it, less the
// variable's override file: an option replaces it, as explicit options
// replace the FLAGD_* variables, and the variable applied again (FromEnv)
// moves it on top.
func (c *config) addOverride(o overrideSpec) {
	c.overrides = slices.DeleteFunc(c.overrides, func(o overrideSpec) bool { return o.fromEnv })
	c.overrides = append(c.overrides, o)
}

// WithFlags serves doc, a flag document in JSON or YAML held in memory,
// for tests and for programs that build their flags themselves.
// NewProvider compiles it with the provider's options, so a document that
// does not load is its error, and Init has nothing left to wait for. To
// change the flags later, give WithSource a source.Memory instead and call
// its Set. Like WithSource, it is an error with another choice of source,
// and FLAGD_RESOLVER and FLAGD_OFFLINE_FLAG_SOURCE_PATH are ignored.
func WithFlags(doc []byte) Option {
	return func(c *config) {
		if doc == nil {
			c.fail("WithFlags: the document is nil")
			return
		}
		c.chooseSource("WithFlags", kindMemory, "serves a document held in memory")
		c.flags, c.source = slices.Clone(doc), nil
	}
}

// WithFractionalVersion selects the bucketing of the fractional operator.
// fractional.V2, the default, matches flagd and its other providers;
// fractional.V3 hashes typed values and moves users to new buckets;
// fractional.V1 keeps the buckets of old releases.
func WithFractionalVersion(v fractional.Version) Option {
	return func(c *config) {
		if !v.Valid() {
			c.fail("WithFractionalVersion: unknown version %d", uint8(v))
			return
		}
		c.FractionalVersion = v
	}
}

// WithStrictValidation rejects a whole flag set when any flag in it has a
// problem, as flagd does, instead of loading the other flags.
func WithStrictValidation() Option {
	return func(c *config) { c.StrictValidation = true }
}

// WithDeadline bounds how long Init waits for the first flag set (default
// 500ms), and unary calls to the sync server. When it passes, Init fails
// and the provider keeps trying.
func WithDeadline(d time.Duration) Option {
	return durationOption("WithDeadline", d, false, func(c *Config) *time.Duration { return &c.Deadline })
}

// WithRetryGracePeriod sets how long a lost source stays STALE before the
// provider reports ERROR (default 10s). Flags keep being served throughout.
func WithRetryGracePeriod(d time.Duration) Option {
	return durationOption("WithRetryGracePeriod", d, true, func(c *Config) *time.Duration { return &c.RetryGracePeriod })
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

// TrackerFunc receives the tracking events of OpenFeature's Client.Track.
type TrackerFunc func(ctx context.Context, name string, evalCtx openfeature.EvaluationContext, details openfeature.TrackingEventDetails)

// WithTracker passes every tracking event (OpenFeature's Client.Track) to
// fn, on the caller's goroutine: an in-process provider has no server to
// send them to, so they go where the application says (a metrics
// pipeline, an experiment store). fn must be quick and safe for concurrent
// use. Without it, Track does nothing.
func WithTracker(fn TrackerFunc) Option {
	return func(c *config) {
		if fn == nil {
			c.fail("WithTracker: the function is nil")
			return
		}
		c.tracker = fn
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
	return serverOption(textOption("WithHost", "host", host, func(c *Config) *string { return &c.Host }),
		"WithHost", "names a sync server's host")
}

// serverOption marks set, an option that configures the sync server, as
// choosing a server when it succeeds.
func serverOption(set Option, name, does string) Option {
	return func(c *config) {
		before := len(c.errs)
		if set(c); len(c.errs) == before {
			c.chooseSource(name, kindServer, does)
		}
	}
}

// WithPort sets the sync server's port (default 8015 for the in-process
// resolver).
func WithPort(port int) Option {
	return serverOption(func(c *config) {
		if port <= 0 || port > 65535 {
			c.fail("WithPort: %d is not a TCP port", port)
			return
		}
		c.Port, c.syncPort = port, 0
	}, "WithPort", "sets a sync server's port")
}

// WithTargetURI connects to a gRPC target instead of host and port, for
// custom name resolution. "envoy://host:port/authority" dials host:port
// and sends the given authority, for proxies that route by it. A socket
// path wins over it.
func WithTargetURI(uri string) Option {
	return serverOption(func(c *config) {
		if err := checkTargetURI(uri); err != nil {
			c.fail("WithTargetURI: %v", err)
			return
		}
		c.TargetURI = uri
	}, "WithTargetURI", "names a sync server's gRPC target")
}

// checkTargetURI rejects what cannot be a gRPC target, and an envoy
// target without its authority, for WithTargetURI and FLAGD_TARGET_URI.
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

// WithSocketPath connects to the sync server over a unix socket, whatever
// the host, port or target URI.
func WithSocketPath(path string) Option {
	return serverOption(textOption("WithSocketPath", "path", path, func(c *Config) *string { return &c.SocketPath }),
		"WithSocketPath", "names a sync server's unix socket")
}

// WithTLS connects with TLS, trusting the CA certificates in the PEM file
// caCertPath, or the system's roots when it is empty.
func WithTLS(caCertPath string) Option {
	return serverOption(func(c *config) { c.TLS, c.CertPath = true, caCertPath },
		"WithTLS", "connects to a sync server with TLS")
}

// WithSelector asks the sync server for one flag set (sent as the request's
// selector and as the flagd-selector header).
func WithSelector(selector string) Option {
	return func(c *config) {
		c.readBy("WithSelector", kindServer)
		c.Selector = selector
	}
}

// WithProviderID identifies this provider to the sync server.
func WithProviderID(id string) Option {
	return func(c *config) { c.ProviderID = id }
}

// WithStreamDeadline bounds each sync stream (default 600s); a stream that
// reaches it is reopened at once, without reporting the source as lost.
// Zero means no deadline.
func WithStreamDeadline(d time.Duration) Option {
	return durationOption("WithStreamDeadline", d, true, func(c *Config) *time.Duration { return &c.StreamDeadline })
}

// WithRetryBackoff paces reconnecting to a lost server (defaults 1s and
// 5s): the first attempt comes after initial/4, then every initial/2
// while the outage is young, then every sixteenth of the outage's age, up
// to max. A server back after a restart is found within a second, and a
// long outage is asked less and less often.
func WithRetryBackoff(initial, max time.Duration) Option {
	return func(c *config) {
		if initial <= 0 || max <= 0 {
			c.fail("WithRetryBackoff: delays must be positive, got %v and %v", initial, max)
			return
		}
		c.RetryBackoff, c.RetryBackoffMax = initial, max
	}
}

// WithKeepAlive sends HTTP/2 keepalive pings at this interval (default 0:
// none).
func WithKeepAlive(d time.Duration) Option {
	return durationOption("WithKeepAlive", d, true, func(c *Config) *time.Duration { return &c.KeepAlive })
}

// WithMaxMessageSize bounds the size of one flag document, in bytes: a
// message from a sync server, a URL's body (decompressed) and a flag file
// (default 1 GiB, because gRPC's own 4 MiB is too small for large flag
// sets). A larger document is reported as PROVIDER_ERROR, with its size
// and the bound, having held no more than about the bound, while the flags
// in force keep serving; a sync server is asked again only after the
// longest backoff.
func WithMaxMessageSize(bytes int) Option {
	return func(c *config) {
		if bytes <= 0 {
			c.fail("WithMaxMessageSize must be positive, got %d", bytes)
			return
		}
		c.MaxMessageSize = bytes
	}
}

// WithFatalStatusCodes lists gRPC status codes that, received before the
// first successful connection, make the provider give up for good
// (PROVIDER_FATAL) instead of retrying.
func WithFatalStatusCodes(list ...codes.Code) Option {
	return func(c *config) {
		names := make([]string, 0, len(list))
		for _, code := range list {
			name, ok := statusCodeNames[code]
			if !ok {
				c.fail("WithFatalStatusCodes: %v is not a gRPC status code", code)
				return
			}
			names = append(names, name)
		}
		c.FatalStatusCodes = names
	}
}

// WithFatalStatusCodeNames is WithFatalStatusCodes with the names
// FLAGD_FATAL_STATUS_CODES uses (PERMISSION_DENIED, …), for configuration
// read as text. NewProvider rejects names that are not status codes.
func WithFatalStatusCodeNames(names ...string) Option {
	return func(c *config) { c.FatalStatusCodes = slices.Clone(names) }
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
	return textOption("WithCacheFile", "path", path, func(c *Config) *string { return &c.CacheFile })
}

// WithoutUsage turns off the counting of evaluations behind
// Provider.Usage: evaluations count nothing, no clock goroutine runs, and
// Usage is empty. Counting costs an evaluation one atomic add, which a
// program that never reads Usage need not pay.
func WithoutUsage() Option {
	return func(c *config) { c.withoutUsage = true }
}
