package syncserver

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	syncv1 "buf.build/gen/go/open-feature/flagd/protocolbuffers/go/flagd/sync/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

const (
	flagsA = `{"flags":{"a":{"state":"ENABLED","variants":{"on":true,"off":false},"defaultVariant":"on"}}}`
	flagsB = `{"flags":{"b":{"state":"ENABLED","variants":{"x":"x"},"defaultVariant":"x"}}}`
	flagsC = `{"flags":{"c":{"state":"DISABLED","variants":{"y":1},"defaultVariant":"y"}}}`
)

func TestDefaultSetThenUpdate(t *testing.T) {
	s := startTCP(t)
	st := openStream(t, plain(t, s), "p", "", "")
	recvFlags(t, st, DefaultFlags)
	waitStreams(t, s, 1)

	s.SetFlags([]byte(flagsA))
	recvFlags(t, st, flagsA)
	s.SetFlags([]byte(flagsB))
	recvFlags(t, st, flagsB)

	// A stream opened now starts from the latest set.
	recvFlags(t, openStream(t, plain(t, s), "p", "", ""), flagsB)
	if got := s.Streams(); got != 2 {
		t.Errorf("Streams() = %d, want 2", got)
	}
}

func TestWithFlags(t *testing.T) {
	s := startTCP(t, WithFlags([]byte(flagsA)))
	recvFlags(t, openStream(t, plain(t, s), "", "", ""), flagsA)
}

func TestSelectors(t *testing.T) {
	s := startTCP(t, WithFlags([]byte(flagsA)), WithSelectorFlags("app=b", []byte(flagsB)))
	c := plain(t, s)

	byHeader := openStream(t, c, "p", "", "app=b")
	recvFlags(t, byHeader, flagsB)
	byField := openStream(t, c, "p", "app=b", "")
	recvFlags(t, byField, flagsB)
	// The header replaced the field, so it wins when both are sent.
	both := openStream(t, c, "p", "unknown", "app=b")
	recvFlags(t, both, flagsB)
	def := openStream(t, c, "p", "", "")
	recvFlags(t, def, flagsA)
	waitStreams(t, s, 4)

	// A selector's update reaches only its streams: the default stream's
	// next message is the default set's own update.
	s.SetSelectorFlags("app=b", []byte(flagsC))
	s.SetFlags([]byte(flagsB))
	recvFlags(t, byHeader, flagsC)
	recvFlags(t, byField, flagsC)
	recvFlags(t, both, flagsC)
	recvFlags(t, def, flagsB)

	err := syncFails(t, c, "p", "", "app=nope", codes.NotFound)
	if !strings.Contains(status.Convert(err).Message(), "app=nope") {
		t.Errorf("NotFound message %q does not name the selector", status.Convert(err).Message())
	}
	syncFails(t, c, "p", "app=nope", "", codes.NotFound)

	// A selector added later can be asked for.
	s.SetSelectorFlags("app=new", []byte(flagsA))
	recvFlags(t, openStream(t, c, "p", "", "app=new"), flagsA)
}

