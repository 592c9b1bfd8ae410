package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/flagsnap/flagsnap"
	"github.com/flagsnap/flagsnap/evaluator"
	"github.com/flagsnap/flagsnap/fractional"
	"github.com/flagsnap/flagsnap/internal/suggest"
	"github.com/flagsnap/flagsnap/source"
)

// loadFlags reads and compiles a flag file as the provider does, with
// opts (the fractional version asked for), and returns the document with
// its flags. The error is one line that names the file.
func loadFlags(path string, opts ...evaluator.Option) ([]byte, *evaluator.FlagSet, error) {
	data, err := readInput(path)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %s", path, readError(err))
	}
	set, err := evaluator.Load(data, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %v", path, err)
	}
	return data, set, nil
}

// parseVersion reads --fractional; "" is the provider's default, v2.
func parseVersion(option, s string) (fractional.Version, error) {
	if s == "" {
		return flagsnap.DefaultFractionalVersion, nil
	}
	v, err := fractional.ParseVersion(s)
	if err != nil {
		return 0, fmt.Errorf("--%s must be v1, v2 or v3, not %q", option, s)
	}
	return v, nil
}

// readContext reads the evaluation context of --context or --context-file:
// a JSON object, the flattened OpenFeature context ("targetingKey" is one
// of its keys). Numbers keep their exact text, so that fractional v3
// hashes a 64-bit id as the integer it is.
func readContext(inline, file string) (map[string]any, error) {
	if inline != "" && file != "" {
		return nil, errors.New("give --context or --context-file, not both")
	}
	text, from := []byte(inline), "--context"
	if file != "" {
		b, err := readInput(file)
		if err != nil {
			return nil, fmt.Errorf("--context-file %s: %s", file, readError(err))
		}
		text, from = b, "--context-file "+file
	}
	if len(bytes.TrimSpace(text)) == 0 {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	var ctx map[string]any
	if err := dec.Decode(&ctx); err != nil {
		return nil, fmt.Errorf("%s is not a JSON object: %v", from, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s is not a JSON object: data after the object", from)
	}
	if ctx == nil {
		return nil, fmt.Errorf("%s is not a JSON object: null", from)
	}
	return ctx, nil
}

// hasFlag reports whether the set defines key.
func hasFlag(set *evaluator.FlagSet, key string) bool {
	return slices.Contains(set.Keys(), key)
}

// undefinedFlag is the error of a key the set read from path does not
// define, with the key it most likely meant, as the provider says it.
func undefinedFlag(set *evaluator.FlagSet, key, path string) error {
	if hint := suggest.Hint(key, set.Keys()); hint != "" {
		return fmt.Errorf("flag %q is not defined in %s; %s", key, path, hint)
	}
	return fmt.Errorf("flag %q is not defined in %s", key, path)
}

// result is a resolution whatever its type.
type result struct {
	Value    any            `json:"value"`
	Variant  string         `json:"variant,omitempty"`
	Reason   string         `json:"reason"`
	Error    string         `json:"errorCode,omitempty"`
	Message  string         `json:"errorMessage,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
	// Type is the type the flag was resolved as.
	Type string `json:"type"`
}

func resultOf[T any](r evaluator.Resolution[T], typ string) result {
	out := result{Value: r.Value, Variant: r.Variant, Reason: r.Reason.String(), Metadata: r.Metadata, Type: typ}
	if r.Err != nil {
		out.Error, out.Message = r.Err.Code.String(), r.Err.Error()
	}
	return out
}

// typeNames are the accepted --type values, in the order a flag without
// one is tried.
var typeNames = []string{"bool", "string", "int", "float", "object"}

// resolve resolves key as typ with the typed accessors the provider uses.
// The caller's default is the type's zero value.
func resolve(set *evaluator.FlagSet, key, typ string, ctx map[string]any) result {
	switch typ {
	case "bool":
		return resultOf(set.ResolveBool(key, false, ctx), typ)
	case "string":
		return resultOf(set.ResolveString(key, "", ctx), typ)
	case "int":
		return resultOf(set.ResolveInt(key, 0, ctx), typ)
	case "float":
		return resultOf(set.ResolveFloat(key, 0, ctx), typ)
	}
	return resultOf(set.ResolveObject(key, nil, ctx), "object")
}

// resolveAny resolves key as the type of its variants: the first type
// whose accessor does not answer TYPE_MISMATCH. Integers are read as
// float unless every use asks for int, as JSON numbers are.
func resolveAny(set *evaluator.FlagSet, key string, ctx map[string]any) result {
	var r result
	for _, typ := range []string{"bool", "string", "float", "object"} {
		r = resolve(set, key, typ, ctx)
		if r.Error != evaluator.CodeTypeMismatch.String() {
			break
		}
	}
	if r.Variant == "" || r.Error != "" {
		// No variant applies: the value is the caller's default, whatever
		// type the caller asks for.
		r.Value, r.Type = nil, ""
	}
	return r
}

// maxInput bounds what the command reads of a file, as the provider
// bounds a flag document by default: a device that never ends is an
// error, not a read that fills memory.
const maxInput = flagsnap.DefaultMaxMessageSize

// readInput reads the file at path, which may be a pipe, as in
// <(curl …), up to maxInput bytes.
func readInput(path string) ([]byte, error) { return readAtMost(path, maxInput) }

// readAtMost reads the file at path, refusing one of more than limit
// bytes: a regular file unread, anything else having read one byte past
// the bound.
func readAtMost(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := int64(-1)
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		if fi.Size() > limit {
			return nil, inputTooLarge(limit)
		}
		size = fi.Size()
	}
	return readFrom(f, size, limit)
}

// readFrom reads r to its end, up to limit bytes; size is its length, or
// -1 when it is not known.
func readFrom(r io.Reader, size, limit int64) ([]byte, error) {
	data, over, err := source.ReadDocument(r, size, limit)
	if over {
		return nil, inputTooLarge(limit)
	}
	return data, err
}

func inputTooLarge(limit int64) error {
	return fmt.Errorf("more than %d bytes, the most flagsnap reads of a document", limit)
}
