package otelflagsnap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	otelprometheus "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/goleak"

	"github.com/flagsnap/flagsnap"
	"github.com/flagsnap/flagsnap/source"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// names are the instruments Register makes.
var names = []string{
	"feature_flag.evaluations", "feature_flag.missing_evaluations", "feature_flag.bulk_evaluations",
	"flagsnap.source.state", "flagsnap.source.flags", "flagsnap.source.applied_time",
	"flagsnap.source.flag_sets", "flagsnap.source.reconnects",
}

// units are the units of the instruments, by name.
var units = map[string]string{
	"feature_flag.evaluations": "{evaluation}", "feature_flag.missing_evaluations": "{evaluation}", "feature_flag.bulk_evaluations": "{evaluation}",
	"flagsnap.source.state": "{state}", "flagsnap.source.flags": "{flag}", "flagsnap.source.applied_time": "s",
	"flagsnap.source.flag_sets": "{flag_set}", "flagsnap.source.reconnects": "{reconnect}",
}

const testFlags = `{"flags": {
  "color":  {"state": "ENABLED", "variants": {"red": "red", "blue": "blue"}, "defaultVariant": "red",
             "targeting": {"if": [{"==": [{"var": "tier"}, "gold"]}, "blue"]}},
  "off":    {"state": "DISABLED", "variants": {"on": true}, "defaultVariant": "on"},
  "broken": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "nope"},
  "idle":   {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on"}
}}`

// start returns a provider serving doc from a memory source, and the
// source.
func start(t *testing.T, doc string, opts ...flagsnap.Option) (*flagsnap.Provider, *source.Memory) {
	t.Helper()
	m := source.NewMemory([]byte(doc))
	return startWith(t, append([]flagsnap.Option{flagsnap.WithSource(m)}, opts...)...), m
}

// startWith returns a running provider made with opts, which choose its
// source.
func startWith(t *testing.T, opts ...flagsnap.Option) *flagsnap.Provider {
	t.Helper()
	opts = append([]flagsnap.Option{flagsnap.WithLogger(slog.New(slog.DiscardHandler)),
		flagsnap.WithDeadline(5 * time.Second)}, opts...)
	p, err := flagsnap.NewProvider(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Shutdown)
	if err := p.Init(openfeature.EvaluationContext{}); err != nil {
		t.Fatal(err)
	}
	return p
}

// register registers p's metrics with a meter provider whose manual
// reader it returns.
func register(t *testing.T, p *flagsnap.Provider, opts ...Option) (*sdkmetric.ManualReader, func() error) {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	meters := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = meters.Shutdown(context.Background()) })
	unregister, err := Register(p, append([]Option{WithMeterProvider(meters)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unregister() })
	return reader, unregister
}

// series are the points of one metric: the value by the point's
// attributes other than those every series carries, written
// "name=value,..." in order ("" for none).
type series map[string]float64

// collect collects reader's metrics by name, checking the unit of each and
// that every point carries feature_flag.provider.name = "flagsnap" and
// flagsnap.provider.name = "memory", the name of a provider of a memory
// source.
func collect(t *testing.T, reader *sdkmetric.ManualReader) map[string]series {
	t.Helper()
	byName := collectByName(t, reader)
	for name, metrics := range byName {
		if name != source.MemoryOrigin || len(byName) > 1 {
			t.Errorf("series of the providers %v, want %q alone", slices.Sorted(maps.Keys(byName)), source.MemoryOrigin)
		}
		return metrics
	}
	return map[string]series{}
}

// collectByName collects reader's metrics by provider name (the
// flagsnap.provider.name of their points) and by metric name, checking the
// unit of each and that every point carries feature_flag.provider.name =
// "flagsnap".
func collectByName(t *testing.T, reader *sdkmetric.ManualReader) map[string]map[string]series {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]series{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != scopeName {
			t.Errorf("scope %q", sm.Scope.Name)
		}
		for _, m := range sm.Metrics {
			if m.Unit != units[m.Name] {
				t.Errorf("%s: unit %q, want %q", m.Name, m.Unit, units[m.Name])
			}
			for name, s := range points(t, m) {
				if out[name] == nil {
					out[name] = map[string]series{}
				}
				out[name][m.Name] = s
			}
		}
	}
	return out
}

