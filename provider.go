package flagsnap

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/open-feature/go-sdk/openfeature"
	"google.golang.org/grpc/codes"

	"github.com/flagsnap/flagsnap/evaluator"
	"github.com/flagsnap/flagsnap/internal/usage"
	"github.com/flagsnap/flagsnap/source"
)

// Name is the provider's name in OpenFeature metadata and events.
const Name = "flagsnap"

// Provider is an OpenFeature provider that evaluates flagd flag sets
// in-process. Evaluations read an immutable snapshot through one atomic
// pointer: they never lock and never wait for a source.
type Provider struct {
	cfg        config
	fatalCodes []codes.Code
	loadOpts   []evaluator.Option
	snap       atomic.Pointer[inForce]
	events     *emitter
	fixed      *fixedFlags // the flags of WithFlags, compiled by NewProvider
	origin     origin      // where the flags come from, for messages
	// log is the user's logger, with every line naming the source and
	// what is served.
	log *slog.Logger
	// loadedAt is when the flags in force were put in force, in Unix
	// nanoseconds, for the log lines.
	loadedAt atomic.Int64
	stats    sourceStats // for SourceStatus
	// compiled counts the flag documents compiled, each of which costs a
	// full load: a document must be compiled once, however it arrives.
	compiled atomic.Uint64
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
		if cfg.OfflineFlagSourcePath != "" {
			return nil, fmt.Errorf("flagsnap: the rpc resolver (WithResolver(ResolverRPC) or %s=rpc) was chosen with the flag file %s: "+
				"the rpc resolver asks flagd for every evaluation, and flagsnap evaluates in-process; drop it to read the file", EnvResolver, cfg.OfflineFlagSourcePath)
		}
		return nil, fmt.Errorf("flagsnap: the rpc resolver (flagd's default) asks flagd for every evaluation, and flagsnap evaluates in-process: "+
			"use WithResolver(ResolverInProcess) (%s=in-process) to follow a sync server, or WithFile (%s)", EnvResolver, EnvOfflineFlagSourcePath)
	}
	fatal, err := statusCodes(cfg.FatalStatusCodes)
	if err != nil {
		return nil, fmt.Errorf("flagsnap: fatal status codes (WithFatalStatusCodes, %s): %w", EnvFatalStatusCodes, err)
	}
	p := &Provider{cfg: cfg, fatalCodes: fatal, events: newEmitter()}
	if !cfg.withoutUsage {
		p.usage = usage.NewCounter(now())
	}
	p.origin = p.describe()
	p.log = slog.New(&servingHandler{Handler: cfg.logger.Handler(), p: p})
	p.loadOpts = []evaluator.Option{evaluator.WithFractionalVersion(cfg.FractionalVersion), evaluator.WithLogger(p.log)}
	if cfg.StrictValidation {
		p.loadOpts = append(p.loadOpts, evaluator.WithStrict())
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
	return p, nil
}

// Config is the configuration the provider runs with.
func (p *Provider) Config() Config {
	c := p.cfg.Config
	c.FatalStatusCodes = slices.Clone(c.FatalStatusCodes)
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
		r = p.start(src)
		p.run = r
	}
	p.mu.Unlock()

	timer := time.NewTimer(p.cfg.Deadline)
	defer timer.Stop()
	select {
	case <-r.ready:
		return nil
	case <-r.fatal:
		return &openfeature.ProviderInitError{ErrorCode: openfeature.ProviderFatalCode, Message: r.fatalErr.Error()}
	case <-r.ctx.Done():
		return errors.New("flagsnap: the provider was shut down during Init")
	case <-timer.C:
	case <-ctx.Done():
	}
	var cached *evaluator.FlagSet
	if p.cfg.CacheFile != "" {
		set, err := p.readCache()
		if err != nil {
			p.log.Warn("flag cache not used", slog.String("error", err.Error()))
		}
		cached = set
	}
	return r.giveUpInit(cached)
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
	return r.stop(ctx)
}

// newSource builds the source the configuration asks for.
func (p *Provider) newSource() (source.Source, error) {
	switch {
	case p.cfg.source != nil:
		return p.cfg.source, nil
	case p.fixed != nil:
		return p.fixed, nil
	case p.cfg.Resolver == ResolverFile:
		return source.NewFile(p.fileConfig())
	}
	return source.NewGRPC(p.grpcConfig())
}

