package source

import (
	"cmp"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"

	"github.com/flagsnap/flagsnap/internal/flagddefault"
)

const (
	// DefaultMaxMessageSize is the largest flag set message a GRPC source
	// receives unless told otherwise: 1 GiB, because gRPC's own 4 MiB
	// default is too small for large flag sets. gRPC checks a message's
	// length before reading it, so the bound costs no memory until a
	// message that large arrives. It is also the HTTP and file sources'
	// default bound, and the provider's:
	// [github.com/flagsnap/flagsnap.DefaultMaxMessageSize] is this constant.
	DefaultMaxMessageSize = flagddefault.MaxMessageSize

	// defaultLivenessInterval and defaultLivenessTimeout pace the check
	// that notices a server gone silent without closing the connection,
	// long before the stream deadline would.
	defaultLivenessInterval = 10 * time.Second
	defaultLivenessTimeout  = 5 * time.Second

	// minRetryDelay keeps tiny backoff settings, and streams that end as
	// soon as they deliver, from turning into a busy loop against the
	// server.
	minRetryDelay = 50 * time.Millisecond

	// retryJitter spreads the reconnects of many clients that lost the
	// same server at the same moment.
	retryJitter = 0.2

	// connectTimeout is gRPC's own default; without it the connect
	// timeout would shrink to the (possibly tiny) backoff delay and a TLS
	// handshake could never finish in time.
	connectTimeout = 20 * time.Second

	selectorHeader = "flagd-selector"
	envoyScheme    = "envoy"
)

// retryServiceConfig is the retry policy flagd's other providers use, so a
// server sees the same client behaviour from this one. gRPC retries a
// stream only until its first message arrives: the policy covers reaching
// the server, not a stream that breaks later. The one parameter is
// maxBackoff.
const retryServiceConfig = `{
  "methodConfig": [{
    "name": [{"service": "flagd.sync.v1.FlagSyncService"}],
    "retryPolicy": {
      "maxAttempts": 4,
      "initialBackoff": "1s",
      "maxBackoff": %q,
      "backoffMultiplier": 2,
      "retryableStatusCodes": ["UNAVAILABLE", "UNKNOWN"]
    }
  }]
}`

