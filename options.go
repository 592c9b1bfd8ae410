package flagsnap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/open-feature/go-sdk/openfeature"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/flagsnap/flagsnap/fractional"
	"github.com/flagsnap/flagsnap/internal/flagddefault"
	"github.com/flagsnap/flagsnap/source"
)

// Resolver is how a flagd provider gets its answers, as named in flagd's
// provider configuration. flagsnap evaluates every flag in-process: it
// runs the in-process resolver (flag sets synced from a server) and the
// file resolver; the rpc resolver (each evaluation asked of flagd) is
// recognised, as it is flagd's default, but NewProvider refuses it.
type Resolver string

const (
	// ResolverRPC asks flagd for every evaluation; flagsnap refuses it.
	ResolverRPC Resolver = "rpc"
	// ResolverInProcess follows a flagd sync server and evaluates locally.
	ResolverInProcess Resolver = "in-process"
	// ResolverFile reads the flags from a watched file.
	ResolverFile Resolver = "file"
)

// ParseResolver reads a resolver name, in any case.
func ParseResolver(s string) (Resolver, error) {
	switch r := Resolver(strings.ToLower(strings.TrimSpace(s))); r {
	case ResolverRPC, ResolverInProcess, ResolverFile:
		return r, nil
	}
	return "", fmt.Errorf("unknown resolver %q: rpc, in-process or file", s)
}

// Config is a provider's configuration after the environment variables and
// the options are applied, with the names and defaults of flagd's provider
// configuration table. Resolver and OfflineFlagSourcePath say where the
// flags really come from; the sync server's fields keep what was given
// even when the flags come from a file or from memory, which do not use
// them.
type Config struct {
	// Resolver is file, in-process or rpc, or empty when WithFlags or
	// WithSource provides the flags: no flagd resolver is in force then.
	Resolver              Resolver
	Host                  string
	Port                  int // 8013 for rpc, 8015 otherwise, unless set
	TargetURI             string
	TLS                   bool
	SocketPath            string
	CertPath              string // CA certificates (PEM) for TLS
	Deadline              time.Duration
	StreamDeadline        time.Duration
	RetryBackoff          time.Duration
	RetryBackoffMax       time.Duration
	RetryGracePeriod      time.Duration
	KeepAlive             time.Duration
	MaxMessageSize        int // bytes: the largest flag set message from a sync server
	Selector              string
	ProviderID            string
	OfflineFlagSourcePath string
	OfflinePollInterval   time.Duration
	FatalStatusCodes      []string // gRPC status code names, e.g. PERMISSION_DENIED
	CacheFile             string
	FractionalVersion     fractional.Version
	StrictValidation      bool
}

// Option configures a Provider.
//
// Options are applied in order after the FLAGD_* environment variables, so
// an option wins over its variable, and a variable fills only what the
// options leave unset. That includes where the flags come from: once the
// options choose a file (WithFile, WithResolver(ResolverFile)), a sync
// server (WithResolver(ResolverInProcess) or ResolverRPC, WithHost,
// WithPort, WithTargetURI, WithSocketPath, WithTLS) or flags in memory
// (WithFlags, WithSource), the variables that would choose another are
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
// WithResolver. As in flagd's providers, WithResolver(ResolverInProcess)
// with WithFile is the file resolver (older configurations ask for a file
// that way), and a socket path, a target URI and a host and port may be
// given together: the socket path wins, then the target URI. Options that
// only tune a source (WithSelector, WithCacheFile, WithFilePollInterval,
// WithRetryBackoff, ...) choose none, and are unused by the sources they do
// not apply to.
type Option func(*config)

// Defaults, as in flagd's provider configuration table.
const (
	DefaultHost              = flagddefault.Host             // localhost
	DefaultRPCPort           = flagddefault.RPCPort          // 8013
	DefaultInProcessPort     = flagddefault.InProcessPort    // 8015
	DefaultDeadline          = flagddefault.Deadline         // 500ms
	DefaultStreamDeadline    = flagddefault.StreamDeadline   // 600s
	DefaultRetryBackoff      = flagddefault.RetryBackoff     // 1s
	DefaultRetryBackoffMax   = flagddefault.RetryBackoffMax  // 12s
	DefaultRetryGracePeriod  = flagddefault.RetryGracePeriod // 5s
	DefaultFilePollInterval  = flagddefault.FilePollInterval // 5s
	DefaultMaxMessageSize    = flagddefault.MaxMessageSize   // 1 GiB
	DefaultFractionalVersion = fractional.V2
)

