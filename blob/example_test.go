package blob_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap"
	"github.com/flagsnap/flagsnap/blob"
)

// Flags from an object in S3, polled every 30 seconds. The credentials
// are the environment's; Init is given time for a first request that
// resolves them.
func Example() {
	ctx := context.Background()
	src, err := blob.Open(ctx, "s3://my-bucket/flags.json?region=eu-west-1", blob.WithPollInterval(30*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	provider, err := flagsnap.NewProvider(flagsnap.WithSource(src), flagsnap.WithDeadline(10*time.Second))
	if err != nil {
		src.Close() // never run: release the bucket
		log.Fatal(err)
	}
	if err := openfeature.SetProviderAndWait(provider); err != nil {
		log.Fatal(err)
	}
	defer openfeature.Shutdown() // ends the source's Run, which releases the bucket

	client := openfeature.NewDefaultClient()
	on := client.Boolean(ctx, "new-checkout", false, openfeature.NewEvaluationContext("user-1", nil))
	fmt.Println("new checkout:", on)
}
