package flagsnap

// The Provider type: building one, and its OpenFeature methods (metadata,
// events, tracking, Init and Shutdown). Evaluations are in resolve.go.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/open-feature/go-sdk/openfeature"
	"google.golang.org/grpc/codes"

	"github.com/flagsnap/flagsnap/evaluator"
	"github.com/flagsnap/flagsnap/internal/usage"
)

// Name is the provider's name in OpenFeature metadata and events.
const Name = "flagsnap"

// Provider is an OpenFeature provider that evaluates flagd flag sets
// in-process. Evaluations read an immutable snapshot through one atomic
// pointer: they never lock and never wait for a source.
type Provider struct {
	cfg            config
	fatalCodes     []codes.Code       // cfg.FatalStatusCodes, parsed
	compileOptions []evaluator.Option // how every flag document is compiled
	// snap is the flag set in force, which evaluations load (inforce.go).
	snap atomic.Pointer[inForce]
	// versions counts the flag sets put in force; changed wakes whoever
	// waits for the next one, or for Shutdown (OFREP's event streams).
	versions atomic.Uint64
	changed  signal
	// instance tells this provider's snapshot versions from another's
	// (another process's after a restart), in OFREP's event ids.
	instance string
	events   *emitter
	fixed    *fixedFlags // the flags of WithFlags, compiled by NewProvider
	origin   origin      // where the flags come from, for messages
	// log is the user's logger, with every line naming the source and
	// what is served.
	log *slog.Logger
	// loadedAt is when the flags in force were put in force, in Unix
	// nanoseconds, for the log lines.
	loadedAt atomic.Int64
	stats    sourceStats // for SourceStatus
	// compilations counts the flag documents compiled, each of which costs
	// a full load: a document must be compiled once, however it arrives.
	compilations atomic.Uint64
	// usage counts evaluations (usage.go); nil with WithoutUsage.
	usage     *usage.Counter
	usageOnce sync.Once

	mu  sync.Mutex // guards run and sourceRan across Init and Shutdown
	run *run
	// sourceRan is set once a source given with WithSource has been
	// started: a Source runs at most once, so it cannot serve a second Init.
	sourceRan bool
}

var (
	_ openfeature.Tracker                  = (*Provider)(nil)
	_ openfeature.FeatureProvider          = (*Provider)(nil)
	_ openfeature.ContextAwareStateHandler = (*Provider)(nil)
	_ openfeature.EventHandler             = (*Provider)(nil)
)

// NewProvider returns a provider configured by the FLAGD_* environment
// variables and then opts. Invalid options or variables are an error; no
// source is contacted until Init.
func NewProvider(opts ...Option) (*Provider, error) {
	cfg, err := buildConfig(opts)
	if err != nil {
		return nil, fmt.Errorf("flagsnap: %w", err)
	}
	if cfg.source == nil && cfg.flags == nil && cfg.Resolver == ResolverRPC {
		return nil, fmt.Errorf("flagsnap: %w", cfg.rpcRefused())
	}
	fatal, err := parseStatusCodes(cfg.FatalStatusCodes)
	if err != nil {
		return nil, fmt.Errorf("flagsnap: fatal status codes (WithFatalStatusCodes, %s): %w", EnvFatalStatusCodes, err)
	}
	p := &Provider{cfg: cfg, fatalCodes: fatal, events: newEmitter(), instance: newInstanceID()}
	if !cfg.withoutUsage {
		p.usage = usage.NewCounter(now())
	}
	p.origin = p.describeOrigin()
	p.log = slog.New(&servingHandler{Handler: cfg.logger.Handler(), p: p})
	p.compileOptions = []evaluator.Option{evaluator.WithFractionalVersion(cfg.FractionalVersion), evaluator.WithLogger(p.log)}
	if cfg.StrictValidation {
		p.compileOptions = append(p.compileOptions, evaluator.WithStrict())
	}
	if cfg.flags != nil {
		fixed, err := p.compileFixed(cfg.flags)
		if err != nil {
			return nil, fmt.Errorf("flagsnap: WithFlags: %w", err)
		}
		p.fixed = fixed
	}
	// Building the source checks what only it can check (a readable CA
	// file, a target gRPC accepts) now rather than at Init. It does not
	// touch the network or the flag file; Init builds a fresh one.
	if _, err := p.newSource(); err != nil {
		return nil, fmt.Errorf("flagsnap: %w", err)
	}
	p.logUnusedEnv()
	return p, nil
}

