package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"

	flagdschema "github.com/open-feature/flagd-schemas/json"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	yaml "go.yaml.in/yaml/v3"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/flagsnap/flagsnap/internal/plainyaml"
)

// The schema flagd checks flag files against, as published with flagd.
const (
	flagsSchemaURL     = "https://flagd.dev/schema/v0/flags.json"
	targetingSchemaURL = "https://flagd.dev/schema/v0/targeting.json"
)

// englishPrinter spells the validator's messages.
var englishPrinter = message.NewPrinter(language.English)

// The schemas flagd publishes: the flag file's, and the targeting rule's,
// which the flag file's refers to for every rule.
var flagsSchema, targetingSchema = lazySchemas()

func lazySchemas() (flags, targeting func() (*jsonschema.Schema, error)) {
	compiler := sync.OnceValues(func() (*jsonschema.Compiler, error) {
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
		return c, nil
	})
	compile := func(url string) func() (*jsonschema.Schema, error) {
		return sync.OnceValues(func() (*jsonschema.Schema, error) {
			c, err := compiler()
			if err != nil {
				return nil, err
			}
			return c.Compile(url)
		})
	}
	return compile(flagsSchemaURL), compile(targetingSchemaURL)
}

// schemaViolation is one place where a document breaks the schema.
type schemaViolation struct {
	pointer string
	msg     string
	// gotObject: the schema wants a literal value there, and an object is
	// written, such as an operation that computes the value.
	gotObject bool
}

// maxSchemaDepth is the deepest nesting of a rule checked against the
// schema. The validator's work at each level of a rule grows with the
// depth (every alternative tried records its whole path), so a rule the
// provider loads easily could be far too costly to check; real rules stay
// well within the bound.
const maxSchemaDepth = 64

// checkSchema validates a decoded document (schemaInstance) against
// flagd's schema. It reports the innermost failures only: flagd's schema
// tries every flag type in turn (oneOf), and the errors of the branches
// that never stood a chance say nothing the innermost ones do not.
//
// The rules (each flag's "targeting" and each entry of "$evaluators") are
// checked on their own against the targeting schema, each different rule
// once: a rule a YAML anchor lends to many flags, or one copied into many,
// costs one check, and the work is bounded by the rules written rather
// than by their copies. The rules nested deeper than maxSchemaDepth are not
// checked; skipped has their pointers.
func checkSchema(doc any) (violations []schemaViolation, skipped []string, err error) {
	sch, err := flagsSchema()
	if err != nil {
		return nil, nil, err
	}
	ruleSch, err := targetingSchema()
	if err != nil {
		return nil, nil, err
	}
	rest, rules := splitRules(doc)
	seen := map[schemaViolation]bool{}
	addNew := func(prefix string, vs []schemaViolation) {
		for _, v := range vs {
			v.pointer = prefix + v.pointer
			if !seen[v] {
				seen[v] = true
				violations = append(violations, v)
			}
		}
	}
	vs, err := violationsOf(sch, rest, isFlagDefinition)
	if err != nil {
		return nil, nil, err
	}
	addNew("", vs)
	checked := map[string][]schemaViolation{} // by the rule's JSON encoding
	for _, r := range rules {
		if nestsDeeperThan(r.value, maxSchemaDepth) {
			skipped = append(skipped, r.pointer)
			continue
		}
		key, keyErr := json.Marshal(r.value) // object keys sorted: equal rules, equal keys
		vs, done := checked[string(key)]
		if !done || keyErr != nil {
			if vs, err = violationsOf(ruleSch, r.value, neverByType); err != nil {
				return nil, nil, err
			}
			if keyErr == nil {
				checked[string(key)] = vs
			}
		}
		addNew(r.pointer, vs)
	}
	sort.SliceStable(violations, func(i, j int) bool { return violations[i].pointer < violations[j].pointer })
	slices.Sort(skipped)
	return violations, skipped, nil
}

// violationsOf is the innermost violations of v, with pointers relative to
// it; byType is for innermost.
func violationsOf(sch *jsonschema.Schema, v any, byType func(*jsonschema.ValidationError) bool) ([]schemaViolation, error) {
	err := sch.Validate(v)
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return nil, err
	}
	leaves := innermost(ve, byType)
	out := make([]schemaViolation, len(leaves))
	for i, leaf := range leaves {
		out[i] = schemaViolation{pointer: pointerOf(leaf.InstanceLocation), msg: leaf.ErrorKind.LocalizedString(englishPrinter)}
		if t, ok := leaf.ErrorKind.(*kind.Type); ok && t.Got == "object" {
			out[i].gotObject = true
		}
	}
	return out, nil
}

