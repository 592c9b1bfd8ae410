package evaluator

// Flag definitions as the document holds them, before they are compiled:
// one per key, with where each came from, and the set's metadata merged in.

import (
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strconv"
	"strings"
)

type flagDef struct {
	key    string
	fields *defFields // the definition, when it is an object
	raw    any        // the definition, when it is not
	ref    any        // the value of "$ref", when it is the object's one member
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
// compiling it made, if anything, does not stand. at is the member the
// problem lies in, below the definition, if it is one's (or err is a
// *memberProblem already).
func (fd *flagDef) fail(err error, at ...string) {
	if len(at) > 0 {
		err = &memberProblem{at: at, err: err}
	}
	fd.problem, fd.flag, fd.notes = err, nil, nil
}

// memberProblem is a definition's problem that lies in one of its members.
type memberProblem struct {
	at  []string
	err error
}

func (p *memberProblem) Error() string { return p.err.Error() }
func (p *memberProblem) Unwrap() error { return p.err }

// problemPath is where the definition's problem is, as FlagProblem.Path:
// at its member, or at the definition.
func (fd *flagDef) problemPath() []string {
	if mp, ok := fd.problem.(*memberProblem); ok {
		return fd.path(mp.at...)
	}
	return fd.path()
}

// defNotes are the problems and warnings of a flag's compilation.
type defNotes struct {
	problems []FlagProblem
	warnings []warning
}

// place is the definition's key in "flags", or its index in an array.
func (d *flagDef) place() string {
	if d.index >= 0 {
		return strconv.Itoa(d.index)
	}
	return d.key
}

// path is where part of the definition is, as FlagProblem.Path. It is made
// for a problem only: most flags have none.
func (d *flagDef) path(part ...string) []string {
	at := make([]string, 0, 2+len(part))
	at = append(at, "flags", d.place())
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
// keyed by flag key or an array of objects that carry their "key". A null
// "flags" is no flags, with a warning, as flagd reads it.
func (l *loader) flagDefinitions(top map[string]any) (flagDefs, error) {
	raw, ok := top["flags"]
	if !ok {
		return nil, &DocumentError{Msg: `"flags" is missing` + membersFound(top)}
	}
	switch t := raw.(type) {
	case nil:
		l.warn("", []string{"flags"}, `"flags" is null: the set has no flags`)
		return nil, nil
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

// membersFound names the first members of a document without "flags", a
// typo among them more often than not ("flag", or "flags\"" where a quote
// is missing after the first brace and the document reads as YAML).
func membersFound(top map[string]any) string {
	if len(top) == 0 {
		return ""
	}
	names := slices.Sorted(maps.Keys(top))
	more := ""
	if len(names) > 5 {
		names, more = names[:5], ", …"
	}
	for i, n := range names {
		names[i] = strconv.Quote(n)
	}
	return "; the document has " + strings.Join(names, ", ") + more
}

// decodedDef is the definition of a decoded document that is not a
// flagList (a YAML document's).
func decodedDef(key string, raw any, index int) flagDef {
	obj, ok := raw.(map[string]any)
	if !ok {
		return flagDef{key: key, raw: raw, index: index, refs: true}
	}
	fd := flagDef{key: key, fields: fieldsOf(obj), index: index, object: true, refs: true}
	fd.setKeyAndSource(obj["key"], obj["source"])
	if len(obj) == 1 {
		fd.ref = obj["$ref"]
	}
	return fd
}

// fieldsOf are the members of a decoded definition that the loader reads.
func fieldsOf(obj map[string]any) *defFields {
	f := &defFields{state: obj["state"], defaultVariant: obj["defaultVariant"],
		targeting: obj["targeting"], metadata: obj["metadata"]}
	f.setVariants(obj["variants"])
	return f
}

// arrayDefinitions checks that the entries of an array of flags carry a
// key: one without is a problem, and cannot be asked for.
func arrayDefinitions(defs flagDefs) flagDefs {
	for fd := range defs.all() {
		if fd.key == "" {
			fd.key, fd.unnamed = fmt.Sprintf("flags[%d]", fd.index), true
			if fd.problem == nil { // a "key" of another type says so already
				fd.fail(fmt.Errorf(`flag entry has no "key"`))
			}
		}
	}
	return defs
}

// setKeyAndSource reads a definition's "key" and "source" as decoded: the
// key names an entry of an array of flags. flagd reads both into strings,
// and refuses a whole document over either when it is of another type
// (but null), though neither means anything to the flag here (the key of
// a "flags" object names it; the source is the reader's label): the
// definition fails.
func (fd *flagDef) setKeyAndSource(key, source any) {
	if fd.index >= 0 {
		fd.key, _ = key.(string)
	}
	if member, err := keyAndSourceError(key, source); err != nil {
		fd.fail(err, member)
	}
}

// keyAndSourceError is the problem of a "key" or "source" that is neither
// a string nor null, and the member it is of.
func keyAndSourceError(key, source any) (string, error) {
	if err := notAString("key", key); err != nil {
		return "key", err
	}
	if err := notAString("source", source); err != nil {
		return "source", err
	}
	return "", nil
}

func notAString(name string, v any) error {
	if _, ok := v.(string); ok || v == nil {
		return nil
	}
	return fmt.Errorf("%q is %s, not a string", name, jsonType(v))
}

// lastOfEachKey keeps the last definition of each key, as flagd does, and
// as decoding a "flags" object into a map would; each one dropped is a
// warning.
func (l *loader) lastOfEachKey(defs flagDefs) flagDefs {
	last := map[string]*flagDef{}
	for fd := range defs.all() {
		if fd.unnamed {
			continue
		}
		if earlier := last[fd.key]; earlier != nil {
			earlier.dropped = true
			l.warn(fd.key, earlier.path(), "flag key is defined more than once: the last definition counts")
		}
		last[fd.key] = fd
	}
	return defs.withoutDropped()
}

// objectMember is the member name ("$evaluators", "metadata") as decoded:
// an object, or nothing; flagd refuses a whole document where it is
// anything else.
func objectMember(name string, raw any) (map[string]any, error) {
	obj, ok := raw.(map[string]any)
	if !ok && raw != nil {
		return nil, fmt.Errorf("%q is %s, not an object", name, jsonType(raw))
	}
	return obj, nil
}

// metadata keeps the string, number and boolean entries of the metadata of
// def (nil for the flag set's). A number written as an integer (10) becomes
// int64, any other spelling (10.5, 10.0, 1e3) float64: OpenFeature's GetInt
// and GetFloat each accept only their own type.
func (l *loader) metadata(def *flagDef, obj map[string]any) map[string]any {
	if obj == nil {
		return nil
	}
	warn := func(msg string) {
		if def == nil {
			l.warn("", []string{"metadata"}, msg)
		} else {
			l.warn(def.key, def.path("metadata"), msg)
		}
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