// The environment variables, named as flagd's providers name them.
const (
	EnvResolver              = "FLAGD_RESOLVER" // rpc, in-process or file
	EnvHost                  = "FLAGD_HOST"
	EnvPort                  = "FLAGD_PORT"
	EnvSyncPort              = "FLAGD_SYNC_PORT" // in-process: wins over FLAGD_PORT
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

// config is what the options build: the public Config, plus what cannot
// be told by name (a source, functions, a logger) and FLAGD_SYNC_PORT,
// which only resolve can place. Resolver and Port stay zero until resolve
// unless they were given.
type config struct {
	Config

	source      source.Source
	flags       []byte // WithFlags' document, compiled by NewProvider
	enricher    func(map[string]any) map[string]any
	tracker     TrackerFunc
	logger      *slog.Logger
	dialOptions []grpc.DialOption

	// syncPort is FLAGD_SYNC_PORT; WithPort clears it, so that an explicit
	// port wins unless FromEnv comes after it.
	syncPort int

	withoutEnv bool // WithoutEnv: the variables are not applied first

	withoutUsage bool // WithoutUsage: no counting (usage.go)

	// picks are the options that chose where the flags come from, one per
	// option name, to name both sides of a contradiction.
	picks []pick
	// A variable, not an option, set OfflineFlagSourcePath or Resolver: an
	// option that chooses another kind of source drops a variable's value,
	// where another option's is a contradiction to report.
	pathFromEnv, resolverFromEnv bool

	errs []error // every invalid option or variable, reported together
}

// sourceKind is where the flags come from, as far as the options and
// variables have chosen.
type sourceKind uint8

const (
	kindNone sourceKind = iota
	kindFile
	kindServer
	kindMemory
)

// pick is an option that chose a kind of source: its name, as an error
// shows it (WithResolver with its value), and what it asks for, in the
// words of an error.
type pick struct {
	option string
	kind   sourceKind
	does   string
}

// name is the option's function name, without WithResolver's value.
func (p pick) name() string {
	name, _, _ := strings.Cut(p.option, "(")
	return name
}

func resolverKind(r Resolver) sourceKind {
	switch r {
	case ResolverFile:
		return kindFile
	case ResolverInProcess, ResolverRPC:
		return kindServer
	}
	return kindNone
}

// choose records that the option chose a kind of source. A later value
// of the same option replaces the earlier one, as with any option. What
// the variables chose for another kind is dropped, because the options
// win; what other options chose is kept, for resolve to report.
func (c *config) choose(option string, kind sourceKind, does string) {
	p := pick{option: option, kind: kind, does: does}
	if i := slices.IndexFunc(c.picks, func(q pick) bool { return q.name() == p.name() }); i >= 0 {
		c.picks[i] = p
	} else {
		c.picks = append(c.picks, p)
	}
	c.drop(kind, true)
}

// drop clears what chose a kind of source other than kind; with envOnly,
// only what the variables set.
func (c *config) drop(kind sourceKind, envOnly bool) {
	if kind != kindMemory && !envOnly {
		c.flags, c.source = nil, nil
	}
	if kind != kindFile && (c.pathFromEnv || !envOnly) {
		c.OfflineFlagSourcePath, c.pathFromEnv = "", false
	}
	if c.Resolver != "" && resolverKind(c.Resolver) != kind && (c.resolverFromEnv || !envOnly) {
		c.Resolver, c.resolverFromEnv = "", false
	}
}

// contradictions reports options that choose different sources, one
// pair for each two kinds of source, so that a file given with a host and
// a port is one error.
func (c *config) contradictions() {
	reported := map[[2]sourceKind]bool{}
	for i, a := range c.picks {
		for _, b := range c.picks[i+1:] {
			kinds := [2]sourceKind{min(a.kind, b.kind), max(a.kind, b.kind)}
			if !contradict(a, b) || reported[kinds] {
				continue
			}
			reported[kinds] = true
			c.fail("%s and %s contradict each other: %s %s, and %s %s; give one or the other",
				a.option, b.option, a.option, a.does, b.option, b.does)
		}
	}
}

func contradict(a, b pick) bool {
	switch {
	case a.kind == kindMemory || b.kind == kindMemory:
		// Two memory picks are WithFlags and WithSource: the same option
		// is a single pick.
		return true
	case a.kind == b.kind:
		return false
	}
	// flagd's providers read in-process (or rpc) with a flag file as the
	// file resolver (rpc stays rpc), and the conformance suite checks it.
	serverResolver := func(p pick) bool { return p.kind == kindServer && p.name() == "WithResolver" }
	file := func(p pick) bool { return p.name() == "WithFile" }
	return !(serverResolver(a) && file(b) || serverResolver(b) && file(a))
}

func defaultConfig() config {
	return config{
		Config: Config{
			Host:                DefaultHost,
			Deadline:            DefaultDeadline,
			StreamDeadline:      DefaultStreamDeadline,
			RetryBackoff:        DefaultRetryBackoff,
			RetryBackoffMax:     DefaultRetryBackoffMax,
			RetryGracePeriod:    DefaultRetryGracePeriod,
			MaxMessageSize:      DefaultMaxMessageSize,
			OfflinePollInterval: DefaultFilePollInterval,
			FractionalVersion:   DefaultFractionalVersion,
		},
		logger: slog.New(slog.DiscardHandler),
	}
}

func (c *config) fail(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf(format, args...))
}