func TestSyncContext(t *testing.T) {
	t.Run("absent", func(t *testing.T) {
		s := startTCP(t)
		resp := recv(t, openStream(t, plain(t, s), "", "", ""))
		if resp.HasSyncContext() {
			t.Errorf("sync_context = %v, want absent", resp.GetSyncContext())
		}
	})
	t.Run("present and changed", func(t *testing.T) {
		want := map[string]any{"env": "test", "n": 2.0, "on": true}
		s := startTCP(t, WithSyncContext(want), WithSelectorFlags("s", []byte(flagsB)))
		c := plain(t, s)
		st := openStream(t, c, "", "", "")
		sel := openStream(t, c, "", "", "s")
		resp := recvFlags(t, st, DefaultFlags)
		if !resp.HasSyncContext() || !reflect.DeepEqual(resp.GetSyncContext().AsMap(), want) {
			t.Fatalf("sync_context = %v, want %v", resp.GetSyncContext().AsMap(), want)
		}
		recvFlags(t, sel, flagsB)
		waitStreams(t, s, 2)

		// Updates carry it too.
		s.SetFlags([]byte(flagsA))
		if got := recvFlags(t, st, flagsA).GetSyncContext().AsMap(); !reflect.DeepEqual(got, want) {
			t.Fatalf("sync_context of update = %v, want %v", got, want)
		}

		// Changing it sends each stream its own set again.
		want2 := map[string]any{"env": "prod"}
		s.SetSyncContext(want2)
		if got := recvFlags(t, st, flagsA).GetSyncContext().AsMap(); !reflect.DeepEqual(got, want2) {
			t.Fatalf("sync_context = %v, want %v", got, want2)
		}
		if got := recvFlags(t, sel, flagsB).GetSyncContext().AsMap(); !reflect.DeepEqual(got, want2) {
			t.Fatalf("selector stream sync_context = %v, want %v", got, want2)
		}

		s.SetSyncContext(nil)
		if resp := recvFlags(t, st, flagsA); resp.HasSyncContext() {
			t.Fatalf("sync_context = %v after SetSyncContext(nil), want absent", resp.GetSyncContext())
		}
	})
	t.Run("empty is present", func(t *testing.T) {
		s := startTCP(t, WithSyncContext(map[string]any{}))
		if resp := recv(t, openStream(t, plain(t, s), "", "", "")); !resp.HasSyncContext() {
			t.Error("sync_context absent, want an empty struct")
		}
	})
}

func TestGetMetadata(t *testing.T) {
	s := startTCP(t)
	c := plain(t, s)
	if _, err := c.GetMetadata(callCtx(t), &syncv1.GetMetadataRequest{}); status.Code(err) != codes.Unimplemented {
		t.Fatalf("GetMetadata without metadata: err = %v, want Unimplemented", err)
	}

	want := map[string]any{"scope": "test", "version": 3.0}
	s.SetMetadata(want)
	resp, err := c.GetMetadata(callCtx(t), &syncv1.GetMetadataRequest{})
	if err != nil {
		t.Fatalf("GetMetadata: %v", err)
	}
	if got := resp.GetMetadata().AsMap(); !reflect.DeepEqual(got, want) {
		t.Fatalf("metadata = %v, want %v", got, want)
	}

	s.SetMetadata(nil)
	if _, err := c.GetMetadata(callCtx(t), &syncv1.GetMetadataRequest{}); status.Code(err) != codes.Unimplemented {
		t.Fatalf("GetMetadata after SetMetadata(nil): err = %v, want Unimplemented", err)
	}

	s2 := startTCP(t, WithMetadata(want))
	resp, err = plain(t, s2).GetMetadata(callCtx(t), &syncv1.GetMetadataRequest{})
	if err != nil || !reflect.DeepEqual(resp.GetMetadata().AsMap(), want) {
		t.Fatalf("GetMetadata with WithMetadata = %v, %v; want %v", resp.GetMetadata().AsMap(), err, want)
	}
}

func TestFetchAllFlags(t *testing.T) {
	s := startTCP(t, WithFlags([]byte(flagsA)), WithSelectorFlags("s", []byte(flagsB)))
	c := plain(t, s)

	resp, err := c.FetchAllFlags(callCtx(t), &syncv1.FetchAllFlagsRequest{})
	if err != nil || resp.GetFlagConfiguration() != flagsA {
		t.Fatalf("FetchAllFlags = %q, %v; want %q", resp.GetFlagConfiguration(), err, flagsA)
	}
	req := syncv1.FetchAllFlagsRequest_builder{ProviderId: "p", Selector: "s"}.Build()
	resp, err = c.FetchAllFlags(callCtx(t), req)
	if err != nil || resp.GetFlagConfiguration() != flagsB {
		t.Fatalf("FetchAllFlags(selector s) = %q, %v; want %q", resp.GetFlagConfiguration(), err, flagsB)
	}
	ctx := metadata.AppendToOutgoingContext(callCtx(t), SelectorHeader, "s")
	resp, err = c.FetchAllFlags(ctx, &syncv1.FetchAllFlagsRequest{})
	if err != nil || resp.GetFlagConfiguration() != flagsB {
		t.Fatalf("FetchAllFlags(header s) = %q, %v; want %q", resp.GetFlagConfiguration(), err, flagsB)
	}
	if _, err := c.FetchAllFlags(callCtx(t), syncv1.FetchAllFlagsRequest_builder{Selector: "x"}.Build()); status.Code(err) != codes.NotFound {
		t.Fatalf("FetchAllFlags(unknown selector): err = %v, want NotFound", err)
	}
	s.SetStatus(codes.Unauthenticated, "no")
	if _, err := c.FetchAllFlags(callCtx(t), &syncv1.FetchAllFlagsRequest{}); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("FetchAllFlags with status: err = %v, want Unauthenticated", err)
	}
}