// fileConfig is the File source's configuration: the one place where
// Config's fields become FileConfig's.
func (p *Provider) fileConfig() source.FileConfig {
	return source.FileConfig{
		Path:         p.cfg.OfflineFlagSourcePath,
		PollInterval: p.cfg.OfflinePollInterval,
		Logger:       p.log,
	}
}

// grpcConfig is the GRPC source's configuration: the one place where
// Config's fields become GRPCConfig's. The liveness check, which has no
// option, keeps the source's defaults.
func (p *Provider) grpcConfig() source.GRPCConfig {
	c := &p.cfg
	return source.GRPCConfig{
		Host:             c.Host,
		Port:             c.Port,
		TargetURI:        c.TargetURI,
		SocketPath:       c.SocketPath,
		TLS:              c.TLS,
		CACertPath:       c.CertPath,
		Selector:         c.Selector,
		ProviderID:       c.ProviderID,
		Deadline:         c.Deadline,
		StreamDeadline:   c.StreamDeadline,
		RetryBackoff:     c.RetryBackoff,
		RetryBackoffMax:  c.RetryBackoffMax,
		KeepAlive:        c.KeepAlive,
		MaxMessageSize:   c.MaxMessageSize,
		FatalStatusCodes: p.fatalCodes,
		DialOptions:      c.dialOptions,
		Logger:           p.log,
	}
}

// run is one lifetime of the provider, from Init to Shutdown: the source's
// goroutine, the grace-period supervisor and the event pump.
type run struct {
	p      *Provider
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	kick   chan struct{} // wakes the supervisor after a state change

	ready    chan struct{} // closed once flags are served: see markReady
	fatal    chan struct{} // closed once the source has given up
	fatalErr error         // the source's last word; set once, under mu

	// last is the update Update compiled last, to recognise it when it
	// comes again; under mu.
	last struct {
		set     *evaluator.FlagSet
		digest  [sha256.Size]byte
		syncCtx map[string]any
	}

	mu          sync.Mutex
	state       state
	readyDone   bool // ready is closed
	lastErr     error
	rejectedSet bool // lastErr is a flag set that did not load
}

type state uint8

const (
	stateStarting state = iota // no flags yet, Init waiting: it reports the first outcome
	stateReady
	stateStale     // source lost, within the grace period
	stateError     // lost beyond the grace period, or a flag set was rejected
	stateFatal     // the source gave up
	stateInitError // Init gave up before the first flag set
)

func (p *Provider) start(src source.Source) *run {
	ctx, cancel := context.WithCancel(context.Background())
	r := &run{
		p: p, ctx: ctx, cancel: cancel,
		kick:  make(chan struct{}, 1),
		ready: make(chan struct{}),
		fatal: make(chan struct{}),
	}
	p.events.open()
	r.wg.Add(3)
	go func() {
		defer r.wg.Done()
		p.events.pump(ctx)
	}()
	go func() {
		defer r.wg.Done()
		r.supervise()
	}()
	p.startUsage(r)
	go func() {
		defer r.wg.Done()
		// A source that stops by itself has given up, whether or not it
		// said so with Fatal first; Fatal reports it once either way.
		if err := src.Run(ctx, (*sink)(r)); err != nil && ctx.Err() == nil {
			(*sink)(r).Fatal(err)
		}
	}()
	return r
}