// buildConfig applies the variables (unless an option says WithoutEnv),
// then the options, then works out what depends on several of them.
func buildConfig(opts []Option) (config, error) {
	// Options only set fields, so running them once on a scratch config
	// tells whether the variables are wanted before they are applied.
	probe := defaultConfig()
	for _, o := range opts {
		if o != nil {
			o(&probe)
		}
	}
	c := defaultConfig()
	if !probe.withoutEnv {
		c.applyEnv()
	}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	c.resolve()
	return c, errors.Join(c.errs...)
}

// resolve reports options that contradict each other and settles the
// resolver and the port, as flagd's providers do: an offline flag file
// turns in-process into file (and is the file resolver when nothing else
// was asked for); the sync port wins over FLAGD_PORT for in-process; the
// default port follows the resolver. Flags in memory leave Resolver empty.
func (c *config) resolve() {
	c.contradictions()
	switch {
	case c.source != nil || c.flags != nil:
		c.Resolver, c.OfflineFlagSourcePath = "", ""
	case c.Resolver == "" && c.OfflineFlagSourcePath != "":
		c.Resolver = ResolverFile
	case c.Resolver == "":
		c.Resolver = ResolverRPC
	case c.Resolver == ResolverInProcess && c.OfflineFlagSourcePath != "":
		c.Resolver = ResolverFile
	case c.Resolver == ResolverFile && c.OfflineFlagSourcePath == "":
		c.fail("the file resolver needs a flag file: give WithFile or %s", EnvOfflineFlagSourcePath)
	}
	switch {
	case c.Resolver == ResolverInProcess && c.syncPort != 0:
		c.Port = c.syncPort
	case c.Port != 0:
	case c.Resolver == ResolverRPC:
		c.Port = DefaultRPCPort
	default:
		c.Port = DefaultInProcessPort
	}
	if c.RetryBackoffMax < c.RetryBackoff {
		c.fail("the maximum retry backoff (%v) is shorter than the initial one (%v)", c.RetryBackoffMax, c.RetryBackoff)
	}
}

// NewConfig works out the configuration NewProvider would use, without
// building a provider: the options and variables are checked, the CA file,
// the status code names and the flags of WithFlags are not.
func NewConfig(opts ...Option) (Config, error) {
	c, err := buildConfig(opts)
	if err != nil {
		return Config{}, fmt.Errorf("flagsnap: %w", err)
	}
	return c.Config, nil
}

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
			c.choose("WithResolver(ResolverFile)", kindFile, "reads the flags from a file")
		case ResolverInProcess:
			c.choose("WithResolver(ResolverInProcess)", kindServer, "follows a sync server")
		default:
			c.choose("WithResolver(ResolverRPC)", kindServer, "asks a flagd server")
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
		c.choose("WithFile", kindFile, "reads the flags from a file")
		c.OfflineFlagSourcePath, c.pathFromEnv = path, false
	}
}

