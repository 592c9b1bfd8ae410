package syncserver

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"buf.build/gen/go/open-feature/flagd/grpc/go/flagd/sync/v1/syncv1grpc"
	syncv1 "buf.build/gen/go/open-feature/flagd/protocolbuffers/go/flagd/sync/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// fanOutDoc is a flag set of n flags with targeting, about 250 bytes a
// flag; version tells one update from the next.
func fanOutDoc(n, version int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `{"metadata":{"version":%d},"flags":{`, version)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"flag-%d":{"state":"ENABLED","variants":{"on":true,"off":false},"defaultVariant":"off",`+
			`"targeting":{"if":[{"in":[{"var":"email"},["a%d@example.com","b%d@example.com"]]},"on",`+
			`{"fractional":[{"var":"targetingKey"},["on",50],["off",50]]}]}}`, i, i, i)
	}
	b.WriteString("}}")
	return []byte(b.String())
}

// streamsPerConn spreads the streams over a few connections, as many
// providers in as many processes would, without one TCP connection per
// stream.
const streamsPerConn = 100

// BenchmarkFanOut measures how long an update takes to reach every
// stream following its set: each op is one SetFlags, and ends when the
// last stream has received it. p99-s is the 99th percentile of the time a
// stream waited for its copy, over every stream and op; last-s the slowest
// op.
func BenchmarkFanOut(b *testing.B) {
	docs := [][]byte{fanOutDoc(1000, 1), fanOutDoc(1000, 2)}
	for _, n := range []int{300, 1000} {
		b.Run(fmt.Sprintf("streams=%d/doc=%dKB", n, len(docs[0])>>10), func(b *testing.B) {
			benchFanOut(b, n, docs)
		})
	}
}

func benchFanOut(b *testing.B, n int, docs [][]byte) {
	s, err := New(WithFlags(docs[0]))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.ListenTCP("127.0.0.1:0"); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var clients []syncv1grpc.FlagSyncServiceClient
	for range (n + streamsPerConn - 1) / streamsPerConn {
		conn, err := grpc.NewClient(s.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		clients = append(clients, syncv1grpc.NewFlagSyncServiceClient(conn))
	}

	arrivals := make(chan time.Time, n)
	var receivers sync.WaitGroup
	// Cancelled (and closed) before the receivers are waited for.
	defer receivers.Wait()
	defer cancel()
	for i := range n {
		st, err := clients[i/streamsPerConn].SyncFlags(ctx, &syncv1.SyncFlagsRequest{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := st.Recv(); err != nil {
			b.Fatal(err)
		}
		receivers.Go(func() {
			for {
				if _, err := st.Recv(); err != nil {
					return
				}
				arrivals <- time.Now()
			}
		})
	}
	wctx, wcancel := context.WithTimeout(ctx, time.Minute)
	defer wcancel()
	if err := s.WaitStreams(wctx, n); err != nil {
		b.Fatal(err)
	}

	lat := make([]time.Duration, 0, n*b.N)
	var slowest time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		s.SetFlags(docs[(i+1)%len(docs)])
		var last time.Duration
		for range n {
			select {
			case t := <-arrivals:
				lat = append(lat, t.Sub(start))
				last = max(last, t.Sub(start))
			case <-time.After(time.Minute):
				b.Fatalf("op %d: %d of %d streams updated after a minute", i, len(lat)%n, n)
			}
		}
		slowest = max(slowest, last)
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(lat[len(lat)/2].Seconds(), "p50-s")
	b.ReportMetric(lat[(len(lat)*99+99)/100-1].Seconds(), "p99-s")
	b.ReportMetric(slowest.Seconds(), "last-s")
}
