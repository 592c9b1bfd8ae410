package ld

import (
	"context"
	"encoding/json"
	"github.com/flagsnap/flagsnap/bench/flaggen"
	"maps"
	"slices"
	"testing"

	"github.com/launchdarkly/go-sdk-common/v3/ldcontext"
	"github.com/launchdarkly/go-sdk-common/v3/ldreason"
	"github.com/launchdarkly/go-sdk-common/v3/ldvalue"
	ldeval "github.com/launchdarkly/go-server-sdk-evaluation/v3"
	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap"
)

// What a row serves when no variant is: the caller's default of a
// disabled flag, and the error of a missing one.
const (
	servedDefault  = "(caller's default)"
	servedNotFound = "(flag not found)"
)

// evalRow is a row of bench's E and O matrix, with the variants it is
// meant to serve: one, or a fractional flag's buckets.
type evalRow struct {
	id   string
	flag string
	ctx  openfeature.FlattenedContext
	str  bool // a string flag; the others are boolean
	want []string
}

var evalVsLDRows = []evalRow{
	{"E1_static_empty", "static", flaggen.EmptyContext, false, []string{"on"}},
	{"E2_static_small", "static", flaggen.SmallContext, false, []string{"on"}},
	{"E3_static_large", "static", flaggen.LargeContext, false, []string{"on"}},
	{"E4_simple_small", "simple", flaggen.SmallContext, false, []string{"on"}},
	{"E5_simple_large", "simple", flaggen.LargeContext, false, []string{"on"}},
	{"E6_complex_small", "complex", flaggen.SmallContext, true, []string{"standard"}},
	{"E7_complex_large", "complex", flaggen.LargeContext, true, []string{"standard"}},
	{"E8_match", "role", flaggen.SmallContext, true, []string{"admin"}},
	{"E9_no_match", "role", flaggen.NoMatchContext, true, []string{"user"}},
	{"E10_disabled", "disabled", flaggen.EmptyContext, false, []string{servedDefault}},
	{"E11_missing", "missing", flaggen.EmptyContext, false, []string{servedNotFound}},
	{"O1_fractional2", "frac2", flaggen.FractionalContext, true, twoBuckets},
	{"O2_fractional8", "frac8", flaggen.FractionalContext, true, eightBucket},
	{"O1s_fractional2_string", "frac2s", flaggen.FractionalContext, true, twoBuckets},
	{"O2s_fractional8_string", "frac8s", flaggen.FractionalContext, true, eightBucket},
	{"O3_semver_eq", "semverEq", flaggen.SemverEqContext, false, []string{"on"}},
	{"O4_semver_range", "semverRange", flaggen.SemverRangeContext, false, []string{"on"}},
	{"O5_starts_with", "startsWith", flaggen.StartsWithContext, false, []string{"on"}},
	{"O6_ends_with", "endsWith", flaggen.EndsWithContext, false, []string{"on"}},
}

func (r evalRow) fractional() bool { return len(r.want) > 1 }

func (r evalRow) check(tb testing.TB, engine, served string) {
	tb.Helper()
	if !slices.Contains(r.want, served) {
		tb.Fatalf("%s, %s: serves %q, want one of %q", engine, r.id, served, r.want)
	}
}

// ldDefault is the row's default in LaunchDarkly's values, the one
// flagsnap's calls pass.
func (r evalRow) ldDefault() ldvalue.Value {
	if r.str {
		return ldvalue.String("")
	}
	return ldvalue.Bool(false)
}

func newEvalProvider(tb testing.TB) *flagsnap.Provider {
	tb.Helper()
	p, err := flagsnap.NewProvider(flagsnap.WithFlags([]byte(evalFlags)))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(p.Shutdown)
	if err := p.Init(openfeature.EvaluationContext{}); err != nil {
		tb.Fatal(err)
	}
	return p
}

// typedProvider is what the flagsnap and flagd rows call: a provider's
// typed methods, with the row's prebuilt context.
type typedProvider interface {
	BooleanEvaluation(ctx context.Context, flag string, def bool, flatCtx openfeature.FlattenedContext) openfeature.BoolResolutionDetail
	StringEvaluation(ctx context.Context, flag string, def string, flatCtx openfeature.FlattenedContext) openfeature.StringResolutionDetail
}

