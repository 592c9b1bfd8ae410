package source_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/flagsnap/flagsnap/source"
)

// firstUpdate prints the first flag set it receives and stops the source.
// A Source calls its sink from one goroutine at a time, so it needs no lock.
type firstUpdate struct {
	cancel context.CancelFunc
	done   bool
}

func (s *firstUpdate) Update(u source.Update) error {
	if !s.done {
		s.done = true
		fmt.Printf("%s\n", u.Flags)
		s.cancel()
	}
	return nil
}

func (s *firstUpdate) Lost(err error)  { fmt.Println("lost:", err) }
func (s *firstUpdate) Fatal(err error) { fmt.Println("fatal:", err) }

func ExampleNewFile() {
	dir, err := os.MkdirTemp("", "flags")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "flags.json")
	if err := os.WriteFile(path, []byte(`{"flags":{}}`), 0o644); err != nil {
		log.Fatal(err)
	}

	src, err := source.NewFile(source.FileConfig{
		Path:         path,
		PollInterval: 10 * time.Second,
	})
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := src.Run(ctx, &firstUpdate{cancel: cancel}); err != nil {
		log.Fatal(err)
	}
	// Output:
	// {"flags":{}}
}
