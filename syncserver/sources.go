package syncserver

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flagsnap/flagsnap/internal/plainyaml"
)

// WithSource adds a flag source, served as the flagd daemon (v0.16) serves
// the sources it is started with: every flag of every source goes into one
// store, and a selector picks flags from it. Sources added later take
// priority, as later -f options do in flagd. name is what flagd would call
// the source (for a file, the path after "file:"): it is the "source" of
// each flag sent and what a source selector names; aliases are other values
// a source selector may give for it (a source is selected by its name when
// any source has that name, otherwise by its aliases). The document, JSON
// or YAML, is sent re-encoded as flagd sends flags (see [WithFlagdEncoding]).
// A server with sources serves no set given with [WithFlags] or
// [WithSelectorFlags]: New fails when both are given.
//
// The selectors, read as flagd reads them:
//
//   - none: every flag. A flag key present in several flag sets is sent
//     once: the flag of a named set wins over a flag of no set, and of two
//     named sets the one whose id sorts last wins.
//   - "flagSetId=ID": the flags whose flagSetId is ID, where a flag's
//     flagSetId is that of its own metadata, or else that of its source's
//     metadata; "flagSetId=" selects the flags without one (or with one that
//     is not a string).
//   - "source=NAME", or NAME without "=": the flags of that source.
//   - anything else before the first "=": InvalidArgument.
//
// Two flags with the same key and flagSetId are one flag in flagd's store:
// the one from the later source is served, whatever the selector, so a
// source selector does not return a flag of its source that a later source
// overrides. A flag whose key or flagSetId is "" is not served, as flagd
// cannot store it.
func WithSource(name string, doc []byte, aliases ...string) Option {
	return func(c *config) {
		c.sources = append(c.sources, sourceConfig{name: name, doc: doc, aliases: aliases})
	}
}

type sourceConfig struct {
	name    string
	doc     []byte
	aliases []string
}

// SetSource replaces the flags of the source called name (or adds a source,
// of the highest priority, under that name) and sends every stream whose
// selection changed its new flags. It fails, changing nothing, when doc is
// not a flag document flagd could read, or when the server was built
// without [WithSource].
func (s *Server) SetSource(name string, doc []byte) error {
	return s.SetSources(map[string][]byte{name: doc})
}

