package syncserver

import (
	"sync"
	"sync/atomic"

	syncv1 "buf.build/gen/go/open-feature/flagd/protocolbuffers/go/flagd/sync/v1"
	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// response is a SyncFlagsResponse shared by every stream it is sent on. A
// flag set can be large and followed by many streams, so it is encoded
// once, by the first stream to send it, and the others send the same
// bytes.
type response struct {
	payload   string
	syncCtx   *structpb.Struct // shared and never modified
	encodings *atomic.Int64    // the server's count, which tests read
	sum       [32]byte         // SHA-256 of the payload, for servers with sources

	once sync.Once
	wire []byte
	err  error
}

func (s *Server) newResponse(payload string, syncCtx *structpb.Struct) *response {
	return &response{payload: payload, syncCtx: syncCtx, encodings: &s.encodings}
}

// encode returns the wire bytes of r, the same slice on every call: callers
// must not modify it.
func (r *response) encode() ([]byte, error) {
	r.once.Do(func() {
		r.encodings.Add(1)
		// The Struct is not cloned although other responses may be
		// marshalling it at the same time: marshalling only reads a
		// message (its size cache is written atomically).
		m := syncv1.SyncFlagsResponse_builder{FlagConfiguration: r.payload, SyncContext: r.syncCtx}.Build()
		r.wire, r.err = proto.Marshal(m)
		// A stream that stalls keeps its last response queued; without
		// this it would keep the document as well as its encoding.
		r.payload, r.syncCtx = "", nil
	})
	return r.wire, r.err
}

// wireCodec is the codec of this package's gRPC servers: a *response goes
// out as the bytes it was encoded to once; every other message, requests
// included, is left to grpc's proto codec. It is forced on the server rather
// than registered, since registering replaces a codec for every client and
// server of the process.
type wireCodec struct {
	proto encoding.CodecV2
}

func newWireCodec() wireCodec {
	return wireCodec{proto: encoding.GetCodecV2(grpcproto.Name)}
}

func (c wireCodec) Marshal(v any) (mem.BufferSlice, error) {
	r, ok := v.(*response)
	if !ok {
		return c.proto.Marshal(v)
	}
	b, err := r.encode()
	if err != nil {
		// grpc ends the stream with Internal, as when its own codec
		// fails to marshal a message (a payload that is not UTF-8).
		return nil, err
	}
	// grpc frees what Marshal returns once it has been written; freeing a
	// SliceBuffer does nothing, so the bytes stay whole for the other
	// streams, and grpc only reads them.
	return mem.BufferSlice{mem.SliceBuffer(b)}, nil
}

func (c wireCodec) Unmarshal(data mem.BufferSlice, v any) error {
	return c.proto.Unmarshal(data, v)
}

// Name is never sent: a grpc server answers with the content-subtype of
// the request.
func (c wireCodec) Name() string {
	return grpcproto.Name
}
