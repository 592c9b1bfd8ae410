package flagsnap

// Overrides: flag documents layered over the provider's source, whose
// flags win by key, whatever state the source is in.

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap/evaluator"
	"github.com/flagsnap/flagsnap/source"
)

// overrideSpec is one override as the options gave it: a file or a source.
type overrideSpec struct {
	path    string
	src     source.Source
	fromEnv bool // FLAGSNAP_OVERRIDE_FILE's
}

// overrideLayer is one override of a run. Its fields but src and name are
// under run.mu.
type overrideLayer struct {
	name string
	src  source.Source
	// set is the last good flag set of the override, nil while it has
	// none (a file that does not exist, or not yet).
	set       *evaluator.FlagSet
	state     LayerState
	appliedAt time.Time
	lastErr   string
	lastErrAt time.Time
	doc       []byte // the document set came from, for DebugHandler
}

// LayerState is the health of an override (see LayerStatus).
type LayerState string

const (
	// LayerWaiting: nothing heard from the override yet.
	LayerWaiting LayerState = "waiting"
	// LayerServing: the override's latest flags are layered over the
	// source's.
	LayerServing LayerState = "serving"
	// LayerAbsent: the override file does not exist: no overrides from
	// it, until it does.
	LayerAbsent LayerState = "absent"
	// LayerError: the override's last document was refused, or it cannot
	// be read; its last good flags, if any, stay layered.
	LayerError LayerState = "error"
)

// newOverrides builds the sources of the overrides for a run: a source
// runs once, so a file is read by a new one at each Init.
func (p *Provider) newOverrides() ([]*overrideLayer, error) {
	var out []*overrideLayer
	for _, o := range p.cfg.overrides {
		src := o.src
		if src == nil {
			// Watched as WithFile's file is; the run says its absence in
			// its own words.
			fc := p.fileConfig()
			fc.Path, fc.Optional = o.path, true
			f, err := source.NewFile(fc)
			if err != nil {
				return nil, fmt.Errorf("override file %s: %w", o.path, err)
			}
			src = f
		}
		out = append(out, &overrideLayer{name: sourceOrigin(src).name, src: src, state: LayerWaiting})
	}
	return out, nil
}

// runOverrides starts the sources of the overrides; each reports to a
// sink of its own.
func (r *run) runOverrides() {
	for _, l := range r.overrides {
		r.wg.Go(func() {
			if err := l.src.Run(r.ctx, &overrideSink{r: r, l: l}); err != nil && r.ctx.Err() == nil {
				(&overrideSink{r: r, l: l}).Fatal(err)
			}
		})
	}
}

// layered is the flag set to put in force for the main source's set r.main,
// the overrides over it, and the overrides' documents. Under r.mu.
// The same layers give the same set, so that a flag set delivered again
// is recognised as the one in force.
func (r *run) layered() (set *evaluator.FlagSet, overrideDocs [][]byte) {
	layers := []evaluator.Layer{{Name: r.p.origin.name, Set: r.main}}
	for _, l := range r.overrides {
		if l.set != nil {
			layers = append(layers, evaluator.Layer{Name: l.name, Set: l.set})
			overrideDocs = append(overrideDocs, l.doc)
		}
	}
	if r.lastLayers.set == nil || !slices.Equal(layers, r.lastLayers.of) {
		r.lastLayers.of, r.lastLayers.set = layers, evaluator.Layered(layers...)
	}
	return r.lastLayers.set, overrideDocs
}

// putMain puts the main source's flag set, compiled from doc, in force
// with the overrides over it, and returns the set in force and the one it
// replaced. Under r.mu.
func (r *run) putMain(set *evaluator.FlagSet, doc []byte) (inForce, old *evaluator.FlagSet) {
	r.main, r.mainDoc = set, keepDocument(doc)
	inForce, old = r.putLayered()
	r.compress(r.mainDoc) // once it is the document in force
	return inForce, old
}

// putLayered puts the main source's flags in force again with the
// overrides as they are now, and returns the set in force and the one it
// replaced. Under r.mu.
func (r *run) putLayered() (set, old *evaluator.FlagSet) {
	set, overrideDocs := r.layered()
	old = r.p.putInForce(set, r.mainDoc, overrideDocs)
	r.noteShadows(set)
	return set, old
}

// overrideSink is how an override's source reaches the run.
type overrideSink struct {
	r *run
	l *overrideLayer
}

