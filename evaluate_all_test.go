package flagsnap

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap/source"
)

// typedAnswer is what the typed method of the flag's own type answers, in
// the terms of a FlagEvaluation; def marks the caller's default.
func typedAnswer(p *Provider, key string, value any, ctx map[string]any) FlagEvaluation {
	bg := context.Background()
	const def = "caller's default"
	var d openfeature.ProviderResolutionDetail
	var v any
	switch value.(type) {
	case bool:
		r := p.BooleanEvaluation(bg, key, false, ctx)
		v, d = r.Value, r.ProviderResolutionDetail
	case string:
		r := p.StringEvaluation(bg, key, def, ctx)
		v, d = r.Value, r.ProviderResolutionDetail
	case int64:
		r := p.IntEvaluation(bg, key, -1, ctx)
		v, d = r.Value, r.ProviderResolutionDetail
	case float64:
		r := p.FloatEvaluation(bg, key, -1, ctx)
		v, d = r.Value, r.ProviderResolutionDetail
	default:
		r := p.ObjectEvaluation(bg, key, def, ctx)
		v, d = r.Value, r.ProviderResolutionDetail
	}
	rd := d.ResolutionDetail()
	f := FlagEvaluation{Key: key, Value: v, Variant: d.Variant, Reason: d.Reason, ErrorCode: rd.ErrorCode, ErrorMessage: rd.ErrorMessage, FlagMetadata: d.FlagMetadata}
	if f.Variant == "" || f.ErrorCode != "" {
		f.Value = nil // the typed method's value is the caller's default
	}
	return f
}

func TestEvaluateAllAnswersAsTheTypedMethods(t *testing.T) {
	_, p, _ := ofrepServer(t, ofrepFlags)
	contexts := []map[string]any{
		nil,
		{"targetingKey": "u1", "email": "ann@example.com"},
		{"targetingKey": "u2", "email": "bob@else.org"},
		{"email": 42},
	}
	for _, ctx := range contexts {
		all, err := p.EvaluateAll(context.Background(), ctx)
		if err != nil {
			t.Fatal(err)
		}
		keys := make([]string, len(all.Flags))
		for i, f := range all.Flags {
			keys[i] = f.Key
			// The typed method of a flag that served no value is asked
			// as a boolean: its answer is the same whatever the type.
			value := f.Value
			if value == nil {
				value = false
			}
			want := typedAnswer(p, f.Key, value, ctx)
			f.index, f.variant = 0, 0
			if !reflect.DeepEqual(f, want) {
				t.Errorf("context %v, %s:\n got %+v\nwant %+v", ctx, f.Key, f, want)
			}
		}
		if !slices.IsSorted(keys) || len(keys) != 9 {
			t.Errorf("keys %v, want the 9 flags in order", keys)
		}
		if !reflect.DeepEqual(all.Metadata, map[string]any{"flagSetId": "shop", "version": "7"}) {
			t.Errorf("metadata %v", all.Metadata)
		}
	}
}

func TestEvaluateAllBeforeFlags(t *testing.T) {
	p, err := NewProvider(WithoutEnv(), WithSource(newFakeSource()))
	if err != nil {
		t.Fatal(err)
	}
	if all, err := p.EvaluateAll(context.Background(), nil); all != nil || err != ErrNotReady {
		t.Errorf("%v, %v", all, err)
	}
}

// An evaluation of every flag answers from one flag set: while sets in
// which every flag has the same variant replace each other, no answer
// mixes two.
func TestEvaluateAllReadsOneSnapshot(t *testing.T) {
	doc := func(v string) string {
		var b strings.Builder
		b.WriteString(`{"flags": {`)
		for i := range 50 {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`"f` + string(rune('a'+i%26)) + string(rune('a'+i/26)) + `": {"state": "ENABLED", "variants": {"a": "a", "b": "b"}, "defaultVariant": "` + v + `"}`)
		}
		return b.String() + `}}`
	}
	_, p, m := ofrepServer(t, doc("a"))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 200 {
			if err := m.Set([]byte(doc([]string{"a", "b"}[i%2]))); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	var all AllFlags
	for range 2000 {
		if err := p.EvaluateAllInto(&all, context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		for _, f := range all.Flags {
			if f.Variant != all.Flags[0].Variant {
				t.Fatalf("%s served %s, %s served %s: two flag sets in one answer", all.Flags[0].Key, all.Flags[0].Variant, f.Key, f.Variant)
			}
		}
	}
	wg.Wait()
}

// Usage tells a flag read only by bulk evaluations from one read by code
// and from one not read at all.
func TestEvaluateAllCountsApart(t *testing.T) {
	_, p, _ := ofrepServer(t, ofrepFlags)
	p.BooleanEvaluation(context.Background(), "beta", false, nil)
	for range 3 {
		if _, err := p.EvaluateAll(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	u := p.Usage()
	if b := u.Flags["beta"]; b.Evaluations != 1 || b.Bulk != 3 {
		t.Errorf("beta, read by code and in bulk: %+v", b)
	}
	if c := u.Flags["color"]; c.Evaluations != 0 || c.Bulk != 3 || c.LastEvaluated.IsZero() {
		t.Errorf("color, read in bulk only: %+v", c)
	}
	p.ResetUsage()
	if c := p.Usage().Flags["color"]; c.Evaluations != 0 || c.Bulk != 0 {
		t.Errorf("color after a reset: %+v", c)
	}
}

// newMemoryProvider is a provider initialised with doc, for benchmarks.
func newMemoryProvider(b *testing.B, doc string) *Provider {
	p, err := NewProvider(WithoutEnv(), WithSource(source.NewMemory([]byte(doc))))
	if err != nil {
		b.Fatal(err)
	}
	if err := p.Init(openfeature.EvaluationContext{}); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(p.Shutdown)
	return p
}

// Every flag of a set for one context, into a result kept from call to
// call: nothing is allocated, whatever the number of flags.
func BenchmarkEvaluateAllNoAlloc(b *testing.B) {
	m := newMemoryProvider(b, flagsV2)
	ctx := map[string]any{"targetingKey": "u1", "email": "ann@example.com"}
	var all AllFlags
	_ = m.EvaluateAllInto(&all, context.Background(), ctx)
	b.ReportAllocs()
	for b.Loop() {
		_ = m.EvaluateAllInto(&all, context.Background(), ctx)
	}
}
