package bench

import (
	"context"
	"maps"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap"
	"github.com/flagsnap/flagsnap/fractional"
	"github.com/flagsnap/flagsnap/internal/leaktest"
	"github.com/flagsnap/flagsnap/source"
)

func TestMain(m *testing.M) {
	os.Exit(leaktest.Run(m))
}

// pushSource is a source whose flag sets the benchmark pushes itself:
// Push returns once the provider has compiled and swapped in the set,
// which is exactly the work an update costs.
type pushSource struct {
	sink  chan source.Sink
	first []byte
}

func newPushSource(first []byte) *pushSource {
	return &pushSource{sink: make(chan source.Sink, 1), first: first}
}

func (s *pushSource) Run(ctx context.Context, sink source.Sink) error {
	sink.Update(source.Update{Flags: s.first, Origin: "bench"})
	s.sink <- sink
	<-ctx.Done()
	return nil
}

// provider starts a provider on a push source holding doc, with opts
// besides, and returns it with the sink that updates it.
func provider(b testing.TB, doc []byte, v fractional.Version, opts ...flagsnap.Option) (*flagsnap.Provider, source.Sink) {
	b.Helper()
	src := newPushSource(doc)
	// The first load of the largest sets takes longer than the default
	// deadline of 500 ms; what is measured starts after it.
	opts = append([]flagsnap.Option{flagsnap.WithSource(src), flagsnap.WithFractionalVersion(v), flagsnap.WithDeadline(time.Minute)}, opts...)
	p, err := flagsnap.NewProvider(opts...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(p.Shutdown)
	if err := p.Init(openfeature.EvaluationContext{}); err != nil {
		b.Fatal(err)
	}
	return p, <-src.sink
}

// floor is the least a provider can do: one atomic load, one map lookup
// and an answer computed in advance. It is the yardstick of the rows.
type floor struct {
	answers atomic.Pointer[map[string]openfeature.BoolResolutionDetail]
	strs    atomic.Pointer[map[string]openfeature.StringResolutionDetail]
}

func newFloor() *floor {
	f := &floor{}
	bools := map[string]openfeature.BoolResolutionDetail{}
	strs := map[string]openfeature.StringResolutionDetail{}
	for _, key := range []string{"static", "simple", "disabled", "semverEq", "semverRange", "startsWith", "endsWith"} {
		bools[key] = openfeature.BoolResolutionDetail{Value: true, ProviderResolutionDetail: openfeature.ProviderResolutionDetail{Variant: "on", Reason: openfeature.StaticReason}}
	}
	for _, key := range []string{"complex", "role", "frac2", "frac8", "frac2s", "frac8s"} {
		strs[key] = openfeature.StringResolutionDetail{Value: "x", ProviderResolutionDetail: openfeature.ProviderResolutionDetail{Variant: "x", Reason: openfeature.StaticReason}}
	}
	f.answers.Store(&bools)
	f.strs.Store(&strs)
	return f
}

var floorMissing = openfeature.ProviderResolutionDetail{
	ResolutionError: openfeature.NewFlagNotFoundResolutionError("flag not found"),
	Reason:          openfeature.ErrorReason,
}

func (f *floor) Metadata() openfeature.Metadata { return openfeature.Metadata{Name: "floor"} }
func (f *floor) Hooks() []openfeature.Hook      { return nil }
func (f *floor) BooleanEvaluation(_ context.Context, flag string, def bool, _ openfeature.FlattenedContext) openfeature.BoolResolutionDetail {
	if r, ok := (*f.answers.Load())[flag]; ok {
		return r
	}
	return openfeature.BoolResolutionDetail{Value: def, ProviderResolutionDetail: floorMissing}
}
func (f *floor) StringEvaluation(_ context.Context, flag string, def string, _ openfeature.FlattenedContext) openfeature.StringResolutionDetail {
	if r, ok := (*f.strs.Load())[flag]; ok {
		return r
	}
	return openfeature.StringResolutionDetail{Value: def, ProviderResolutionDetail: floorMissing}
}
func (f *floor) FloatEvaluation(_ context.Context, _ string, def float64, _ openfeature.FlattenedContext) openfeature.FloatResolutionDetail {
	return openfeature.FloatResolutionDetail{Value: def, ProviderResolutionDetail: floorMissing}
}
func (f *floor) IntEvaluation(_ context.Context, _ string, def int64, _ openfeature.FlattenedContext) openfeature.IntResolutionDetail {
	return openfeature.IntResolutionDetail{Value: def, ProviderResolutionDetail: floorMissing}
}
func (f *floor) ObjectEvaluation(_ context.Context, _ string, def any, _ openfeature.FlattenedContext) openfeature.InterfaceResolutionDetail {
	return openfeature.InterfaceResolutionDetail{Value: def, ProviderResolutionDetail: floorMissing}
}

// resolver is what the rows call: a provider's typed methods.
type resolver interface {
	BooleanEvaluation(context.Context, string, bool, openfeature.FlattenedContext) openfeature.BoolResolutionDetail
	StringEvaluation(context.Context, string, string, openfeature.FlattenedContext) openfeature.StringResolutionDetail
}

// toEvalCtx turns a flattened context into the client's form.
func toEvalCtx(c openfeature.FlattenedContext) openfeature.EvaluationContext {
	attrs := maps.Clone(map[string]any(c))
	tk, _ := attrs["targetingKey"].(string)
	delete(attrs, "targetingKey")
	return openfeature.NewEvaluationContext(tk, attrs)
}