func (r *run) stop(ctx context.Context) error {
	r.mu.Lock()
	r.state = stateFatal // nothing more is reported
	r.mu.Unlock()
	r.p.events.close()
	r.cancel()
	done := make(chan struct{})
	go func() {
		r.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// giveUpInit ends Init's wait without flags from the source. With cached
// flags it serves them and reports STALE; it answers nil as well when the
// flags arrived in the meantime.
func (r *run) giveUpInit(cached *evaluator.FlagSet) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.readyDone {
		return nil
	}
	if r.fatalErr != nil {
		return &openfeature.ProviderInitError{ErrorCode: openfeature.ProviderFatalCode, Message: r.fatalErr.Error()}
	}
	if cached != nil {
		r.p.putInForce(cached)
		r.markReady()
		r.state = stateStale
		// OpenFeature announces READY when Init returns; STALE must come
		// after it, so it is sent a moment later, and the grace period
		// runs from then.
		time.AfterFunc(initAnnounceDelay, r.announceCached)
		return nil
	}
	r.state = stateInitError
	err := r.initError(r.lastErr)
	r.p.log.Error(err.Error())
	return err
}

// initAnnounceDelay separates the READY that OpenFeature sends when Init
// returns from the STALE that follows when cached flags are served.
const initAnnounceDelay = 50 * time.Millisecond

// announceCached reports the cached flags Init served, unless flags have
// arrived or the run has ended since.
func (r *run) announceCached() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state == stateStale {
		r.emit(openfeature.ProviderStale, "serving cached flags: the source is unavailable: "+errText(r.lastErr), nil, "")
		r.wake()
	}
}

// supervise turns a lost source into ERROR once the grace period has
// passed without a new flag set.
func (r *run) supervise() {
	var timer *time.Timer
	var expired <-chan time.Time
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-r.kick:
			r.mu.Lock()
			stale := r.state == stateStale
			r.mu.Unlock()
			switch {
			case stale && timer == nil:
				timer = time.NewTimer(r.p.cfg.RetryGracePeriod)
				expired = timer.C
			case !stale && timer != nil:
				timer.Stop()
				timer, expired = nil, nil
			}
		case <-expired:
			timer, expired = nil, nil
			r.mu.Lock()
			if r.state == stateStale {
				r.state = stateError
				r.emit(openfeature.ProviderError, "flag source lost for longer than the grace period: "+errText(r.lastErr), nil, "")
			}
			r.mu.Unlock()
		}
	}
}

// markReady records that the run serves flags. Closing ready ends the wait
// of any Init, including one called again after the first gave up, which
// would otherwise sit out its whole deadline with flags in force.
func (r *run) markReady() {
	if !r.readyDone {
		r.readyDone = true
		close(r.ready)
	}
}

func (r *run) wake() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// emit sends an event. Its metadata names the source, and for an error
// repeats the code: the OpenFeature Go SDK hands handlers the message, the
// flag changes and the metadata, but not ErrorCode.
func (r *run) emit(t openfeature.EventType, msg string, changes []string, code openfeature.ErrorCode) {
	meta := map[string]any{"source": r.p.origin.name}
	if t == openfeature.ProviderError {
		if code == "" {
			code = openfeature.GeneralCode
		}
		meta["errorCode"] = string(code)
	}
	r.p.events.send(openfeature.Event{
		ProviderName: Name,
		EventType:    t,
		ProviderEventDetails: openfeature.ProviderEventDetails{
			Message:       msg,
			FlagChanges:   changes,
			ErrorCode:     code,
			EventMetadata: meta,
		},
	})
}

func errText(err error) string {
	if err == nil {
		return "unknown reason"
	}
	return err.Error()
}

// sink is how a source reaches a run.
type sink run

var _ source.Sink = (*sink)(nil)

// errShutDown is the verdict on flags that arrive after Shutdown.
var errShutDown = errors.New("flagsnap: the provider has shut down")

// Update puts the flags in force, or rejects them (reporting it) and keeps
// the flags in force, and tells the source which: a source whose caller
// waits on it (source.Memory's Set) passes on the provider's own verdict,
// load options included.
func (s *sink) Update(u source.Update) error {
	r := (*run)(s)
	// Polls, reconnects and streams reopened after a graceful end deliver
	// the flags in force again; recognising them costs a hash instead of
	// a full load.
	r.p.stats.delivered()
	r.mu.Lock()
	last := r.last
	r.mu.Unlock()
	var digest [sha256.Size]byte
	var hashing sync.WaitGroup
	if last.set != nil {
		digest = sha256.Sum256(u.Flags)
		if r.p.flags() == last.set && digest == last.digest && reflect.DeepEqual(u.SyncContext, last.syncCtx) {
			if _, _, ok := r.accept(last.set, u.Origin, digest); !ok {
				return errShutDown
			}
			return nil
		}
	} else {
		// Nothing to recognise: the digest is taken while the set
		// compiles, on a core its sequential parts leave idle.
		hashing.Go(func() { digest = sha256.Sum256(u.Flags) })
	}
	set, err := r.p.compile(u.Flags, u.SyncContext)
	hashing.Wait()
	if err != nil {
		r.rejected(u.Origin, err)
		return err
	}
	if old := r.p.flags(); set.Len() == 0 && (old == nil || old.Len() > 0) {
		// flagd sends an empty set while it is still reading a large
		// file: every evaluation answers FLAG_NOT_FOUND until the real
		// one arrives, which is worth a word.
		r.p.log.Warn("the flag source delivered an empty flag set; every flag is missing until it sends flags", slog.String("origin", u.Origin))
	}
	r.mu.Lock()
	r.last.set, r.last.digest, r.last.syncCtx = set, digest, u.SyncContext
	r.mu.Unlock()
	return s.put(set, u, digest)
}

