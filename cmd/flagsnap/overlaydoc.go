package main

// serve sends flag documents, not flag sets: an override is layered over
// a served file by writing one document that evaluates as
// evaluator.Layered of the two does.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
)

// overrideDoc is one override's last good document, made ready to be
// layered: its flags, each standing on its own. doc is nil while it has
// none (its file does not exist, or not yet): a document accepted is never
// empty.
type overrideDoc struct {
	path  string
	doc   []byte // as read
	flags []overlayFlag
}

// overlayFlag is one flag of an override, made to stand on its own in
// another document: no $ref, and its document's metadata in its own.
type overlayFlag struct {
	key string
	def map[string]any
}

// readyOverride checks an override's document as WithOverrideFile does
// (strictly) and makes its flags ready to be layered.
func readyOverride(path string, doc []byte) (overrideDoc, error) {
	flags, err := overrideFlags(doc)
	if err != nil {
		return overrideDoc{}, refused(path, err)
	}
	return overrideDoc{path: path, doc: doc, flags: flags}, nil
}

// overrideFlags is readyOverride's flags; its error does not name the
// override.
func overrideFlags(doc []byte) ([]overlayFlag, error) {
	if _, err := compileOverride(doc); err != nil {
		return nil, err
	}
	return standAlone(doc)
}

// overlay is base with flags in place of its flags of the same keys,
// and with those it does not define. base is returned as it is when flags
// is empty, so serve without overrides sends the file's bytes.
//
// The flags of base keep their $refs and base keeps its $evaluators and
// its flag-set metadata. An override's flags have their $refs replaced by
// their own document's $evaluators, since a $ref resolves in the document
// that defines the flag, and carry their document's flag-set metadata
// under their own. The served file's flag-set metadata still applies under
// that, so that an override's flag stays in the file's flag set (its
// flagSetId selects it); a document cannot unset a key of it.
func overlay(base []byte, flags []overlayFlag) ([]byte, error) {
	if len(flags) == 0 {
		return base, nil
	}
	top, err := decodeTop(base)
	if err != nil {
		return nil, err
	}
	if top["flags"], err = replaceFlags(top["flags"], flags); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // rules compare strings such as "<b>": keep them readable
	if err := enc.Encode(top); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// overlayFlags are the flags of the overrides, each key once, from the
// last override that defines it, in key order.
func overlayFlags(overrides []overrideDoc) []overlayFlag {
	byKey := map[string]overlayFlag{}
	for _, o := range overrides {
		for _, f := range o.flags {
			byKey[f.key] = f
		}
	}
	keys := slices.Sorted(maps.Keys(byKey))
	out := make([]overlayFlag, len(keys))
	for i, k := range keys {
		out[i] = byKey[k]
	}
	return out
}

// decodeTop decodes a flag document, JSON with its numbers exact or YAML,
// into plain values.
func decodeTop(doc []byte) (map[string]any, error) {
	raw, err := schemaInstance(doc)
	if err != nil {
		return nil, err
	}
	top, ok := raw.(map[string]any)
	if !ok {
		return nil, errors.New("the document is not an object")
	}
	return top, nil
}

// standAlone lists the flags of an override's document, each with its
// $refs resolved and its document's metadata merged in. The document has
// been loaded strictly, so its flags are objects and its $refs resolve;
// what is checked again here would otherwise change meaning in another
// document.
func standAlone(doc []byte) ([]overlayFlag, error) {
	top, err := decodeTop(doc)
	if err != nil {
		return nil, err
	}
	evaluators, _ := top["$evaluators"].(map[string]any)
	// The strict load refuses metadata that is no object once its $refs
	// are substituted; here it is none, to be safe.
	meta, _ := inlineRefs(top["metadata"], evaluators, true)
	setMeta, _ := meta.(map[string]any)
	defs, err := flagDefs(top["flags"])
	if err != nil {
		return nil, err
	}
	for i := range defs {
		if defs[i].def, err = standAloneFlag(defs[i], evaluators, setMeta); err != nil {
			return nil, err
		}
	}
	return defs, nil
}

// flagDefs lists the flags of a "flags" member, an object or an array of
// flags with a "key"; of two flags with one key, the later. A null member
// is no flags, as the strict load that came first reads it.
func flagDefs(raw any) ([]overlayFlag, error) {
	var out []overlayFlag
	add := func(key string, v any) error {
		def, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("flag %q is not an object", key)
		}
		out = append(out, overlayFlag{key: key, def: def})
		return nil
	}
	switch t := raw.(type) {
	case nil:
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(t)) {
			if err := add(k, t[k]); err != nil {
				return nil, err
			}
		}
	case []any:
		for i, v := range t {
			def, _ := v.(map[string]any)
			key, ok := def["key"].(string)
			if !ok {
				return nil, fmt.Errorf("flags[%d] has no key", i)
			}
			if err := add(key, def); err != nil {
				return nil, err
			}
		}
	default:
		return nil, errors.New(`"flags" is neither an object nor an array`)
	}
	return out, nil
}

