package syncserver

import (
	"strings"
	"testing"

	"buf.build/gen/go/open-feature/flagd/grpc/go/flagd/sync/v1/syncv1grpc"
	syncv1 "buf.build/gen/go/open-feature/flagd/protocolbuffers/go/flagd/sync/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// An update costs one encoding per selector, however many streams follow
// it, and a stream opened later sends the same encoding again.
func TestOneEncodingPerUpdate(t *testing.T) {
	s := startTCP(t, WithFlags([]byte(flagsA)), WithSelectorFlags("s", []byte(flagsB)),
		WithSyncContext(map[string]any{"env": "test"}))
	clients := []syncv1grpc.FlagSyncServiceClient{plain(t, s), plain(t, s)}
	var def, sel []syncStream
	for i := range 20 {
		def = append(def, openStream(t, clients[i%2], "", "", ""))
	}
	for i := range 5 {
		sel = append(sel, openStream(t, clients[i%2], "", "", "s"))
	}
	recvAll := func(sts []syncStream, want string) {
		t.Helper()
		for _, st := range sts {
			recvFlags(t, st, want)
		}
	}
	// Read once every stream has received, so every send is counted.
	encodings := func(want int64) {
		t.Helper()
		if got := s.encodings.Load(); got != want {
			t.Fatalf("%d encodings, want %d", got, want)
		}
	}
	recvAll(def, flagsA)
	recvAll(sel, flagsB)
	waitStreams(t, s, 25)
	encodings(2)

	s.SetFlags([]byte(flagsC))
	recvAll(def, flagsC)
	encodings(3)

	recvAll([]syncStream{openStream(t, clients[0], "", "", "")}, flagsC)
	encodings(3)

	s.SetSyncContext(map[string]any{"env": "prod"})
	recvAll(def, flagsC)
	recvAll(sel, flagsB)
	encodings(5)

	s.SendRaw("raw")
	recvAll(def, "raw")
	recvAll(sel, "raw")
	encodings(6)

	// Unary answers are not shared, and not counted.
	if _, err := clients[0].FetchAllFlags(callCtx(t), &syncv1.FetchAllFlagsRequest{}); err != nil {
		t.Fatal(err)
	}
	encodings(6)
}

// What a client decodes is the SyncFlagsResponse each stream used to build
// and marshal for itself: the set as served and the sync context, absent,
// empty or not.
func TestResponsesDecodeAsBefore(t *testing.T) {
	doc1 := `{"metadata":{"team":"t"},"$evaluators":{"e":{"==":[1,1]}},` +
		`"flags":{"a":{"state":"ENABLED","variants":{"on":true,"off":false},"targeting":{"if":[{"$ref":"e"},"on"]}}}}`
	doc2 := strings.Replace(doc1, `"t"`, `"ü"`, 1)
	syncCtx := map[string]any{"env": "test", "n": 2.5, "on": true, "nested": map[string]any{"list": []any{"x", 1.0, nil}}}
	flagd := func(doc string) string {
		out, err := flagdEncode([]byte(doc), "flags.json")
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	cases := []struct {
		name         string
		opts         []Option
		want1, want2 string
	}{
		{"plain", nil, doc1, doc2},
		{"flagd", []Option{WithFlagdEncoding("flags.json")}, flagd(doc1), flagd(doc2)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := startTCP(t, append(c.opts, WithFlags([]byte(doc1)), WithSyncContext(syncCtx))...)
			st := openStream(t, plain(t, s), "", "", "")
			expect := func(payload string, ctx map[string]any) {
				t.Helper()
				b := syncv1.SyncFlagsResponse_builder{FlagConfiguration: payload}
				if ctx != nil {
					pb, err := structpb.NewStruct(ctx)
					if err != nil {
						t.Fatal(err)
					}
					b.SyncContext = pb
				}
				want := b.Build()
				got := recv(t, st)
				if !proto.Equal(got, want) || got.HasSyncContext() != want.HasSyncContext() {
					t.Fatalf("received %v\nwant %v", got, want)
				}
			}
			expect(c.want1, syncCtx)
			waitStreams(t, s, 1)
			s.SetFlags([]byte(doc2))
			expect(c.want2, syncCtx)
			s.SetSyncContext(nil)
			expect(c.want2, nil)
			s.SetSyncContext(map[string]any{})
			expect(c.want2, map[string]any{})
			s.SendRaw("{not json")
			expect("{not json", map[string]any{})
		})
	}
}

// A payload that protobuf cannot encode ends the streams it goes to as
// grpc's own codec did: Internal, with the marshalling error.
func TestUnencodablePayload(t *testing.T) {
	s := startTCP(t)
	st := openStream(t, plain(t, s), "", "", "")
	recvFlags(t, st, DefaultFlags)
	waitStreams(t, s, 1)
	s.SendRaw("\xff")
	_, err := st.Recv()
	if status.Code(err) != codes.Internal || !strings.Contains(err.Error(), "marshal") {
		t.Fatalf("Recv error = %v, want Internal while marshalling", err)
	}
}
