package flagsnap

// The flag set in force: how a flag document is compiled as the provider
// serves it, and the snapshot evaluations read.

import (
	"maps"
	"slices"
	"sync/atomic"

	"github.com/flagsnap/flagsnap/evaluator"
	"github.com/flagsnap/flagsnap/internal/usage"
)

// compile loads a flag document as the provider serves it: with the
// provider's compile options and the enrichment of its sync context. Flags
// from the source and from the cache both come through here, so that a
// cached flag set evaluates exactly as the live one did. prev, the main
// source's flags in force (nil for none), lends the new set every flag
// written as before: an update that changes one flag of many compiles
// that one.
func (p *Provider) compile(flags []byte, syncCtx map[string]any, prev *evaluator.FlagSet) (*evaluator.FlagSet, error) {
	p.compilations.Add(1)
	opts := append(slices.Clip(p.compileOptions), evaluator.WithPrevious(prev))
	set, err := evaluator.Load(flags, opts...)
	if err != nil {
		return nil, err
	}
	if enrich := p.enrichment(syncCtx); enrich != nil {
		set = set.WithEnrichment(enrich)
	}
	return set, nil
}

// enrichment is the data every evaluation of a flag set sees: the user's
// enricher's values with the sync context over them.
func (p *Provider) enrichment(syncCtx map[string]any) map[string]any {
	var out map[string]any
	if p.cfg.enricher != nil {
		out = maps.Clone(p.cfg.enricher(syncCtx))
	}
	if len(syncCtx) > 0 {
		if out == nil {
			out = make(map[string]any, len(syncCtx))
		}
		maps.Copy(out, syncCtx)
	}
	return out
}

// unionKeys is every key of a and b, sorted: the flags that may evaluate
// differently when the enrichment changes.
func unionKeys(a, b *evaluator.FlagSet) []string {
	keys := slices.Concat(a.Keys(), b.Keys())
	slices.Sort(keys)
	return slices.Compact(keys)
}

// inForce is the flag set evaluations answer from, with the table they are
// counted in (nil with WithoutUsage): one pointer, so that an evaluation
// never counts in another set's table. Evaluations never read the rest.
type inForce struct {
	set    *evaluator.FlagSet
	counts *usage.Table
	// doc is the document the set was compiled from, as it came, for
	// DebugHandler's /flags (the compiled set keeps no rule as written):
	// kept compressed, which costs a tenth of the document or so, once a
	// goroutine of its own has compressed it, and as it came until then.
	// A change of the overrides alone shares the main source's keeper.
	doc *docKeeper
	// overrideDocs are the documents of the set's layers over the main
	// source's, lowest first, as they came (Layers()[1:]); small, kept
	// whole.
	overrideDocs [][]byte
	// version counts the flag sets put in force since the provider was
	// built: it names the snapshot in OFREP's event stream.
	version uint64
	// sorted is the flags' indexes in key order, made by the first bulk
	// evaluation of the set; ofrep is their encoded form, made by the
	// first OFREP request (ofrep_json.go).
	sorted atomic.Pointer[[]int32]
	ofrep  atomic.Pointer[ofrepView]
}

// flags is the flag set in force, nil before the first.
func (p *Provider) flags() *evaluator.FlagSet {
	if in := p.snap.Load(); in != nil {
		return in.set
	}
	return nil
}

// putInForce makes set, compiled from the document k keeps and those of
// its overrides, the flag set in force, counted from now on, and returns
// the one it replaces. It is called under the run's lock.
func (p *Provider) putInForce(set *evaluator.FlagSet, k *docKeeper, overrideDocs [][]byte) (old *evaluator.FlagSet) {
	in := &inForce{set: set, counts: p.countUsage(set), doc: k, overrideDocs: overrideDocs}
	prev := p.snap.Load()
	if prev != nil && prev.set == set {
		in.version = prev.version
	} else {
		in.version = p.versions.Add(1)
	}
	p.snap.Store(in)
	if prev == nil {
		p.changed.notify()
		return nil
	}
	if prev.set != set {
		p.changed.notify()
	}
	return prev.set
}