// Update compiles the override's document strictly: an override is there
// to force a known answer, and one with a broken flag is refused whole,
// its last good flags kept.
func (s *overrideSink) Update(u source.Update) error {
	r, l := s.r, s.l
	r.mu.Lock()
	prev := l.set
	r.mu.Unlock()
	opts := append(slices.Clip(r.p.compileOptions), evaluator.WithPrevious(prev), evaluator.WithStrict())
	set, err := evaluator.Load(u.Flags, opts...)
	if err != nil {
		if errors.Is(err, evaluator.ErrUnresolvedRef) {
			err = fmt.Errorf("%w (a $ref resolves in the document that defines the flag: copy the evaluator into this document's $evaluators)", err)
		}
		s.failed("override refused; its last good flags stay", err)
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	l.set, l.doc, l.state, l.appliedAt, l.lastErr = set, u.Flags, LayerServing, time.Now(), ""
	r.p.log.Info("override loaded", slog.String("override", l.name), slog.Int("flags", set.Len()))
	r.relayer("override " + l.name + " changed")
	return nil
}

// Lost withdraws the overrides of a file that no longer exists, or does
// not yet: no file, no overrides. Any other loss keeps them.
func (s *overrideSink) Lost(err error) {
	r, l := s.r, s.l
	if !errors.Is(err, fs.ErrNotExist) {
		s.failed("override unreadable; its last good flags stay", err)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	l.state, l.doc = LayerAbsent, nil
	r.p.log.Info("override file absent: no overrides from it until it exists", slog.String("override", l.name))
	if l.set != nil {
		l.set = nil
		r.relayer("override " + l.name + " removed")
	}
}

// Fatal: the override's source gave up; its last good flags stay.
func (s *overrideSink) Fatal(err error) {
	s.failed("override source failed for good; its last good flags stay", err)
}

// failed records what went wrong with the override, keeping its flags.
func (s *overrideSink) failed(msg string, err error) {
	r, l := s.r, s.l
	r.p.log.Error(msg, slog.String("override", l.name), slog.String("error", errText(err)))
	r.mu.Lock()
	defer r.mu.Unlock()
	l.state, l.lastErr, l.lastErrAt = LayerError, errText(err), time.Now()
}

// relayer puts the main source's flags in force again with the overrides
// as they are now, announcing the flags that changed. The state of the
// main source is not touched: an override applies while it is lost too.
// Under r.mu; nothing happens before the main source's first flags, which
// Init waits for, or after the run ended.
func (r *run) relayer(why string) {
	if r.main == nil || r.state == stateFatal {
		return
	}
	set, old := r.putLayered()
	added, removed, changed := set.Changes(old)
	changes := slices.Concat(added, removed, changed)
	if len(changes) == 0 {
		return
	}
	r.p.log.Info("flags changed", append([]any{slog.String("origin", why), slog.Int("flags", set.Len())}, changedKeys(changes)...)...)
	if r.state != stateStarting {
		r.emit(openfeature.ProviderConfigChange, why, changes, "")
	}
}

// maxShadowLines is how many flags the WARN lines of one change name one
// by one; the rest are counted in one more line.
const maxShadowLines = 20

// noteShadows logs, at WARN, each flag of the main source an override
// starts or stops shadowing, so that an override left in place after an
// incident shows in the logs. Under r.mu.
func (r *run) noteShadows(set *evaluator.FlagSet) {
	now := overriddenBy(set)
	maps.DeleteFunc(now, func(key, _ string) bool { return r.main.Index(key) < 0 })
	var started, stopped []string
	for key := range now {
		if r.shadowed[key] != now[key] {
			started = append(started, key)
		}
	}
	for key := range r.shadowed {
		if _, ok := now[key]; !ok {
			stopped = append(stopped, key)
		}
	}
	slices.Sort(started)
	slices.Sort(stopped)
	warnEach(r.p.log, started, now, "override shadows a flag of the source", "overrides shadow more flags of the source")
	warnEach(r.p.log, stopped, r.shadowed, "override no longer shadows a flag of the source", "overrides stopped shadowing more flags of the source")
	r.shadowed = now
}

// warnEach logs msg at WARN for each of keys, naming its override in
// layerOf, up to maxShadowLines, and the rest in one line of more.
func warnEach(log *slog.Logger, keys []string, layerOf map[string]string, msg, more string) {
	for i, key := range keys {
		if i == maxShadowLines {
			log.Warn(more, slog.Int("more", len(keys)-i))
			return
		}
		log.Warn(msg, slog.String("flag", key), slog.String("override", layerOf[key]))
	}
}

// LayerStatus is the health of one override (see SourceStatus.Overrides).
type LayerStatus struct {
	// Source is where the override comes from: a file path, or a
	// source's origin.
	Source string     `json:"source"`
	State  LayerState `json:"state"`
	// Flags is the number of flags the override defines, AppliedAt when
	// its last good flags were layered.
	Flags     int       `json:"flags"`
	AppliedAt time.Time `json:"appliedAt,omitzero"`
	// LastError is the last thing that went wrong with it, and when.
	LastError   string    `json:"lastError,omitempty"`
	LastErrorAt time.Time `json:"lastErrorAt,omitzero"`
}

// overrideStatus reports the overrides of the run, and which flag keys
// each answers for.
func (p *Provider) overrideStatus(set *evaluator.FlagSet) (layers []LayerStatus, overridden map[string]string) {
	r := p.currentRun()
	if r == nil {
		return nil, nil
	}
	r.mu.Lock()
	for _, l := range r.overrides {
		st := LayerStatus{Source: l.name, State: l.state, AppliedAt: l.appliedAt, LastError: l.lastErr, LastErrorAt: l.lastErrAt}
		if l.set != nil {
			st.Flags = l.set.Len()
		}
		layers = append(layers, st)
	}
	r.mu.Unlock()
	if set != nil {
		overridden = overriddenBy(set)
	}
	return layers, overridden
}

// overriddenBy is the keys of set that an override defines, each with the
// name of that override; nil when there are none.
func overriddenBy(set *evaluator.FlagSet) map[string]string {
	var out map[string]string
	names := set.Layers()
	for key, layer := range set.Overridden() {
		if out == nil {
			out = map[string]string{}
		}
		out[key] = names[layer]
	}
	return out
}
