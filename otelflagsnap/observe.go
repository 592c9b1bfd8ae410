package otelflagsnap

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/flagsnap/flagsnap"
)

// The attribute names, from OpenTelemetry's semantic conventions for
// feature flags, and this package's own.
const (
	keyAttr      = "feature_flag.key"
	variantAttr  = "feature_flag.result.variant"
	providerAttr = "feature_flag.provider.name"
	nameAttr     = "flagsnap.provider.name"
	errorAttr    = "error.type"
	stateAttr    = "state"
	resultAttr   = "result"
)

// otherKey is the feature_flag.key under which the flags, or missing
// keys, past the limit are summed.
const otherKey = "_other"

// implementation is the feature_flag.provider.name of every series: the
// provider's implementation, whatever its name.
var implementation = attribute.String(providerAttr, flagsnap.Name)

// states are the values of flagsnap.source.state, one series each.
var states = []flagsnap.SourceState{
	flagsnap.SourceConnecting, flagsnap.SourceServing, flagsnap.SourceStale,
	flagsnap.SourceError, flagsnap.SourceFatal, flagsnap.SourceStopped,
}

// results are the values of flagsnap.source.flag_sets' result.
var results = []string{"received", "applied", "rejected", "unchanged"}

// reporter reports one provider's usage and source status.
type reporter struct {
	p     *flagsnap.Provider
	limit int
	in    *instruments
	// carrier are the attributes every series carries: the
	// implementation and the provider's name.
	carrier [2]attribute.KeyValue
	// The attribute sets of the source's series, made once rather than
	// at every collection.
	stateSets   map[flagsnap.SourceState]metric.ObserveOption
	resultSets  map[string]metric.ObserveOption
	onlyCarrier metric.ObserveOption
}

func newReporter(p *flagsnap.Provider, name string, limit int, in *instruments) *reporter {
	r := &reporter{p: p, limit: limit, in: in,
		carrier: [2]attribute.KeyValue{implementation, attribute.String(nameAttr, name)}}
	r.stateSets = attributeSets(r.carrier, stateAttr, states)
	r.resultSets = attributeSets(r.carrier, resultAttr, results)
	r.onlyCarrier = metric.WithAttributeSet(attribute.NewSet(r.carrier[:]...))
	return r
}

// attributeSets makes, for each value, the carrier's attributes with
// name = value.
func attributeSets[S ~string](carrier [2]attribute.KeyValue, name string, values []S) map[S]metric.ObserveOption {
	out := make(map[S]metric.ObserveOption, len(values))
	for _, v := range values {
		out[v] = metric.WithAttributeSet(attribute.NewSet(carrier[0], carrier[1], attribute.String(name, string(v))))
	}
	return out
}

// observe is the one callback: it reads the provider's usage and status
// once each per collection.
func (r *reporter) observe(_ context.Context, o metric.Observer) error {
	r.observeUsage(o, r.p.Usage())
	r.observeSource(o, r.p.SourceStatus())
	return nil
}

// observeUsage reports the evaluations of the most evaluated flags, of
// the keys most asked for that are missing, and of the flags most read by
// bulk evaluations, the others summed under otherKey. With usage
// counting off the snapshot is empty, and so is what is reported.
func (r *reporter) observeUsage(o metric.Observer, u flagsnap.Usage) {
	// A flag not evaluated yet has its series, of 0.
	keys, rest := top(u.Flags, r.limit, func(f flagsnap.FlagUsage) uint64 { return f.Evaluations }, true)
	for _, k := range keys {
		r.observeFlag(o, k, u.Flags[k])
	}
	if len(rest) > 0 {
		var sum flagsnap.FlagUsage
		for _, k := range rest {
			addUp(&sum, u.Flags[k])
		}
		r.observeFlag(o, otherKey, sum)
	}

	observeByKey(r, o, r.in.missing, u.Missing, func(n uint64) uint64 { return n })
	// Read from the flags themselves: a map of their bulk counts would
	// be made at every collection.
	observeByKey(r, o, r.in.bulk, u.Flags, func(f flagsnap.FlagUsage) uint64 { return f.Bulk })
}

