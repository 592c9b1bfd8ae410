package evaluator

// Loading: a flag document becomes a FlagSet, its flags compiled on a few
// goroutines, the unchanged ones carried over from the set in force.

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"log/slog"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/flagsnap/flagsnap/internal/flagddefault"
)

// Load parses and compiles a flag document (JSON or YAML). A document that
// is not a flag set is an error (*SyntaxError, *DocumentError). A problem
// confined to one flag only breaks that flag, unless WithStrict was given,
// in which case the error is a *ValidationError. The flags of a large
// document are compiled on up to four goroutines, as GOMAXPROCS allows,
// while it is decoded; all of them have ended when Load returns.
func Load(doc []byte, opts ...Option) (*FlagSet, error) {
	cfg := config{
		version: flagddefault.FractionalVersion,
		logger:  slog.New(slog.DiscardHandler),
		clock:   time.Now,
	}
	for _, o := range opts {
		o(&cfg)
	}
	if !cfg.version.Valid() {
		return nil, fmt.Errorf("invalid fractional version %v", cfg.version)
	}
	set, l, err := loadDocument(doc, cfg)
	if err != nil {
		return nil, err
	}
	set.countBroken()
	if cfg.strict && len(set.problems) > 0 {
		return nil, &ValidationError{Problems: set.problems}
	}
	ctx := context.Background()
	for i, p := range set.problems {
		if !p.WhenReached {
			cfg.logger.LogAttrs(ctx, slog.LevelError, "flag cannot be evaluated", slog.String("flag", p.Flag), slog.String("error", p.Err.Error()), slog.String("pointer", p.Pointer()))
			continue
		}
		if i > 0 && set.problems[i-1].Flag == p.Flag {
			continue // one warning for a flag's broken parts
		}
		cfg.logger.LogAttrs(ctx, slog.LevelWarn, "a part of the flag's rule cannot be evaluated; evaluations that reach it answer PARSE_ERROR, the others as usual",
			slog.String("flag", p.Flag), slog.String("error", p.Err.Error()), slog.String("pointer", p.Pointer()), slog.Bool("problem", true))
	}
	for _, w := range l.warnings {
		attrs := []slog.Attr{slog.String("flag", w.flag), slog.String("pointer", jsonPointer(w.at))}
		if w.flag == "" {
			attrs = attrs[1:]
		}
		cfg.logger.LogAttrs(ctx, slog.LevelWarn, w.msg, attrs...)
	}
	return set, nil
}

// loadDocument is Load before the flag set's problems are reported. Large
// flag sets are compiled while the rest is decoded, but for what depends on
// the rest: compileAll compiles those flags, and addSetMetadata adds the metadata.
func loadDocument(doc []byte, cfg config) (*FlagSet, *loader, error) {
	early := loader{cfg: cfg, noRefs: true}
	if cfg.prev != nil {
		early.prev = &cfg.prev.index
	}
	var pool *compilePool
	read := 0
	top, refs, yamlProblems, err := decodeDocument(doc, func(defs []flagDef) {
		// Sooner than in compileAll: the decoder's goroutine has work too.
		if read += len(defs); read >= parallelLoadMin/8 {
			if pool == nil {
				pool = startPool(early, true)
			}
			pool.add(defs)
		}
	})
	if pool != nil {
		pool.wait()
	}
	if err != nil {
		return nil, nil, err
	}
	l := &loader{cfg: cfg, noRefs: !refs}
	set, err := l.begin(top)
	if err != nil {
		return nil, nil, err
	}
	defs, err := l.flagDefinitions(top)
	if err != nil {
		return nil, nil, err
	}
	if len(yamlProblems) > 0 { // what JSON cannot hold breaks its YAML flag
		for fd := range defs.all() {
			if err := yamlProblems[fd.place()]; err != nil {
				fd.fail(err)
			}
		}
	}
	l.compileAll(defs)
	return l.finish(set, top, defs), l, nil
}

type warning struct {
	flag, msg string
	at        []string // as FlagProblem.Path
}

type loader struct {
	cfg        config
	evaluators map[string]any
	// warnings are the flag set's own, then those of the flag being
	// compiled until compileDef moves them to its definition.
	warnings []warning
	scratch  []byte     // reused by fingerprint
	noRefs   bool       // the document has no "$ref" anywhere
	prev     *flagIndex // the flags of WithPrevious, when they can be reused
	locs     []loc      // reused by compileRule's compilers
}

