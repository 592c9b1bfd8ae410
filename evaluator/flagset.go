package evaluator

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"iter"
	"log/slog"
	"maps"
	"math"
	"math/big"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flagsnap/flagsnap/fractional"
	"github.com/flagsnap/flagsnap/internal/flagddefault"
	"github.com/flagsnap/flagsnap/internal/suggest"
)

// FlagSet is a compiled, immutable flag set. It is safe for concurrent use:
// every method only reads it.
type FlagSet struct {
	index    flagIndex // the flags, by key
	metadata map[string]any
	absent   *flag // what evaluating a key the set does not define answers from
	problems []FlagProblem
	version  fractional.Version
	clock    func() time.Time
	enrich   map[string]any
	reuseKey uint64 // what else a flag's compilation depends on (see WithPrevious)
	// id tells flag sets apart. A set that took flags from the one whose
	// id is from (WithPrevious) lists the flags it compiled in fresh and
	// counts the others in reused: Changes from that set needs no more.
	id, from uint64
	fresh    []*flag
	reused   int
	// missing is shared by the sets WithEnrichment makes, which have the
	// same keys.
	missing *missingKeys
	// brokenWhole and brokenPartly are BrokenFlags' counts.
	brokenWhole, brokenPartly int
}

// flag is one compiled flag. Its size is most of the memory of a large set:
// what is cheap to work out at evaluation is not kept.
type flag struct {
	key string
	// keyRef is the key boxed once, for $flagd.flagKey: nil for a flag
	// without a rule, which cannot read it.
	keyRef   any
	variants map[string]int // by name, only past maxScannedVariants
	// vals may be shared with other flags of the set that have the same
	// variants: nothing writes to them once the flag is compiled.
	vals     []variant
	rule     *node
	broken   *Error
	metadata map[string]any // flag metadata over flag-set metadata
	// fingerprint is 128 bits of hash (see loader.fingerprint): it only
	// tells a flag from the same key's previous definition, in this
	// process.
	fingerprint [fingerprintSize]byte
	// written is a hash of the definition as written, and reusable says
	// that it compiled without a problem or a warning: a later flag set
	// whose definition of the key is written the same takes this flag
	// as it is (see WithPrevious).
	written    uint64
	defaultIdx int32 // -1: no default variant
	disabled   bool
	reusable   bool
}

const fingerprintSize = 16

// variant is one variant value, prepared for every typed accessor.
type variant struct {
	name string
	s    string
	f    float64
	// obj is the value as an interface: objects and arrays in plain JSON
	// form, numbers as int64 when whole (else float64), booleans and
	// strings as they are. Boxed once at load, so that Evaluation.Value
	// allocates nothing.
	obj any
	k   kind // kBool, kNum, kStr, kObj (objects and arrays) or kNull
	b   bool
	// intOK: the number is a whole number, and int64(f) is it exactly
	// (integers past 2^53 are refused at load).
	intOK bool
}

// Option configures how a flag set is loaded.
type Option func(*config)

type config struct {
	version fractional.Version
	strict  bool
	logger  *slog.Logger
	clock   func() time.Time
	prev    *FlagSet
}

// WithPrevious names the flag set that the document replaces: a flag
// whose definition is written exactly as it was there, in a document
// whose $evaluators and metadata are the same, is taken from it as it is
// instead of being compiled again, so that an update that changes a few
// flags of many costs little more than decoding the document. Flags that
// had a problem or a warning are compiled again, to be reported again.
func WithPrevious(set *FlagSet) Option {
	return func(c *config) { c.prev = set }
}

// writtenSeed hashes definitions as written: flag sets are only compared
// within a process.
var writtenSeed = maphash.MakeSeed()

// fingerprintSeeds make a flag's fingerprint: two seeds, for 128 bits.
var fingerprintSeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

var lastSetID atomic.Uint64

// WithFractionalVersion selects the bucketing of the fractional operator
// (fractional.V2 by default, which is what flagd uses today, and the
// provider's default too).
func WithFractionalVersion(v fractional.Version) Option {
	return func(c *config) { c.version = v }
}

// WithStrict rejects the whole document when any flag has a problem, as
// flagd does, instead of loading the other flags.
func WithStrict() Option {
	return func(c *config) { c.strict = true }
}

// WithLogger receives the load-time warnings: broken flags, dropped
// metadata, deprecated operators. Nothing is logged without it. Each record
// has the attributes "flag" (the flag's key, absent for the flag set's own
// metadata) and "pointer", the JSON Pointer of the part of the document it
// concerns (see FlagProblem.Path).
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.logger = l
		}
	}
}

