package evaluator

import (
	"bytes"
	"runtime"
	"sync"
)

// A large document is not scanned for its flags before they are
// compiled: that scan, on one goroutine, was a tenth of the load. Each of
// a few goroutines compiles flags straight from the document instead, the
// first from the first flag, each other from a guess of where a flag
// starts further on (a quote after a comma after a closing brace, as
// between two definitions). A goroutine that
// reaches the very byte where the next one's run of flags started, at the
// start of a flag, would read from there what that run read: it takes
// the run and stops. A guess that was not a flag's start is a run that
// nobody takes; the next guess follows where it ended. Nothing is taken
// on a guess, so the flag set is the one the scan would have made, and a
// document that this way does not suit (a "$ref" or an escape anywhere,
// flag-set metadata after the flags, a key defined twice, anything that
// is not plain JSON) is loaded as before.

// streamLoadMin is the size of a document, in bytes, from which it is
// loaded this way: about 2,000 flags of the standard mix.
const streamLoadMin = 256 << 10

// streamGuesses bounds the guesses of a goroutine that starts on one.
const streamGuesses = 8

// streamRunMin is how many flags a run that ended at a closing brace
// must have read for its goroutine to stop guessing: a guess inside a
// definition reads the rest of it, a member or two, before that
// definition's closing brace ends it.
const streamRunMin = 16

// streamRun is what a goroutine compiled from one start.
type streamRun struct {
	start    int
	flags    []*flag
	fresh    []*flag // the flags it compiled, not taken from WithPrevious's set
	reused   int
	problems map[int][]FlagProblem // by index in flags
	warnings []warning
	ok       bool // it reached the brace that closes the flags
	end      int  // after that brace
	stopped  int  // where it stopped when not ok
	next     *streamRun
	finished chan struct{}
}

// streamWorker is one goroutine of a streamed load and its runs.
type streamWorker struct {
	from    int // where its first guess is looked for
	mu      sync.Mutex
	runs    []*streamRun  // by start
	started chan struct{} // closed once the first run has begun, or none will
	once    sync.Once
}

// begin makes r one of w's runs, which the goroutine before w may take.
func (w *streamWorker) begin(r *streamRun) {
	w.mu.Lock()
	w.runs = append(w.runs, r)
	w.mu.Unlock()
	w.once.Do(func() { close(w.started) })
}

// runAt is w's run that starts at pos, or nil.
func (w *streamWorker) runAt(pos int) *streamRun {
	<-w.started
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range w.runs {
		if r.start == pos {
			return r
		}
	}
	return nil
}

// mayRef reports whether doc may have a "$ref", which substitution would
// have to look for: written plainly, or behind an escape.
func mayRef(doc []byte) bool {
	return bytes.Contains(doc, refName) || bytes.IndexByte(doc, '\\') >= 0
}

var refName = []byte("$ref")

// streamLoad loads doc with workers goroutines, as described above; ok
// is false when the document is to be loaded as before. l is the loader
// whose warnings are the set's.
func streamLoad(doc []byte, cfg config, workers int) (set *FlagSet, l *loader, ok bool) {
	if workers < 2 || mayRef(doc) {
		return nil, nil, false
	}
	top, chain, ok := streamDocument(doc, cfg, workers)
	if !ok {
		return nil, nil, false
	}
	return finishStream(top, chain, cfg)
}

// streamDocument reads the document's object, its members other than
// "flags" decoded as the scan would, and its flags compiled into a chain
// of runs.
func streamDocument(doc []byte, cfg config, workers int) (top map[string]any, chain *streamRun, ok bool) {
	top = map[string]any{}
	d := fastDecoder{data: doc, intern: make(map[string]any, 16), nums: make(map[string]any, 4)}
	d.space()
	if d.pos >= len(doc) || doc[d.pos] != '{' {
		return nil, nil, false
	}
	d.pos, d.depth = d.pos+1, 1 // as the document's object is decoded
	for {
		d.space()
		if d.pos >= len(doc) || doc[d.pos] != '"' {
			return nil, nil, false
		}
		kv, ok := d.str()
		if !ok {
			return nil, nil, false
		}
		k := kv.(string)
		d.space()
		if d.pos >= len(doc) || doc[d.pos] != ':' {
			return nil, nil, false
		}
		d.pos++
		d.space()
		switch {
		case k == "flags":
			if chain != nil || d.pos >= len(doc) || doc[d.pos] != '{' {
				return nil, nil, false
			}
			// The metadata that the flags merge must come before them.
			var meta map[string]any
			if raw, ok := top["metadata"]; ok {
				meta = (&loader{}).metadata(nil, raw)
			}
			if chain = compileStream(doc, d.pos+1, meta, cfg, workers); chain == nil {
				return nil, nil, false
			}
			top[k] = lazyFlags{}
			d.pos = chainEnd(chain)
		case k == "metadata" && chain != nil:
			return nil, nil, false
		default:
			v, ok := d.value()
			if !ok {
				return nil, nil, false
			}
			top[k] = v
		}
		more, ok := d.after('}')
		if !ok {
			return nil, nil, false
		}
		if !more {
			break
		}
	}
	d.space()
	if d.pos != len(doc) || chain == nil || d.refs {
		return nil, nil, false
	}
	return top, chain, true
}

