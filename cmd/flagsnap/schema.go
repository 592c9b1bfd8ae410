package main

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	flagdschema "github.com/open-feature/flagd-schemas/json"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	yaml "go.yaml.in/yaml/v3"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// The schema flagd checks flag files against, as published with flagd.
const (
	flagsSchemaURL     = "https://flagd.dev/schema/v0/flags.json"
	targetingSchemaURL = "https://flagd.dev/schema/v0/targeting.json"
)

// englishPrinter spells the validator's messages.
var englishPrinter = message.NewPrinter(language.English)

var flagsSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	for url, text := range map[string]string{
		flagsSchemaURL:     flagdschema.FlagSchema,
		targetingSchemaURL: flagdschema.TargetingSchema,
	} {
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
		if err != nil {
			return nil, fmt.Errorf("flagd schema %s: %w", url, err)
		}
		if err := c.AddResource(url, doc); err != nil {
			return nil, err
		}
	}
	return c.Compile(flagsSchemaURL)
})

// schemaViolation is one place where a document breaks the schema.
type schemaViolation struct {
	pointer string
	msg     string
}

// checkSchema validates a document that parsed against flagd's schema. It
// reports the innermost failures only: flagd's schema tries every flag type
// in turn (oneOf), and the errors of the branches that never stood a
// chance say nothing the innermost ones do not.
func checkSchema(data []byte) ([]schemaViolation, error) {
	sch, err := flagsSchema()
	if err != nil {
		return nil, err
	}
	doc, err := schemaInstance(data)
	if err != nil {
		return nil, err
	}
	err = sch.Validate(doc)
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return nil, err
	}
	seen := map[schemaViolation]bool{}
	var out []schemaViolation
	for _, leaf := range innermost(ve) {
		v := schemaViolation{pointer: pointerOf(leaf.InstanceLocation), msg: leaf.ErrorKind.LocalizedString(englishPrinter)}
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].pointer < out[j].pointer })
	return out, nil
}

// innermost are the failures that explain e. Where the schema offers
// alternatives (oneOf, anyOf) and none fits, it is the alternative that got
// furthest into the document, then the one with the fewest failures: a
// string flag with a bad rule fails deep in its targeting as a string flag,
// and at its first variant as a boolean flag.
func innermost(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	switch e.ErrorKind.(type) {
	case *kind.OneOf, *kind.AnyOf:
		var best []*jsonschema.ValidationError
		bestDepth := -1
		for _, c := range e.Causes {
			leaves := innermost(c)
			depth := 0
			for _, l := range leaves {
				depth = max(depth, len(l.InstanceLocation))
			}
			if depth > bestDepth || depth == bestDepth && len(leaves) < len(best) {
				best, bestDepth = leaves, depth
			}
		}
		return best
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, innermost(c)...)
	}
	return out
}

func pointerOf(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteString("/" + escapePointer(t))
	}
	return b.String()
}

// schemaInstance decodes a document into the values the validator reads:
// JSON with its numbers exact, YAML with its timestamps as the strings
// they were written as (the evaluator reads them that way too).
func schemaInstance(data []byte) (any, error) {
	data = bytes.TrimPrefix(data, []byte(bom))
	if isJSON(data) {
		return jsonschema.UnmarshalJSON(bytes.NewReader(data))
	}
	var raw any
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	return plainYAML(raw), nil
}

func plainYAML(x any) any {
	switch t := x.(type) {
	case time.Time:
		return t.Format(time.RFC3339Nano)
	case []any:
		for i, el := range t {
			t[i] = plainYAML(el)
		}
	case map[string]any:
		for k, el := range t {
			t[k] = plainYAML(el)
		}
	case map[any]any:
		out := make(map[string]any, len(t))
		for k, el := range t {
			out[fmt.Sprint(k)] = plainYAML(el)
		}
		return out
	}
	return x
}
