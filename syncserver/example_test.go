package syncserver_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"buf.build/gen/go/open-feature/flagd/grpc/go/flagd/sync/v1/syncv1grpc"
	syncv1 "buf.build/gen/go/open-feature/flagd/protocolbuffers/go/flagd/sync/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/flagsnap/flagsnap/syncserver"
)

func Example() {
	srv, err := syncserver.New(syncserver.WithFlags([]byte(
		`{"flags":{"greeting":{"state":"ENABLED","variants":{"hi":"hello"},"defaultVariant":"hi"}}}`)))
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	if err := srv.ListenTCP("127.0.0.1:0"); err != nil {
		log.Fatal(err)
	}

	conn, err := grpc.NewClient(srv.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req := syncv1.SyncFlagsRequest_builder{ProviderId: "example"}.Build()
	stream, err := syncv1grpc.NewFlagSyncServiceClient(conn).SyncFlags(ctx, req)
	if err != nil {
		log.Fatal(err)
	}
	resp, err := stream.Recv()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.GetFlagConfiguration())
	// Output:
	// {"flags":{"greeting":{"state":"ENABLED","variants":{"hi":"hello"},"defaultVariant":"hi"}}}
}