// points are m's series by provider name.
func points(t *testing.T, m metricdata.Metrics) map[string]series {
	byName := map[string]series{}
	add := func(attrs attribute.Set, v float64) {
		if p, ok := attrs.Value(providerAttr); !ok || p.AsString() != "flagsnap" {
			t.Errorf("%s %v: no %s=flagsnap", m.Name, attrs.ToSlice(), providerAttr)
		}
		name, ok := attrs.Value(nameAttr)
		if !ok || name.Type() != attribute.STRING {
			t.Errorf("%s %v: no %s", m.Name, attrs.ToSlice(), nameAttr)
		}
		var kv []string
		for _, a := range attrs.ToSlice() {
			if a.Key != providerAttr && a.Key != nameAttr {
				kv = append(kv, string(a.Key)+"="+a.Value.String())
			}
		}
		key := strings.Join(kv, ",")
		s := byName[name.AsString()]
		if s == nil {
			s = series{}
			byName[name.AsString()] = s
		}
		if _, dup := s[key]; dup {
			t.Errorf("%s: two points {%s} of %q", m.Name, key, name.AsString())
		}
		s[key] = v
	}
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		if !d.IsMonotonic || d.Temporality != metricdata.CumulativeTemporality {
			t.Errorf("%s: a sum, monotonic %v, temporality %v", m.Name, d.IsMonotonic, d.Temporality)
		}
		for _, p := range d.DataPoints {
			add(p.Attributes, float64(p.Value))
		}
	case metricdata.Gauge[int64]:
		for _, p := range d.DataPoints {
			add(p.Attributes, float64(p.Value))
		}
	case metricdata.Gauge[float64]:
		for _, p := range d.DataPoints {
			add(p.Attributes, p.Value)
		}
	default:
		t.Errorf("%s: %T", m.Name, m.Data)
	}
	return byName
}

// fromUsage is what the evaluation instruments must say of u, every flag
// and missing key by its own key.
func fromUsage(u flagsnap.Usage) map[string]series {
	evals, missing, bulk := series{}, series{}, series{}
	for k, f := range u.Flags {
		if f.Bulk > 0 {
			bulk["feature_flag.key="+k] = float64(f.Bulk)
		}
		rest := f.Evaluations
		for v, n := range f.Variants {
			evals["feature_flag.key="+k+",feature_flag.result.variant="+v] = float64(n)
			rest -= n
		}
		for code, n := range f.ErrorCodes {
			evals["error.type="+strings.ToLower(code)+",feature_flag.key="+k] = float64(n)
			rest -= n
		}
		if rest > 0 || f.Evaluations == 0 {
			evals["feature_flag.key="+k] = float64(rest)
		}
	}
	for k, n := range u.Missing {
		missing["feature_flag.key="+k] = float64(n)
	}
	return map[string]series{"feature_flag.evaluations": evals, "feature_flag.missing_evaluations": missing,
		"feature_flag.bulk_evaluations": bulk}
}

// fromStatus is what the source instruments must say of st.
func fromStatus(st flagsnap.SourceStatus) map[string]series {
	state := series{}
	for _, s := range []string{"connecting", "serving", "stale", "error", "fatal", "stopped"} {
		state["state="+s] = 0
	}
	state["state="+string(st.State)] = 1
	out := map[string]series{
		"flagsnap.source.state": state,
		"flagsnap.source.flags": {"": float64(st.Flags)},
		"flagsnap.source.flag_sets": {"result=received": float64(st.Received), "result=applied": float64(st.Applied),
			"result=rejected": float64(st.Rejected), "result=unchanged": float64(st.Unchanged)},
		"flagsnap.source.reconnects": {"": float64(st.Reconnects)},
	}
	if !st.AppliedAt.IsZero() {
		out["flagsnap.source.applied_time"] = series{"": float64(st.AppliedAt.UnixNano()) / 1e9}
	}
	return out
}

// equal reports how got differs from want, applied times within a
// microsecond.
func equal(got, want map[string]series) string {
	var diffs []string
	for _, name := range union(got, want) {
		g, w := got[name], want[name]
		for _, k := range union(g, w) {
			gv, gok := g[k]
			wv, wok := w[k]
			if gok != wok || math.Abs(gv-wv) > 1e-6 {
				diffs = append(diffs, fmt.Sprintf("%s{%s}: got %v (%v), want %v (%v)", name, k, gv, gok, wv, wok))
			}
		}
	}
	return strings.Join(diffs, "\n")
}

// union is the keys of a and b, sorted.
func union[V any](a, b map[string]V) []string {
	keys := slices.AppendSeq(slices.Collect(maps.Keys(a)), maps.Keys(b))
	slices.Sort(keys)
	return slices.Compact(keys)
}