func (l *loader) warn(flag string, at []string, msg string) {
	l.warnings = append(l.warnings, warning{flag: flag, msg: msg, at: at})
}

// begin is a new flag set with what the document says besides its flags,
// and whether flags can be taken from WithPrevious's set.
func (l *loader) begin(top map[string]any) (*FlagSet, error) {
	set := &FlagSet{
		version: l.cfg.version,
		clock:   l.cfg.clock,
		id:      lastSetID.Add(1),
	}
	evs, err := objectMember("$evaluators", top["$evaluators"])
	if err != nil {
		return nil, &DocumentError{Msg: err.Error(), Path: []string{"$evaluators"}}
	}
	l.evaluators = evs
	l.warnEmptyEvaluators()
	meta, err := objectMember("metadata", l.resolveDataRefs(top["metadata"]))
	if err != nil {
		return nil, &DocumentError{Msg: err.Error(), Path: []string{"metadata"}}
	}
	set.metadata = l.metadata(nil, meta)
	ctx := canonicalAppend(nil, l.evaluators)
	ctx = canonicalAppend(ctx, set.metadata)
	set.reuseKey = maphash.Bytes(writtenSeed, append(ctx, byte(set.version)))
	if p := l.cfg.prev; p != nil && p.reuseKey == set.reuseKey {
		l.prev, set.from = &p.index, p.id
	}
	return set, nil
}

// finish puts the compiled flags in set, with their problems and warnings.
func (l *loader) finish(set *FlagSet, top map[string]any, defs flagDefs) *FlagSet {
	index, unique := indexFlags(flagsOf(defs))
	if !unique {
		defs = l.lastOfEachKey(defs)
		index, _ = indexFlags(flagsOf(defs))
	}
	set.index = index
	set.absent = &flag{defaultIdx: -1, metadata: set.metadata}
	set.missing = &missingKeys{}
	setMeta := canonicalAppend(nil, set.metadata)
	for def := range defs.all() {
		if def.problem != nil {
			set.problems = append(set.problems, FlagProblem{Flag: def.key, Path: def.flag.broken.path, Err: def.problem})
			continue
		}
		if def.notes != nil {
			set.problems = append(set.problems, def.notes.problems...)
			l.warnings = append(l.warnings, def.notes.warnings...)
		}
		switch {
		case def.reused:
			set.reused++
		case set.from != 0:
			set.fresh = append(set.fresh, def.flag)
		}
		if def.object && !def.reused {
			l.addSetMetadata(def.flag, set.metadata, setMeta)
		}
	}
	switch t := top["flags"].(type) {
	case map[string]any:
		l.byFlag(set)
	case *flagList:
		if !t.array {
			l.byFlag(set)
		}
	}
	return set
}

// flagsOf lists the flags of defs, those that answer a problem of their
// definition's place made now, less those that cannot be asked for.
func flagsOf(defs flagDefs) []*flag {
	flags := make([]*flag, 0, defs.count())
	for def := range defs.all() {
		if def.problem != nil {
			def.flag = newFlag(def.key).breakWith(def.problem, def.problemPath())
		}
		if !def.unnamed {
			flags = append(flags, def.flag)
		}
	}
	return flags
}

// addSetMetadata gives f the flag set's metadata under its own, and a fingerprint
// that covers both; setMeta is the canonical form of the flag set's.
func (l *loader) addSetMetadata(f *flag, meta map[string]any, setMeta []byte) {
	own := f.metadata
	if f.metadata = mergeMetadata(meta, own); f.metadata == nil {
		return // the fingerprint of the rest is the flag's
	}
	b := binary.LittleEndian.AppendUint64(l.scratch[:0], f.fingerprint)
	if len(own) == 0 {
		b = append(b, setMeta...)
	} else {
		b = canonicalAppend(b, f.metadata)
	}
	l.scratch = b
	f.fingerprint = maphash.Bytes(fingerprintSeed, b)
}