// observeByKey reports the counts of m's values, as counted by n, a
// series for each of the limit largest and one summing the others under
// otherKey. A key counted 0 has no series: only the flags that bulk
// evaluations read have bulk series.
func observeByKey[V any](r *reporter, o metric.Observer, inst metric.Int64ObservableCounter, m map[string]V, n func(V) uint64) {
	keys, rest := top(m, r.limit, n, false)
	for _, k := range keys {
		o.ObserveInt64(inst, count(n(m[k])), r.withKey(k))
	}
	if len(rest) > 0 {
		var sum uint64
		for _, k := range rest {
			sum += n(m[k])
		}
		o.ObserveInt64(inst, count(sum), r.withKey(otherKey))
	}
}

// top returns the limit keys of m with the largest counts, the largest
// first, and the rest. A key spelt otherKey is always in the rest, so
// that it cannot be taken for the sum of the rest. Keys counted 0 are in
// neither unless keepZero is set.
func top[V any](m map[string]V, limit int, count func(V) uint64, keepZero bool) (keys, rest []string) {
	type counted struct {
		key string
		n   uint64
	}
	// Counts read once, not at each comparison: a large flag set sorts
	// its keys at every collection.
	all := make([]counted, 0, len(m))
	for k, v := range m {
		if n := count(v); n > 0 || keepZero {
			all = append(all, counted{k, n})
		}
	}
	slices.SortFunc(all, func(a, b counted) int { return cmp.Or(cmp.Compare(b.n, a.n), cmp.Compare(a.key, b.key)) })
	for _, c := range all {
		if c.key != otherKey && len(keys) < limit {
			keys = append(keys, c.key)
		} else {
			rest = append(rest, c.key)
		}
	}
	return keys, rest
}

// addUp adds f's evaluations and errors to sum; the variants are left
// out, as the flags past the limit are reported without them.
func addUp(sum *flagsnap.FlagUsage, f flagsnap.FlagUsage) {
	sum.Evaluations += f.Evaluations
	sum.Errors += f.Errors
	for code, n := range f.ErrorCodes {
		if sum.ErrorCodes == nil {
			sum.ErrorCodes = map[string]uint64{}
		}
		sum.ErrorCodes[code] += n
	}
}

// observeFlag reports one flag's evaluations: a series per variant
// served, one per error type, and one without a variant for the rest (a
// disabled flag, no variant chosen), which is also the series of a flag
// not evaluated yet. They add up to f.Evaluations.
func (r *reporter) observeFlag(o metric.Observer, key string, f flagsnap.FlagUsage) {
	inst := r.in.evaluations
	var served uint64
	for v, n := range f.Variants {
		o.ObserveInt64(inst, count(n), r.with(attribute.String(keyAttr, key), attribute.String(variantAttr, v)))
		served += n
	}
	var failed uint64
	for code, n := range f.ErrorCodes {
		o.ObserveInt64(inst, count(n), r.with(attribute.String(keyAttr, key), attribute.String(errorAttr, strings.ToLower(code))))
		failed += n
	}
	if rest := f.Evaluations - min(served+failed, f.Evaluations); rest > 0 || f.Evaluations == 0 {
		o.ObserveInt64(inst, count(rest), r.withKey(key))
	}
}

func (r *reporter) withKey(key string) metric.ObserveOption {
	return r.with(attribute.String(keyAttr, key))
}

// with is the carrier's attributes and kv.
func (r *reporter) with(kv ...attribute.KeyValue) metric.ObserveOption {
	return metric.WithAttributes(append(r.carrier[:], kv...)...)
}

// observeSource reports the health of the flag source.
func (r *reporter) observeSource(o metric.Observer, st flagsnap.SourceStatus) {
	for _, s := range states {
		v := int64(0)
		if s == st.State {
			v = 1
		}
		o.ObserveInt64(r.in.state, v, r.stateSets[s])
	}
	o.ObserveInt64(r.in.flags, int64(st.Flags), r.onlyCarrier)
	// Before the first set there is no time to report.
	if t := st.AppliedAt; !t.IsZero() && t.UnixNano() > 0 {
		o.ObserveFloat64(r.in.appliedTime, float64(t.Unix())+float64(t.Nanosecond())/1e9, r.onlyCarrier)
	}
	sets := [...]struct {
		result string
		n      uint64
	}{{"received", st.Received}, {"applied", st.Applied}, {"rejected", st.Rejected}, {"unchanged", st.Unchanged}}
	for _, s := range sets {
		o.ObserveInt64(r.in.flagSets, count(s.n), r.resultSets[s.result])
	}
	o.ObserveInt64(r.in.reconnects, count(st.Reconnects), r.onlyCarrier)
}

// count is n as an observation: OpenTelemetry's integers are signed.
func count(n uint64) int64 { return int64(min(n, math.MaxInt64)) }