// WithClock sets the clock behind $flagd.timestamp (time.Now by default).
func WithClock(now func() time.Time) Option {
	return func(c *config) {
		if now != nil {
			c.clock = now
		}
	}
}

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
// the rest: compileAll compiles those flags, and settle adds the metadata.
func loadDocument(doc []byte, cfg config) (*FlagSet, *loader, error) {
	early := loader{cfg: cfg, noRefs: true}
	if cfg.prev != nil {
		early.prev = &cfg.prev.index
	}
	var pool *compilePool
	read := 0
	top, refs, err := decodeDocument(doc, func(defs []flagDef) {
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
	defs, err := flagDefinitions(top)
	if err != nil {
		return nil, nil, err
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
	scratch  []byte // reused by fingerprint
	noRefs   bool   // the document has no "$ref" anywhere
	// shared holds the variants of the flags compiled so far, by their
	// form in vscratch: thousands of flags have the same few.
	shared   map[string]*sharedVariants
	vscratch []byte
	prev     *flagIndex // the flags of WithPrevious, when they can be reused
	vals     []variant  // read by setVariants, before shareVariants
	locs     []loc      // reused by compileRule's compilers
	paths    map[string]path
	consts   map[constKey]*sharedConst
	rules    int // compiled by compileRule
}

// sharedVariants are variants that flags share, with their names boxed
// for shareNames once one of them has a rule.
type sharedVariants struct {
	vals  []variant
	boxed []any
}

// shareVariants gives f variants of its own, which setVariants left in
// the loader's scratch: those of an earlier flag with the same, or a copy.
func (l *loader) shareVariants(f *flag) *sharedVariants {
	key, shareable := l.variantsKey(f)
	if shareable {
		if sh, ok := l.shared[string(key)]; ok {
			f.vals = sh.vals
			return sh
		}
	}
	f.vals = slices.Clone(f.vals)
	if !shareable {
		return nil
	}
	if l.shared == nil {
		l.shared = make(map[string]*sharedVariants)
	}
	sh := &sharedVariants{vals: f.vals}
	l.shared[string(key)] = sh
	return sh
}

// variantsKey writes f's variants in a form equal for equal variants;
// shareable is false with an object among them, or too many to scan.
func (l *loader) variantsKey(f *flag) (key []byte, shareable bool) {
	if f.variants != nil {
		return nil, false
	}
	b := l.vscratch[:0]
	for i := range f.vals {
		v := &f.vals[i]
		if v.k == kObj {
			return nil, false
		}
		b = binary.AppendUvarint(b, uint64(len(v.name)))
		b = append(b, v.name...)
		b = append(b, byte(v.k), boolByte(v.b), boolByte(v.intOK))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v.f))
		b = binary.AppendUvarint(b, uint64(len(v.s)))
		b = append(b, v.s...)
	}
	l.vscratch = b
	return b, true
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
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
	if raw, ok := top["$evaluators"]; ok && raw != nil {
		evs, ok := raw.(map[string]any)
		if !ok {
			return nil, &DocumentError{Msg: fmt.Sprintf(`"$evaluators" is %s, not an object`, jsonType(raw)), Path: []string{"$evaluators"}}
		}
		l.evaluators = evs
	}
	set.metadata = l.metadata(nil, top["metadata"])
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
		// A key written twice in a "flags" object: the last definition
		// stands, as in a map.
		defs = lastOfEachKey(defs)
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
			l.settle(def.flag, set.metadata, setMeta)
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
			def.flag = newFlag(def.key).breakWith(def.problem, def.path())
		}
		if !def.unnamed {
			flags = append(flags, def.flag)
		}
	}
	return flags
}