// WithFilePollInterval sets how often the flag file is re-read whatever
// the file-system notifications say (default 5s), so that changes on file
// systems that lose notifications still arrive.
func WithFilePollInterval(d time.Duration) Option {
	return durationOption("WithFilePollInterval", d, false, func(c *Config) *time.Duration { return &c.OfflinePollInterval })
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
		c.choose("WithSource", kindMemory, "reads the flags from your source")
		c.source, c.flags = s, nil
	}
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
		c.choose("WithFlags", kindMemory, "serves a document held in memory")
		c.flags, c.source = slices.Clone(doc), nil
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
// provider reports ERROR (default 5s). Flags keep being served throughout.
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
			c.choose(name, kindServer, does)
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
	return func(c *config) { c.Selector = selector }
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
// 12s): the first attempt comes after initial/4, then every initial/2
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

// WithMaxMessageSize bounds the size of one flag set message from a sync
// server, in bytes (default 1 GiB, about five million flags as flagd
// sends them; gRPC's own default of 4 MiB would stop at about 20,000). A
// larger message is reported as PROVIDER_ERROR, with its size and the
// bound, while the flags in force keep serving; the server is asked again
// only after the longest backoff.
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
			name, ok := codeNames[code]
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

// FromEnv applies the FLAGD_* environment variables at this position in
// the option list. They are always applied first; give FromEnv last to
// let them win over explicit options. At its position a variable that
// chooses a source (FLAGD_RESOLVER, FLAGD_OFFLINE_FLAG_SOURCE_PATH)
// replaces the source the options before it chose, and options after it
// that choose a source replace the variables' choice.
func FromEnv() Option {
	return func(c *config) { c.applyEnv() }
}

// WithoutEnv makes the provider ignore the FLAGD_* environment variables:
// only the options configure it (FromEnv still applies them where it is
// given). Tests use it so that a developer's or a CI machine's variables
// cannot change, or break, the providers they build.
func WithoutEnv() Option {
	return func(c *config) { c.withoutEnv = true }
}

// WithoutUsage turns off the counting of evaluations behind
// Provider.Usage: evaluations count nothing, no clock goroutine runs, and
// Usage is empty. Counting costs an evaluation one atomic add: 1 to 3 ns,
// up to 4 ns on a disabled flag or an eight-bucket fractional
// (BenchmarkUsageCost).
func WithoutUsage() Option {
	return func(c *config) { c.withoutUsage = true }
}

// applyEnv reads every variable that is set; a value that does not parse
// is an error naming the variable.
func (c *config) applyEnv() {
	var resolver Resolver
	var path string
	hasResolver := envParsed(c, EnvResolver, ParseResolver, &resolver)
	hasPath := envString(c, EnvOfflineFlagSourcePath, false, &path)
	// The two are read together, as flagd's providers read them: a file
	// makes in-process the file resolver, and rpc stays rpc.
	kind := resolverKind(resolver)
	if hasPath && (!hasResolver || resolver == ResolverInProcess) {
		kind = kindFile
	}
	if kind != kindNone {
		c.drop(kind, false)
		if hasResolver {
			c.Resolver, c.resolverFromEnv = resolver, true
		}
		if hasPath {
			c.OfflineFlagSourcePath, c.pathFromEnv = path, true
		}
	}
	envDuration(c, EnvOfflinePollMs, time.Millisecond, false, &c.OfflinePollInterval)
	envDuration(c, EnvDeadlineMs, time.Millisecond, false, &c.Deadline)
	envDuration(c, EnvRetryGracePeriod, time.Second, true, &c.RetryGracePeriod)
	envDuration(c, EnvStreamDeadlineMs, time.Millisecond, true, &c.StreamDeadline)
	envDuration(c, EnvRetryBackoffMs, time.Millisecond, false, &c.RetryBackoff)
	envDuration(c, EnvRetryBackoffMaxMs, time.Millisecond, false, &c.RetryBackoffMax)
	envDuration(c, EnvKeepAliveTimeMs, time.Millisecond, true, &c.KeepAlive)
	envString(c, EnvHost, false, &c.Host)
	envString(c, EnvSocketPath, false, &c.SocketPath)
	envString(c, EnvServerCertPath, true, &c.CertPath)
	envString(c, EnvSourceSelector, true, &c.Selector)
	envString(c, EnvProviderID, true, &c.ProviderID)
	envString(c, EnvCacheFile, false, &c.CacheFile)
	envParsed(c, EnvTargetURI, func(v string) (string, error) { return v, checkTargetURI(v) }, &c.TargetURI)
	if port, ok := envPort(c, EnvPort); ok {
		c.Port = port
	}
	if port, ok := envPort(c, EnvSyncPort); ok {
		c.syncPort = port
	}
	if v, ok := os.LookupEnv(EnvTLS); ok {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			c.fail("%s=%q is not true or false", EnvTLS, v)
		} else {
			c.TLS = b
		}
	}
	if v, ok := os.LookupEnv(EnvFatalStatusCodes); ok {
		c.FatalStatusCodes = splitList(v)
	}
	envParsed(c, EnvFractionalVersion, fractional.ParseVersion, &c.FractionalVersion)
}