// locatedRule is a targeting rule of a document and its pointer.
type locatedRule struct {
	pointer string
	value   any
}

// splitRules is the document with every rule replaced by the empty rule,
// which the schema accepts, and the rules. doc is not modified.
func splitRules(doc any) (rest any, rules []locatedRule) {
	top, ok := doc.(map[string]any)
	if !ok {
		return doc, nil
	}
	top = maps.Clone(top)
	if flags, ok := top["flags"].(map[string]any); ok {
		flags = maps.Clone(flags)
		for key, def := range flags {
			obj, ok := def.(map[string]any)
			if !ok {
				continue
			}
			if r, ok := obj["targeting"]; ok {
				obj = maps.Clone(obj)
				obj["targeting"] = map[string]any{}
				flags[key] = obj
				rules = append(rules, locatedRule{"/flags/" + escapePointer(key) + "/targeting", r})
			}
		}
		top["flags"] = flags
	}
	if evs, ok := top["$evaluators"].(map[string]any); ok {
		evs = maps.Clone(evs)
		for name, r := range evs {
			if name == "" {
				continue // the schema refuses the name, not the rule
			}
			evs[name] = map[string]any{}
			rules = append(rules, locatedRule{"/$evaluators/" + escapePointer(name), r})
		}
		top["$evaluators"] = evs
	}
	return top, rules
}

// nestsDeeperThan reports whether v nests more than levels objects and
// arrays deep. It looks no deeper than that, so its cost is bounded by the
// size of the document.
func nestsDeeperThan(v any, levels int) bool {
	switch t := v.(type) {
	case map[string]any:
		if levels == 0 {
			return true
		}
		for _, el := range t {
			if nestsDeeperThan(el, levels-1) {
				return true
			}
		}
	case []any:
		if levels == 0 {
			return true
		}
		for _, el := range t {
			if nestsDeeperThan(el, levels-1) {
				return true
			}
		}
	}
	return false
}

// innermost are the failures that explain e. Where the schema offers
// alternatives (oneOf, anyOf) and none fits, it is the alternative that got
// furthest into the document, then the one with the fewest failures: an
// "if" with a bad condition fails deep in its condition as an "if", and at
// the top as every other operation. The alternatives of a flag's type are
// the exception (byType): they differ only in the types of the variants
// and the default (the rule is checked on its own), so the type meant is
// the one with the fewest failures, however deep.
func innermost(e *jsonschema.ValidationError, byType func(*jsonschema.ValidationError) bool) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	switch e.ErrorKind.(type) {
	case *kind.OneOf, *kind.AnyOf:
		fewestFirst := byType(e)
		var best []*jsonschema.ValidationError
		bestDepth := -1
		for _, c := range e.Causes {
			leaves := innermost(c, byType)
			depth := 0
			for _, l := range leaves {
				depth = max(depth, len(l.InstanceLocation))
			}
			deeper, fewer := depth > bestDepth, best == nil || len(leaves) < len(best)
			better := deeper || depth == bestDepth && fewer
			if fewestFirst {
				better = fewer || len(leaves) == len(best) && deeper
			}
			if better {
				best, bestDepth = leaves, depth
			}
		}
		return best
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, innermost(c, byType)...)
	}
	return out
}

// isFlagDefinition tells the failures of a flag definition in a flag
// document, whose type is to be found by the fewest failures.
func isFlagDefinition(e *jsonschema.ValidationError) bool {
	return len(e.InstanceLocation) == 2 && e.InstanceLocation[0] == "flags"
}

// neverByType is byType for a rule checked on its own, in which no
// alternative is a flag's type.
func neverByType(*jsonschema.ValidationError) bool { return false }

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
	data = plainyaml.TrimBOM(data)
	if plainyaml.IsJSON(data) {
		return jsonschema.UnmarshalJSON(bytes.NewReader(data))
	}
	var raw any
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	return plainyaml.Plain(raw), nil
}
