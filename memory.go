package flagsnap

// The source behind WithFlags: a document compiled once by NewProvider.

import (
	"context"
	"crypto/sha256"

	"github.com/flagsnap/flagsnap/evaluator"
	"github.com/flagsnap/flagsnap/source"
)

// fixedFlags is the source of WithFlags: a flag document compiled once by
// NewProvider and put in force by every Init, with nothing to read, wait
// for or compile on the way.
type fixedFlags struct {
	set    *evaluator.FlagSet
	update source.Update // what set was compiled from, for the cache file
}

// compileFixed compiles the document of WithFlags once, so that a
// document that does not load is NewProvider's error.
func (p *Provider) compileFixed(doc []byte) (*fixedFlags, error) {
	set, err := p.compile(doc, nil, nil)
	if err != nil {
		return nil, err
	}
	return &fixedFlags{set: set, update: source.Update{Flags: doc, Origin: source.MemoryOrigin}}, nil
}

// Run hands the compiled flags to the provider's sink, the only sink it is
// ever given, and holds them until ctx is done. Unlike other sources it
// can run again, for an Init after Shutdown.
func (f *fixedFlags) Run(ctx context.Context, s source.Sink) error {
	providerSink := s.(*sink)
	providerSink.p.stats.delivered()
	_ = providerSink.acceptAndCache(f.set, f.update, sha256.Sum256(f.update.Flags))
	<-ctx.Done()
	return nil
}