// Config is the configuration the provider runs with.
func (p *Provider) Config() Config {
	c := p.cfg.Config
	c.FatalStatusCodes = slices.Clone(c.FatalStatusCodes)
	c.HTTPHeader = c.HTTPHeader.Clone()
	return c
}

// Metadata names the provider.
func (p *Provider) Metadata() openfeature.Metadata { return openfeature.Metadata{Name: Name} }

// Track hands a tracking event to the function given with WithTracker,
// and does nothing without one.
func (p *Provider) Track(ctx context.Context, name string, evalCtx openfeature.EvaluationContext, details openfeature.TrackingEventDetails) {
	if p.cfg.tracker != nil {
		p.cfg.tracker(ctx, name, evalCtx, details)
	}
}

// Hooks returns no hooks.
func (p *Provider) Hooks() []openfeature.Hook { return nil }

// EventChannel is where the provider's events arrive.
func (p *Provider) EventChannel() <-chan openfeature.Event { return p.events.out }

// FlagSetMetadata is the metadata of the flag set in force (nil before the
// first one), as a copy.
func (p *Provider) FlagSetMetadata() map[string]any {
	if set := p.flags(); set != nil {
		return maps.Clone(set.Metadata())
	}
	return nil
}

// Init starts the source and waits, up to the deadline, for the first flag
// set.
func (p *Provider) Init(evalCtx openfeature.EvaluationContext) error {
	return p.InitWithContext(context.Background(), evalCtx)
}

// InitWithContext starts the source and waits for the first flag set, until
// the deadline (WithDeadline) or ctx ends. When it gives up the provider
// keeps trying in the background and reports READY when flags arrive. A
// source that fails fatally makes Init return an
// *openfeature.ProviderInitError with code PROVIDER_FATAL.
func (p *Provider) InitWithContext(ctx context.Context, _ openfeature.EvaluationContext) error {
	p.mu.Lock()
	r := p.run
	if r == nil {
		src, err := p.newSource()
		if err == nil && p.cfg.source != nil {
			if p.sourceRan {
				err = errors.New("flagsnap: the source given with WithSource has already run, and a source runs once: build a new provider to start again")
			}
			p.sourceRan = true
		}
		if err != nil {
			p.mu.Unlock()
			return &openfeature.ProviderInitError{ErrorCode: openfeature.ProviderFatalCode, Message: err.Error()}
		}
		overrides, err := p.newOverrides()
		if err != nil {
			p.mu.Unlock()
			return &openfeature.ProviderInitError{ErrorCode: openfeature.ProviderFatalCode, Message: err.Error()}
		}
		r = p.start(src, overrides)
		p.run = r
	}
	p.mu.Unlock()

	timer := time.NewTimer(p.cfg.Deadline)
	defer timer.Stop()
	select {
	case <-r.ready:
		return nil
	case <-r.gaveUp:
		return &openfeature.ProviderInitError{ErrorCode: openfeature.ProviderFatalCode, Message: r.fatalErr.Error()}
	case <-r.ctx.Done():
		return errors.New("flagsnap: the provider was shut down during Init")
	case <-timer.C:
	case <-ctx.Done():
	}
	var cached *evaluator.FlagSet
	var doc []byte
	if p.cfg.CacheFile != "" {
		set, b, err := p.readCache()
		if err != nil {
			p.log.Warn("flag cache not used", slog.String("error", err.Error()))
		}
		cached, doc = set, b
	}
	return r.giveUpInit(cached, doc)
}

// currentRun is the run of the provider, nil before Init and after
// Shutdown.
func (p *Provider) currentRun() *run {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.run
}

// Shutdown stops the source and every goroutine of the provider. It is
// idempotent; no event is sent after it returns.
func (p *Provider) Shutdown() { _ = p.ShutdownWithContext(context.Background()) }

// ShutdownWithContext is Shutdown that stops waiting when ctx ends.
func (p *Provider) ShutdownWithContext(ctx context.Context) error {
	p.mu.Lock()
	r := p.run
	p.run = nil
	p.mu.Unlock()
	if r == nil {
		return nil
	}
	defer p.changed.notify()
	return r.stop(ctx)
}