// A known sequence of source events and evaluations is reported as the
// provider's Usage and SourceStatus say, and as counted here.
func TestMetricsMatchUsageAndStatus(t *testing.T) {
	before := time.Now()
	p, m := start(t, testFlags)
	reader, _ := register(t, p)

	// The source is lost and back, then sends a document that is refused.
	m.Lost(errors.New("link down"))
	if err := m.Restore(); err != nil {
		t.Fatal(err)
	}
	if err := m.Set([]byte(`{"flags": 1}`)); err == nil {
		t.Fatal("a document whose flags are a number was accepted")
	}

	ctx := context.Background()
	gold := map[string]any{"tier": "gold"}
	for range 3 {
		p.StringEvaluation(ctx, "color", "", gold)
		p.BooleanEvaluation(ctx, "nope", false, nil)
	}
	for range 2 {
		p.StringEvaluation(ctx, "color", "", nil)
		p.BooleanEvaluation(ctx, "off", false, nil)
	}
	p.BooleanEvaluation(ctx, "color", false, nil) // a type mismatch
	p.BooleanEvaluation(ctx, "broken", false, nil)
	p.StringEvaluation(ctx, "gone", "", nil)
	for range 2 { // every flag, once each time
		if _, err := p.EvaluateAll(ctx, gold); err != nil {
			t.Fatal(err)
		}
	}

	got := collect(t, reader)
	st := p.SourceStatus()
	want := map[string]series{
		"feature_flag.evaluations": {
			"feature_flag.key=color,feature_flag.result.variant=blue": 3,
			"feature_flag.key=color,feature_flag.result.variant=red":  2,
			"error.type=type_mismatch,feature_flag.key=color":         1,
			"feature_flag.key=off":                                    2,
			"error.type=parse_error,feature_flag.key=broken":          1,
			"feature_flag.key=idle":                                   0,
		},
		"feature_flag.missing_evaluations": {"feature_flag.key=nope": 3, "feature_flag.key=gone": 1},
		"feature_flag.bulk_evaluations": {"feature_flag.key=color": 2, "feature_flag.key=off": 2,
			"feature_flag.key=broken": 2, "feature_flag.key=idle": 2},
		"flagsnap.source.state": {"state=connecting": 0, "state=serving": 0, "state=stale": 0,
			"state=error": 1, "state=fatal": 0, "state=stopped": 0},
		"flagsnap.source.flags": {"": 4},
		"flagsnap.source.flag_sets": {"result=received": 3, "result=applied": 2,
			"result=rejected": 1, "result=unchanged": 0},
		"flagsnap.source.reconnects":   {"": 1},
		"flagsnap.source.applied_time": {"": float64(st.AppliedAt.UnixNano()) / 1e9},
	}
	if d := equal(got, want); d != "" {
		t.Errorf("collected metrics differ from the sequence's:\n%s", d)
	}
	snapshots := fromUsage(p.Usage())
	maps.Copy(snapshots, fromStatus(st))
	if d := equal(got, snapshots); d != "" {
		t.Errorf("collected metrics differ from Usage and SourceStatus:\n%s", d)
	}
	if at := st.AppliedAt; at.Before(before) || at.After(time.Now()) {
		t.Errorf("applied at %v, not since the test began at %v", at, before)
	}
	// Each flag's series add up to its evaluations.
	for k, f := range p.Usage().Flags {
		var sum float64
		for attrs, v := range got["feature_flag.evaluations"] {
			if slices.Contains(strings.Split(attrs, ","), "feature_flag.key="+k) {
				sum += v
			}
		}
		if sum != float64(f.Evaluations) {
			t.Errorf("%s: series add up to %v, Usage says %d", k, sum, f.Evaluations)
		}
	}
}

// The source's state is one series at 1, the others at 0, through a
// provider's life.
func TestSourceState(t *testing.T) {
	for _, tc := range []struct {
		name string
		act  func(*testing.T, *flagsnap.Provider, *source.Memory)
		want string
	}{
		{"serving", func(*testing.T, *flagsnap.Provider, *source.Memory) {}, "serving"},
		{"stale", func(_ *testing.T, _ *flagsnap.Provider, m *source.Memory) { m.Lost(nil) }, "stale"},
		{"rejected", func(_ *testing.T, _ *flagsnap.Provider, m *source.Memory) { _ = m.Set([]byte("{")) }, "error"},
		{"stopped", func(_ *testing.T, p *flagsnap.Provider, _ *source.Memory) { p.Shutdown() }, "stopped"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, m := start(t, testFlags, flagsnap.WithRetryGracePeriod(time.Hour))
			reader, _ := register(t, p)
			tc.act(t, p, m)
			got := collect(t, reader)["flagsnap.source.state"]
			want := fromStatus(flagsnap.SourceStatus{State: flagsnap.SourceState(tc.want)})["flagsnap.source.state"]
			if !maps.Equal(got, want) {
				t.Errorf("state: got %v, want %v", got, want)
			}
		})
	}
}