func TestStatus(t *testing.T) {
	s := startTCP(t, WithStatus(codes.PermissionDenied, "go away"))
	c := plain(t, s)

	err := syncFails(t, c, "p", "", "", codes.PermissionDenied)
	if msg := status.Convert(err).Message(); msg != "go away" {
		t.Errorf("status message = %q, want %q", msg, "go away")
	}
	if got := s.Requests(); len(got) != 1 || got[0].Method != "SyncFlags" {
		t.Errorf("refused call not recorded: %+v", got)
	}

	s.SetStatus(codes.OK, "")
	st := openStream(t, c, "p", "", "")
	recvFlags(t, st, DefaultFlags)
	waitStreams(t, s, 1)

	// A status set now is for new calls; the open stream keeps serving.
	s.SetStatus(codes.Unavailable, "down")
	syncFails(t, c, "p", "", "", codes.Unavailable)
	s.SetFlags([]byte(flagsA))
	recvFlags(t, st, flagsA)
}

func TestSendRaw(t *testing.T) {
	s := startTCP(t, WithFlags([]byte(flagsA)), WithSelectorFlags("s", []byte(flagsB)))
	c := plain(t, s)
	def := openStream(t, c, "", "", "")
	sel := openStream(t, c, "", "", "s")
	recvFlags(t, def, flagsA)
	recvFlags(t, sel, flagsB)
	waitStreams(t, s, 2)

	const broken = `{"flags": {"a": `
	s.SendRaw(broken)
	s.SetFlags([]byte(flagsC))
	// Raw payloads go to every stream, in order with set updates.
	recvFlags(t, def, broken)
	recvFlags(t, def, flagsC)
	recvFlags(t, sel, broken)

	// The stored sets are unchanged by it.
	recvFlags(t, openStream(t, c, "", "", "s"), flagsB)
}

func TestSettersDoNotWaitForStreams(t *testing.T) {
	s := startTCP(t)
	c := plain(t, s)
	// These streams are never read, so their flow-control windows fill up.
	for range 3 {
		openStream(t, c, "", "", "")
	}
	waitStreams(t, s, 3)

	big := `{"flags":{},"pad":"` + strings.Repeat("x", 256<<10) + `"}`
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 50 {
			s.SetFlags([]byte(big))
			s.SendRaw(big)
			s.SetSyncContext(map[string]any{"i": float64(i)})
		}
	}()
	select {
	case <-done:
	case <-time.After(wait):
		t.Fatal("setters blocked on streams that do not read")
	}
}