// envParsed sets dst to the variable's value as parse reads it, and says
// whether it did; parse's error, if any, is reported under the variable's
// name.
func envParsed[T any](c *config, name string, parse func(string) (T, error), dst *T) bool {
	v, ok := os.LookupEnv(name)
	if !ok {
		return false
	}
	x, err := parse(v)
	if err != nil {
		c.fail("%s: %v", name, err)
		return false
	}
	*dst = x
	return true
}

func envPort(c *config, name string) (int, bool) {
	v, ok := os.LookupEnv(name)
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n <= 0 || n > 65535 {
		c.fail("%s=%q is not a TCP port", name, v)
		return 0, false
	}
	return n, true
}

// envString reads a string variable, and says whether it did; an empty
// value is an error unless emptyOK.
func envString(c *config, name string, emptyOK bool, dst *string) bool {
	v, ok := os.LookupEnv(name)
	if !ok {
		return false
	}
	if v == "" && !emptyOK {
		c.fail("%s is set but empty", name)
		return false
	}
	*dst = v
	return true
}

// envDuration reads a whole number of units from the variable name.
func envDuration(c *config, name string, unit time.Duration, zeroOK bool, dst *time.Duration) {
	v, ok := os.LookupEnv(name)
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

// splitList reads a comma-separated list, trimming spaces.
func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// codeNames are the gRPC status codes under their canonical names.
var codeNames = map[codes.Code]string{
	codes.Canceled:           "CANCELLED",
	codes.Unknown:            "UNKNOWN",
	codes.InvalidArgument:    "INVALID_ARGUMENT",
	codes.DeadlineExceeded:   "DEADLINE_EXCEEDED",
	codes.NotFound:           "NOT_FOUND",
	codes.AlreadyExists:      "ALREADY_EXISTS",
	codes.PermissionDenied:   "PERMISSION_DENIED",
	codes.ResourceExhausted:  "RESOURCE_EXHAUSTED",
	codes.FailedPrecondition: "FAILED_PRECONDITION",
	codes.Aborted:            "ABORTED",
	codes.OutOfRange:         "OUT_OF_RANGE",
	codes.Unimplemented:      "UNIMPLEMENTED",
	codes.Internal:           "INTERNAL",
	codes.Unavailable:        "UNAVAILABLE",
	codes.DataLoss:           "DATA_LOSS",
	codes.Unauthenticated:    "UNAUTHENTICATED",
}

// statusCodes reads status code names, in any case.
func statusCodes(names []string) ([]codes.Code, error) {
	out := make([]codes.Code, 0, len(names))
	for _, name := range names {
		want := strings.ToUpper(strings.TrimSpace(name))
		found := false
		for code, n := range codeNames {
			if n == want || (want == "CANCELED" && code == codes.Canceled) {
				out = append(out, code)
				found = true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("%q is not a gRPC status code name (such as PERMISSION_DENIED)", name)
		}
	}
	return out, nil
}