// put puts set, compiled from u, whose SHA-256 is digest, in force, unless
// the run has ended.
func (s *sink) put(set *evaluator.FlagSet, u source.Update, digest [sha256.Size]byte) error {
	r := (*run)(s)
	p := r.p
	changes, first, ok := r.accept(set, u.Origin, digest)
	if !ok {
		return errShutDown
	}
	attrs := []any{slog.String("origin", u.Origin), slog.Int("flags", set.Len())}
	if !first { // Init's flags are not compared with anything (see accept)
		attrs = append(attrs, slog.Int("changed", len(changes)))
	}
	p.log.Debug("flags loaded", attrs...)
	// Written outside the run's lock: a slow disk must not hold up Init's
	// deadline, Shutdown or the other reports.
	if p.cfg.CacheFile != "" {
		if err := writeCache(p.cfg.CacheFile, u); err != nil {
			p.log.Warn("flag cache not written", slog.String("path", p.cfg.CacheFile), slog.String("error", err.Error()))
		}
	}
	return nil
}

// accept puts a compiled flag set in force and reports it, unless the run
// has ended. It returns the keys of the flags that changed, which Init's
// flags (first) are not compared for.
func (r *run) accept(set *evaluator.FlagSet, origin string, digest [sha256.Size]byte) (changes []string, first, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state == stateFatal {
		return nil, false, false
	}
	first = r.state == stateStarting
	// The new flags are compiled and in force before anyone hears of them.
	r.p.loadedAt.Store(time.Now().UnixNano())
	old := r.p.putInForce(set)
	if !first {
		// Init's flags are announced by READY, which lists none; sorting
		// the keys of a large first set would lengthen every start.
		added, removed, changed := set.Changes(old)
		changes = slices.Concat(added, removed, changed)
		if old != nil && !reflect.DeepEqual(old.Enrichment(), set.Enrichment()) {
			// Every flag may evaluate differently with other enrichment.
			changes = unionKeys(old, set)
		}
	}
	// A source that comes back after a loss has reconnected; one whose
	// flag set was rejected has only sent a better one.
	lost := r.state == stateStale || r.state == stateError && !r.rejectedSet
	r.p.stats.appliedSet(digest, lost)
	r.lastErr, r.rejectedSet = nil, false

	switch {
	case r.state == stateStarting:
		// Init returns nil and OpenFeature announces READY itself.
		r.markReady()
	case r.state == stateReady:
		if len(changes) > 0 {
			r.emit(openfeature.ProviderConfigChange, "flags changed", changes, "")
		}
	default: // back from a loss, a rejected flag set or a failed Init
		r.markReady()
		r.emit(openfeature.ProviderReady, "flags loaded from "+origin, nil, "")
		r.emit(openfeature.ProviderConfigChange, "flags loaded from "+origin, changes, "")
	}
	r.state = stateReady
	r.wake()
	return changes, first, true
}

// tooLarge handles a flag set the source refused for its size: like a
// flag set that does not parse, it is an error at once, not a loss that
// may heal within the grace period, since the server will send the same
// set again.
func (r *run) tooLarge(e *source.MessageTooLargeError) {
	err := fmt.Errorf("the flag set from %s is %d bytes, over the limit of %d bytes: raise it with flagsnap.WithMaxMessageSize", e.Target, e.Size, e.Limit)
	r.p.log.Error("flag set refused; the previous flags stay in force", slog.String("origin", e.Target),
		slog.Int("size", e.Size), slog.Int("limit", e.Limit), slog.String("error", err.Error()))
	r.p.stats.failed(err, true)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastErr = err
	if r.state == stateStarting || r.state == stateFatal || r.state == stateInitError {
		return // Init reports it, or has: the flags' arrival will be news
	}
	r.state = stateError
	r.emit(openfeature.ProviderError, err.Error(), nil, openfeature.GeneralCode)
	r.wake()
}