// GRPCConfig configures a GRPC source. The zero value connects to
// localhost:8015 without TLS.
type GRPCConfig struct {
	// Host is the sync server's host name or IP address; default
	// "localhost".
	Host string
	// Port is the sync server's TCP port; default 8015.
	Port int
	// TargetURI overrides Host and Port with any gRPC target. The form
	// "envoy://host:port/authority" dials host:port and sends authority as
	// the :authority header, for servers behind a proxy that routes on it.
	TargetURI string
	// SocketPath overrides Host, Port and TargetURI: the server listens on
	// this unix socket.
	SocketPath string

	// TLS encrypts the connection.
	TLS bool
	// CACertPath is a PEM file of the certificate authorities to trust
	// with TLS; empty means the system's roots. It is ignored without TLS.
	CACertPath string

	// Selector names the flag set to ask for. It is sent both as the
	// request's selector field and as the flagd-selector header, as older
	// servers read one and newer servers the other.
	Selector string
	// ProviderID identifies this client to the server.
	ProviderID string

	// Deadline bounds unary calls (GetMetadata); default 500ms.
	Deadline time.Duration
	// StreamDeadline bounds each sync stream; 0 means none. A stream that
	// reaches it is reopened at once without reporting a loss, which
	// catches connections that died silently. flagd's providers default
	// to [github.com/flagsnap/flagsnap.DefaultStreamDeadline] (600s), which
	// the provider passes here; set it for the same behaviour. 0 stays
	// "none" rather than meaning that default, because the provider hands
	// its own 0 (no deadline, as in flagd) through unchanged.
	StreamDeadline time.Duration
	// RetryBackoff and RetryBackoffMax pace reconnecting; defaults 1s and
	// 5s (or RetryBackoff, if longer). The first attempt after a loss
	// comes after RetryBackoff/4, so that a server restarting quickly is
	// found at once; then every sixteenth of the outage's age, at least
	// RetryBackoff/2 and at most RetryBackoffMax, so that a long outage is
	// asked less and less often; each delay with 20% jitter and never
	// under 50ms. They also pace the channel's own reconnects, from
	// RetryBackoff doubling up to RetryBackoffMax, and cap the retry
	// policy's backoff.
	RetryBackoff    time.Duration
	RetryBackoffMax time.Duration
	// KeepAlive is the interval of HTTP/2 keepalive pings; 0 means none.
	// gRPC raises anything below 10s to 10s. Servers that enforce
	// grpc-go's default policy, flagd among them, answer pings more often
	// than every 5 minutes with GOAWAY: the liveness check below notices
	// a silent server without pings.
	KeepAlive time.Duration

	// MaxMessageSize bounds the size of one flag set message, in bytes;
	// 0 means [DefaultMaxMessageSize]. A larger message is reported as a
	// [*MessageTooLargeError] through Sink.Lost and asked for again only
	// after RetryBackoffMax.
	MaxMessageSize int

	// LivenessInterval is how often an open connection is checked with a
	// small call (a grpc.health.v1 check, which servers without the health
	// service answer too) that the server must answer, with any status,
	// within LivenessTimeout; a server that does not is taken as
	// lost, as a broken stream is, and a new connection is dialed.
	// Defaults 10s and 5s; a negative LivenessInterval turns the check
	// off. Streams carry no traffic while the flags do not change, so
	// without the check a server that went silent (a frozen process, a
	// network that drops packets) goes unnoticed until StreamDeadline.
	LivenessInterval time.Duration
	LivenessTimeout  time.Duration

	// FatalStatusCodes are the statuses that, received before any stream
	// has delivered a flag set, make the source give up (Sink.Fatal)
	// instead of retrying. Afterwards they are ordinary failures.
	FatalStatusCodes []codes.Code

	// DialOptions are added after the source's own options, for example
	// interceptors or per-RPC credentials. An option of the same kind as
	// one of ours takes its place, as gRPC applies options in order.
	DialOptions []grpc.DialOption

	// Logger receives diagnostics; nil means silent.
	Logger *slog.Logger
}

// NewGRPC checks cfg and returns a GRPC source. It reads the CA file but
// does not contact the server: that happens in Run.
func NewGRPC(cfg GRPCConfig) (*GRPC, error) {
	if err := checkGRPCConfig(cfg); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	g := newGRPC(cfg)
	if g.retryMax < g.retryBackoff {
		return nil, fmt.Errorf("source: GRPCConfig.RetryBackoffMax (%v) is less than RetryBackoff (%v)", g.retryMax, g.retryBackoff)
	}
	var authority string
	var err error
	g.target, g.dialTarget, authority, err = resolveTarget(cfg)
	if err != nil {
		return nil, err
	}
	creds, err := transportCredentials(cfg, g.log)
	if err != nil {
		return nil, err
	}
	g.dialOpts = g.dialOptions(cfg, creds, authority)

	// grpc.NewClient neither connects nor blocks; building one here and
	// discarding it surfaces what gRPC itself rejects (a target it cannot
	// parse, conflicting dial options) from the constructor rather than
	// from Run, where it could only be a Fatal.
	conn, err := grpc.NewClient(g.dialTarget, g.dialOpts...)
	if err != nil {
		return nil, fmt.Errorf("source: gRPC target %s: %w", g.target, err)
	}
	if err := conn.Close(); err != nil {
		g.log.Debug("closing the trial gRPC client", slog.Any("error", err))
	}
	return g, nil
}