// Before any flags, the source is connecting and no applied time is
// reported.
func TestSourceConnecting(t *testing.T) {
	m := source.NewMemory([]byte(testFlags))
	m.Lost(errors.New("not yet"))
	p, err := flagsnap.NewProvider(flagsnap.WithSource(m), flagsnap.WithDeadline(10*time.Millisecond),
		flagsnap.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Shutdown)
	if err := p.Init(openfeature.EvaluationContext{}); err == nil {
		t.Fatal("Init succeeded without flags")
	}
	reader, _ := register(t, p)
	got := collect(t, reader)
	if got["flagsnap.source.state"]["state=connecting"] != 1 {
		t.Errorf("state: %v", got["flagsnap.source.state"])
	}
	if at, ok := got["flagsnap.source.applied_time"]; ok {
		t.Errorf("applied time %v with no flags in force", at)
	}
	if n := got["flagsnap.source.flags"][""]; n != 0 {
		t.Errorf("%v flags with no flags in force", n)
	}
}

// Past the limit, flags and missing keys are summed under _other, and
// the sums add up.
func TestFlagLimit(t *testing.T) {
	const doc = `{"flags": {
	  "f1": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on"},
	  "f2": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on"},
	  "f3": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on"},
	  "f4": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on"},
	  "f5": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on"}}}`
	all := series{
		"feature_flag.key=f1,feature_flag.result.variant=on": 6,
		"feature_flag.key=f2,feature_flag.result.variant=on": 5,
		"feature_flag.key=f3,feature_flag.result.variant=on": 4,
		"feature_flag.key=f4,feature_flag.result.variant=on": 2,
		"error.type=type_mismatch,feature_flag.key=f4":       1,
		"feature_flag.key=f5,feature_flag.result.variant=on": 1,
	}
	allMissing := series{"feature_flag.key=m1": 3, "feature_flag.key=m2": 2, "feature_flag.key=m3": 1}
	for _, tc := range []struct {
		limit         int
		evals, missed series
	}{
		{1, series{
			"feature_flag.key=f1,feature_flag.result.variant=on": 6,
			"feature_flag.key=_other":                            12,
			"error.type=type_mismatch,feature_flag.key=_other":   1,
		}, series{"feature_flag.key=m1": 3, "feature_flag.key=_other": 3}},
		{2, series{
			"feature_flag.key=f1,feature_flag.result.variant=on": 6,
			"feature_flag.key=f2,feature_flag.result.variant=on": 5,
			"feature_flag.key=_other":                            7,
			"error.type=type_mismatch,feature_flag.key=_other":   1,
		}, series{"feature_flag.key=m1": 3, "feature_flag.key=m2": 2, "feature_flag.key=_other": 1}},
		{4, series{
			"feature_flag.key=f1,feature_flag.result.variant=on": 6,
			"feature_flag.key=f2,feature_flag.result.variant=on": 5,
			"feature_flag.key=f3,feature_flag.result.variant=on": 4,
			"feature_flag.key=f4,feature_flag.result.variant=on": 2,
			"error.type=type_mismatch,feature_flag.key=f4":       1,
			"feature_flag.key=_other":                            1,
		}, allMissing},
		{5, all, allMissing},
		{1000, all, allMissing},
	} {
		t.Run(fmt.Sprint("limit ", tc.limit), func(t *testing.T) {
			p, _ := start(t, doc)
			reader, _ := register(t, p, WithFlagLimit(tc.limit))
			ctx := context.Background()
			for i, n := range []int{6, 5, 4, 2, 1} {
				for range n {
					p.BooleanEvaluation(ctx, fmt.Sprint("f", i+1), false, nil)
				}
			}
			p.StringEvaluation(ctx, "f4", "", nil) // a type mismatch
			for i, n := range []int{3, 2, 1} {
				for range n {
					p.BooleanEvaluation(ctx, fmt.Sprint("m", i+1), false, nil)
				}
			}
			// Each flag read once in bulk: the same count, so the first
			// keys in order have series of their own.
			if _, err := p.EvaluateAll(ctx, nil); err != nil {
				t.Fatal(err)
			}
			bulk := series{}
			for i := range 5 {
				if i < tc.limit {
					bulk[fmt.Sprint("feature_flag.key=f", i+1)] = 1
				} else {
					bulk["feature_flag.key=_other"]++
				}
			}
			got := collect(t, reader)
			want := map[string]series{"feature_flag.evaluations": tc.evals, "feature_flag.missing_evaluations": tc.missed,
				"feature_flag.bulk_evaluations": bulk}
			for name := range want {
				if d := equal(map[string]series{name: got[name]}, map[string]series{name: want[name]}); d != "" {
					t.Errorf("%s", d)
				}
			}
			if sum, total := add(got["feature_flag.evaluations"]), add(all); sum != total {
				t.Errorf("evaluations add up to %v, want %v", sum, total)
			}
			if sum, total := add(got["feature_flag.missing_evaluations"]), add(allMissing); sum != total {
				t.Errorf("missing evaluations add up to %v, want %v", sum, total)
			}
		})
	}
}