// settle gives f the flag set's metadata under its own, and a fingerprint
// that covers both; setMeta is the canonical form of the flag set's.
func (l *loader) settle(f *flag, meta map[string]any, setMeta []byte) {
	own := f.metadata
	if f.metadata = mergeMetadata(meta, own); f.metadata == nil {
		return // the fingerprint of the rest is the flag's
	}
	b := append(l.scratch[:0], f.fingerprint[:]...)
	if len(own) == 0 {
		b = append(b, setMeta...)
	} else {
		b = canonicalAppend(b, f.metadata)
	}
	l.scratch = b
	f.fingerprint = fingerprintOf(b)
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

type flagDef struct {
	key    string
	fields *defFields // the definition, when it is an object
	raw    any        // the definition, when it is not
	span   []byte     // the definition as written, when it was decoded from JSON
	flag   *flag      // compiled, or taken from WithPrevious (reused)
	notes  *defNotes  // what compiling it reported, if anything
	// problem is one of the definition's place in the document: the flag
	// answers it, and is not compiled.
	problem error
	index   int  // in an array of flags; -1 when "flags" is an object
	object  bool // the definition is an object
	refs    bool // it may have a "$ref"
	reused  bool // the flag was taken from WithPrevious
	unnamed bool // an entry without a key: it cannot be asked for
	dropped bool // another definition takes its place
}

// fail makes err the definition's problem, which its flag answers: what
// compiling it made, if anything, does not stand.
func (fd *flagDef) fail(err error) {
	fd.problem, fd.flag, fd.notes = err, nil, nil
}

// defNotes are the problems and warnings of a flag's compilation.
type defNotes struct {
	problems []FlagProblem
	warnings []warning
}

// path is where part of the definition is, as FlagProblem.Path. It is made
// for a problem only: most flags have none.
func (d *flagDef) path(part ...string) []string {
	at := make([]string, 0, 2+len(part))
	if d.index >= 0 {
		at = append(at, "flags", strconv.Itoa(d.index))
	} else {
		at = append(at, "flags", d.key)
	}
	return append(at, part...)
}

// flagDefs are definitions in chunks, in document order: a large flag
// set's are read a chunk at a time (see flagList).
type flagDefs [][]flagDef

// all yields every definition.
func (defs flagDefs) all() iter.Seq[*flagDef] {
	return func(yield func(*flagDef) bool) {
		for _, chunk := range defs {
			for i := range chunk {
				if !yield(&chunk[i]) {
					return
				}
			}
		}
	}
}

// count is how many definitions there are.
func (defs flagDefs) count() int {
	n := 0
	for _, chunk := range defs {
		n += len(chunk)
	}
	return n
}

// withoutDropped is defs less the definitions marked dropped.
func (defs flagDefs) withoutDropped() flagDefs {
	for i := range defs {
		defs[i] = slices.DeleteFunc(defs[i], func(fd flagDef) bool { return fd.dropped })
	}
	return defs
}

// flagDefinitions lists the flags of the document, which may be an object
// keyed by flag key or an array of objects that carry their "key".
func flagDefinitions(top map[string]any) (flagDefs, error) {
	raw, ok := top["flags"]
	if !ok {
		return nil, &DocumentError{Msg: `"flags" is missing`}
	}
	switch t := raw.(type) {
	case *flagList:
		if t.array {
			return arrayDefinitions(t.chunks), nil
		}
		return t.chunks, nil
	case map[string]any:
		// In map order: load sorts what it reports by flag key, which is
		// cheaper than sorting every key of a large flag set.
		defs := make([]flagDef, 0, len(t))
		for k, v := range t {
			defs = append(defs, decodedDef(k, v, -1))
		}
		return flagDefs{defs}, nil
	case []any:
		defs := make([]flagDef, len(t))
		for i, el := range t {
			defs[i] = decodedDef("", el, i)
		}
		return arrayDefinitions(flagDefs{defs}), nil
	}
	return nil, &DocumentError{Msg: fmt.Sprintf(`"flags" is %s, not an object or an array`, jsonType(raw)), Path: []string{"flags"}}
}

// decodedDef is the definition of a decoded document that is not a
// flagList (a YAML document's).
func decodedDef(key string, raw any, index int) flagDef {
	obj, ok := raw.(map[string]any)
	if !ok {
		return flagDef{key: key, raw: raw, index: index, refs: true}
	}
	if index >= 0 {
		key, _ = obj["key"].(string)
	}
	f := &defFields{state: obj["state"], defaultVariant: obj["defaultVariant"],
		targeting: obj["targeting"], metadata: obj["metadata"], variants: obj["variants"]}
	if vs, ok := f.variants.(map[string]any); ok {
		f.variants = nil
		f.variantMembers = make([]member, 0, len(vs))
		for name, v := range vs {
			f.variantMembers = append(f.variantMembers, member{name: name, val: v})
		}
	}
	return flagDef{key: key, fields: f, index: index, object: true, refs: true}
}

// arrayDefinitions checks the keys that the entries of an array of flags
// carry: a missing key is a problem, a repeated one its first entry's.
func arrayDefinitions(defs flagDefs) flagDefs {
	seen := map[string]*flagDef{}
	for fd := range defs.all() {
		if fd.key == "" {
			fd.key, fd.unnamed = fmt.Sprintf("flags[%d]", fd.index), true
			fd.fail(fmt.Errorf(`flag entry has no "key"`))
			continue
		}
		if first, dup := seen[fd.key]; dup {
			first.fail(fmt.Errorf("flag key is defined more than once"))
			fd.dropped = true
			continue
		}
		seen[fd.key] = fd
	}
	return defs.withoutDropped()
}

// lastOfEachKey keeps the last definition of each key, as decoding the
// object into a map would.
func lastOfEachKey(defs flagDefs) flagDefs {
	last := map[string]*flagDef{}
	for fd := range defs.all() {
		if earlier := last[fd.key]; earlier != nil {
			earlier.dropped = true
		}
		last[fd.key] = fd
	}
	return defs.withoutDropped()
}

// metadata keeps the string, number and boolean entries of the metadata of
// def (nil for the flag set's). A number written as an integer (10) becomes
// int64, any other spelling (10.5, 10.0, 1e3) float64: OpenFeature's GetInt
// and GetFloat each accept only their own type.
func (l *loader) metadata(def *flagDef, raw any) map[string]any {
	if raw == nil {
		return nil
	}
	warn := func(msg string) {
		if def == nil {
			l.warn("", []string{"metadata"}, msg)
		} else {
			l.warn(def.key, def.path("metadata"), msg)
		}
	}
	obj, ok := raw.(map[string]any)
	if !ok {
		warn(fmt.Sprintf("metadata is %s, not an object; ignored", jsonType(raw)))
		return nil
	}
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		switch t := v.(type) {
		case string, bool:
			out[k] = t
		case json.Number:
			if i, err := strconv.ParseInt(string(t), 10, 64); err == nil {
				out[k] = i
			} else if f, err := strconv.ParseFloat(string(t), 64); err == nil {
				out[k] = f
			} else {
				warn(fmt.Sprintf("metadata %q: number %s is out of range; ignored", k, t))
			}
		default:
			warn(fmt.Sprintf("metadata %q is %s; only strings, numbers and booleans are kept", k, jsonType(v)))
		}
	}
	return out
}