// checkGRPCConfig rejects values that have no meaning, rather than reading
// them as a default.
func checkGRPCConfig(cfg GRPCConfig) error {
	if cfg.Port < 0 || cfg.Port > 65535 {
		return fmt.Errorf("source: GRPCConfig.Port %d is not a TCP port", cfg.Port)
	}
	if cfg.MaxMessageSize < 0 {
		return fmt.Errorf("source: GRPCConfig.MaxMessageSize must not be negative, got %d", cfg.MaxMessageSize)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"Deadline", cfg.Deadline},
		{"StreamDeadline", cfg.StreamDeadline},
		{"RetryBackoff", cfg.RetryBackoff},
		{"RetryBackoffMax", cfg.RetryBackoffMax},
		{"KeepAlive", cfg.KeepAlive},
		{"LivenessTimeout", cfg.LivenessTimeout},
	} {
		if d.v < 0 {
			return fmt.Errorf("source: GRPCConfig.%s must not be negative, got %v", d.name, d.v)
		}
	}
	for _, c := range cfg.FatalStatusCodes {
		if c == codes.OK || c > codes.Unauthenticated {
			return fmt.Errorf("source: GRPCConfig.FatalStatusCodes: %v is not an error status", c)
		}
	}
	return nil
}

// withDefaults returns cfg with the settings left zero set to their
// defaults: the one place where the source's defaults apply.
func (cfg GRPCConfig) withDefaults() GRPCConfig {
	cfg.Host = cmp.Or(cfg.Host, flagddefault.Host)
	cfg.Port = cmp.Or(cfg.Port, flagddefault.InProcessPort)
	cfg.Deadline = cmp.Or(cfg.Deadline, flagddefault.Deadline)
	cfg.RetryBackoff = cmp.Or(cfg.RetryBackoff, flagddefault.RetryBackoff)
	if cfg.RetryBackoffMax == 0 {
		// A long base delay given alone should not be rejected for
		// exceeding a maximum nobody asked for.
		cfg.RetryBackoffMax = max(flagddefault.RetryBackoffMax, cfg.RetryBackoff)
	}
	cfg.MaxMessageSize = cmp.Or(cfg.MaxMessageSize, DefaultMaxMessageSize)
	cfg.LivenessInterval = cmp.Or(cfg.LivenessInterval, defaultLivenessInterval)
	cfg.LivenessTimeout = cmp.Or(cfg.LivenessTimeout, defaultLivenessTimeout)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return cfg
}

// newGRPC takes the settings of a checked cfg, its defaults applied.
func newGRPC(cfg GRPCConfig) *GRPC {
	g := &GRPC{
		selector:       cfg.Selector,
		providerID:     cfg.ProviderID,
		deadline:       cfg.Deadline,
		streamDeadline: cfg.StreamDeadline,
		retryBackoff:   cfg.RetryBackoff,
		retryMax:       cfg.RetryBackoffMax,
		maxMessage:     cfg.MaxMessageSize,
		liveEvery:      cfg.LivenessInterval,
		liveTimeout:    cfg.LivenessTimeout,
		fatal:          make(map[codes.Code]bool, len(cfg.FatalStatusCodes)),
		log:            cfg.Logger,
	}
	for _, c := range cfg.FatalStatusCodes {
		g.fatal[c] = true
	}
	return g
}

// dialOptions are the source's own options, then the caller's, which win.
func (g *GRPC) dialOptions(cfg GRPCConfig, creds credentials.TransportCredentials, authority string) []grpc.DialOption {
	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		grpc.WithDefaultServiceConfig(fmt.Sprintf(retryServiceConfig, protoDuration(g.retryMax))),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(g.maxMessage)),
		// gRPC's own reconnect backoff grows to 120s by default, far past
		// the provider's grace period; it has to follow ours.
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff: backoff.Config{
				BaseDelay:  g.retryBackoff,
				Multiplier: 2,
				Jitter:     retryJitter,
				MaxDelay:   g.retryMax,
			},
			MinConnectTimeout: connectTimeout,
		}),
	}
	if cfg.KeepAlive > 0 {
		opts = append(opts, grpc.WithKeepaliveParams(keepalive.ClientParameters{
			Time: cfg.KeepAlive,
			// Sync streams are the only calls and are always open, but a
			// connection between two streams must not go unwatched.
			PermitWithoutStream: true,
		}))
	}
	if authority != "" {
		opts = append(opts, grpc.WithAuthority(authority))
	}
	return append(opts, cfg.DialOptions...)
}