// rejected handles a flag set that does not parse: the flags in force stay,
// and the reason is logged and reported.
func (r *run) rejected(origin string, err error) {
	r.p.log.Error("flag set rejected; the previous flags stay in force", slog.String("origin", origin), slog.String("error", err.Error()))
	r.p.stats.failed(err, true)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastErr, r.rejectedSet = err, true
	if r.state == stateStarting || r.state == stateFatal {
		return // Init reports it
	}
	r.state = stateError
	r.emit(openfeature.ProviderError, fmt.Sprintf("flag set from %s rejected: %v", origin, err), nil, openfeature.ParseErrorCode)
	r.wake()
}

func (s *sink) Lost(err error) {
	r := (*run)(s)
	var tooLarge *source.MessageTooLargeError
	if errors.As(err, &tooLarge) {
		r.tooLarge(tooLarge)
		return
	}
	r.p.stats.failed(err, false)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastErr, r.rejectedSet = err, false
	switch r.state {
	case stateReady:
		r.p.log.Warn(fmt.Sprintf("flag source lost: STALE now, ERROR if it is still lost in %v; evaluations answer from the flags in force", r.p.cfg.RetryGracePeriod),
			slog.String("error", errText(err)))
		r.state = stateStale
		r.emit(openfeature.ProviderStale, "flag source lost: "+errText(err), nil, "")
		r.wake()
	case stateError:
		// Already reported; a lost source stays an error.
	}
}

func (s *sink) Fatal(err error) {
	r := (*run)(s)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state == stateFatal {
		return
	}
	r.p.log.Error("flag source failed for good: giving up, no more attempts", slog.String("error", errText(err)))
	r.p.stats.failed(err, false)
	if err == nil {
		// Init and giveUpInit tell a fatal source by a non-nil fatalErr.
		err = errors.New("the flag source gave up without a reason")
	}
	starting := r.state == stateStarting
	r.state = stateFatal
	r.fatalErr = err
	// Closing fatal ends the wait of any Init, the first or one called
	// again after the first gave up, as markReady does for flags.
	close(r.fatal)
	if starting {
		return // Init reports it
	}
	r.emit(openfeature.ProviderError, "flag source failed: "+errText(err), nil, openfeature.ProviderFatalCode)
	r.wake()
}

// compile loads a flag document as the provider serves it: with the
// provider's load options and the enrichment of its sync context. Flags
// from the source and from the cache both come through here, so that a
// cached flag set evaluates exactly as the live one did.
func (p *Provider) compile(flags []byte, syncCtx map[string]any) (*evaluator.FlagSet, error) {
	p.compiled.Add(1)
	// The flags in force lend the new set every flag written as before:
	// an update that changes one flag of many compiles that one.
	opts := append(slices.Clip(p.loadOpts), evaluator.WithPrevious(p.flags()))
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

func unionKeys(a, b *evaluator.FlagSet) []string {
	keys := slices.Concat(a.Keys(), b.Keys())
	slices.Sort(keys)
	return slices.Compact(keys)
}

// inForce is the flag set evaluations answer from, with the table they are
// counted in (nil with WithoutUsage): one pointer, so that an evaluation
// never counts in another set's table.
type inForce struct {
	set    *evaluator.FlagSet
	counts *usage.Table
}

// flags is the flag set in force, nil before the first.
func (p *Provider) flags() *evaluator.FlagSet {
	if in := p.snap.Load(); in != nil {
		return in.set
	}
	return nil
}

// putInForce makes set the flag set in force, counted from now on, and
// returns the one it replaces. It is called under the run's lock.
func (p *Provider) putInForce(set *evaluator.FlagSet) (old *evaluator.FlagSet) {
	in := &inForce{set: set, counts: p.countUsage(set)}
	if prev := p.snap.Swap(in); prev != nil {
		return prev.set
	}
	return nil
}