// SetSources replaces the flags of several sources at once, each as
// SetSource does (sources not there yet are added in the order of their
// names), and sends each stream whose selection changed one message with
// all of it: no stream sees some of the sources changed and not the
// others. It fails, changing nothing, when one of the documents is not a
// flag document flagd could read, or when the server was built without
// [WithSource].
func (s *Server) SetSources(docs map[string][]byte) error {
	names := slices.Sorted(maps.Keys(docs))
	flags := make([][]storedFlag, len(names))
	for i, name := range names {
		var err error
		if flags[i], err = decodeSource(name, docs[name]); err != nil {
			return fmt.Errorf("syncserver: source %s: %w", name, err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.store == nil {
		return errors.New("syncserver: no sources to set: the server was built without WithSource")
	}
	for i, name := range names {
		s.store.setSource(name, nil, flags[i])
	}
	s.changedLocked()
	refreshed := make(map[string]*response)
	for sub := range s.subs {
		resp, seen := refreshed[sub.selector]
		if !seen {
			resp = s.refreshLocked(sub.selector)
			refreshed[sub.selector] = resp
		}
		if resp != nil {
			sub.enqueue(message{resp: resp})
		}
	}
	return nil
}

// refreshLocked is the new response for a selector that streams follow, or
// nil when what it selects has not changed: a change to one source must not
// resend the flags of streams that select another.
func (s *Server) refreshLocked(selector string) *response {
	doc := s.docLocked(selector)
	sum := sha256.Sum256([]byte(doc))
	if old := s.resps[selector]; old != nil && old.sum == sum {
		return nil
	}
	resp := s.newResponse(doc, s.syncCtx)
	resp.sum = sum
	s.resps[selector] = resp
	return resp
}

// selection is what a selector asks for, as flagd v0.16 reads it.
type selection struct {
	all   bool   // no selector
	key   string // "flagSetId" or "source"
	value string
}

// parseSelector reads a selector as flagd's store does: empty is every flag,
// a string without "=" is a source, otherwise the text before the first "="
// says what the rest is. flagd looks that text up among the indexes of its
// store, so that other keys either fail there or select by accident (key=K,
// source_prefix=P); only the keys its documentation names are taken here.
func parseSelector(sel string) (selection, error) {
	if sel == "" {
		return selection{all: true}, nil
	}
	key, value, ok := strings.Cut(sel, "=")
	if !ok {
		return selection{key: "source", value: sel}, nil
	}
	switch key {
	case "flagSetId", "source":
		return selection{key: key, value: value}, nil
	}
	return selection{}, status.Errorf(codes.InvalidArgument,
		"selector %q: unknown key %q (flagd reads flagSetId=ID, source=SOURCE or a SOURCE alone)", sel, key)
}

// setID is a flag's flag set. Flags without one sort first, so that a named
// set wins when flags of several sets share a key. (flagd gives them a
// random UUID, which sorts before names that begin with g to z and at
// random against the others.)
type setID struct {
	named bool
	name  string
}

func (a setID) compare(b setID) int {
	if a.named != b.named {
		if a.named {
			return 1
		}
		return -1
	}
	return strings.Compare(a.name, b.name)
}

// storedFlag is one flag of a source, encoded as flagd sends it.
type storedFlag struct {
	key    string
	set    setID
	source int // index in flagStore.sources, which is its priority
	json   []byte
}

type storeSource struct {
	name    string
	aliases []string
	flags   []storedFlag
}

// flagStore is flagd's store of flags: at most one flag per key and flag
// set, the one from the source of highest priority.
type flagStore struct {
	sources []*storeSource
	flags   []*storedFlag // sorted by key, then set
}

// setSource replaces the flags of the source called name, adding it if
// there is none; aliases are kept when nil.
func (st *flagStore) setSource(name string, aliases []string, flags []storedFlag) {
	i := slices.IndexFunc(st.sources, func(src *storeSource) bool { return src.name == name })
	if i < 0 {
		i = len(st.sources)
		st.sources = append(st.sources, &storeSource{name: name})
	}
	if aliases != nil {
		st.sources[i].aliases = aliases
	}
	for j := range flags {
		flags[j].source = i
	}
	st.sources[i].flags = flags
	st.rebuild()
}

type flagID struct {
	key string
	set setID
}

// rebuild recomputes st.flags after a source changed: for each key and
// flag set, the flag of the last source that has one.
func (st *flagStore) rebuild() {
	winners := make(map[flagID]*storedFlag)
	for _, src := range st.sources {
		for i := range src.flags {
			f := &src.flags[i]
			winners[flagID{f.key, f.set}] = f
		}
	}
	st.flags = st.flags[:0]
	for _, f := range winners {
		st.flags = append(st.flags, f)
	}
	slices.SortFunc(st.flags, func(a, b *storedFlag) int {
		return cmp.Or(strings.Compare(a.key, b.key), a.set.compare(b.set))
	})
}

// sourcesNamed are the indexes of the sources a source selector names.
func (st *flagStore) sourcesNamed(value string) []bool {
	named := make([]bool, len(st.sources))
	found := false
	for i, src := range st.sources {
		if src.name == value {
			named[i], found = true, true
		}
	}
	if !found {
		for i, src := range st.sources {
			named[i] = slices.Contains(src.aliases, value)
		}
	}
	return named
}

// document is the flag document for q: the selected flags, one per key,
// keys in order.
func (st *flagStore) document(q selection) string {
	match := func(*storedFlag) bool { return true }
	switch q.key {
	case "flagSetId":
		want := setID{named: q.value != "", name: q.value}
		match = func(f *storedFlag) bool { return f.set == want }
	case "source":
		named := st.sourcesNamed(q.value)
		match = func(f *storedFlag) bool { return named[f.source] }
	}
	var b bytes.Buffer
	b.WriteString(`{"flags":{`)
	var pending *storedFlag
	n := 0
	writePending := func() {
		if pending == nil {
			return
		}
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		key, _ := json.Marshal(pending.key)
		b.Write(key)
		b.WriteByte(':')
		b.Write(pending.json)
	}
	// Flags are sorted by key and then set, so the last match of a run of
	// one key is the one to send.
	for _, f := range st.flags {
		if !match(f) {
			continue
		}
		if pending != nil && pending.key != f.key {
			writePending()
		}
		pending = f
	}
	writePending()
	b.WriteString(`}}`)
	return b.String()
}

// decodeSource reads a flag document as flagd's file source and store do:
// JSON, or YAML (flagd converts a .yaml file to JSON first), every flag
// encoded as flagd sends it and placed in its flag set.
func decodeSource(name string, doc []byte) ([]storedFlag, error) {
	top, err := decodeDocument(doc)
	if err != nil {
		return nil, err
	}
	evaluators, setMeta, err := evaluatorsAndMetadata(top)
	if err != nil {
		return nil, err
	}
	var defs []map[string]any
	var keys []string
	switch fs := top["flags"].(type) {
	case nil:
	case map[string]any:
		keys = slices.Sorted(maps.Keys(fs))
		for _, k := range keys {
			def, ok := fs[k].(map[string]any)
			if !ok && fs[k] != nil { // flagd's model of null is that of {}
				return nil, fmt.Errorf("flag %q is not an object", k)
			}
			defs = append(defs, def)
		}
	case []any:
		for i, v := range fs {
			def, ok := v.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("flags[%d] is not an object", i)
			}
			k, _ := def["key"].(string)
			keys = append(keys, k)
			defs = append(defs, def)
		}
	default:
		return nil, errors.New(`"flags" is neither an object nor an array`)
	}
	out := make([]storedFlag, 0, len(defs))
	for i, def := range defs {
		f := flagdFlag(def, setMeta, evaluators, name)
		set := setID{}
		if meta, ok := f["metadata"].(map[string]any); ok {
			set.name, set.named = meta["flagSetId"].(string)
		}
		if keys[i] == "" || (set.named && set.name == "") {
			continue // flagd's store refuses it: an index of its is empty
		}
		b, err := json.Marshal(f)
		if err != nil {
			return nil, fmt.Errorf("flag %q: %w", keys[i], err)
		}
		out = append(out, storedFlag{key: keys[i], set: set, json: b})
	}
	return out, nil
}

// decodeDocument decodes a flag document as flagd does: JSON into float64
// numbers, and YAML (see plainyaml.IsJSON) converted to JSON first, which
// a mapping key that is not a string stops: flagd refuses the document. A
// byte order mark is skipped, as the evaluator does.
func decodeDocument(doc []byte) (map[string]any, error) {
	doc = plainyaml.TrimBOM(doc)
	if !plainyaml.IsJSON(doc) {
		var y any
		if err := yaml.Unmarshal(doc, &y); err != nil {
			return nil, err
		}
		var err error
		if doc, err = json.Marshal(y); err != nil {
			return nil, fmt.Errorf("YAML that JSON cannot hold: %w", err)
		}
	}
	var raw any
	if err := json.Unmarshal(doc, &raw); err != nil {
		return nil, err
	}
	top, ok := raw.(map[string]any)
	if !ok {
		return nil, errors.New("the document is not an object")
	}
	return top, nil
}