func TestTLS(t *testing.T) {
	s := startTCP(t, WithTLS())
	caPEM := s.CACertPEM()
	if caPEM == nil {
		t.Fatal("CACertPEM() = nil with WithTLS")
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("CACertPEM() holds no certificate")
	}

	t.Run("trusted CA", func(t *testing.T) {
		c := dial(t, s.Addr(), grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: pool})))
		recvFlags(t, openStream(t, c, "", "", ""), DefaultFlags)
	})
	t.Run("CA file", func(t *testing.T) {
		path, err := s.WriteCACert(t.TempDir())
		if err != nil {
			t.Fatalf("WriteCACert: %v", err)
		}
		data, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(data, caPEM) {
			t.Fatalf("CA file %s: %v, content equal: %v", path, err, bytes.Equal(data, caPEM))
		}
		creds, err := credentials.NewClientTLSFromFile(path, "localhost")
		if err != nil {
			t.Fatal(err)
		}
		target := fmt.Sprintf("localhost:%d", s.Port())
		c := dial(t, target, grpc.WithTransportCredentials(creds))
		recvFlags(t, openStream(t, c, "", "", ""), DefaultFlags)
	})
	t.Run("without the CA", func(t *testing.T) {
		c := dial(t, s.Addr(), grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{})))
		syncFails(t, c, "", "", "", codes.Unavailable)
	})
	t.Run("plaintext client", func(t *testing.T) {
		syncFails(t, plain(t, s), "", "", "", codes.Unavailable)
	})
	t.Run("certificate", func(t *testing.T) {
		d := tls.Dialer{Config: &tls.Config{RootCAs: pool, ServerName: "localhost", NextProtos: []string{"h2"}}}
		conn, err := d.DialContext(callCtx(t), "tcp", s.Addr())
		if err != nil {
			t.Fatalf("TLS handshake with localhost as server name: %v", err)
		}
		defer conn.Close()
		leaf := conn.(*tls.Conn).ConnectionState().PeerCertificates[0]
		key, ok := leaf.PublicKey.(*ecdsa.PublicKey)
		if !ok || key.Curve != elliptic.P256() {
			t.Errorf("server key is %T, want ECDSA P-256", leaf.PublicKey)
		}
		for _, host := range []string{"localhost", "127.0.0.1", "::1"} {
			if err := leaf.VerifyHostname(host); err != nil {
				t.Errorf("certificate not valid for %s: %v", host, err)
			}
		}
		block, _ := pem.Decode(caPEM)
		ca, err := x509.ParseCertificate(block.Bytes)
		if err != nil || !ca.IsCA {
			t.Fatalf("CA certificate: %v, IsCA %v", err, ca != nil && ca.IsCA)
		}
		if _, ok := ca.PublicKey.(*ecdsa.PublicKey); !ok {
			t.Errorf("CA key is %T, want ECDSA", ca.PublicKey)
		}
	})
}

func TestWithCertificate(t *testing.T) {
	// A key pair of the caller's, here one signed by a generated CA that
	// the client trusts.
	caPEM, conf, err := generateTLS()
	if err != nil {
		t.Fatal(err)
	}
	s := startTCP(t, WithCertificate(conf.Certificates[0]))
	if s.CACertPEM() != nil {
		t.Error("CACertPEM() != nil with WithCertificate")
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	c := dial(t, s.Addr(), grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: pool})))
	recvFlags(t, openStream(t, c, "", "", ""), DefaultFlags)
	syncFails(t, plain(t, s), "", "", "", codes.Unavailable)
}

func TestNoTLS(t *testing.T) {
	s := newServer(t)
	if s.CACertPEM() != nil {
		t.Error("CACertPEM() != nil without TLS")
	}
	if _, err := s.WriteCACert(t.TempDir()); err == nil {
		t.Error("WriteCACert without TLS succeeded")
	}
}

func TestUnixSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sync.sock")

	// A socket file left behind by a process that died.
	stale, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	stale.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("stale socket not left behind: %v", err)
	}

	s := newServer(t, WithFlags([]byte(flagsA)))
	if err := s.ListenUnix(path); err != nil {
		t.Fatalf("ListenUnix over a stale socket: %v", err)
	}
	if s.Addr() != path || s.Port() != 0 {
		t.Errorf("Addr() = %q, Port() = %d; want %q, 0", s.Addr(), s.Port(), path)
	}
	st := openStream(t, dial(t, "unix://"+path), "", "", "")
	recvFlags(t, st, flagsA)

	s.Stop()
	recvErr(t, st, codes.Unavailable)
	if err := s.Restart(); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	recvFlags(t, openStream(t, dial(t, "unix://"+path), "", "", ""), flagsA)
}

func TestUnixSocketRefusesOtherFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "not-a-socket")
	if err := os.WriteFile(path, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := newServer(t)
	if err := s.ListenUnix(path); err == nil {
		t.Fatal("ListenUnix over a regular file succeeded")
	}
	if data, err := os.ReadFile(path); err != nil || string(data) != "keep me" {
		t.Fatalf("regular file was touched: %q, %v", data, err)
	}
}

func TestStopAndRestart(t *testing.T) {
	s := startTCP(t, WithFlags([]byte(flagsA)))
	addr, port := s.Addr(), s.Port()
	if port == 0 || addr != fmt.Sprintf("127.0.0.1:%d", port) {
		t.Fatalf("Addr() = %q, Port() = %d", addr, port)
	}
	st := openStream(t, plain(t, s), "", "", "")
	recvFlags(t, st, flagsA)
	waitStreams(t, s, 1)

	s.Stop()
	recvErr(t, st, codes.Unavailable)
	if n := s.Streams(); n != 0 {
		t.Errorf("Streams() = %d after Stop, want 0", n)
	}
	if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		t.Error("port still accepts connections after Stop")
	}
	s.Stop() // stopping a stopped server is harmless

	// Changes made while stopped are served after the restart.
	s.SetFlags([]byte(flagsB))
	if err := s.Restart(); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	if s.Addr() != addr || s.Port() != port {
		t.Fatalf("after Restart Addr() = %q, Port() = %d; want %q, %d", s.Addr(), s.Port(), addr, port)
	}
	if err := s.Restart(); err == nil {
		t.Error("Restart while serving succeeded")
	}
	recvFlags(t, openStream(t, plain(t, s), "", "", ""), flagsB)

	// Several rounds, since a port is most likely to be briefly
	// unavailable right after it was released.
	for range 3 {
		s.Stop()
		if err := s.Restart(); err != nil {
			t.Fatalf("Restart: %v", err)
		}
	}
	recvFlags(t, openStream(t, plain(t, s), "", "", ""), flagsB)
}

func TestRestartBeforeListen(t *testing.T) {
	if err := newServer(t).Restart(); err == nil {
		t.Error("Restart before any listen succeeded")
	}
}

