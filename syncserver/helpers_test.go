package syncserver

import (
	"context"
	"testing"
	"time"

	"buf.build/gen/go/open-feature/flagd/grpc/go/flagd/sync/v1/syncv1grpc"
	syncv1 "buf.build/gen/go/open-feature/flagd/protocolbuffers/go/flagd/sync/v1"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Every test and the example close their servers and clients; anything
// still running afterwards is a leak of the server (or of a test).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// wait bounds every blocking step, so a broken server fails a test instead
// of hanging the run.
const wait = 5 * time.Second

func newServer(t *testing.T, opts ...Option) *Server {
	t.Helper()
	s, err := New(opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

func startTCP(t *testing.T, opts ...Option) *Server {
	t.Helper()
	s := newServer(t, opts...)
	if err := s.ListenTCP("127.0.0.1:0"); err != nil {
		t.Fatalf("ListenTCP: %v", err)
	}
	return s
}

func dial(t *testing.T, target string, opts ...grpc.DialOption) syncv1grpc.FlagSyncServiceClient {
	t.Helper()
	if len(opts) == 0 {
		opts = []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	}
	conn, err := grpc.NewClient(target, opts...)
	if err != nil {
		t.Fatalf("NewClient(%q): %v", target, err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return syncv1grpc.NewFlagSyncServiceClient(conn)
}

func plain(t *testing.T, s *Server) syncv1grpc.FlagSyncServiceClient {
	t.Helper()
	return dial(t, s.Addr())
}

// callCtx is a context for one call, ended with the test.
func callCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return ctx
}

type syncStream = grpc.ServerStreamingClient[syncv1.SyncFlagsResponse]

// startSync calls SyncFlags with the given provider id, selector field and
// (when not empty) selector header.
func startSync(t *testing.T, c syncv1grpc.FlagSyncServiceClient, providerID, selector, header string) (syncStream, error) {
	t.Helper()
	ctx := callCtx(t)
	if header != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, SelectorHeader, header)
	}
	req := syncv1.SyncFlagsRequest_builder{ProviderId: providerID, Selector: selector}.Build()
	return c.SyncFlags(ctx, req)
}

// openStream is startSync for a call expected to succeed.
func openStream(t *testing.T, c syncv1grpc.FlagSyncServiceClient, providerID, selector, header string) syncStream {
	t.Helper()
	st, err := startSync(t, c, providerID, selector, header)
	if err != nil {
		t.Fatalf("SyncFlags: %v", err)
	}
	return st
}

func recv(t *testing.T, st syncStream) *syncv1.SyncFlagsResponse {
	t.Helper()
	resp, err := st.Recv()
	if err != nil {
		t.Fatalf("Recv: %v", err)
	}
	return resp
}

func recvFlags(t *testing.T, st syncStream, want string) *syncv1.SyncFlagsResponse {
	t.Helper()
	resp := recv(t, st)
	if got := resp.GetFlagConfiguration(); got != want {
		t.Fatalf("flag_configuration = %s, want %s", got, want)
	}
	return resp
}

// recvErr expects the stream to end with code.
func recvErr(t *testing.T, st syncStream, code codes.Code) {
	t.Helper()
	resp, err := st.Recv()
	if err == nil {
		t.Fatalf("Recv = %s, want an error with code %v", resp.GetFlagConfiguration(), code)
	}
	if status.Code(err) != code {
		t.Fatalf("Recv error = %v, want code %v", err, code)
	}
}

func waitStreams(t *testing.T, s *Server, n int) {
	t.Helper()
	if err := s.WaitStreams(callCtx(t), n); err != nil {
		t.Fatal(err)
	}
}

// syncFails expects a SyncFlags call to fail with code, whether the failure
// comes when the stream is opened (no connection) or with its first message
// (an answer from the server).
func syncFails(t *testing.T, c syncv1grpc.FlagSyncServiceClient, providerID, selector, header string, code codes.Code) error {
	t.Helper()
	st, err := startSync(t, c, providerID, selector, header)
	if err == nil {
		var resp *syncv1.SyncFlagsResponse
		if resp, err = st.Recv(); err == nil {
			t.Fatalf("Recv = %s, want an error with code %v", resp.GetFlagConfiguration(), code)
		}
	}
	if status.Code(err) != code {
		t.Fatalf("SyncFlags error = %v, want code %v", err, code)
	}
	return err
}