// Keys counted 0 are left out of both the top keys and the rest unless
// asked for: a flag no bulk evaluation read has no bulk series, not even
// a share of otherKey's, while every flag has an evaluations series.
func TestTopLeavesOutZeros(t *testing.T) {
	m := map[string]uint64{"a": 2, "b": 0, "c": 1, otherKey: 0}
	id := func(n uint64) uint64 { return n }
	if keys, rest := top(m, 1, id, false); !slices.Equal(keys, []string{"a"}) || !slices.Equal(rest, []string{"c"}) {
		t.Errorf("without zeros: top %q, rest %q", keys, rest)
	}
	if keys, rest := top(m, 3, id, false); !slices.Equal(keys, []string{"a", "c"}) || rest != nil {
		t.Errorf("without zeros, limit 3: top %q, rest %q", keys, rest)
	}
	if keys, rest := top(m, 3, id, true); !slices.Equal(keys, []string{"a", "c", "b"}) || !slices.Equal(rest, []string{otherKey}) {
		t.Errorf("with zeros: top %q, rest %q", keys, rest)
	}
}

func add(s series) float64 {
	var sum float64
	for _, v := range s {
		sum += v
	}
	return sum
}

// With usage counting off, the evaluation instruments report nothing; the
// source's still do.
func TestWithoutUsage(t *testing.T) {
	p, _ := start(t, testFlags, flagsnap.WithoutUsage())
	reader, _ := register(t, p)
	p.StringEvaluation(context.Background(), "color", "", nil)
	p.StringEvaluation(context.Background(), "nope", "", nil)
	if _, err := p.EvaluateAll(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	got := collect(t, reader)
	for _, name := range []string{"feature_flag.evaluations", "feature_flag.missing_evaluations", "feature_flag.bulk_evaluations"} {
		if len(got[name]) != 0 {
			t.Errorf("%s: %v, with usage counting off", name, got[name])
		}
	}
	if d := equal(map[string]series{"flagsnap.source.flags": got["flagsnap.source.flags"]},
		map[string]series{"flagsnap.source.flags": {"": 4}}); d != "" {
		t.Error(d)
	}
}

// After unregister, a collection has none of the instruments, and
// unregistering again is no error.
func TestUnregister(t *testing.T) {
	p, _ := start(t, testFlags)
	reader, unregister := register(t, p)
	p.StringEvaluation(context.Background(), "color", "", nil)
	p.StringEvaluation(context.Background(), "nope", "", nil)
	if _, err := p.EvaluateAll(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	got := collect(t, reader)
	if have := slices.Sorted(maps.Keys(got)); !slices.Equal(have, slices.Sorted(slices.Values(names))) {
		t.Errorf("registered: %v, want %v", have, names)
	}
	for range 2 {
		if err := unregister(); err != nil {
			t.Fatal(err)
		}
	}
	if got := collect(t, reader); len(got) != 0 {
		t.Errorf("after unregister: %v", got)
	}
}

// Without WithMeterProvider, the instruments are made with the global
// meter provider.
func TestGlobalMeterProvider(t *testing.T) {
	p, _ := start(t, testFlags)
	reader := sdkmetric.NewManualReader()
	meters := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = meters.Shutdown(context.Background()) })
	previous := otel.GetMeterProvider()
	otel.SetMeterProvider(meters)
	t.Cleanup(func() { otel.SetMeterProvider(previous) })

	unregister, err := Register(p)
	if err != nil {
		t.Fatal(err)
	}
	defer unregister()
	if got := collect(t, reader)["flagsnap.source.flags"]; got[""] != 4 {
		t.Errorf("flagsnap.source.flags from the global meter provider: %v", got)
	}
}