func newFlag(key string) *flag {
	return &flag{key: key, defaultIdx: -1}
}

// compileFlag compiles a definition and lists its problems: all of them,
// for flagsnap validate. A flag with problems answers the first.
func (l *loader) compileFlag(fd *flagDef) (*flag, []FlagProblem) {
	if fd.fields == nil {
		f := newFlag(fd.key)
		err := fmt.Errorf("definition is %s, not an object", jsonType(fd.raw))
		f.breakWith(err, fd.path())
		return f, []FlagProblem{{Flag: fd.key, Path: fd.path(), Err: err}}
	}
	return l.compileFields(fd, fd.fields)
}

// defFields are the members of a definition that the loader reads, as
// decoded.
type defFields struct {
	state, defaultVariant, targeting, metadata any
	// variantMembers holds "variants" when it is an object (not nil, even
	// when empty), in the order written until sortVariants; variants
	// holds it otherwise, nil when it is missing.
	variants       any
	variantMembers []member
}

// member is a member of an object, as read.
type member struct {
	name string
	val  any
}

// sortVariants sorts the variants by name and keeps the last of a name
// written twice, as an object decoded into a map does.
func (def *defFields) sortVariants() {
	list := def.variantMembers
	slices.SortStableFunc(list, func(a, b member) int { return strings.Compare(a.name, b.name) })
	kept := list[:0]
	for i, m := range list {
		if i+1 == len(list) || list[i+1].name != m.name {
			kept = append(kept, m)
		}
	}
	clear(list[len(kept):])
	def.variantMembers = kept
}

// appendVariants is canonicalAppend of the variants, an object as the
// map it stands for.
func (def *defFields) appendVariants(b []byte) []byte {
	if def.variantMembers == nil {
		return canonicalAppend(b, def.variants)
	}
	b = append(b, 'm')
	b = binary.AppendUvarint(b, uint64(len(def.variantMembers)))
	for _, m := range def.variantMembers {
		b = binary.AppendUvarint(b, uint64(len(m.name)))
		b = append(b, m.name...)
		b = canonicalAppend(b, m.val)
	}
	return b
}

