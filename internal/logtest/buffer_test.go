package logtest

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestBufferTakesWritesFromManyGoroutines(t *testing.T) {
	var b Buffer
	log := b.Logger()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 50 {
				log.Debug("line", "from", i, "n", j)
			}
		})
	}
	// Reading while the writers run is what the lock is for; -race checks it.
	_ = b.Count("line")
	wg.Wait()
	if n := b.Count(`level=DEBUG msg=line`); n != 400 {
		t.Errorf("counted %d debug lines, want 400", n)
	}
	if n := strings.Count(b.String(), "\n"); n != 400 || b.Len() != len(b.String()) {
		t.Errorf("%d lines in %d bytes (String has %d)", n, b.Len(), len(b.String()))
	}
	if !strings.Contains(b.String(), fmt.Sprintf("from=%d n=%d", 7, 49)) {
		t.Error("the last line of the last writer is missing")
	}
}