// finishStream is the flag set of the chain of runs, as load would make
// it; ok is false when it is not to be taken.
func finishStream(top map[string]any, chain *streamRun, cfg config) (set *FlagSet, l *loader, ok bool) {
	l = &loader{cfg: cfg, noRefs: true}
	n := 0
	for r := chain; r != nil; r = r.next {
		n += len(r.flags)
	}
	flags := make([]*flag, 0, n)
	var problems []FlagProblem
	reused := 0
	for r := chain; r != nil; r = r.next {
		for i := range r.flags {
			problems = append(problems, r.problems[i]...)
		}
		l.warnings = append(l.warnings, r.warnings...)
		flags = append(flags, r.flags...)
		reused += r.reused
	}
	index, unique := indexFlags(flags)
	if !unique {
		return nil, nil, false
	}
	set, err := l.begin(top)
	if err != nil || (reused > 0 && set.from == 0) {
		// The flags taken from WithPrevious's set are not to be.
		return nil, nil, false
	}
	if set.from != 0 {
		set.reused = reused
		set.fresh = make([]*flag, 0, n-reused)
		for r := chain; r != nil; r = r.next {
			set.fresh = append(set.fresh, r.fresh...)
		}
	}
	set.problems = problems
	set.index = index
	l.byFlag(set)
	return set, l, true
}

// chainEnd is where the last run of the chain from r ended.
func chainEnd(r *streamRun) int {
	for r.next != nil {
		r = r.next
	}
	return r.end
}

// compileStream compiles the members of the flags object whose first
// member is at or after first (spaces before it), on workers goroutines:
// the chain of runs from the first member to the closing brace, or nil
// when the object does not read as one.
func compileStream(doc []byte, first int, meta map[string]any, cfg config, workers int) *streamRun {
	froms := make([]int, workers)
	for i := range froms {
		froms[i] = first + i*(len(doc)-first)/workers
	}
	return compileStreamFrom(doc, froms, meta, cfg)
}

// compileStreamFrom is compileStream with a goroutine for each of froms,
// the first member's position (or spaces before it) first, then where
// each other goroutine looks for its first guess, in order.
func compileStreamFrom(doc []byte, froms []int, meta map[string]any, cfg config) *streamRun {
	workers := len(froms)
	first := froms[0]
	ws := make([]*streamWorker, workers)
	for i := range ws {
		ws[i] = &streamWorker{from: froms[i], started: make(chan struct{})}
	}
	var wg sync.WaitGroup
	for i := 1; i < workers; i++ {
		wg.Go(func() { ws[i].guess(doc, meta, cfg, nextOf(ws, i)) })
	}
	w0 := ws[0]
	r := &streamRun{start: skipSpace(doc, first), finished: make(chan struct{})}
	r.flags = make([]*flag, 0, flagsWithin(nextFrom(ws, 0, len(doc))-r.start))
	w0.begin(r)
	newStreamLoader(cfg).compileRun(doc, r, meta, nextOf(ws, 0))
	wg.Wait()
	if !r.ok {
		return nil
	}
	return r
}

// nextFrom is where the worker after ws[i] looks for its first guess, or
// end.
func nextFrom(ws []*streamWorker, i, end int) int {
	if i+1 < len(ws) {
		return ws[i+1].from
	}
	return end
}

// flagsWithin is about how many flags n bytes of a document hold, to size
// a run's list: the standard mix writes a flag in about 130 bytes.
func flagsWithin(n int) int { return max(n, 0)/128 + 16 }

func nextOf(ws []*streamWorker, i int) *streamWorker {
	if i+1 < len(ws) {
		return ws[i+1]
	}
	return nil
}

// newStreamLoader is a loader for a goroutine of a streamed load. It
// takes flags from WithPrevious's set before it knows whether the
// document allows it (its $evaluators and metadata may come after the
// flags): streamLoad checks once the document is read.
func newStreamLoader(cfg config) *loader {
	l := &loader{cfg: cfg, noRefs: true}
	if cfg.prev != nil {
		l.prev = &cfg.prev.index
	}
	return l
}

