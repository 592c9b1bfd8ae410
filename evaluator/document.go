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

	yaml "go.yaml.in/yaml/v3"
)

// decodeDocument parses a flag document into plain values, numbers kept as
// json.Number until we know what they are for: JSON when it starts as JSON
// does (see startsAsJSON, and fastDecoder, which chunkRead is for), YAML
// otherwise. refs is false when it certainly has no "$ref".
func decodeDocument(doc []byte, chunkRead func([]flagDef)) (top map[string]any, refs bool, err error) {
	doc = bytes.TrimPrefix(doc, []byte("\xef\xbb\xbf"))
	trimmed := bytes.TrimLeft(doc, " \t\r\n")
	if len(trimmed) == 0 {
		return nil, false, &DocumentError{Msg: "the document is empty"}
	}
	var raw any
	if startsAsJSON(trimmed) {
		raw, refs, err = decodeJSON(doc, chunkRead)
	} else {
		raw, err = decodeYAML(doc)
		refs = true
	}
	if err != nil {
		return nil, false, err
	}
	top, ok := raw.(map[string]any)
	if !ok {
		return nil, false, &DocumentError{Msg: fmt.Sprintf("the document is %s, not an object", jsonType(raw))}
	}
	return top, refs, nil
}

// startsAsJSON tells whether a document, from its first significant
// character, is JSON: an array, or an object whose first member's name is
// quoted. An object in YAML's flow style, {flags: …}, is not, and is read
// as the YAML it is, as flagd reads a .yaml file.
func startsAsJSON(trimmed []byte) bool {
	switch trimmed[0] {
	case '[':
		return true
	case '{':
		rest := bytes.TrimLeft(trimmed[1:], " \t\r\n")
		return len(rest) == 0 || rest[0] == '"' || rest[0] == '}'
	}
	return false
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

func decodeYAML(doc []byte) (any, error) {
	var raw any
	if err := yaml.Unmarshal(doc, &raw); err != nil {
		line := 0
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			line, _ = strconv.Atoi(m[1])
		}
		return nil, &SyntaxError{Format: "YAML", Line: line, Msg: err.Error()}
	}
	return fromYAML(raw)
}

// fromYAML converts what the YAML decoder produces into the shapes the JSON
// decoder produces, so that the rest of the loader sees one form.
func fromYAML(x any) (any, error) {
	v, err := fromYAMLValue(x)
	var de *DocumentError
	if errors.As(err, &de) {
		// Gathered on the way out, which costs nothing until a value is
		// wrong.
		slices.Reverse(de.Path)
	}
	return v, err
}

// inside notes that a problem lies within key (or index) of a container.
// Keys gather innermost first; fromYAML turns them around.
func inside(err error, key string) error {
	var de *DocumentError
	if errors.As(err, &de) {
		de.Path = append(de.Path, key)
	}
	return err
}

func fromYAMLValue(x any) (any, error) {
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
			return nil, &DocumentError{Msg: fmt.Sprintf("%v is not a JSON number", t)}
		}
		return json.Number(strconv.FormatFloat(t, 'g', -1, 64)), nil
	case time.Time:
		return t.Format(time.RFC3339Nano), nil
	case []any:
		out := make([]any, len(t))
		for i, el := range t {
			v, err := fromYAMLValue(el)
			if err != nil {
				return nil, inside(err, strconv.Itoa(i))
			}
			out[i] = v
		}
		return out, nil
	case map[string]any:
		return fromYAMLMap(t)
	case map[any]any:
		return fromYAMLMap(t)
	}
	return nil, &DocumentError{Msg: fmt.Sprintf("unsupported YAML value of type %T", x)}
}

// fromYAMLMap converts a mapping, whose keys become strings.
func fromYAMLMap[K comparable](t map[K]any) (any, error) {
	out := make(map[string]any, len(t))
	for k, el := range t {
		key := fmt.Sprint(k)
		v, err := fromYAMLValue(el)
		if err != nil {
			return nil, inside(err, key)
		}
		out[key] = v
	}
	return out, nil
}