// standAloneFlag is f's definition without its "key" (the merged document
// may hold flags by key), its $refs replaced and its metadata written
// under its document's.
func standAloneFlag(f overlayFlag, evaluators, setMeta map[string]any) (map[string]any, error) {
	def, err := refsInlined(f, evaluators)
	if err != nil {
		return nil, err
	}
	delete(def, "key")
	own, _ := def["metadata"].(map[string]any)
	if len(setMeta) > 0 || own != nil {
		meta := map[string]any{}
		copyMetadata(meta, setMeta)
		copyMetadata(meta, own)
		def["metadata"] = meta
	}
	return def, nil
}

// refsInlined is a copy of f's definition with its $refs replaced, as the
// loader reads them: a definition that is one $ref is the entry it names,
// not searched again; otherwise the $refs of the rule must resolve, and
// those of the other members stay as written where they name no entry.
func refsInlined(f overlayFlag, evaluators map[string]any) (map[string]any, error) {
	if name, ok := f.def["$ref"].(string); ok && len(f.def) == 1 {
		if entry, ok := evaluators[name].(map[string]any); ok {
			return maps.Clone(entry), nil
		}
	}
	def := maps.Clone(f.def)
	for k, v := range def {
		if k != "targeting" {
			def[k], _ = inlineRefs(v, evaluators, true)
		}
	}
	rule := def["targeting"]
	if rule == nil {
		return def, nil
	}
	resolved, err := inlineRefs(rule, evaluators, false)
	if err == nil && hasRef(resolved) {
		err = errors.New("a $ref is left once the document's own $evaluators are substituted")
	}
	if err != nil {
		// A second guard: compileOverride refuses such a rule first, with
		// refHint, so this error need not repeat it.
		return nil, fmt.Errorf("flag %q: %v", f.key, err)
	}
	def["targeting"] = resolved
	return def, nil
}

// copyMetadata copies the entries of src that the loader keeps (strings,
// numbers and booleans): one it drops must not hide an entry under it.
func copyMetadata(dst, src map[string]any) {
	for k, v := range src {
		switch v.(type) {
		case string, bool, json.Number, int, int64, uint64, float64:
			dst[k] = v
		}
	}
}

// inlineRefs replaces each {"$ref": name} of a rule, or of data, with the
// named evaluator, as the evaluator's loader does: only an object whose
// one member is "$ref" is a reference (one with other members beside it
// is data), and what an evaluator holds is not searched again. A name of
// no entry is an error in a rule, and stays as written in data.
func inlineRefs(x any, evaluators map[string]any, data bool) (any, error) {
	switch t := x.(type) {
	case map[string]any:
		if name, ok := t["$ref"].(string); ok && len(t) == 1 {
			ev, found := evaluators[name]
			switch {
			case found:
				return ev, nil
			case data:
				return t, nil
			}
			return nil, fmt.Errorf("$ref %q names no entry of its document's $evaluators", name)
		}
		out := make(map[string]any, len(t))
		for k, v := range t {
			r, err := inlineRefs(v, evaluators, data)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(t))
		for i, v := range t {
			r, err := inlineRefs(v, evaluators, data)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	}
	return x, nil
}

// hasRef tells whether a rule still holds a "$ref": in the merged document
// it would resolve in the served file's $evaluators.
func hasRef(x any) bool {
	switch t := x.(type) {
	case map[string]any:
		if _, ok := t["$ref"]; ok && len(t) == 1 {
			return true
		}
		for _, v := range t {
			if hasRef(v) {
				return true
			}
		}
	case []any:
		return slices.ContainsFunc(t, hasRef)
	}
	return false
}

// replaceFlags is the served file's "flags" member with flags in place of
// those of the same keys, in the form it has: an object, or an array of
// flags with a "key". evaluator.Load accepted the file, so it has one of
// the two: a missing or null member is an error here as it was there.
func replaceFlags(raw any, flags []overlayFlag) (any, error) {
	switch t := raw.(type) {
	case map[string]any:
		for _, f := range flags {
			t[f.key] = f.def
		}
		return t, nil
	case []any:
		over := map[string]bool{}
		for _, f := range flags {
			over[f.key] = true
		}
		out := slices.DeleteFunc(t, func(v any) bool {
			def, _ := v.(map[string]any)
			key, ok := def["key"].(string)
			return ok && over[key]
		})
		for _, f := range flags {
			def := maps.Clone(f.def)
			def["key"] = f.key
			out = append(out, def)
		}
		return out, nil
	}
	return nil, errors.New(`"flags" is neither an object nor an array`)
}