func TestRegisterRefuses(t *testing.T) {
	p, _ := start(t, testFlags)
	nameless, err := flagsnap.NewProvider(flagsnap.WithSource(originless{source.NewMemory([]byte(testFlags))}))
	if err != nil {
		t.Fatal(err)
	}
	if origin := nameless.SourceStatus().Source; origin != "" {
		t.Fatalf("a source whose Origin is empty makes a provider of origin %q", origin)
	}
	for _, tc := range []struct {
		name string
		p    *flagsnap.Provider
		opts []Option
		want string
	}{
		{"nil provider", nil, nil, "nil provider"},
		{"limit 0", p, []Option{WithFlagLimit(0)}, "WithFlagLimit(0)"},
		{"negative limit", p, []Option{WithFlagLimit(-1)}, "WithFlagLimit(-1)"},
		{"empty name", p, []Option{WithProviderName("")}, `WithProviderName(""): the name must not be empty`},
		{"empty name after a name", p, []Option{WithProviderName("a"), WithProviderName("")}, `WithProviderName("")`},
		{"no origin", nameless, nil, "name the provider with WithProviderName"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			unregister, err := Register(tc.p, tc.opts...)
			if err == nil || !strings.Contains(err.Error(), tc.want) || unregister != nil {
				t.Errorf("Register: %v, %v; want an error with %q", unregister != nil, err, tc.want)
			}
		})
	}
}

// Two providers registered with one meter provider report series of
// their own, told apart by flagsnap.provider.name, each with its own
// counts: the same key, evaluated by both, has a series for each.
func TestTwoProviders(t *testing.T) {
	const (
		docA = `{"flags": {
		  "shared": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "on"},
		  "only-a": {"state": "ENABLED", "variants": {"x": "x"}, "defaultVariant": "x"}}}`
		docB = `{"flags": {
		  "shared": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off"}}}`
	)
	dir := t.TempDir()
	fileA, fileB := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	for file, doc := range map[string]string{fileA: docA, fileB: docB} {
		if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// What each provider's evaluations make, whatever its name.
	evalsA := series{
		"feature_flag.key=shared,feature_flag.result.variant=on": 2,
		"feature_flag.key=only-a,feature_flag.result.variant=x":  1,
	}
	missingA := series{"feature_flag.key=gone": 1}
	evalsB := series{"feature_flag.key=shared,feature_flag.result.variant=off": 5}
	serving := fromStatus(flagsnap.SourceStatus{State: flagsnap.SourceServing})["flagsnap.source.state"]

	for _, tc := range []struct {
		name         string
		a, b         flagsnap.Option // the source of each provider
		optA, optB   []Option
		nameA, nameB string // the flagsnap.provider.name of their series
	}{
		{"named", flagsnap.WithFlags([]byte(docA)), flagsnap.WithFlags([]byte(docB)),
			[]Option{WithProviderName("checkout")}, []Option{WithProviderName("search")}, "checkout", "search"},
		{"by origin", flagsnap.WithFile(fileA), flagsnap.WithFile(fileB), nil, nil, fileA, fileB},
		{"one named, one by origin", flagsnap.WithFlags([]byte(docA)), flagsnap.WithFile(fileB),
			[]Option{WithProviderName("checkout")}, nil, "checkout", fileB},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := startWith(t, tc.a), startWith(t, tc.b)
			reader := sdkmetric.NewManualReader()
			meters := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
			t.Cleanup(func() { _ = meters.Shutdown(context.Background()) })
			for _, r := range []struct {
				p    *flagsnap.Provider
				opts []Option
			}{{a, tc.optA}, {b, tc.optB}} {
				unregister, err := Register(r.p, append([]Option{WithMeterProvider(meters)}, r.opts...)...)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = unregister() })
			}

			ctx := context.Background()
			for range 2 {
				a.BooleanEvaluation(ctx, "shared", false, nil)
			}
			a.StringEvaluation(ctx, "only-a", "", nil)
			a.BooleanEvaluation(ctx, "gone", false, nil)
			for range 5 {
				b.BooleanEvaluation(ctx, "shared", true, nil)
			}

			got := collectByName(t, reader)
			if names := slices.Sorted(maps.Keys(got)); !slices.Equal(names, slices.Sorted(slices.Values([]string{tc.nameA, tc.nameB}))) {
				t.Fatalf("series of the providers %q, want %q and %q", names, tc.nameA, tc.nameB)
			}
			for _, want := range []struct {
				name          string
				p             *flagsnap.Provider
				evals, missed series
				flags         float64
			}{{tc.nameA, a, evalsA, missingA, 2}, {tc.nameB, b, evalsB, nil, 1}} {
				metrics := got[want.name]
				counted := map[string]series{
					"feature_flag.evaluations":         metrics["feature_flag.evaluations"],
					"feature_flag.missing_evaluations": metrics["feature_flag.missing_evaluations"],
					"flagsnap.source.flags":            metrics["flagsnap.source.flags"],
					"flagsnap.source.state":            metrics["flagsnap.source.state"],
				}
				if d := equal(counted, map[string]series{
					"feature_flag.evaluations":         want.evals,
					"feature_flag.missing_evaluations": want.missed,
					"flagsnap.source.flags":            {"": want.flags},
					"flagsnap.source.state":            serving,
				}); d != "" {
					t.Errorf("%q: collected metrics differ from its evaluations:\n%s", want.name, d)
				}
				snapshots := fromUsage(want.p.Usage())
				maps.Copy(snapshots, fromStatus(want.p.SourceStatus()))
				if d := equal(metrics, snapshots); d != "" {
					t.Errorf("%q: collected metrics differ from its Usage and SourceStatus:\n%s", want.name, d)
				}
			}
		})
	}
}

