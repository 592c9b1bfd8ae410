package ld

import (
	"os"
	"testing"

	flagd "github.com/open-feature/go-sdk-contrib/providers/flagd/pkg"
	"github.com/open-feature/go-sdk/openfeature"
)

// newFlagdProvider is flagd's own Go provider in its in-process mode on
// evalFlags written to a file (the offline file mode: a file sync feeding
// flagd's evaluator, no flagd daemon), READY and shut down when tb ends.
//
// Init is called directly, as newEvalProvider calls flagsnap's: no SDK
// holds the provider. The provider forwards its service's events to an
// unbuffered channel that the SDK would read; a goroutine reads it here
// instead, so that the forwarding never blocks, and stops at shutdown.
// The provider's forwarding goroutine outlives Shutdown, which does not
// close the channel it waits on: one idle goroutine per provider, which
// holds nothing of the tests'.
//
// flagd's in-process service builds a logger of its own on os.Stderr, at
// info level, when it is made, and no option reaches it; it logs its
// start and shutdown and, on evalFlags, a page of schema warnings,
// because flagd's schema wants fractional's first argument an expression
// of the bucketing key, not frac2's and frac8's array
// ([{"var": "targetingKey"}]). That would come before each run's rows,
// so the provider is made with os.Stderr on the null device. An Init
// that fails still says why through its error.
func newFlagdProvider(tb testing.TB) *flagd.Provider {
	tb.Helper()
	f, err := os.CreateTemp(dir, "flagd-eval-*.json")
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := f.WriteString(evalFlags); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		tb.Fatal(err)
	}
	p, err := withStderr(null, func() (*flagd.Provider, error) {
		return flagd.NewProvider(flagd.WithInProcessResolver(), flagd.WithOfflineFilePath(f.Name()))
	})
	if err != nil {
		null.Close()
		tb.Fatal(err)
	}
	stop := make(chan struct{})
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for {
			select {
			case <-p.EventChannel():
			case <-stop:
				return
			}
		}
	}()
	tb.Cleanup(func() {
		p.Shutdown()
		close(stop)
		<-drained
		null.Close()
		os.Remove(f.Name())
	})
	if err := p.Init(openfeature.EvaluationContext{}); err != nil {
		tb.Fatal(err)
	}
	return p
}

// withStderr calls newProvider with os.Stderr set to w.
func withStderr(w *os.File, newProvider func() (*flagd.Provider, error)) (*flagd.Provider, error) {
	stderr := os.Stderr
	os.Stderr = w
	defer func() { os.Stderr = stderr }()
	return newProvider()
}
