package syncserver

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"buf.build/gen/go/open-feature/flagd/grpc/go/flagd/sync/v1/syncv1grpc"
	syncv1 "buf.build/gen/go/open-feature/flagd/protocolbuffers/go/flagd/sync/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// message is one response waiting to be sent on a stream.
type message struct {
	resp *response
	raw  bool
}

// subscriber is one open SyncFlags stream. Its queue is filled by the
// setters under Server.mu and drained by the stream's handler, so a setter
// never waits for a client that reads slowly or not at all.
type subscriber struct {
	selector string
	queue    []message     // guarded by Server.mu
	wake     chan struct{} // capacity 1: one pending wake-up covers any number of pushes
}

// enqueue adds m to the queue and wakes the handler; Server.mu must be
// held. A set replacing a set that has not been sent yet takes its place,
// since a client only needs the latest one, which keeps the queue short for
// a stalled client. Raw payloads are always kept: a test sending one
// expects the client to see it.
func (sub *subscriber) enqueue(m message) {
	if n := len(sub.queue); n > 0 && !m.raw && !sub.queue[n-1].raw {
		sub.queue[n-1] = m
	} else {
		sub.queue = append(sub.queue, m)
	}
	select {
	case sub.wake <- struct{}{}:
	default:
	}
}

type service struct {
	syncv1grpc.UnimplementedFlagSyncServiceServer
	s   *Server
	gen *generation
}

func (svc *service) SyncFlags(req *syncv1.SyncFlagsRequest, stream grpc.ServerStreamingServer[syncv1.SyncFlagsResponse]) error {
	s := svc.s
	ctx := stream.Context()
	if s.streamDeadline > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.streamDeadline)
		defer cancel()
	}
	r := svc.recordRequest(ctx, "SyncFlags", req.GetProviderId(), req.GetSelector())

	s.mu.Lock()
	if err := s.checkLocked(r); err != nil {
		s.mu.Unlock()
		return err
	}
	sub := &subscriber{selector: selectorOf(r), wake: make(chan struct{}, 1)}
	// Queued and registered in one critical section, so no change made
	// between the first message and registration can be missed.
	sub.enqueue(message{resp: s.responseLocked(sub.selector)})
	s.subs[sub] = struct{}{}
	s.streamsChangedLocked()
	s.mu.Unlock()

	defer func() {
		s.mu.Lock()
		delete(s.subs, sub)
		s.forgetLocked(sub.selector)
		s.streamsChangedLocked()
		s.mu.Unlock()
	}()

	follower := followerAttrs(ctx, r, sub.selector)
	s.log.LogAttrs(ctx, slog.LevelInfo, "stream opened", follower...)
	for sent := false; ; {
		s.mu.Lock()
		pending := sub.queue
		sub.queue = nil
		s.mu.Unlock()
		for _, m := range pending {
			// Not Send, which takes only a SyncFlagsResponse: the server's
			// codec sends a *response as its shared encoding.
			if err := stream.SendMsg(m.resp); err != nil {
				return err
			}
			if !sent {
				sent = true
				wire, _ := m.resp.encode() // encoded already, to be sent
				s.log.LogAttrs(ctx, slog.LevelInfo, "first flag set sent", append(follower, slog.Int("bytes", len(wire)))...)
			}
		}
		select {
		case <-sub.wake:
		case <-ctx.Done():
			if s.streamDeadline > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) {
				// What flagd answers when its own stream deadline passes.
				return status.Error(codes.DeadlineExceeded, "stream closed due to server-side timeout")
			}
			return status.FromContextError(ctx.Err()).Err()
		case <-svc.gen.stop:
			return status.Error(codes.Unavailable, "sync server stopped")
		}
	}
}

func (svc *service) FetchAllFlags(ctx context.Context, req *syncv1.FetchAllFlagsRequest) (*syncv1.FetchAllFlagsResponse, error) {
	s := svc.s
	r := svc.recordRequest(ctx, "FetchAllFlags", req.GetProviderId(), req.GetSelector())
	s.mu.Lock()
	doc, err := s.documentLocked(r)
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return syncv1.FetchAllFlagsResponse_builder{FlagConfiguration: doc}.Build(), nil
}

// GetMetadata is deprecated in the protocol, but clients still call it.
func (svc *service) GetMetadata(ctx context.Context, _ *syncv1.GetMetadataRequest) (*syncv1.GetMetadataResponse, error) {
	s := svc.s
	svc.recordRequest(ctx, "GetMetadata", "", "")
	s.mu.Lock()
	md := s.metadata
	s.mu.Unlock()
	if md == nil {
		return nil, status.Error(codes.Unimplemented, "sync server has no metadata")
	}
	return syncv1.GetMetadataResponse_builder{Metadata: proto.CloneOf(md)}.Build(), nil
}

// checkLocked is the error a call for r fails with: the configured
// failure; without sources, NotFound for a selector without a set; with
// sources, InvalidArgument for a selector flagd could not read. Server.mu
// must be held.
func (s *Server) checkLocked(r Request) error {
	if s.code != codes.OK {
		return status.Error(s.code, s.msg)
	}
	sel := selectorOf(r)
	if s.store != nil {
		_, err := parseSelector(sel)
		return err
	}
	if _, ok := s.sets[sel]; !ok {
		return status.Errorf(codes.NotFound, "no flag set for selector %q", sel)
	}
	return nil
}

// forgetLocked drops the response kept for a selector of a server with
// sources once no stream follows it: clients may ask for any number of
// selectors over time. Server.mu must be held.
func (s *Server) forgetLocked(selector string) {
	if s.store == nil {
		return
	}
	for sub := range s.subs {
		if sub.selector == selector {
			return
		}
	}
	delete(s.resps, selector)
}

// selectorOf follows flagd: the header replaced the deprecated field, so it
// wins when both are sent.
func selectorOf(r Request) string {
	if r.SelectorHeader != "" {
		return r.SelectorHeader
	}
	return r.Selector
}

func (svc *service) recordRequest(ctx context.Context, method, providerID, selector string) Request {
	r := Request{
		Method:     method,
		ProviderID: providerID,
		Selector:   selector,
		Time:       time.Now(),
	}
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		r.SelectorHeader = firstValue(md.Get(SelectorHeader))
		r.Authority = firstValue(md.Get(":authority"))
	}
	svc.s.mu.Lock()
	if len(svc.s.requests) == maxRequests {
		// A server that runs for long (flagsnap serve) keeps the most
		// recent calls, not all of them.
		n := copy(svc.s.requests, svc.s.requests[maxRequests/2:])
		clear(svc.s.requests[n:])
		svc.s.requests = svc.s.requests[:n]
	}
	svc.s.requests = append(svc.s.requests, r)
	svc.s.mu.Unlock()
	return r
}

// followerAttrs name the follower of a stream in the log: its address,
// the provider id it gave and the selector in force.
func followerAttrs(ctx context.Context, r Request, selector string) []slog.Attr {
	addr := "unknown"
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		// A unix socket's client has no address of its own.
		if addr = p.Addr.String(); addr == "" || addr == "@" {
			addr = p.Addr.Network()
		}
	}
	return []slog.Attr{slog.String("follower", addr), slog.String("providerId", r.ProviderID), slog.String("selector", selector)}
}

func firstValue(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}