// compileFields is compileFlag on the members of the definition. settle
// adds the flag set's metadata, and its fingerprint.
func (l *loader) compileFields(fd *flagDef, def *defFields) (*flag, []FlagProblem) {
	key := fd.key
	def.sortVariants()
	f := newFlag(key)
	f.metadata = l.metadata(fd, def.metadata)
	switch state := def.state; state {
	case "ENABLED":
	case "DISABLED":
		f.disabled = true
	default:
		l.warn(key, fd.path("state"), fmt.Sprintf(`state should be "ENABLED" or "DISABLED", not %v; treated as ENABLED`, state))
	}

	targeting, refProblems := l.resolveRefs(def.targeting)
	asWritten := targeting
	if refProblems != nil {
		// The flag breaks below; its rule as written still tells changes
		// apart.
		asWritten = def.targeting
	}
	// flagd keeps a default variant as a plain string, so every flag set it
	// re-encodes says "" for a flag that had none: read once, as none.
	defaultVariant := def.defaultVariant
	if defaultVariant == "" {
		defaultVariant = nil
	}
	f.fingerprint = l.fingerprint(def, defaultVariant, asWritten)

	// The problems are gathered in the order they were always checked in,
	// so that the first, which the flag answers, is the one it answered
	// when the loader stopped there.
	var problems []FlagProblem
	add := func(err error, at ...string) { problems = append(problems, fd.problemAt(err, at...)) }
	variantsOK := true
	for _, p := range f.setVariants(def, l) {
		add(p.err, p.at...)
		variantsOK = variantsOK && len(p.at) > 1 // one variant's problem
	}
	if err := f.setDefault(defaultVariant, variantsOK); err != nil {
		add(err, "defaultVariant")
	}
	shared := l.shareVariants(f)
	whole := len(problems) > 0
	for _, p := range refProblems {
		add(p.err, p.at...)
	}
	rule, ruleProblems, ruleWhole := l.compileRule(fd, targeting)
	for _, err := range ruleProblems {
		var ce *CompileError
		if errors.As(err, &ce) {
			add(err, ce.at...)
		} else {
			add(err, "targeting")
		}
	}
	if whole || ruleWhole {
		f.breakWith(problems[0].Err, problems[0].Path)
		return f, problems
	}
	for i := range problems {
		// The rest of the rule answers as usual, as in flagd.
		problems[i].WhenReached = true
	}
	l.putRule(f, rule, shared)
	return f, problems
}