// mergeMetadata is a flag's metadata: its own over the flag set's.
func mergeMetadata(setMeta, flagMeta map[string]any) map[string]any {
	switch {
	case len(flagMeta) == 0 && len(setMeta) > 0:
		// Shared by every flag without metadata of its own: nothing
		// writes to it.
		return setMeta
	case len(setMeta)+len(flagMeta) > 0:
		m := make(map[string]any, len(setMeta)+len(flagMeta))
		maps.Copy(m, setMeta)
		maps.Copy(m, flagMeta)
		return m
	}
	return nil
}

// byFlag orders the problems and the warnings of a "flags" object by flag
// key, the one order its members have from one decoding to the next.
func (l *loader) byFlag(set *FlagSet) {
	slices.SortStableFunc(set.problems, func(a, b FlagProblem) int { return strings.Compare(a.Flag, b.Flag) })
	slices.SortStableFunc(l.warnings, func(a, b warning) int { return strings.Compare(a.flag, b.flag) })
}

var parallelLoadMin = 2048 // flags that pay for goroutines (a variable for tests)

const maxLoadWorkers = 4

// compileAll compiles the definitions that are not compiled yet.
func (l *loader) compileAll(defs flagDefs) {
	todo := 0
	for fd := range defs.all() {
		if fd.flag == nil && fd.problem == nil {
			todo++
		}
	}
	if todo < parallelLoadMin {
		for fd := range defs.all() {
			l.compileDef(fd, false)
		}
		return
	}
	p := startPool(loader{cfg: l.cfg, evaluators: l.evaluators, noRefs: l.noRefs, prev: l.prev}, false)
	for _, chunk := range defs {
		for part := range slices.Chunk(chunk, defsChunk) {
			p.add(part)
		}
	}
	p.wait()
}

// compilePool compiles chunks of definitions on goroutines beside the one
// that hands them over, each with a loader of its own.
type compilePool struct {
	queue chan []flagDef
	wg    sync.WaitGroup
	early bool
	// own compiles on the goroutine that hands the chunks over those that
	// the others are too far behind to take.
	own *loader
}

// poolBacklog is how many chunks may wait: more would hold more of a
// large document decoded at once.
const poolBacklog = 8

// startPool starts the goroutines of a pool whose loaders are like.
func startPool(like loader, early bool) *compilePool {
	p := &compilePool{queue: make(chan []flagDef, poolBacklog), early: early, own: &like}
	for range max(1, min(runtime.GOMAXPROCS(0), maxLoadWorkers)-1) {
		sub := like
		p.wg.Go(func() {
			for defs := range p.queue {
				sub.compileChunk(defs, early)
			}
		})
	}
	return p
}

func (p *compilePool) add(defs []flagDef) {
	select {
	case p.queue <- defs:
	default:
		p.own.compileChunk(defs, p.early)
	}
}

// wait returns once the chunks are compiled, helping with those waiting.
func (p *compilePool) wait() {
	close(p.queue)
	for defs := range p.queue {
		p.own.compileChunk(defs, p.early)
	}
	p.wg.Wait()
}

func (l *loader) compileChunk(defs []flagDef, early bool) {
	for i := range defs {
		l.compileDef(&defs[i], early)
	}
}

// compileDef compiles fd unless it is compiled already or has a problem
// of its own; a flag written exactly as in WithPrevious's set (l.prev) is
// taken from it as it is. Early, the rest of the document is not known:
// such a flag, and a definition with a "$ref", are left for later.
func (l *loader) compileDef(fd *flagDef, early bool) {
	if fd.flag != nil || fd.problem != nil || (early && (fd.refs || fd.key == "")) {
		return
	}
	var written uint64
	if fd.span != nil {
		written = maphash.Bytes(writtenSeed, fd.span)
		if f := l.prev.get(fd.key); f != nil && f.reusable && f.written == written {
			if !early {
				fd.flag, fd.key, fd.reused = f, f.key, true
			}
			return
		}
	}
	warned := len(l.warnings)
	f, problems := l.compileFlag(fd)
	f.written = written
	f.reusable = written != 0 && len(problems) == 0 && len(l.warnings) == warned
	if len(problems) > 0 || len(l.warnings) > warned {
		fd.notes = &defNotes{problems: problems, warnings: slices.Clone(l.warnings[warned:])}
		l.warnings = l.warnings[:warned]
	}
	fd.flag, fd.fields = f, nil // what the flag was compiled from need not stay
}
