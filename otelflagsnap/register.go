package otelflagsnap

import (
	"errors"
	"fmt"
	"reflect"
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"

	"github.com/flagsnap/flagsnap"
)

// scopeName is the instrumentation scope of the instruments: the name of
// the meter they are made with.
const scopeName = "github.com/flagsnap/flagsnap/otelflagsnap"

// defaultFlagLimit is how many flags, and how many missing keys, are
// reported by key unless WithFlagLimit says otherwise.
const defaultFlagLimit = 1000

// Option configures Register.
type Option func(*config)

type config struct {
	meters metric.MeterProvider
	limit  int
	name   string
	named  bool // WithProviderName was given, even with ""
}

// WithMeterProvider makes the instruments with mp rather than with the
// global meter provider (otel.GetMeterProvider()).
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) { c.meters = mp }
}

// WithFlagLimit reports the n most evaluated flags by key and sums the
// others under the key "_other", so that a large flag set does not make a
// series per flag; the n keys most asked for that no flag defines are
// reported the same way. n must be at least 1; the default is 1,000.
func WithFlagLimit(n int) Option {
	return func(c *config) { c.limit = n }
}

// WithProviderName names the provider in the attribute
// flagsnap.provider.name that every series carries, so that the series of
// two providers reported through one meter provider stay apart. The
// default is where the provider's flags come from, its
// SourceStatus().Source: the file path, the sync server's address, the URL
// without its password. Providers of flagsnap.WithFlags, or of a
// source.Memory, are all "memory" and need a name each when there are
// two. An empty name is an error of Register, as is a default name that
// comes out empty (a custom source whose Origin is "").
func WithProviderName(name string) Option {
	return func(c *config) { c.name, c.named = name, true }
}

// Register reports p's evaluations and the health of its flag source as
// the instruments listed in the package documentation. They are
// observable: a reader's collection calls one callback, which reads
// p.Usage() and p.SourceStatus(), and evaluations do no more than they
// did. unregister removes the callback; calling it again does nothing.
//
// Every series carries feature_flag.provider.name = "flagsnap" and
// flagsnap.provider.name, p's name (WithProviderName). Register refuses a
// name that is already registered with the same meter provider and not
// unregistered since: the two providers' series would be one.
func Register(p *flagsnap.Provider, opts ...Option) (unregister func() error, err error) {
	if p == nil {
		return nil, errors.New("otelflagsnap: Register: nil provider")
	}
	cfg := config{limit: defaultFlagLimit}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.limit < 1 {
		return nil, fmt.Errorf("otelflagsnap: WithFlagLimit(%d): the limit must be at least 1", cfg.limit)
	}
	switch {
	case cfg.named && cfg.name == "":
		return nil, errors.New(`otelflagsnap: WithProviderName(""): the name must not be empty`)
	case !cfg.named:
		cfg.name = p.SourceStatus().Source
		if cfg.name == "" {
			return nil, errors.New("otelflagsnap: the provider's source names no origin (SourceStatus().Source is empty): name the provider with WithProviderName")
		}
	}
	if cfg.meters == nil {
		cfg.meters = otel.GetMeterProvider()
	}
	release, err := claim(cfg.meters, cfg.name)
	if err != nil {
		return nil, err
	}
	meter := cfg.meters.Meter(scopeName)
	in, err := newInstruments(meter)
	if err != nil {
		release()
		return nil, fmt.Errorf("otelflagsnap: %w", err)
	}
	r := newReporter(p, cfg.name, cfg.limit, in)
	reg, err := meter.RegisterCallback(r.observe, in.all()...)
	if err != nil {
		release()
		return nil, fmt.Errorf("otelflagsnap: %w", err)
	}
	// The SDK's Unregister is not idempotent everywhere: a second call
	// must do nothing.
	var once sync.Once
	return func() error {
		var err error
		once.Do(func() {
			err = reg.Unregister()
			release()
		})
		return err
	}, nil
}

// registration is a provider's name registered with a meter provider.
type registration struct {
	meters metric.MeterProvider
	name   string
}

// registered holds the registrations not yet unregistered.
var registered = struct {
	sync.Mutex
	m map[registration]bool
}{m: map[registration]bool{}}

// claim records name as registered with meters, and returns what
// forgets it; it refuses a name already registered there. Only a meter
// provider that is a pointer, as the SDK's and the global one are, is
// checked: values of other types (a no-op meter provider) may be equal
// without being the same.
func claim(meters metric.MeterProvider, name string) (release func(), err error) {
	if reflect.ValueOf(meters).Kind() != reflect.Pointer {
		return func() {}, nil
	}
	key := registration{meters, name}
	registered.Lock()
	defer registered.Unlock()
	if registered.m[key] {
		return nil, fmt.Errorf("otelflagsnap: a provider named %q is already registered with this meter provider: give each provider its own name with WithProviderName", name)
	}
	registered.m[key] = true
	return func() {
		registered.Lock()
		delete(registered.m, key)
		registered.Unlock()
	}, nil
}

// instruments are the observable instruments a callback reports.
type instruments struct {
	evaluations, missing, bulk, flagSets, reconnects metric.Int64ObservableCounter
	state, flags                                     metric.Int64ObservableGauge
	appliedTime                                      metric.Float64ObservableGauge
}

// newInstruments makes the instruments with m; the package documentation
// describes each.
func newInstruments(m metric.Meter) (*instruments, error) {
	var in instruments
	var errs [8]error
	in.evaluations, errs[0] = m.Int64ObservableCounter("feature_flag.evaluations", metric.WithUnit("{evaluation}"),
		metric.WithDescription("Flag evaluations, by flag key and variant, and the failed ones by error type."))
	in.missing, errs[1] = m.Int64ObservableCounter("feature_flag.missing_evaluations", metric.WithUnit("{evaluation}"),
		metric.WithDescription("Evaluations of keys that the flags in force do not define, by key."))
	in.state, errs[2] = m.Int64ObservableGauge("flagsnap.source.state", metric.WithUnit("{state}"),
		metric.WithDescription("The flag source's state: 1 for the current one, 0 for the others."))
	in.flags, errs[3] = m.Int64ObservableGauge("flagsnap.source.flags", metric.WithUnit("{flag}"),
		metric.WithDescription("Flags in force."))
	in.appliedTime, errs[4] = m.Float64ObservableGauge("flagsnap.source.applied_time", metric.WithUnit("s"),
		metric.WithDescription("When the flags in force were put in force, in Unix seconds."))
	in.flagSets, errs[5] = m.Int64ObservableCounter("flagsnap.source.flag_sets", metric.WithUnit("{flag_set}"),
		metric.WithDescription("Flag sets from the source, by result: received, applied, rejected, unchanged."))
	in.reconnects, errs[6] = m.Int64ObservableCounter("flagsnap.source.reconnects", metric.WithUnit("{reconnect}"),
		metric.WithDescription("Times the flag source came back after a loss."))
	in.bulk, errs[7] = m.Int64ObservableCounter("feature_flag.bulk_evaluations", metric.WithUnit("{evaluation}"),
		metric.WithDescription("Evaluations of flags by bulk evaluations (every flag for one context), by key."))
	if err := errors.Join(errs[:]...); err != nil {
		return nil, err
	}
	return &in, nil
}

func (in *instruments) all() []metric.Observable {
	return []metric.Observable{in.evaluations, in.missing, in.bulk, in.state, in.flags, in.appliedTime, in.flagSets, in.reconnects}
}
