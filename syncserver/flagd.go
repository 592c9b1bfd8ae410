package syncserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
)

// flagdEncode re-encodes a flag document the way the flagd daemon (v0.16)
// sends what it read from a file, JSON or YAML (see decodeDocument):
// decoded into plain Go values (so numbers
// become float64 and are written back as such), every {"$ref": name}
// replaced by the named evaluator, the flag-set metadata folded into each
// flag's metadata and dropped from the top level, "defaultVariant" written
// as "" where the file had none, and a "source" field naming where the
// flag came from. Only "flags" is left at the top level.
func flagdEncode(doc []byte, source string) (string, error) {
	top, err := decodeDocument(doc)
	if err != nil {
		return "", fmt.Errorf("flagd encoding: %w", err)
	}
	evaluators, setMeta, err := evaluatorsAndMetadata(top)
	if err != nil {
		return "", fmt.Errorf("flagd encoding: %w", err)
	}

	flags := map[string]any{}
	addFlag := func(key string, raw any) {
		switch def := raw.(type) {
		case map[string]any:
			flags[key] = flagdFlag(def, setMeta, evaluators, source)
		case nil: // flagd's model of null is that of {}
			flags[key] = flagdFlag(map[string]any{}, setMeta, evaluators, source)
		default:
			// flagd refuses a whole document over it: sent as written,
			// for the follower to refuse that flag.
			flags[key] = raw
		}
	}
	switch fs := top["flags"].(type) {
	case map[string]any:
		for k, v := range fs {
			addFlag(k, v)
		}
	case []any:
		for _, v := range fs {
			if def, ok := v.(map[string]any); ok {
				if k, ok := def["key"].(string); ok {
					addFlag(k, def)
				}
			}
		}
	}
	b, err := json.Marshal(map[string]any{"flags": flags})
	if err != nil {
		return "", fmt.Errorf("flagd encoding: %w", err)
	}
	return string(b), nil
}

// evaluatorsAndMetadata are the document's $evaluators, and its flag-set
// metadata with their $refs substituted. flagd refuses a whole document
// where either is there but not an object, as metadata that is one $ref may
// become.
func evaluatorsAndMetadata(top map[string]any) (evaluators, setMeta map[string]any, err error) {
	evaluators, ok := top["$evaluators"].(map[string]any)
	if !ok && top["$evaluators"] != nil {
		return nil, nil, errors.New(`"$evaluators" is not an object`)
	}
	meta := substituteRefs(top["metadata"], evaluators)
	if setMeta, ok = meta.(map[string]any); !ok && meta != nil {
		return nil, nil, errors.New(`"metadata" is not an object`)
	}
	return evaluators, setMeta, nil
}

// flagdFlag is one flag as flagd sends it: the fields of its model (a
// missing string is ""), the set's metadata (see evaluatorsAndMetadata)
// under its own and the source it was read from. The evaluators are
// substituted into every member, its rule and the rest, as flagd's
// substitution of the whole text does. A member of a type flagd's model
// cannot hold, over which flagd refuses the whole document, is sent as
// written, for the follower to refuse that flag.
func flagdFlag(def, setMeta, evaluators map[string]any, source string) map[string]any {
	def, _ = substituteRefs(def, evaluators).(map[string]any)
	out := map[string]any{
		"state":          modelString(def["state"]),
		"defaultVariant": modelString(def["defaultVariant"]),
		"variants":       def["variants"],
		"source":         source,
	}
	for _, name := range []string{"key", "source"} {
		switch def[name].(type) {
		case string, nil: // the key is the map's; the source is ours
		default:
			out[name] = def[name]
		}
	}
	if t, ok := def["targeting"]; ok && t != nil {
		out["targeting"] = t
	}
	own, isObject := def["metadata"].(map[string]any)
	if !isObject && def["metadata"] != nil {
		out["metadata"] = def["metadata"]
		return out
	}
	meta := map[string]any{}
	maps.Copy(meta, setMeta)
	maps.Copy(meta, own)
	if len(meta) > 0 {
		out["metadata"] = meta
	}
	return out
}

// modelString is how flagd's model holds a string field: a missing or
// null value is the empty string; one of another type stays as written
// (see flagdFlag).
func modelString(v any) any {
	if v == nil {
		return ""
	}
	return v
}

// substituteRefs replaces every object that is exactly {"$ref": name} with
// the named evaluator; flagd does this textually on the compact form, which
// has the same effect on such objects and leaves unknown names in place,
// and names that JSON writes escaped (with <, > or &, say), which its text
// search never finds.
func substituteRefs(x any, evaluators map[string]any) any {
	if len(evaluators) == 0 {
		return x
	}
	switch t := x.(type) {
	case map[string]any:
		if name, ok := t["$ref"].(string); ok && len(t) == 1 {
			if ev, ok := evaluators[name]; ok && writtenAsIs(name) {
				return ev
			}
			return t
		}
		out := make(map[string]any, len(t))
		for k, v := range t {
			out[k] = substituteRefs(v, evaluators)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, v := range t {
			out[i] = substituteRefs(v, evaluators)
		}
		return out
	}
	return x
}

// writtenAsIs tells whether JSON writes name between quotes as it is.
func writtenAsIs(name string) bool {
	b, err := json.Marshal(name)
	return err == nil && string(b) == `"`+name+`"`
}
