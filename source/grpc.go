package source

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"buf.build/gen/go/open-feature/flagd/grpc/go/flagd/sync/v1/syncv1grpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// GRPC is a [Source] that follows a flagd sync server
// (flagd.sync.v1.FlagSyncService): every message of its SyncFlags stream
// is a complete flag set and is delivered as one [Update].
//
// When the stream breaks, GRPC reports [Sink.Lost] once and reconnects
// until a stream delivers again: often while the outage is young, so that
// a server that restarts is found within a second of accepting streams
// again, then less and less often (see GRPCConfig.RetryBackoff). A server
// unreachable from the start is reported the same way, once gRPC's own
// retries have given up. A server that stops answering without closing
// the connection is found by the liveness check (see
// GRPCConfig.LivenessInterval). The sync_context of a message becomes the
// update's SyncContext; for servers that do not send one, GetMetadata is
// asked once per stream instead.
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
	maxMessage     int
	liveEvery      time.Duration // <= 0: no liveness check
	liveTimeout    time.Duration
	fatal          map[codes.Code]bool
	log            *slog.Logger

	started atomic.Bool
}

// Target is what the source dials, for messages: host:port, the target
// URI as given, or a unix:// URL.
func (g *GRPC) Target() string { return g.target }

// MaxMessageSize is the largest flag set message the source receives, in
// bytes.
func (g *GRPC) MaxMessageSize() int { return g.maxMessage }

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
	r := &grpcRun{
		g:    g,
		sink: sink,
		log:  g.log.With(slog.String("target", g.target)),
	}
	if err := r.dial(); err != nil {
		// NewGRPC built a client from the same arguments, so only a
		// change in the process (a resolver unregistered) gets here.
		// Reported once, through the sink, like a fatal status: the
		// error is not returned as well.
		sink.Fatal(err)
		return nil
	}
	defer r.hangUp()
	r.loop(ctx)
	return nil
}

// grpcRun is the state of one Run.
type grpcRun struct {
	g      *GRPC
	sink   Sink
	conn   *grpc.ClientConn
	client syncv1grpc.FlagSyncServiceClient
	health healthpb.HealthClient // the liveness check's
	log    *slog.Logger

	everDelivered bool // some stream has delivered: fatal codes no longer are
	// failures counts the failed attempts since a stream last delivered.
	// The first of them reported Lost, so a delivery with failures > 0 is
	// a recovery.
	failures int
	lostAt   time.Time // when the first of the failures happened
	// tooLargeTold is set once the outage has reported a message over
	// the size limit, which is news even in an outage already reported.
	tooLargeTold bool
	// reopening is set while the stream that follows a graceful end has
	// not delivered yet: it must deliver within the deadline, or the
	// server is taken as lost after all.
	reopening bool
	// redial is set when the connection itself is suspect, after a
	// failure: the next attempt dials a new one.
	redial bool
}

// dial opens the client connection; gRPC connects lazily, on the first
// call.
func (r *grpcRun) dial() error {
	conn, err := grpc.NewClient(r.g.dialTarget, r.g.dialOpts...)
	if err != nil {
		return fmt.Errorf("source: gRPC target %s: %w", r.g.target, err)
	}
	r.conn, r.client, r.redial = conn, syncv1grpc.NewFlagSyncServiceClient(conn), false
	r.health = healthpb.NewHealthClient(conn)
	return nil
}

func (r *grpcRun) hangUp() {
	if err := r.conn.Close(); err != nil {
		r.log.Debug("closing the gRPC client", slog.Any("error", err))
	}
}

func (r *grpcRun) loop(ctx context.Context) {
	for {
		if r.redial {
			r.hangUp()
			if err := r.dial(); err != nil {
				r.sink.Fatal(err)
				return
			}
		}
		end := r.stream(ctx)
		r.reopening = false
		if ctx.Err() != nil {
			return
		}
		if end.delivered && end.graceful {
			if !r.reopen(ctx, end) {
				return
			}
			continue
		}
		if !r.failed(ctx, end.err) {
			return
		}
	}
}

// reopen follows a stream that ended gracefully after delivering: a new
// stream is opened at once, and has to deliver before anything counts as
// lost. A server that ends every stream at once therefore meets the usual
// backoff after one reopen; a stream that ends right after its first
// message must not make reopening a busy loop either.
func (r *grpcRun) reopen(ctx context.Context, end streamEnd) bool {
	r.log.Debug("sync stream ended gracefully, reopening", slog.Any("error", end.err))
	r.reopening = true
	return sleep(ctx, minRetryDelay-time.Since(end.opened))
}

// failed reports a failed attempt, once per outage, and waits for the
// next. It returns false when the source is done: the server refused it
// for good, or ctx ended.
func (r *grpcRun) failed(ctx context.Context, err error) bool {
	if !r.everDelivered && r.g.fatal[status.Code(err)] {
		r.log.Error("sync server refused the stream with a fatal status; giving up, no more attempts", slog.Any("error", err))
		r.sink.Fatal(err)
		return false
	}
	// Every attempt after a failure is made on a new connection. One
	// whose server went silent would never fail by itself; and one that
	// failed to connect stays failed (gRPC holds a channel in its failure
	// state until it connects again, on a backoff of its own), so a call
	// on it would fail at once without trying, however soon the server is
	// back.
	r.redial = true
	var tooLarge *MessageTooLargeError
	isTooLarge := errors.As(err, &tooLarge)
	if r.failures == 0 {
		r.lostAt = time.Now()
	}
	delay := r.g.retryDelay(r.failures, time.Since(r.lostAt))
	if isTooLarge {
		// Asking again at once would only make the server encode the
		// same oversized set again.
		delay = jitter(r.g.retryMax)
	}
	next := slog.String("next", "retrying in "+delay.Round(time.Millisecond).String())
	switch {
	case r.failures == 0 && !r.everDelivered:
		r.log.Warn("cannot reach the sync server", slog.Any("error", err), next)
		r.sink.Lost(err)
	case r.failures == 0:
		r.log.Warn("sync stream lost", slog.Any("error", err), next)
		r.sink.Lost(err)
	case isTooLarge && !r.tooLargeTold:
		r.log.Warn("sync server sent a flag set over the size limit", slog.Any("error", err), next)
		r.sink.Lost(err)
	default:
		r.log.Debug("reconnect failed", slog.Any("error", err), next)
	}
	r.tooLargeTold = r.tooLargeTold || isTooLarge
	r.failures++
	return sleep(ctx, delay)
}