// guess is the goroutine of a worker that starts on a guess.
func (w *streamWorker) guess(doc []byte, meta map[string]any, cfg config, next *streamWorker) {
	defer w.once.Do(func() { close(w.started) })
	end := len(doc)
	if next != nil {
		end = next.from
	}
	l := newStreamLoader(cfg)
	from := w.from
	for g := range streamGuesses {
		c := memberGuess(doc, from)
		if c < 0 {
			return
		}
		r := &streamRun{start: c, finished: make(chan struct{})}
		if g == 0 {
			// Later guesses follow a wrong one, and read a flag or two.
			r.flags = make([]*flag, 0, flagsWithin(end-c))
		}
		w.begin(r)
		l.compileRun(doc, r, meta, next)
		switch {
		case r.ok && (r.next != nil || len(r.flags) >= streamRunMin):
			return
		case r.ok:
			from = r.end - 1 // the brace that ended it may end a flag's definition
		default:
			from = max(r.stopped, c+1)
		}
	}
}

// compileRun compiles the members from r.start, until the closing brace
// or a run of next that starts where a member does.
func (l *loader) compileRun(doc []byte, r *streamRun, meta map[string]any, next *streamWorker) {
	defer close(r.finished)
	l.warnings, l.problems = nil, nil
	defer func() { r.warnings, r.problems = l.warnings, l.problems }()
	d := fastDecoder{data: doc, pos: r.start, intern: make(map[string]any, 4), nums: make(map[string]any, 1)}
	for {
		if next != nil && d.pos >= next.from {
			if nr := next.runAt(d.pos); nr != nil {
				if <-nr.finished; nr.ok {
					r.next, r.ok = nr, true
					return
				}
			}
		}
		if d.pos >= len(doc) || doc[d.pos] != '"' {
			r.stopped = d.pos
			return
		}
		key, view, ok := d.key()
		d.space()
		if !ok || d.pos >= len(doc) || doc[d.pos] != ':' {
			r.stopped = d.pos
			return
		}
		d.pos++
		d.space()
		if d.pos, ok = l.compileMember(doc, d.pos, key, view, r, meta); !ok {
			r.stopped = d.pos
			return
		}
		more, ok := d.after('}')
		switch {
		case !ok:
			r.stopped = d.pos
			return
		case !more:
			r.ok, r.end = true, d.pos
			return
		}
		d.space()
	}
}

// compileMember compiles the definition at pos of the flag key, as
// compileRange does, and returns where it ends. Without WithPrevious,
// decoding the definition finds its end; with it, the end is found first,
// so that a flag written as in the previous set is taken from it.
func (l *loader) compileMember(doc []byte, pos int, key string, view bool, r *streamRun, meta map[string]any) (int, bool) {
	fd := &l.def
	*fd = flagDef{key: key, keyView: view, index: -1}
	d := l.decoder()
	d.data, d.pos, d.depth = doc, pos, defDepth
	var def *defFields
	if l.prev == nil && pos < len(doc) && doc[pos] == '{' {
		read, ok := l.readDef()
		if !ok || d.refs {
			return d.pos, false
		}
		def = &read
	} else if !d.skipValue() {
		return d.pos, false
	}
	fd.span = doc[pos:d.pos]
	f, p, ok := l.compileDef(fd, def, meta)
	if !ok {
		return pos, false
	}
	if len(p) > 0 {
		l.addProblems(len(r.flags), p)
	}
	r.flags = append(r.flags, f)
	switch {
	case fd.reused:
		r.reused++
	case l.prev != nil:
		r.fresh = append(r.fresh, f)
	}
	return pos + len(fd.span), true
}

// memberGuess is where the key of a member may start at or after from: a
// quote after a comma after a closing brace, as between the definitions
// of two flags; -1 when there is none.
func memberGuess(data []byte, from int) int {
	for from < len(data) {
		i := bytes.IndexByte(data[from:], '}')
		if i < 0 {
			return -1
		}
		p := skipSpace(data, from+i+1)
		if p < len(data) && data[p] == ',' {
			if q := skipSpace(data, p+1); q < len(data) && data[q] == '"' {
				return q
			}
		}
		from += i + 1
	}
	return -1
}

// skipSpace is where the JSON spaces at p in data end.
func skipSpace(data []byte, p int) int {
	d := fastDecoder{data: data, pos: p}
	d.space()
	return d.pos
}

// streamWorkers is how many goroutines load a document this way.
func streamWorkers() int { return min(runtime.GOMAXPROCS(0), maxLoadWorkers) }
