package flagsnap

// Config, the configuration a provider runs with: its fields, its
// defaults, and how the variables and options are settled into it.

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"google.golang.org/grpc"

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
	// Resolver is file, in-process or rpc, or empty when WithFlags,
	// WithSource or WithURL provides the flags: no flagd resolver is in
	// force then.
	Resolver              Resolver
	Host                  string
	Port                  int // 8013 for rpc, 8015 otherwise, unless set
	TargetURI             string
	TLS                   bool
	SocketPath            string
	CertPath              string // CA certificates (PEM) for TLS and https
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

	// The flag document's http or https address (WithURL), the time
	// between its polls, the headers sent with each, and the file the
	// Authorization header's value is read from.
	URL               string
	PollInterval      time.Duration
	HTTPHeader        http.Header
	AuthorizationFile string
}

// Defaults, as in flagd's provider configuration table.
// DefaultMaxMessageSize is [source.DefaultMaxMessageSize], where the bound
// is defined and documented for GRPCConfig: the provider and a source built
// alone bound a flag set alike.
const (
	DefaultHost              = flagddefault.Host             // localhost
	DefaultRPCPort           = flagddefault.RPCPort          // 8013
	DefaultInProcessPort     = flagddefault.InProcessPort    // 8015
	DefaultDeadline          = flagddefault.Deadline         // 500ms
	DefaultStreamDeadline    = flagddefault.StreamDeadline   // 600s
	DefaultRetryBackoff      = flagddefault.RetryBackoff     // 1s
	DefaultRetryBackoffMax   = flagddefault.RetryBackoffMax  // 5s
	DefaultRetryGracePeriod  = flagddefault.RetryGracePeriod // 10s
	DefaultFilePollInterval  = flagddefault.FilePollInterval // 5s
	DefaultPollInterval      = flagddefault.PollInterval     // 5s
	DefaultMaxMessageSize    = source.DefaultMaxMessageSize  // 1 GiB
	DefaultFractionalVersion = fractional.Version(flagddefault.FractionalVersion)
)

// config is what the options build: the public Config, plus what cannot
// be told by name (a source, functions, a logger) and FLAGD_SYNC_PORT,
// which only settle can place. Resolver and Port stay zero until settle
// unless they were given.
type config struct {
	Config

	source      source.Source
	flags       []byte // WithFlags' document, compiled by NewProvider
	enricher    func(map[string]any) map[string]any
	tracker     TrackerFunc
	logger      *slog.Logger
	dialOptions []grpc.DialOption
	httpClient  *http.Client

	// syncPort is FLAGD_SYNC_PORT; WithPort clears it, so that an explicit
	// port wins unless FromEnv comes after it.
	syncPort int

	withoutEnv bool // WithoutEnv: the variables are not applied first
	envApplied bool // the variables were applied, first or by FromEnv

	withoutUsage bool // WithoutUsage: no counting (usage.go)

	// overrides are the layers over the source, lowest first (overlay.go).
	overrides []overrideSpec

	// sourceChoices are the options that chose where the flags come from,
	// one per option name, to name both sides of a contradiction.
	sourceChoices []sourceChoice
	// sourceOptions are the options given that only some sources read.
	sourceOptions []sourceOption
	// A variable, not an option, set OfflineFlagSourcePath or Resolver: an
	// option that chooses another kind of source drops a variable's value,
	// where another option's is a contradiction to report.
	pathFromEnv, resolverFromEnv bool
	// fileReplaced is the flag file of an option that variables applied
	// by FromEnv replaced with a server's resolver, for the error that
	// follows when that resolver is rpc.
	fileReplaced string
	// rpcByDefault: nothing chose a resolver, and rpc is flagd's default.
	rpcByDefault bool

	errs []error // every invalid option or variable, reported together
}

// defaultConfig is the configuration before any variable or option:
// flagd's defaults, and a logger that discards.
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
			PollInterval:        DefaultPollInterval,
			FractionalVersion:   DefaultFractionalVersion,
		},
		logger: slog.New(slog.DiscardHandler),
	}
}

// fail records an invalid option or variable; NewProvider reports them
// all at once, so that one run shows every mistake.
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
	c.settle()
	return c, errors.Join(c.errs...)
}

// settle reports options that contradict each other and works out the
// resolver and the port, as flagd's providers do: an offline flag file
// turns in-process into file (and is the file resolver when nothing else
// was asked for); the sync port wins over FLAGD_PORT for in-process; the
// default port follows the resolver. Flags in memory leave Resolver empty.
func (c *config) settle() {
	c.reportContradictions()
	switch {
	case c.source != nil || c.flags != nil || c.URL != "":
		c.Resolver, c.OfflineFlagSourcePath = "", ""
	case c.Resolver == "" && c.OfflineFlagSourcePath != "":
		c.Resolver = ResolverFile
	case c.Resolver == "":
		c.Resolver, c.rpcByDefault = ResolverRPC, true
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
	c.reportUnreadOptions()
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