func TestRequests(t *testing.T) {
	s := startTCP(t, WithSelectorFlags("field-sel", []byte(flagsB)))
	before := time.Now()
	c := dial(t, s.Addr(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithAuthority("my.service"))
	recvFlags(t, openStream(t, c, "provider-1", "field-sel", ""), flagsB)
	s.SetSelectorFlags("header-sel", []byte(flagsA))
	recvFlags(t, openStream(t, c, "provider-2", "field-sel", "header-sel"), flagsA)
	ctx := metadata.AppendToOutgoingContext(callCtx(t), SelectorHeader, "md-sel")
	if _, err := c.GetMetadata(ctx, &syncv1.GetMetadataRequest{}); status.Code(err) != codes.Unimplemented {
		t.Fatalf("GetMetadata: %v", err)
	}

	got := s.Requests()
	want := []Request{
		{Method: "SyncFlags", ProviderID: "provider-1", Selector: "field-sel", Authority: "my.service"},
		{Method: "SyncFlags", ProviderID: "provider-2", Selector: "field-sel", SelectorHeader: "header-sel", Authority: "my.service"},
		{Method: "GetMetadata", SelectorHeader: "md-sel", Authority: "my.service"},
	}
	if len(got) != len(want) {
		t.Fatalf("Requests() = %+v, want %d entries", got, len(want))
	}
	last := before
	for i := range got {
		if got[i].Time.Before(last) || got[i].Time.After(time.Now()) {
			t.Errorf("request %d: Time %v out of order", i, got[i].Time)
		}
		last = got[i].Time
		got[i].Time = time.Time{}
		if got[i] != want[i] {
			t.Errorf("request %d = %+v, want %+v", i, got[i], want[i])
		}
	}

	// The result is a copy.
	got[0].ProviderID = "changed"
	if s.Requests()[0].ProviderID != "provider-1" {
		t.Error("Requests() shares memory with the server")
	}

	// Without WithAuthority the client sends the target address.
	recv(t, openStream(t, plain(t, s), "", "", ""))
	if r := s.Requests(); r[len(r)-1].Authority != s.Addr() {
		t.Errorf("Authority = %q, want %q", r[len(r)-1].Authority, s.Addr())
	}
}

func TestWaitStreams(t *testing.T) {
	s := startTCP(t)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := s.WaitStreams(ctx, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitStreams with no stream = %v, want DeadlineExceeded", err)
	}
	if err := s.WaitStreams(context.Background(), 0); err != nil {
		t.Fatalf("WaitStreams(0) = %v", err)
	}

	c := plain(t, s)
	errc := make(chan error, 1)
	go func() { errc <- s.WaitStreams(callCtx(t), 2) }()
	ctx1, cancel1 := context.WithCancel(callCtx(t))
	st1, err := c.SyncFlags(ctx1, &syncv1.SyncFlagsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	recv(t, st1)
	recv(t, openStream(t, c, "", "", ""))
	if err := <-errc; err != nil {
		t.Fatalf("WaitStreams(2) = %v", err)
	}

	// A client that goes away is no longer counted.
	cancel1()
	deadline := time.Now().Add(wait)
	for s.Streams() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("Streams() = %d after a client left, want 1", s.Streams())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestClose(t *testing.T) {
	s, err := New()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ListenTCP("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	if err := s.ListenTCP("127.0.0.1:0"); err == nil {
		t.Error("second ListenTCP while serving succeeded")
	}
	st := openStream(t, plain(t, s), "", "", "")
	recv(t, st)
	s.Close()
	s.Close()
	recvErr(t, st, codes.Unavailable)
	if err := s.Restart(); !errors.Is(err, ErrClosed) {
		t.Errorf("Restart after Close = %v, want ErrClosed", err)
	}
	if err := s.ListenTCP("127.0.0.1:0"); !errors.Is(err, ErrClosed) {
		t.Errorf("ListenTCP after Close = %v, want ErrClosed", err)
	}
	s.SetFlags([]byte(flagsA)) // harmless without streams
	s.Stop()
}

func TestNewRejectsUnrepresentableValues(t *testing.T) {
	if _, err := New(WithSyncContext(map[string]any{"ch": make(chan int)})); err == nil {
		t.Error("New accepted a sync context with a channel in it")
	}
	if _, err := New(WithMetadata(map[string]any{"f": func() {}})); err == nil {
		t.Error("New accepted metadata with a func in it")
	}
}

// Run with -race: streams come and go while every setter runs.
func TestConcurrentUse(t *testing.T) {
	s := startTCP(t, WithSelectorFlags("s", []byte(flagsB)))
	c := plain(t, s)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			ctx, cancel := context.WithCancel(callCtx(t))
			defer cancel()
			header := ""
			if i%2 == 1 {
				header = "s"
			}
			st, err := c.SyncFlags(metadata.AppendToOutgoingContext(ctx, SelectorHeader, header), &syncv1.SyncFlagsRequest{})
			if err != nil {
				t.Error(err)
				return
			}
			for range 5 {
				if _, err := st.Recv(); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	stop := make(chan struct{})
	var setters sync.WaitGroup
	setters.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			s.SetFlags(fmt.Appendf(nil, `{"flags":{},"i":%d}`, i))
			s.SetSelectorFlags("s", fmt.Appendf(nil, `{"flags":{},"s":%d}`, i))
			s.SendRaw("raw")
			s.SetSyncContext(map[string]any{"i": float64(i)})
			s.SetMetadata(map[string]any{"i": float64(i)})
			_ = s.Streams()
			_ = s.Requests()
			time.Sleep(time.Millisecond)
		}
	})
	wg.Wait()
	close(stop)
	setters.Wait()
}
