package source_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/flagsnap/flagsnap/source"
	"github.com/flagsnap/flagsnap/syncserver"
)

// printOnce prints the first flag set and its sync context, then stops the
// source. A Source calls its sink from one goroutine at a time, so it needs
// no lock.
type printOnce struct {
	cancel context.CancelFunc
	done   bool
}

func (p *printOnce) Update(u source.Update) error {
	if !p.done {
		p.done = true
		fmt.Printf("%s\n%v\n", u.Flags, u.SyncContext)
		p.cancel()
	}
	return nil
}

func (p *printOnce) Lost(err error)  { fmt.Println("lost:", err) }
func (p *printOnce) Fatal(err error) { fmt.Println("fatal:", err) }

func ExampleNewGRPC() {
	srv, err := syncserver.New(
		syncserver.WithFlags([]byte(`{"flags":{}}`)),
		syncserver.WithSyncContext(map[string]any{"region": "eu"}))
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	if err := srv.ListenTCP("127.0.0.1:0"); err != nil {
		log.Fatal(err)
	}

	src, err := source.NewGRPC(source.GRPCConfig{
		Host:       "127.0.0.1",
		Port:       srv.Port(),
		ProviderID: "example",
	})
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := src.Run(ctx, &printOnce{cancel: cancel}); err != nil {
		log.Fatal(err)
	}
	// Output:
	// {"flags":{}}
	// map[region:eu]
}