// The name on the series: the provider's origin unless WithProviderName
// gives one.
func TestProviderName(t *testing.T) {
	file := filepath.Join(t.TempDir(), "flags.json")
	if err := os.WriteFile(file, []byte(testFlags), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		source flagsnap.Option
		opts   []Option
		want   string
	}{
		{"file", flagsnap.WithFile(file), nil, file},
		{"flags in memory", flagsnap.WithFlags([]byte(testFlags)), nil, "memory"},
		{"memory source", flagsnap.WithSource(source.NewMemory([]byte(testFlags))), nil, "memory"},
		{"named", flagsnap.WithFile(file), []Option{WithProviderName("checkout")}, "checkout"},
		{"the last name given", flagsnap.WithFlags([]byte(testFlags)),
			[]Option{WithProviderName("first"), WithProviderName("second")}, "second"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startWith(t, tc.source)
			if origin := p.SourceStatus().Source; tc.opts == nil && origin != tc.want {
				t.Fatalf("SourceStatus().Source is %q, want %q", origin, tc.want)
			}
			reader, _ := register(t, p, tc.opts...)
			// A missing key and a bulk evaluation: every instrument has a
			// series.
			p.StringEvaluation(context.Background(), "nope", "", nil)
			if _, err := p.EvaluateAll(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			got := collectByName(t, reader)
			if names := slices.Sorted(maps.Keys(got)); !slices.Equal(names, []string{tc.want}) {
				t.Fatalf("series of the providers %q, want %q", names, tc.want)
			}
			if have := slices.Sorted(maps.Keys(got[tc.want])); !slices.Equal(have, slices.Sorted(slices.Values(names))) {
				t.Errorf("instruments named %q: %v, want %v", tc.want, have, names)
			}
		})
	}
}

