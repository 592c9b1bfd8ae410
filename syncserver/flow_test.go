package syncserver

import (
	"context"
	"fmt"
	"strings"
	"testing"

	syncv1 "buf.build/gen/go/open-feature/flagd/protocolbuffers/go/flagd/sync/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// Nothing of the server's lowers grpc-go's send limit (math.MaxInt32): a
// set of hundreds of megabytes goes out. Under the race detector or -short,
// where that would take seconds and gigabytes, a set still far above grpc's
// 4 MB receive default shows the same.
func TestLargeFlagSet(t *testing.T) {
	size := 256 << 20
	if raceEnabled || testing.Short() {
		size = 32 << 20
	}
	doc := `{"flags":{},"pad":"` + strings.Repeat("x", size) + `"}`
	s := startTCP(t, WithFlags([]byte(doc)))
	c := dial(t, s.Addr(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(size+1<<20)))
	// Longer than other calls get: on a busy machine, a quarter of a
	// gigabyte is encoded, sent and decoded in seconds.
	ctx, cancel := context.WithTimeout(context.Background(), 10*wait)
	defer cancel()
	st, err := c.SyncFlags(ctx, &syncv1.SyncFlagsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	resp := recv(t, st)
	if got := resp.GetFlagConfiguration(); got != doc {
		t.Fatalf("received %d bytes, want the %d of the set", len(got), len(doc))
	}
}

// A stream whose client does not read stalls in flow control with an
// update half sent; the streams beside it, on its connection and another,
// keep receiving updates, and once it reads again it gets the latest set,
// not every set it missed.
func TestStalledStreamDoesNotHoldUpOthers(t *testing.T) {
	s := startTCP(t, WithFlags([]byte(flagsA)))
	// A fixed window turns off grpc's window growth, so that an update of
	// a megabyte surely stalls in the unread stream.
	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithInitialWindowSize(64 << 10),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(16 << 20)),
	}
	shared := dial(t, s.Addr(), opts...)
	stalled := openStream(t, shared, "", "", "")
	others := []syncStream{openStream(t, shared, "", "", ""), openStream(t, dial(t, s.Addr(), opts...), "", "", "")}
	for _, st := range others {
		recvFlags(t, st, flagsA)
	}
	waitStreams(t, s, 3)

	// Every stream's context ends after wait, which bounds the updates.
	const updates = 20
	pad := strings.Repeat("x", 1<<20)
	doc := func(i int) string { return fmt.Sprintf(`{"flags":{},"i":%d,"pad":"%s"}`, i, pad) }
	for i := range updates {
		s.SetFlags([]byte(doc(i)))
		for j, st := range others {
			if recv(t, st).GetFlagConfiguration() != doc(i) {
				t.Fatalf("stream %d: update %d is not the set sent", j, i)
			}
		}
	}

	// Four messages at most, however many updates it missed: the set it
	// opened with, the update grpc took in (its write quota admits a whole
	// message) before the window filled, the one the handler then waited
	// to hand over, and the latest, which replaced all the others.
	got := []string{recv(t, stalled).GetFlagConfiguration()}
	for got[len(got)-1] != doc(updates-1) {
		if len(got) == 4 {
			t.Fatalf("stalled stream received %d messages without the latest set", len(got))
		}
		got = append(got, recv(t, stalled).GetFlagConfiguration())
	}
	if got[0] != flagsA {
		t.Errorf("stalled stream's first message is not the set it opened with")
	}
}