// resolveTarget works out what to show in messages, what to hand to
// grpc.NewClient, and the :authority to send, if it is not gRPC's default.
func resolveTarget(cfg GRPCConfig) (target, dial, authority string, err error) {
	switch {
	case cfg.SocketPath != "":
		// The unix resolver reads the URL's path, so a relative path
		// would be taken for a host name.
		abs, err := filepath.Abs(cfg.SocketPath)
		if err != nil {
			return "", "", "", fmt.Errorf("source: GRPCConfig.SocketPath %s: %w", cfg.SocketPath, err)
		}
		u := (&url.URL{Scheme: "unix", Path: abs}).String()
		return u, u, "", nil

	case cfg.TargetURI != "":
		uri := cfg.TargetURI
		if strings.TrimSpace(uri) != uri {
			return "", "", "", fmt.Errorf("source: GRPCConfig.TargetURI %q has surrounding spaces", uri)
		}
		scheme, _, _ := strings.Cut(uri, ":")
		if !strings.EqualFold(scheme, envoyScheme) {
			return uri, uri, "", nil
		}
		u, err := url.Parse(uri)
		if err != nil {
			return "", "", "", fmt.Errorf("source: GRPCConfig.TargetURI: %w", err)
		}
		host, port, err := net.SplitHostPort(u.Host)
		authority := strings.TrimPrefix(u.Path, "/")
		if err != nil || host == "" || port == "" || authority == "" || strings.Contains(authority, "/") {
			return "", "", "", fmt.Errorf("source: GRPCConfig.TargetURI %q: an envoy target is envoy://host:port/authority", uri)
		}
		return uri, "dns:///" + u.Host, authority, nil

	default:
		host := cfg.Host
		// Accept an IPv6 literal with or without brackets.
		if h, ok := strings.CutPrefix(host, "["); ok {
			host = strings.TrimSuffix(h, "]")
		}
		if strings.ContainsAny(host, "/[] \t\r\n") || (strings.Contains(host, ":") && net.ParseIP(host) == nil) {
			return "", "", "", fmt.Errorf("source: GRPCConfig.Host %q is not a host name or IP address (use Port or TargetURI for the rest)", cfg.Host)
		}
		hp := net.JoinHostPort(host, strconv.Itoa(cfg.Port))
		return hp, "dns:///" + hp, "", nil
	}
}

func transportCredentials(cfg GRPCConfig, log *slog.Logger) (credentials.TransportCredentials, error) {
	if !cfg.TLS {
		if cfg.CACertPath != "" {
			// Enabling TLS because a CA file is named would make the
			// connection fail against a plaintext server that worked
			// before; saying so is the most we can do.
			log.Warn("CA certificate ignored: TLS is not enabled", slog.String("path", cfg.CACertPath))
		}
		return insecure.NewCredentials(), nil
	}
	conf := &tls.Config{MinVersion: tls.VersionTLS12}
	if cfg.CACertPath != "" {
		pool, err := loadCAPool(cfg.CACertPath)
		if err != nil {
			return nil, err
		}
		conf.RootCAs = pool
	}
	return credentials.NewTLS(conf), nil
}

// maxCAFile bounds a file of certificate authorities: a bundle of every
// public one is under a mebibyte.
const maxCAFile = 16 << 20

// loadCAPool reads the PEM file of certificate authorities at path, which
// must be a regular file of at most maxCAFile bytes.
func loadCAPool(path string) (*x509.CertPool, error) {
	pem, err := readRegular(path, path, maxCAFile)
	var tooLarge *MessageTooLargeError
	switch {
	case errors.As(err, &tooLarge):
		return nil, fmt.Errorf("source: CA certificate %s is over %d bytes: it should hold certificates", path, maxCAFile)
	case err != nil:
		return nil, fmt.Errorf("source: reading CA certificate: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("source: CA certificate %s holds no PEM certificate", path)
	}
	return pool, nil
}

// protoDuration writes d as a protobuf JSON Duration, the form service
// configs take: at most nine fractional digits, no float rounding.
func protoDuration(d time.Duration) string {
	s := strconv.FormatInt(int64(d/time.Second), 10)
	if ns := d % time.Second; ns != 0 {
		s += strings.TrimRight(fmt.Sprintf(".%09d", int64(ns)), "0")
	}
	return s + "s"
}
