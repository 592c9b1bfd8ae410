package source

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"buf.build/gen/go/open-feature/flagd/grpc/go/flagd/sync/v1/syncv1grpc"
	syncv1 "buf.build/gen/go/open-feature/flagd/protocolbuffers/go/flagd/sync/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"
)

const (
	defaultGRPCHost        = "localhost"
	defaultGRPCPort        = 8015
	defaultDeadline        = 500 * time.Millisecond
	defaultRetryBackoff    = time.Second
	defaultRetryBackoffMax = 12 * time.Second

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
	// catches connections that died silently.
	StreamDeadline time.Duration
	// RetryBackoff and RetryBackoffMax pace reconnecting; defaults 1s and
	// 12s. The first attempt after a loss comes after RetryBackoff/4, so
	// that a server restarting quickly is found at once; then the delay
	// starts at RetryBackoff and doubles up to RetryBackoffMax, each with
	// 20% jitter and never under 50ms. They also pace the channel's own
	// reconnects and cap the retry policy's backoff.
	RetryBackoff    time.Duration
	RetryBackoffMax time.Duration
	// KeepAlive is the interval of HTTP/2 keepalive pings; 0 means none.
	// gRPC raises anything below 10s to 10s.
	KeepAlive time.Duration

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

// GRPC is a [Source] that follows a flagd sync server
// (flagd.sync.v1.FlagSyncService): every message of its SyncFlags stream
// is a complete flag set and is delivered as one [Update].
//
// When the stream breaks, GRPC reports [Sink.Lost] once and reconnects
// with jittered exponential backoff until a stream delivers again. A server
// unreachable from the start is reported the same way, once gRPC's own
// retries (about 7s with the default backoff) have given up. The
// sync_context of a message becomes the update's SyncContext; for servers
// that do not send one, GetMetadata is asked once per stream instead.
type GRPC struct {
	target     string // for messages
	dialTarget string // for grpc.NewClient
	dialOpts   []grpc.DialOption

	selector       string
	providerID     string
	deadline       time.Duration
	streamDeadline time.Duration
	retryBackoff   time.Duration
	retryMax       time.Duration
	fatal          map[codes.Code]bool
	log            *slog.Logger

	started atomic.Bool
}

// NewGRPC checks cfg and returns a GRPC source. It reads the CA file but
// does not contact the server: that happens in Run.
func NewGRPC(cfg GRPCConfig) (*GRPC, error) {
	if cfg.Port < 0 || cfg.Port > 65535 {
		return nil, fmt.Errorf("source: GRPCConfig.Port %d is not a TCP port", cfg.Port)
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
	} {
		if d.v < 0 {
			return nil, fmt.Errorf("source: GRPCConfig.%s must not be negative, got %v", d.name, d.v)
		}
	}
	g := &GRPC{
		selector:       cfg.Selector,
		providerID:     cfg.ProviderID,
		deadline:       cfg.Deadline,
		streamDeadline: cfg.StreamDeadline,
		retryBackoff:   cfg.RetryBackoff,
		retryMax:       cfg.RetryBackoffMax,
		fatal:          make(map[codes.Code]bool, len(cfg.FatalStatusCodes)),
		log:            cfg.Logger,
	}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	if g.deadline == 0 {
		g.deadline = defaultDeadline
	}
	if g.retryBackoff == 0 {
		g.retryBackoff = defaultRetryBackoff
	}
	if g.retryMax == 0 {
		// A long base delay given alone should not be rejected for
		// exceeding a maximum nobody asked for.
		g.retryMax = max(defaultRetryBackoffMax, g.retryBackoff)
	}
	if g.retryMax < g.retryBackoff {
		return nil, fmt.Errorf("source: GRPCConfig.RetryBackoffMax (%v) is less than RetryBackoff (%v)", g.retryMax, g.retryBackoff)
	}
	for _, c := range cfg.FatalStatusCodes {
		if c == codes.OK || c > codes.Unauthenticated {
			return nil, fmt.Errorf("source: GRPCConfig.FatalStatusCodes: %v is not an error status", c)
		}
		g.fatal[c] = true
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

	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		grpc.WithDefaultServiceConfig(fmt.Sprintf(retryServiceConfig, protoDuration(g.retryMax))),
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
	g.dialOpts = append(opts, cfg.DialOptions...)

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
		if host == "" {
			host = defaultGRPCHost
		}
		// Accept an IPv6 literal with or without brackets.
		if h, ok := strings.CutPrefix(host, "["); ok {
			host = strings.TrimSuffix(h, "]")
		}
		if strings.ContainsAny(host, "/[] \t\r\n") || (strings.Contains(host, ":") && net.ParseIP(host) == nil) {
			return "", "", "", fmt.Errorf("source: GRPCConfig.Host %q is not a host name or IP address (use Port or TargetURI for the rest)", cfg.Host)
		}
		port := cfg.Port
		if port == 0 {
			port = defaultGRPCPort
		}
		hp := net.JoinHostPort(host, strconv.Itoa(port))
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
		pem, err := os.ReadFile(cfg.CACertPath)
		if err != nil {
			return nil, fmt.Errorf("source: reading CA certificate: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("source: CA certificate %s holds no PEM certificate", cfg.CACertPath)
		}
		conf.RootCAs = pool
	}
	return credentials.NewTLS(conf), nil
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

// Target is what the source dials, for messages: host:port, the target
// URI as given, or a unix:// URL.
func (g *GRPC) Target() string { return g.target }

// Run implements [Source]. It returns nil when ctx is done or after
// reporting [Sink.Fatal].
//
// Everything, sink calls included, happens on the goroutine that called
// Run, which is what keeps the sink's calls ordered and never concurrent.
func (g *GRPC) Run(ctx context.Context, sink Sink) error {
	if !g.started.CompareAndSwap(false, true) {
		return errors.New("source: GRPC.Run called more than once")
	}
	if ctx.Err() != nil {
		return nil
	}
	conn, err := grpc.NewClient(g.dialTarget, g.dialOpts...)
	if err != nil {
		// NewGRPC built a client from the same arguments, so only a
		// change in the process (a resolver unregistered) gets here.
		// Reported once, through the sink, like a fatal status: the
		// error is not returned as well.
		sink.Fatal(fmt.Errorf("source: gRPC target %s: %w", g.target, err))
		return nil
	}
	defer func() {
		if err := conn.Close(); err != nil {
			g.log.Debug("closing the gRPC client", slog.String("target", g.target), slog.Any("error", err))
		}
	}()
	r := &grpcRun{
		g:      g,
		sink:   sink,
		client: syncv1grpc.NewFlagSyncServiceClient(conn),
		log:    g.log.With(slog.String("target", g.target)),
	}
	r.loop(ctx)
	return nil
}

// grpcRun is the state of one Run.
type grpcRun struct {
	g      *GRPC
	sink   Sink
	client syncv1grpc.FlagSyncServiceClient
	log    *slog.Logger

	everDelivered bool // some stream has delivered: fatal codes no longer are
	// failures counts the failed attempts since a stream last delivered.
	// The first of them reported Lost, so a delivery with failures > 0 is
	// a recovery.
	failures int
	// reopening is set while the stream that follows a graceful end has
	// not delivered yet: it must deliver within the deadline, or the
	// server is taken as lost after all.
	reopening bool
}

// streamEnd is how one stream finished.
type streamEnd struct {
	delivered bool // it delivered at least one flag set
	// graceful: it was ended in an orderly way that says nothing about
	// the server's health (a GOAWAY, a stream deadline, ours or the
	// server's), so a new stream is opened at once and nothing is lost.
	graceful bool
	opened   time.Time
	err      error
}

func (r *grpcRun) loop(ctx context.Context) {
	for {
		end := r.stream(ctx)
		r.reopening = false
		if ctx.Err() != nil {
			return
		}
		if end.delivered && end.graceful {
			r.log.Debug("sync stream ended gracefully, reopening", slog.Any("error", end.err))
			// The reopened stream has to deliver before anything counts as
			// lost; a server that ends every stream at once therefore
			// meets the usual backoff after one reopen. A stream that ends
			// right after its first message must not make reopening a
			// busy loop either.
			r.reopening = true
			if !sleep(ctx, minRetryDelay-time.Since(end.opened)) {
				return
			}
			continue
		}
		err := end.err
		if !r.everDelivered && r.g.fatal[status.Code(err)] {
			r.log.Error("sync server refused the stream; giving up", slog.Any("error", err))
			r.sink.Fatal(err)
			return
		}
		if r.failures == 0 {
			r.log.Warn("sync stream lost", slog.Any("error", err))
			r.sink.Lost(err)
		} else {
			r.log.Debug("reconnect failed", slog.Any("error", err))
		}
		delay := r.g.retryDelay(r.failures)
		r.failures++
		if !sleep(ctx, delay) {
			return
		}
	}
}

// stream runs one SyncFlags stream until it ends, delivering every flag
// set it carries.
func (r *grpcRun) stream(ctx context.Context) (end streamEnd) {
	g := r.g
	end.opened = time.Now()
	sctx, cancel := ctx, context.CancelFunc(func() {})
	if g.streamDeadline > 0 {
		sctx, cancel = context.WithTimeout(ctx, g.streamDeadline)
	}
	defer cancel()
	if g.selector != "" {
		sctx = metadata.AppendToOutgoingContext(sctx, selectorHeader, g.selector)
	}
	req := syncv1.SyncFlagsRequest_builder{ProviderId: g.providerID, Selector: g.selector}.Build()

	// A stream reopened after a graceful end has the deadline to deliver
	// its first flag set; past it, the stream is cancelled with
	// errReopenTimeout and counts as a failed reopen.
	var firstBy *time.Timer
	if r.reopening {
		var cancelReopen context.CancelCauseFunc
		sctx, cancelReopen = context.WithCancelCause(sctx)
		defer cancelReopen(nil)
		firstBy = time.AfterFunc(g.deadline, func() { cancelReopen(errReopenTimeout) })
		defer firstBy.Stop()
	}

	defer func() {
		if end.err == nil {
			return
		}
		if !end.delivered && errors.Is(context.Cause(sctx), errReopenTimeout) {
			end.err = status.Errorf(codes.Unavailable, "no flag set within %v of reopening a stream the server had ended", g.deadline)
		}
		end.graceful = gracefulEnd(end.err)
		end.err = fmt.Errorf("source: stream from %s: %w", g.target, end.err)
	}()

	stream, err := r.client.SyncFlags(sctx, req)
	if err != nil {
		end.err = err
		return end
	}
	// The metadata answer belongs to this stream's connection; a server
	// that came back may have different metadata, so it is never carried
	// over from an earlier stream.
	var fallback *structpb.Struct
	asked := false
	for {
		msg, err := stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				// A server that ends the stream cleanly is gone all the
				// same; a status keeps the error classifiable.
				err = status.Error(codes.Unavailable, "server ended the stream")
			}
			end.err = err
			return end
		}
		sc := msg.GetSyncContext()
		if sc == nil {
			if !asked {
				asked = true
				fallback = r.metadata(sctx)
				if err := sctx.Err(); err != nil {
					// The stream ended while GetMetadata was asked, which is
					// why it failed: delivering now would pass off a flag
					// set without its context as complete.
					end.err = status.FromContextError(err).Err()
					return end
				}
			}
			sc = fallback
		}
		var syncCtx map[string]any
		if sc != nil {
			// A fresh map for every update: the sink may keep it.
			syncCtx = sc.AsMap()
		}
		if !end.delivered {
			if firstBy != nil && !firstBy.Stop() {
				// Too late: the stream is being cancelled under it.
				end.err = context.Cause(sctx)
				return end
			}
			end.delivered = true
			r.everDelivered = true
			if r.failures > 0 {
				r.log.Info("sync stream restored")
			} else {
				r.log.Debug("sync stream open")
			}
			r.failures = 0
		}
		r.sink.Update(Update{
			Flags:       []byte(msg.GetFlagConfiguration()),
			SyncContext: syncCtx,
			Origin:      g.target,
		})
	}
}

// errReopenTimeout cancels a reopened stream that brought no flag set
// within the deadline.
var errReopenTimeout = errors.New("no flag set within the deadline of a reopened stream")

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

// metadata asks the deprecated GetMetadata for the sync context of servers
// that do not put one in their messages. Its absence is normal (flagd
// answers Unimplemented without metadata), so no failure is reported.
func (r *grpcRun) metadata(sctx context.Context) *structpb.Struct {
	mctx, cancel := context.WithTimeout(sctx, r.g.deadline)
	defer cancel()
	resp, err := r.client.GetMetadata(mctx, syncv1.GetMetadataRequest_builder{}.Build())
	if err != nil {
		if status.Code(err) != codes.Unimplemented {
			r.log.Debug("GetMetadata failed; no sync context for this stream", slog.Any("error", err))
		}
		return nil
	}
	return resp.GetMetadata()
}

// retryDelay is the wait before the reconnect attempt that follows failure
// n (from 0) of an outage. The first is a fraction of RetryBackoff, so a
// server that restarts quickly is found well within the provider's grace
// period; then RetryBackoff doubles up to RetryBackoffMax.
func (g *GRPC) retryDelay(n int) time.Duration {
	d := g.retryBackoff / 4
	if n > 0 {
		d = g.retryBackoff
		for i := 1; i < n && d < g.retryMax; i++ {
			// Compared before doubling, so a huge maximum cannot overflow.
			if d > g.retryMax/2 {
				d = g.retryMax
				break
			}
			d *= 2
		}
	}
	j := float64(d) * (1 + retryJitter*(2*rand.Float64()-1))
	if j >= math.MaxInt64 {
		return math.MaxInt64
	}
	return max(time.Duration(j), minRetryDelay)
}