// providerServed is the variant the provider named engine serves for the
// row, as its typed method answers it.
func providerServed(tb testing.TB, engine string, p typedProvider, r evalRow) string {
	tb.Helper()
	var d openfeature.ProviderResolutionDetail
	if r.str {
		d = p.StringEvaluation(context.Background(), r.flag, "", r.ctx).ProviderResolutionDetail
	} else {
		d = p.BooleanEvaluation(context.Background(), r.flag, false, r.ctx).ProviderResolutionDetail
	}
	return servedOf(tb, engine, r, d)
}

// servedOf reads a provider's answer for the row: its variant, the
// caller's default of a disabled flag, or the error of a missing one.
func servedOf(tb testing.TB, engine string, r evalRow, d openfeature.ProviderResolutionDetail) string {
	tb.Helper()
	rd := d.ResolutionDetail()
	switch {
	case rd.ErrorCode == openfeature.FlagNotFoundCode:
		return servedNotFound
	case rd.ErrorCode != "":
		tb.Fatalf("%s, %s: %s %s", engine, r.id, rd.ErrorCode, rd.ErrorMessage)
	case rd.Variant == "" && rd.Reason == openfeature.DisabledReason:
		return servedDefault
	}
	return rd.Variant
}

// ldSide is LaunchDarkly's evaluator on a store of evalFlags' flags, the
// same number as flagsnap holds, so that a lookup searches alike.
type ldSide struct {
	eval  ldeval.Evaluator
	store dataProvider
	names map[string][]string
}

func newLDSide() *ldSide {
	ld := &ldSide{store: dataProvider{}, names: map[string][]string{}}
	for key, f := range ldEvalFlags() {
		ld.store[key] = Item{Version: f.flag.Version, Item: &f.flag}
		ld.names[key] = f.names
	}
	ld.eval = ldeval.NewEvaluator(ld.store)
	return ld
}

// ldResolve is what LaunchDarkly's SDK does for a key: the flag from its
// store and its evaluation or, for an unknown key, the FLAG_NOT_FOUND
// result with the caller's default. It is kept a call, as flagsnap's
// method is, and so that the result of E11 is built, not optimised away.
//
//go:noinline
func ldResolve(e ldeval.Evaluator, store ldeval.DataProvider, key string, c ldcontext.Context, def ldvalue.Value) ldreason.EvaluationDetail {
	f := store.GetFeatureFlag(key)
	if f == nil {
		return ldreason.NewEvaluationDetailForError(ldreason.EvalErrorFlagNotFound, def)
	}
	return e.Evaluate(f, c, nil).Detail
}

// served is the variant LaunchDarkly serves for the row, by flagd's name.
func (ld *ldSide) served(tb testing.TB, r evalRow, c ldcontext.Context) string {
	tb.Helper()
	d := ldResolve(ld.eval, ld.store, r.flag, c, r.ldDefault())
	if i, ok := d.VariationIndex.Get(); ok && i >= 0 && i < len(ld.names[r.flag]) {
		return ld.names[r.flag][i]
	}
	switch reason := d.Reason; {
	case reason.GetKind() == ldreason.EvalReasonError && reason.GetErrorKind() == ldreason.EvalErrorFlagNotFound:
		return servedNotFound
	case reason.GetKind() == ldreason.EvalReasonOff && !d.VariationIndex.IsDefined():
		return servedDefault
	}
	tb.Fatalf("LaunchDarkly, %s: variation %v, reason %v", r.id, d.VariationIndex, d.Reason)
	return ""
}

// ldContext is c as a LaunchDarkly context, built once per row as
// flagsnap's is. LaunchDarkly requires a key, which is the targeting key,
// so a context without one gets a placeholder.
func ldContext(tb testing.TB, c openfeature.FlattenedContext) ldcontext.Context {
	tb.Helper()
	key, _ := c["targetingKey"].(string)
	if key == "" {
		key = "no-targeting-key"
	}
	b := ldcontext.NewBuilder(key)
	for k, v := range c {
		switch v := v.(type) {
		case string:
			if k != "targetingKey" {
				b.SetString(k, v)
			}
		case int:
			b.SetInt(k, v)
		case bool:
			b.SetBool(k, v)
		default:
			tb.Fatalf("context attribute %s: %T", k, v)
		}
	}
	ctx := b.Build()
	if err := ctx.Err(); err != nil {
		tb.Fatal(err)
	}
	return ctx
}

