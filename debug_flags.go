package flagsnap

// DebugHandler's /flags: the flag definitions in force. The compiled set
// keeps no rule as written, so they are read again from the documents
// the provider keeps, at each request.

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	yaml "go.yaml.in/yaml/v3"

	"github.com/flagsnap/flagsnap/evaluator"
	"github.com/flagsnap/flagsnap/internal/plainyaml"
)

// serveFlags writes the flag definitions in force. A set of one document
// is that document, byte for byte: its SHA-256 is SourceStatus's Digest.
// A set with overrides is a view of its flags (debugFlagsView), and
// ?layer=N the document of one of its layers, byte for byte.
func (h *debugHandler) serveFlags(w http.ResponseWriter, query url.Values) {
	set, docs, err := h.flagDocuments()
	switch {
	case err != nil:
		writeDebugJSON(w, http.StatusInternalServerError, debugError{Error: err.Error()})
		return
	case set == nil || docs[0] == nil:
		writeDebugJSON(w, http.StatusServiceUnavailable, debugError{Error: "no flags have been loaded yet"})
		return
	}
	if query.Has("layer") {
		i, err := strconv.Atoi(query.Get("layer"))
		if err != nil || i < 0 || i >= len(docs) {
			writeDebugJSON(w, http.StatusNotFound, debugError{Error: fmt.Sprintf("no layer %q: the layers in force are 0 to %d", query.Get("layer"), len(docs)-1)})
			return
		}
		writeDocument(w, docs[i])
		return
	}
	if set.Layers() == nil {
		writeDocument(w, docs[0])
		return
	}
	view, err := layeredView(set, docs)
	if err != nil {
		writeDebugJSON(w, http.StatusInternalServerError, debugError{Error: err.Error()})
		return
	}
	writeDebugJSON(w, http.StatusOK, view)
}

// writeDocument writes a flag document as the source delivered it, named
// JSON or YAML as the flag set read it.
func writeDocument(w http.ResponseWriter, doc []byte) {
	if plainyaml.IsJSON(doc) {
		w.Header().Set("Content-Type", "application/json")
	} else {
		w.Header().Set("Content-Type", "application/yaml; charset=utf-8")
	}
	_, _ = w.Write(doc)
}

// flagDocuments reads the flag set in force and the documents of its
// layers, index for index: the source's, then the overrides' if the set
// has them, all from one snapshot.
func (h *debugHandler) flagDocuments() (*evaluator.FlagSet, [][]byte, error) {
	in := h.p.snap.Load()
	if in == nil {
		return nil, nil, nil
	}
	main, err := in.doc.document()
	if err != nil {
		return nil, nil, fmt.Errorf("the document kept does not decompress: %w", err)
	}
	return in.set, append([][]byte{main}, in.overrideDocs...), nil
}

// debugFlagsView is /flags for a flag set with overrides.
type debugFlagsView struct {
	// Layers are where the flags come from, the source first, then the
	// overrides, lowest first.
	Layers []debugLayer `json:"layers"`
	// Flags are the flags in force, by key.
	Flags map[string]debugFlag `json:"flags"`
}

// debugLayer is one layer of a flag set: its name (SourceStatus's Source,
// or an override's LayerStatus.Source) and the address of its document,
// relative to /flags.
type debugLayer struct {
	Source   string `json:"source"`
	Document string `json:"document"`
}

// debugFlag is a flag in force: its definition as its document wrote it,
// and the override that defines it, absent for the source's flags.
type debugFlag struct {
	Layer      string          `json:"layer,omitempty"`
	Definition json.RawMessage `json:"definition"`
}

// layeredView is the view of set, whose layers' documents are docs: each
// flag's definition is taken from the layer that defines it in the set,
// so that an overridden flag shows the override's.
func layeredView(set *evaluator.FlagSet, docs [][]byte) (debugFlagsView, error) {
	names := set.Layers()
	view := debugFlagsView{Flags: make(map[string]debugFlag, set.Len())}
	defs := make([]map[string]json.RawMessage, len(docs))
	for i, doc := range docs {
		d, err := definitionsOf(doc)
		if err != nil {
			return debugFlagsView{}, fmt.Errorf("the document of %s: %w", names[i], err)
		}
		defs[i] = d
		view.Layers = append(view.Layers, debugLayer{Source: names[i], Document: "flags?layer=" + strconv.Itoa(i)})
	}
	for _, key := range set.Keys() {
		l := set.Layer(key)
		f := debugFlag{Definition: defs[l][key]}
		if l > 0 {
			f.Layer = names[l]
		}
		view.Flags[key] = f
	}
	return view, nil
}

// definitionsOf reads the flag definitions of a flag document, JSON or
// YAML, by key, as the evaluator reads them: from an object keyed by flag
// key, or from an array of objects with a "key", an entry without one
// named as the evaluator names it (flags[i]).
func definitionsOf(doc []byte) (map[string]json.RawMessage, error) {
	doc = plainyaml.TrimBOM(doc)
	if !plainyaml.IsJSON(doc) {
		return yamlDefinitions(doc)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(doc, &top); err != nil {
		return nil, err
	}
	return flagsByKey(top["flags"])
}

// yamlDefinitions is definitionsOf for a YAML document, whose flags are
// turned into JSON, as the evaluator reads them.
func yamlDefinitions(doc []byte) (map[string]json.RawMessage, error) {
	var raw any
	if err := yaml.Unmarshal(doc, &raw); err != nil {
		return nil, err
	}
	top, ok := plainyaml.Plain(raw).(map[string]any)
	if !ok {
		return nil, errors.New("the document is not an object")
	}
	flags, err := json.Marshal(top["flags"])
	if err != nil {
		return nil, err
	}
	return flagsByKey(flags)
}

// flagsByKey reads a document's "flags", an object or an array. Of an
// array's entries with the same key, the last is the one the evaluator
// keeps, as of an object's members.
func flagsByKey(flags json.RawMessage) (map[string]json.RawMessage, error) {
	var byKey map[string]json.RawMessage
	if err := json.Unmarshal(flags, &byKey); err == nil {
		return byKey, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(flags, &list); err != nil {
		return nil, errors.New(`"flags" is not an object or an array`)
	}
	byKey = make(map[string]json.RawMessage, len(list))
	for i, def := range list {
		// An entry that is no object, or whose key is no string, has no
		// key; the field's name is matched exactly, as the evaluator does.
		var entry map[string]json.RawMessage
		var key string
		if json.Unmarshal(def, &entry) != nil || json.Unmarshal(entry["key"], &key) != nil || key == "" {
			key = fmt.Sprintf("flags[%d]", i)
		}
		byKey[key] = def
	}
	return byKey, nil
}