// One name registered twice with one meter provider is refused until
// unregistered; another name, or another meter provider, is not.
func TestProviderNameTaken(t *testing.T) {
	a, b := startWith(t, flagsnap.WithFlags([]byte(testFlags))), startWith(t, flagsnap.WithFlags([]byte(testFlags)))
	first := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	second := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	t.Cleanup(func() { _ = first.Shutdown(context.Background()); _ = second.Shutdown(context.Background()) })

	unregisters := map[string]func() error{}
	t.Cleanup(func() {
		for _, u := range unregisters {
			_ = u()
		}
	})
	// The steps run in order, each on what the previous ones left.
	for _, step := range []struct {
		name       string
		p          *flagsnap.Provider
		meters     metric.MeterProvider
		opts       []Option
		unregister string // the step whose registration ends first
		wantErr    string
	}{
		{"a", a, first, nil, "", ""},
		{"b of the same name", b, first, nil, "", `a provider named "memory" is already registered`},
		{"a again", a, first, nil, "", `a provider named "memory" is already registered`},
		{"b named otherwise", b, first, []Option{WithProviderName("b")}, "", ""},
		{"b named as a", b, first, []Option{WithProviderName("memory")}, "", `a provider named "memory" is already registered`},
		{"b with another meter provider", b, second, nil, "", ""},
		{"b once a is unregistered", b, first, nil, "a", ""},
		// No-op meter providers are equal values, not one meter provider.
		{"a with a no-op meter provider", a, noop.NewMeterProvider(), nil, "", ""},
		{"b with another no-op meter provider", b, noop.NewMeterProvider(), nil, "", ""},
	} {
		if step.unregister != "" {
			if err := unregisters[step.unregister](); err != nil {
				t.Fatalf("%s: unregister %s: %v", step.name, step.unregister, err)
			}
		}
		unregister, err := Register(step.p, append([]Option{WithMeterProvider(step.meters)}, step.opts...)...)
		switch {
		case step.wantErr == "" && err != nil:
			t.Fatalf("%s: %v", step.name, err)
		case step.wantErr != "" && (err == nil || !strings.Contains(err.Error(), step.wantErr) || unregister != nil):
			t.Fatalf("%s: Register: %v, %v; want an error with %q", step.name, unregister != nil, err, step.wantErr)
		case err == nil:
			unregisters[step.name] = unregister
		}
	}
}

// originless is a source that names no origin.
type originless struct{ source.Source }

func (originless) Origin() string { return "" }

// Through OpenTelemetry's Prometheus exporter, two providers of one meter
// provider are two series of each metric, told apart by the label
// flagsnap_provider_name.
func TestPrometheusTwoProviders(t *testing.T) {
	registry := prometheus.NewRegistry()
	exporter, err := otelprometheus.New(otelprometheus.WithRegisterer(registry))
	if err != nil {
		t.Fatal(err)
	}
	meters := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	t.Cleanup(func() { _ = meters.Shutdown(context.Background()) })

	checkout := startWith(t, flagsnap.WithFlags([]byte(testFlags)))
	search := startWith(t, flagsnap.WithFlags([]byte(testFlags)))
	for p, name := range map[*flagsnap.Provider]string{checkout: "checkout", search: "search"} {
		unregister, err := Register(p, WithMeterProvider(meters), WithProviderName(name))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = unregister() })
	}
	ctx := context.Background()
	for range 3 {
		checkout.StringEvaluation(ctx, "color", "", nil)
	}
	search.StringEvaluation(ctx, "color", "", map[string]any{"tier": "gold"})
	search.BooleanEvaluation(ctx, "nope", false, nil)

	families, err := registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]float64{}
	for _, mf := range families {
		if !strings.HasPrefix(mf.GetName(), "feature_flag_") && mf.GetName() != "flagsnap_source_flags" {
			continue
		}
		got[mf.GetName()] = map[string]float64{}
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				if !strings.HasPrefix(l.GetName(), "otel_scope_") {
					labels = append(labels, l.GetName()+"="+l.GetValue())
				}
			}
			got[mf.GetName()][strings.Join(labels, ",")] = m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	// The labels, as Prometheus sorts them, that a provider's series have.
	const (
		c = "feature_flag_provider_name=flagsnap,flagsnap_provider_name=checkout"
		s = "feature_flag_provider_name=flagsnap,flagsnap_provider_name=search"
	)
	want := map[string]map[string]float64{
		"feature_flag_evaluations_total": {
			"feature_flag_key=color,feature_flag_provider_name=flagsnap,feature_flag_result_variant=red,flagsnap_provider_name=checkout": 3,
			"feature_flag_key=off," + c:    0,
			"feature_flag_key=broken," + c: 0,
			"feature_flag_key=idle," + c:   0,
			"feature_flag_key=color,feature_flag_provider_name=flagsnap,feature_flag_result_variant=blue,flagsnap_provider_name=search": 1,
			"feature_flag_key=off," + s:    0,
			"feature_flag_key=broken," + s: 0,
			"feature_flag_key=idle," + s:   0,
		},
		"feature_flag_missing_evaluations_total": {"feature_flag_key=nope," + s: 1},
		"flagsnap_source_flags":                  {c: 4, s: 4},
	}
	for name, points := range want {
		for labels, v := range points {
			if g, ok := got[name][labels]; !ok || g != v {
				t.Errorf("%s{%s}: %v (scraped: %v), want %v", name, labels, g, ok, v)
			}
		}
		for labels, v := range got[name] {
			if _, ok := points[labels]; !ok {
				t.Errorf("%s{%s} %v: not expected", name, labels, v)
			}
		}
	}
}
