package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"buf.build/gen/go/open-feature/flagd/grpc/go/flagd/sync/v1/syncv1grpc"
	syncv1 "buf.build/gen/go/open-feature/flagd/protocolbuffers/go/flagd/sync/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"
)

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

// errReopenTimeout cancels a reopened stream that brought no flag set
// within the deadline.
var errReopenTimeout = errors.New("no flag set within the deadline of a reopened stream")

// errUnresponsive cancels a stream whose server did not answer the
// liveness check in time.
var errUnresponsive = errors.New("the server did not answer the liveness check")

// stream runs one SyncFlags stream until it ends, delivering every flag
// set it carries.
func (r *grpcRun) stream(ctx context.Context) (end streamEnd) {
	end.opened = time.Now()
	sctx, cancel := r.streamContext(ctx)
	defer cancel(nil)

	// A stream reopened after a graceful end has the deadline to deliver
	// its first flag set; past it, the stream is cancelled with
	// errReopenTimeout and counts as a failed reopen.
	var firstBy *time.Timer
	if r.reopening {
		firstBy = time.AfterFunc(r.g.deadline, func() { cancel(errReopenTimeout) })
		defer firstBy.Stop()
	}
	// Until a stream has delivered, and in an outage, the connection is
	// checked at once: a server that cannot be reached is reported with
	// its cause now, not after the retry policy's waits, and one that
	// takes the connection but never answers does not hold up the next
	// attempt for the whole connect timeout.
	stopWatch := r.watch(sctx, cancel, r.failures > 0 || !r.everDelivered)
	defer stopWatch()
	defer func() { r.classify(&end, sctx) }()

	req := syncv1.SyncFlagsRequest_builder{ProviderId: r.g.providerID, Selector: r.g.selector}.Build()
	stream, err := r.client.SyncFlags(sctx, req)
	if err != nil {
		end.err = err
		return end
	}
	end.err = r.receive(sctx, stream, firstBy, &end)
	return end
}

// streamContext bounds a stream by the stream deadline, if any, carries
// the selector header, and can be cancelled with a cause.
func (r *grpcRun) streamContext(ctx context.Context) (context.Context, context.CancelCauseFunc) {
	g := r.g
	sctx, cancel := context.WithCancelCause(ctx)
	if g.streamDeadline > 0 {
		var cancelTimeout context.CancelFunc
		sctx, cancelTimeout = context.WithTimeout(sctx, g.streamDeadline)
		cancelCause := cancel
		cancel = func(err error) {
			cancelCause(err)
			cancelTimeout()
		}
	}
	if g.selector != "" {
		sctx = metadata.AppendToOutgoingContext(sctx, selectorHeader, g.selector)
	}
	return sctx, cancel
}

// classify turns the error a stream ended with into what the loop needs:
// whether the end was graceful, and an error that says what happened and
// where.
func (r *grpcRun) classify(end *streamEnd, sctx context.Context) {
	if end.err == nil {
		return
	}
	cause := context.Cause(sctx)
	switch {
	case errors.Is(cause, errUnresponsive):
		// The stream's own error is only the cancellation.
		end.err = fmt.Errorf("%w within %v", errUnresponsive, r.g.liveTimeout)
	case errors.As(cause, new(*unreachableError)):
		end.err = cause
	case !end.delivered && errors.Is(cause, errReopenTimeout):
		end.err = status.Errorf(codes.Unavailable, "no flag set within %v of reopening a stream the server had ended", r.g.deadline)
	}
	if tooLarge := tooLargeError(end.err, r.g); tooLarge != nil {
		end.err = tooLarge
		return
	}
	end.graceful = gracefulEnd(end.err)
	end.err = fmt.Errorf("source: stream from %s: %w", r.g.target, end.err)
}

// receive delivers the stream's flag sets until it fails.
func (r *grpcRun) receive(sctx context.Context, stream grpc.ServerStreamingClient[syncv1.SyncFlagsResponse], firstBy *time.Timer, end *streamEnd) error {
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
			return err
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
					return status.FromContextError(err).Err()
				}
			}
			sc = fallback
		}
		if !end.delivered {
			if firstBy != nil && !firstBy.Stop() {
				// Too late: the stream is being cancelled under it.
				return context.Cause(sctx)
			}
			end.delivered = true
			r.restored()
		}
		var syncCtx map[string]any
		if sc != nil {
			// A fresh map for every update: the sink may keep it.
			syncCtx = sc.AsMap()
		}
		_ = r.sink.Update(Update{
			Flags:       []byte(msg.GetFlagConfiguration()),
			SyncContext: syncCtx,
			Origin:      r.g.target,
		})
	}
}

// restored notes the first delivery of a stream: the outage, if any, is
// over.
func (r *grpcRun) restored() {
	r.everDelivered = true
	if r.failures > 0 {
		r.log.Info("sync stream restored")
	} else {
		r.log.Debug("sync stream open")
	}
	r.failures, r.tooLargeTold = 0, false
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

// maxOutageProbeTimeout bounds the liveness check of an attempt made in an
// outage, so that a network that heals is found within seconds.
const maxOutageProbeTimeout = 2 * time.Second

// watch checks, while a stream is open, that its server still answers:
// every LivenessInterval a health check must be answered within
// LivenessTimeout, whatever its status. A server that does not answer gets
// the stream cancelled with errUnresponsive.
//
// In an outage (now set) the first check comes at once and also cancels
// the stream when the server cannot be reached at all: the stream would
// otherwise sit out the retry policy's waits, up to 7s, while the server
// may be back; the loop's own schedule is the one that should decide. The
// returned func stops the check and waits for it.
func (r *grpcRun) watch(sctx context.Context, cancel context.CancelCauseFunc, now bool) (stop func()) {
	g := r.g
	if g.liveEvery <= 0 {
		return func() {}
	}
	timeout, wait := g.liveTimeout, g.liveEvery
	if now {
		timeout, wait = min(timeout, maxOutageProbeTimeout), 0
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTimer(wait)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-sctx.Done():
				return
			case <-t.C:
			}
			switch err := r.probe(sctx, timeout); {
			case errors.Is(err, errUnresponsive):
				cancel(err)
				return
			case err != nil && now:
				cancel(&unreachableError{err})
				return
			}
			timeout, now = g.liveTimeout, false
			t.Reset(g.liveEvery)
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// unreachableError cancels a stream of an outage whose server cannot be
// reached: the call that found it says why.
type unreachableError struct{ err error }

func (e *unreachableError) Error() string { return e.err.Error() }
func (e *unreachableError) Unwrap() error { return e.err }

// probe asks the server for its health (grpc.health.v1) with timeout. It
// returns nil when the server answered, with any status: a server without
// the health service (flagd has none) answers Unimplemented without
// running any code of its own, which is as cheap as a call can be and
// proves the server and the connection alive all the same. It returns
// errUnresponsive when the timeout passed, and the call's error when it
// failed on the client's side, the connection refused or broken. A call
// cut short because the stream ended is nil: the stream's own end says
// what happened.
func (r *grpcRun) probe(sctx context.Context, timeout time.Duration) error {
	pctx, cancel := context.WithTimeout(sctx, timeout)
	defer cancel()
	_, err := r.health.Check(pctx, &healthpb.HealthCheckRequest{Service: syncv1grpc.FlagSyncService_ServiceDesc.ServiceName})
	switch {
	case err == nil || sctx.Err() != nil:
		return nil
	case errors.Is(pctx.Err(), context.DeadlineExceeded):
		return errUnresponsive
	case status.Code(err) == codes.Unavailable:
		return err
	}
	return nil
}