// problemAt is err as a problem of the flag fd defines, at at within the
// definition. An evaluation that reaches a part of the rule with the
// problem says where it is as the problem does.
func (fd *flagDef) problemAt(err error, at ...string) FlagProblem {
	path := fd.path(at...)
	if ce, ok := err.(*CompileError); ok {
		ce.pointer = jsonPointer(path)
	}
	return FlagProblem{Flag: fd.key, Path: path, Err: err}
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

// putRule puts a usable flag's compiled rule in place; boxed are its
// variants as shareVariants shared them.
func (l *loader) putRule(f *flag, rule *node, boxed *sharedVariants) {
	if rule != nil {
		assignSlots(rule)
		f.shareNamesWith(rule, boxed)
		f.rule = rule
		f.keyRef = f.key
	}
}

// breakWith makes f answer PARSE_ERROR because of err, which is written at
// path.
func (f *flag) breakWith(err error, path []string) *flag {
	f.broken = &Error{Code: CodeParseError, Flag: f.key, Err: err, path: path}
	f.broken.text = f.broken.Error()
	return f
}

// issue is a problem within a flag's definition, at a path relative to it.
type issue struct {
	at  []string
	err error
}

// setVariants reads the "variants" object into the loader's scratch, which
// f.vals is then a view of (shareVariants gives f its own). Every variant
// is read, so that each one's problem is reported: a variant is of the
// wrong type when it differs from the first (in name order) that can be.
func (f *flag) setVariants(def *defFields, l *loader) []issue {
	if def.variantMembers == nil {
		if def.variants == nil {
			return []issue{{[]string{"variants"}, fmt.Errorf(`"variants" is missing`)}}
		}
		return []issue{{[]string{"variants"}, fmt.Errorf(`"variants" is %s, not an object`, jsonType(def.variants))}}
	}
	list := def.variantMembers
	if len(list) == 0 {
		return []issue{{[]string{"variants"}, fmt.Errorf(`"variants" is empty`)}}
	}
	if len(list) > maxScannedVariants {
		f.variants = make(map[string]int, len(list))
	}
	f.vals = slices.Grow(l.vals[:0], len(list))[:len(list)]
	l.vals = f.vals
	var problems []issue
	first := -1 // the first variant read, whose type the others must have
	for i, m := range list {
		name := m.name
		v, err := newVariant(name, m.val)
		switch {
		case err != nil:
			problems = append(problems, issue{[]string{"variants", name}, err})
		case first < 0:
			first = i
		case v.k != f.vals[first].k:
			problems = append(problems, issue{[]string{"variants", name},
				fmt.Errorf("variants mix types: %q is %s, %q is %s", list[first].name, kindName(f.vals[first].k), name, kindName(v.k))})
		}
		// Kept even when wrong, so that a defaultVariant naming it is
		// not a problem too.
		f.vals[i] = v
		if f.variants != nil {
			f.variants[name] = i
		}
	}
	return problems
}

func newVariant(name string, raw any) (variant, error) {
	v := variant{name: name}
	switch t := raw.(type) {
	case nil:
		v.k = kNull
	case bool:
		v.k, v.b, v.obj = kBool, t, t
	case string:
		v.k, v.s, v.obj = kStr, t, t
	case json.Number:
		f, err := strconv.ParseFloat(string(t), 64)
		if err != nil || math.IsInf(f, 0) {
			return v, fmt.Errorf("variant %q: number %s is out of range", name, t)
		}
		v.k, v.f = kNum, f
		var i int64
		i, v.intOK = exactInt(string(t))
		if v.intOK && !exactFloat(i) && strconv.FormatFloat(f, 'f', -1, 64) == string(t) {
			// flagd's own spelling of a float that holds an integer
			// past 2^53 (2^60 is 1152921504606847000), as a flag set
			// it re-encodes over sync carries it: the float is the
			// value written.
			i = int64(f)
		} else if v.intOK && !exactFloat(i) {
			// flagd reads every number as a 64-bit float, which holds
			// integers exactly only up to 2^53: it would answer another
			// value than the one written.
			return v, fmt.Errorf("variant %q: the integer %s is past 2^53, and flagd reads it as %s: write an integer within ±9007199254740992, or a string", name, t, strconv.FormatFloat(f, 'f', -1, 64))
		}
		v.obj = f
		if v.intOK {
			v.obj = i
		}
	case map[string]any, []any:
		obj, err := plainJSON(t)
		if err != nil {
			return v, fmt.Errorf("variant %q: %w", name, err)
		}
		v.k, v.obj = kObj, obj
	default:
		return v, fmt.Errorf("variant %q has unsupported type %T", name, raw)
	}
	return v, nil
}

// exactFloat reports whether float64 holds i exactly; 2^63, past the int64
// range, is the one float64 that i could round to and not convert back.
func exactFloat(i int64) bool {
	f := float64(i)
	return f < 1<<63 && int64(f) == i
}

// exactInt reads a JSON number as int64 when its exact decimal value is a
// whole number in range (10.0 and 1e3, not 3.14 or 9223372036854775808).
func exactInt(text string) (int64, bool) {
	if i, err := strconv.ParseInt(text, 10, 64); err == nil {
		return i, true
	}
	r, ok := new(big.Rat).SetString(text)
	if !ok || !r.IsInt() || !r.Num().IsInt64() {
		return 0, false
	}
	return r.Num().Int64(), true
}

func kindName(k kind) string {
	switch k {
	case kBool:
		return "a boolean"
	case kNum:
		return "a number"
	case kStr:
		return "a string"
	case kObj:
		return "an object"
	}
	return "null"
}

// setDefault reads "defaultVariant". Without variants to look in, only its
// type is checked: that it names none of them is the variants' problem.
func (f *flag) setDefault(raw any, variantsOK bool) error {
	switch t := raw.(type) {
	case nil:
		return nil
	case string:
		if !variantsOK {
			return nil
		}
		i := slices.IndexFunc(f.vals, func(v variant) bool { return v.name == t })
		if i < 0 {
			return fmt.Errorf("defaultVariant %q is not one of the variants", t)
		}
		f.defaultIdx = int32(i)
		return nil
	}
	return fmt.Errorf("defaultVariant is %s, not a string", jsonType(raw))
}

// compileRule compiles a flag's rule, $evaluators substituted, and lists
// every problem it has; whole is set when one breaks the whole flag, not
// only the evaluations that reach it.
func (l *loader) compileRule(fd *flagDef, targeting any) (rule *node, problems []error, whole bool) {
	if targeting == nil {
		return nil, nil, false
	}
	if obj, ok := targeting.(map[string]any); ok && len(obj) == 0 {
		return nil, nil, false
	}
	// Nothing keeps a location once the rule is compiled: its errors
	// spell theirs out.
	if l.paths == nil {
		l.paths = make(map[string]path)
		l.consts = make(map[constKey]*sharedConst)
	}
	l.rules++
	c := compiler{locs: l.locs[:0], paths: l.paths, consts: l.consts, rule: l.rules}
	rule, _ = c.compile(targeting, c.loc(root("targeting")))
	l.locs = c.locs[:0]
	if c.usesLegacy {
		l.warn(fd.key, fd.path("targeting"), legacyWarning(c.legacy))
	}
	return rule, c.errs, c.whole
}

// legacyWarning says what to write instead of the legacy fractional
// operator, with the rule to paste.
func legacyWarning(rewritten []any) string {
	msg := `"fractionalEvaluation" is deprecated, and flagd v0.16 no longer evaluates it (flagsnap still does); use "fractional"`
	if len(rewritten) == 0 {
		return msg
	}
	b, err := json.Marshal(map[string]any{"fractional": rewritten[0]})
	if err != nil {
		return msg
	}
	return msg + ": " + string(b)
}

// shareNamesWith makes the rule's constant strings that name a variant
// hold the variant's own name string, so that comparing the name a rule
// returned with the variants usually finds the same bytes at once (see
// variant); sh keeps the boxed names of variants that flags share.
func (f *flag) shareNamesWith(rule *node, sh *sharedVariants) {
	if f.variants != nil {
		return
	}
	var boxed []any // each variant's name as a value's ref, made once
	if sh != nil {
		boxed = sh.boxed
		defer func() { sh.boxed = boxed }()
	}
	share := func(v *value) {
		if v.k != kStr {
			return
		}
		s, ok := v.ref.(string)
		if !ok {
			return
		}
		for i := range f.vals {
			if f.vals[i].name == s {
				if boxed == nil {
					boxed = make([]any, len(f.vals))
				}
				if boxed[i] == nil {
					boxed[i] = f.vals[i].name
				}
				v.ref = boxed[i]
				return
			}
		}
	}
	eachNode(rule, func(n *node) {
		if n.op == opConst {
			share(&n.lit)
		}
		if fr := n.fraction(); fr != nil {
			for i := range fr.variants {
				share(&fr.variants[i])
			}
		}
	})
}

// resolveRefs replaces {"$ref": "name"} with the named entry of
// $evaluators, not searched again (no nested $ref). A $ref that cannot be
// substituted is a problem at its "$ref" member, and an unresolvedRef.
func (l *loader) resolveRefs(raw any) (any, []issue) {
	if l.noRefs {
		return raw, nil
	}
	s := substitution{l: l}
	out, _ := s.substitute(raw)
	for i := range s.problems {
		p := &s.problems[i]
		p.at = append(p.at, "targeting")
		slices.Reverse(p.at)
		if ce, ok := p.err.(*CompileError); ok {
			ce.at = p.at
		}
	}
	// Objects are walked in no set order: the first problem, which the
	// flag answers, must not change from one load to the next.
	slices.SortFunc(s.problems, func(a, b issue) int { return slices.Compare(a.at, b.at) })
	return out, s.problems
}

// substitution is one rule's resolveRefs.
type substitution struct {
	l *loader
	// problems have their paths innermost first while the rule is
	// walked: each level adds its key on the way out, which costs nothing
	// where nothing is wrong.
	problems []issue
}

// substitute is resolveRefs, also telling whether anything was replaced.
func (s *substitution) substitute(raw any) (any, bool) {
	switch t := raw.(type) {
	case *op1:
		if name, ok := t.val.(string); ok && t.key == "$ref" {
			return s.evaluator(name)
		}
		n := len(s.problems)
		r, changed := s.substitute(t.val)
		s.inside(n, t.key)
		if !changed {
			return t, false
		}
		return &op1{key: t.key, val: r}, true
	case map[string]any:
		if name, ok := t["$ref"].(string); ok {
			return s.merge(t, name)
		}
		var out map[string]any
		for k, v := range t {
			n := len(s.problems)
			r, changed := s.substitute(v)
			s.inside(n, k)
			if changed {
				if out == nil {
					out = maps.Clone(t)
				}
				out[k] = r
			}
		}
		if out == nil {
			return t, false
		}
		return out, true
	case []any:
		var out []any
		for i, v := range t {
			n := len(s.problems)
			r, changed := s.substitute(v)
			if len(s.problems) > n {
				s.inside(n, strconv.Itoa(i))
			}
			if changed {
				if out == nil {
					out = slices.Clone(t)
				}
				out[i] = r
			}
		}
		if out == nil {
			return t, false
		}
		return out, true
	}
	return raw, false
}

// merge is what an object with a "$ref" to name stands for: the evaluator,
// or, next to other members, those and the evaluator's, which win.
func (s *substitution) merge(t map[string]any, name string) (any, bool) {
	if len(t) == 1 {
		return s.evaluator(name)
	}
	ev, found := s.l.evaluators[name]
	if !found {
		return s.evaluator(name) // the problem of a $ref to nothing
	}
	body, ok := ev.(map[string]any)
	if !ok {
		return s.unresolved(fmt.Sprintf("$ref %q is used inside an object but is not an object", name), "")
	}
	merged := make(map[string]any, len(t)-1+len(body))
	for k, v := range t {
		if k == "$ref" {
			continue
		}
		n := len(s.problems)
		merged[k], _ = s.substitute(v)
		s.inside(n, k)
	}
	maps.Copy(merged, body)
	return merged, true
}

// evaluator is what {"$ref": name} stands for.
func (s *substitution) evaluator(name string) (any, bool) {
	ev, found := s.l.evaluators[name]
	if !found {
		names := slices.Collect(maps.Keys(s.l.evaluators))
		return s.unresolved(fmt.Sprintf("$ref %q names no entry of $evaluators", name), suggest.Hint(name, names))
	}
	return ev, true
}

// unresolved records the problem of a $ref, at its "$ref" member, where
// the part that stands for it says it is when an evaluation reaches it.
func (s *substitution) unresolved(msg, hint string) (any, bool) {
	err := &CompileError{Msg: msg, hint: hint}
	s.problems = append(s.problems, issue{[]string{"$ref"}, err})
	return unresolvedRef{err: err}, true
}

// inside adds key to the paths of the problems from the n-th on, met
// within key.
func (s *substitution) inside(n int, key string) {
	for i := n; i < len(s.problems); i++ {
		s.problems[i].at = append(s.problems[i].at, key)
	}
}

// fingerprint hashes everything but metadata (see settle) that changes how
// a flag evaluates, in a canonical form that ignores key order, spacing and
// number spelling, so that rewriting a file without changing its meaning
// is not a change. Fingerprints are compared within a process only.
func (l *loader) fingerprint(def *defFields, defaultVariant, targeting any) [fingerprintSize]byte {
	b := l.scratch[:0]
	b = canonicalAppend(b, def.state)
	b = def.appendVariants(b)
	b = canonicalAppend(b, defaultVariant)
	b = canonicalAppend(b, targeting)
	l.scratch = b
	return fingerprintOf(b)
}

// fingerprintOf hashes b into a fingerprint.
func fingerprintOf(b []byte) [fingerprintSize]byte {
	var sum [fingerprintSize]byte
	binary.LittleEndian.PutUint64(sum[:8], maphash.Bytes(fingerprintSeeds[0], b))
	binary.LittleEndian.PutUint64(sum[8:], maphash.Bytes(fingerprintSeeds[1], b))
	return sum
}

// canonicalAppend appends x in a binary form where equal JSON values, and
// only those, are equal bytes: every value is tagged with its type, object
// keys are sorted and every number is an exact integer or a float64.
func canonicalAppend(b []byte, x any) []byte {
	switch t := x.(type) {
	case nil:
		return append(b, 'n')
	case bool:
		if t {
			return append(b, 't')
		}
		return append(b, 'f')
	case string:
		b = append(b, 's')
		b = binary.AppendUvarint(b, uint64(len(t)))
		return append(b, t...)
	case json.Number:
		if i, ok := exactInt(string(t)); ok {
			return appendCanonicalInt(b, i)
		}
		f, _ := strconv.ParseFloat(string(t), 64)
		return appendCanonicalFloat(b, f)
	case int64:
		return appendCanonicalInt(b, t)
	case float64:
		return appendCanonicalFloat(b, t)
	case map[string]any:
		b = append(b, 'm')
		b = binary.AppendUvarint(b, uint64(len(t)))
		var arr [16]string
		keys := arr[:0]
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			b = binary.AppendUvarint(b, uint64(len(k)))
			b = append(b, k...)
			b = canonicalAppend(b, t[k])
		}
		return b
	case []any:
		b = append(b, 'a')
		b = binary.AppendUvarint(b, uint64(len(t)))
		for _, el := range t {
			b = canonicalAppend(b, el)
		}
		return b
	case *op1:
		b = append(b, 'm', 1)
		b = binary.AppendUvarint(b, uint64(len(t.key)))
		b = append(b, t.key...)
		return canonicalAppend(b, t.val)
	}
	// Not a decoded JSON value; its Go syntax still tells values apart.
	return fmt.Appendf(append(b, '?'), "%#v", x)
}

func appendCanonicalInt(b []byte, i int64) []byte {
	return binary.BigEndian.AppendUint64(append(b, 'i'), uint64(i))
}

func appendCanonicalFloat(b []byte, f float64) []byte {
	if f == math.Trunc(f) && f >= math.MinInt64 && f < math.MaxInt64 {
		return appendCanonicalInt(b, int64(f))
	}
	return binary.BigEndian.AppendUint64(append(b, 'd'), math.Float64bits(f))
}
