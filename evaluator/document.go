package evaluator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/flagsnap/flagsnap/internal/plainyaml"
	yaml "go.yaml.in/yaml/v3"
)

// decodeDocument parses a flag document into plain values, numbers kept as
// json.Number until we know what they are for: JSON when it starts as JSON
// does (see plainyaml.IsJSON, and fastDecoder, which chunkRead is for),
// YAML otherwise. refs is false when it certainly has no "$ref".
// yamlProblems are those of the flags whose YAML holds what JSON cannot, by
// the flag's place in "flags" (see yamlReader.problems).
func decodeDocument(doc []byte, chunkRead func([]flagDef)) (top map[string]any, refs bool, yamlProblems map[string]error, err error) {
	doc = plainyaml.TrimBOM(doc)
	trimmed := bytes.TrimLeft(doc, " \t\r\n")
	if len(trimmed) == 0 {
		return nil, false, nil, &DocumentError{Msg: "the document is empty"}
	}
	var raw any
	if plainyaml.IsJSON(trimmed) {
		raw, refs, err = decodeJSON(doc, chunkRead)
	} else {
		raw, yamlProblems, err = decodeYAML(doc)
		refs = true
	}
	if err != nil {
		return nil, false, nil, err
	}
	top, ok := raw.(map[string]any)
	if !ok {
		return nil, false, nil, &DocumentError{Msg: fmt.Sprintf("the document is %s, not an object", jsonType(raw))}
	}
	return top, refs, yamlProblems, nil
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

func decodeYAML(doc []byte) (any, map[string]error, error) {
	var raw any
	if err := yaml.Unmarshal(doc, &raw); err != nil {
		line := 0
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			line, _ = strconv.Atoi(m[1])
		}
		return nil, nil, &SyntaxError{Format: "YAML", Line: line, Msg: err.Error()}
	}
	var r yamlReader
	v, err := r.value(raw)
	if err != nil {
		return nil, nil, err
	}
	problems, err := r.problems()
	return v, problems, err
}

// yamlReader converts what the YAML decoder produces into the shapes the
// JSON decoder produces, so that the rest of the loader sees one form.
type yamlReader struct {
	at []string // the path of the value being converted
	// unreadable is what JSON cannot hold, which flagd, converting YAML
	// to JSON, refuses the whole document over: a mapping key that is
	// not a string (1, true, ~), which becomes its text, and an infinity
	// or NaN, which becomes null.
	unreadable []notJSON
}

// notJSON is something JSON cannot hold, and where.
type notJSON struct {
	at  []string // where it is
	msg string
}

// note records what JSON cannot hold at r.at and, for a key, key.
func (r *yamlReader) note(msg string, key ...string) {
	at := append(slices.Clone(r.at), key...)
	r.unreadable = append(r.unreadable, notJSON{at: at, msg: msg})
}

func (r *yamlReader) value(x any) (any, error) {
	switch t := x.(type) {
	case nil, bool, string:
		return t, nil
	case int:
		return json.Number(strconv.Itoa(t)), nil
	case int64:
		return json.Number(strconv.FormatInt(t, 10)), nil
	case uint64:
		return json.Number(strconv.FormatUint(t, 10)), nil
	case float64:
		if math.IsInf(t, 0) || math.IsNaN(t) {
			r.note(fmt.Sprintf("%v is not a JSON number", t))
			return nil, nil
		}
		return json.Number(strconv.FormatFloat(t, 'g', -1, 64)), nil
	case time.Time:
		return t.Format(time.RFC3339Nano), nil
	case []any:
		out := make([]any, len(t))
		for i, el := range t {
			v, err := r.inside(strconv.Itoa(i), el)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case map[string]any:
		return yamlMapping(r, t)
	case map[any]any:
		return yamlMapping(r, t)
	}
	return nil, &DocumentError{Msg: fmt.Sprintf("unsupported YAML value of type %T", x), Path: slices.Clone(r.at)}
}

// inside converts el, found at key (or index) of the value at r.at.
func (r *yamlReader) inside(key string, el any) (any, error) {
	r.at = append(r.at, key)
	v, err := r.value(el)
	r.at = r.at[:len(r.at)-1]
	return v, err
}

// yamlMapping converts a mapping, whose keys become strings.
func yamlMapping[K comparable](r *yamlReader, t map[K]any) (any, error) {
	out := make(map[string]any, len(t))
	for k, el := range t {
		key, isString := any(k).(string)
		if !isString {
			key = plainyaml.KeyText(k)
			r.note(fmt.Sprintf("YAML key %s is not a string", key), key)
		}
		v, err := r.inside(key, el)
		if err != nil {
			return nil, err
		}
		out[key] = v
	}
	return out, nil
}

// problems confines what JSON cannot hold to the flag that holds it, as
// flagsnap's rule is for what flagd refuses whole: the flag's problem, at
// the member it lies in, by the flag's place in "flags" (its key, or its
// index in an array). Anything
// outside a flag refuses the document. Of several in a flag, the first by
// path is told, whatever order the mappings were read in.
func (r *yamlReader) problems() (map[string]error, error) {
	slices.SortFunc(r.unreadable, func(a, b notJSON) int { return slices.Compare(a.at, b.at) })
	var byFlag map[string]error
	for _, u := range r.unreadable {
		if len(u.at) < 2 || u.at[0] != "flags" {
			return nil, &DocumentError{Msg: u.msg, Path: u.at}
		}
		if byFlag == nil {
			byFlag = map[string]error{}
		}
		if byFlag[u.at[1]] == nil {
			byFlag[u.at[1]] = &memberProblem{at: u.at[2:], err: errors.New(u.msg)}
		}
	}
	return byFlag, nil
}