// BenchmarkEvalVsLD is bench's E and O rows in three engines: flagsnap,
// at the provider's typed methods as bench runs them; flagd's own Go
// provider in its in-process mode on the same flags read from a file, at
// the same methods with the same contexts; and LaunchDarkly's evaluator
// on the same flags and contexts. The name is the one it had when it
// compared two. The three run row by row, one after the other, so that
// the machine's state is alike for all.
func BenchmarkEvalVsLD(b *testing.B) {
	p := newEvalProvider(b)
	fd := newFlagdProvider(b)
	ld := newLDSide()
	for _, r := range evalVsLDRows {
		c := ldContext(b, r.ctx)
		b.Run("flagsnap/"+r.id, func(b *testing.B) { benchProvider(b, "flagsnap", p, r) })
		b.Run("flagd/"+r.id, func(b *testing.B) { benchProvider(b, "flagd", fd, r) })
		b.Run("launchdarkly/"+r.id, func(b *testing.B) { benchLD(b, ld, r, c) })
	}
}

// benchProvider times the typed methods of the provider named engine,
// called directly with the row's prebuilt context: flagsnap's and flagd's
// rows are timed alike.
func benchProvider(b *testing.B, engine string, p typedProvider, r evalRow) {
	r.check(b, engine, providerServed(b, engine, p, r))
	ctx := context.Background()
	b.ReportAllocs()
	if r.str {
		for b.Loop() {
			p.StringEvaluation(ctx, r.flag, "", r.ctx)
		}
		return
	}
	for b.Loop() {
		p.BooleanEvaluation(ctx, r.flag, false, r.ctx)
	}
}

// benchLD times Evaluate on the flag found beforehand, which is the
// evaluation alone; for the missing flag, which has nothing to evaluate,
// it times the lookup that fails and the error result.
func benchLD(b *testing.B, ld *ldSide, r evalRow, c ldcontext.Context) {
	r.check(b, "LaunchDarkly", ld.served(b, r, c))
	f := ld.store.GetFeatureFlag(r.flag)
	b.ReportAllocs()
	if f == nil {
		def := r.ldDefault()
		for b.Loop() {
			ldResolve(ld.eval, ld.store, r.flag, c, def)
		}
		return
	}
	for b.Loop() {
		ld.eval.Evaluate(f, c, nil)
	}
}

// TestEvalVsLDSameVariants wants flagsnap, flagd and LaunchDarkly to
// serve every row's intended variant, the same one but in fractional
// rows, where LaunchDarkly hashes the targeting key its own way and
// flagd's fractional may differ from flagsnap's: there each need only
// serve one of the row's variants.
func TestEvalVsLDSameVariants(t *testing.T) {
	p := newEvalProvider(t)
	fd := newFlagdProvider(t)
	ld := newLDSide()
	for _, r := range evalVsLDRows {
		t.Run(r.id, func(t *testing.T) {
			fs, d, l := providerServed(t, "flagsnap", p, r), providerServed(t, "flagd", fd, r), ld.served(t, r, ldContext(t, r.ctx))
			r.check(t, "flagsnap", fs)
			r.check(t, "flagd", d)
			r.check(t, "LaunchDarkly", l)
			if !r.fractional() && (fs != d || fs != l) {
				t.Errorf("flagsnap serves %q, flagd %q, LaunchDarkly %q", fs, d, l)
			}
		})
	}
}

// TestLDHoldsTheMatrixFlags keeps LaunchDarkly's store to the keys of
// the flags the rows stand for.
func TestLDHoldsTheMatrixFlags(t *testing.T) {
	var doc struct{ Flags map[string]json.RawMessage }
	if err := json.Unmarshal([]byte(evalFlags), &doc); err != nil {
		t.Fatal(err)
	}
	want := slices.Sorted(maps.Keys(doc.Flags))
	if got := slices.Sorted(maps.Keys(newLDSide().store)); !slices.Equal(got, want) {
		t.Errorf("LaunchDarkly's flags %q, flagsnap's %q", got, want)
	}
}
