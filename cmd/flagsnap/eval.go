package main

import (
	"fmt"
	"io"

	"github.com/flagsnap/flagsnap/evaluator"
	"github.com/flagsnap/flagsnap/internal/jsonline"
)

const evalUsage = `Usage: flagsnap eval FILE FLAG [--context JSON | --context-file F] [--type T]
                     [--fractional v1|v2|v3] [--explain] [--format text|json]
                     [--override PATH]...

Resolves one flag of a flag file for an evaluation context, as the flagsnap
provider does, and prints the value, the variant, the reason, the error if
any and the metadata. With --explain it also prints the path the rule took:
every operator with its inputs and its result, and for fractional the
bucketing value, the bytes hashed, the hash, the bucket and the weights.

The context is the flattened OpenFeature context, as JSON: the targeting
key is "targetingKey". Without --type the flag is resolved as the type of
its variants.

With --override PATH (repeatable), the flags of PATH are layered over
FILE's, as flagsnap.WithOverrideFile layers them: a flag key PATH defines
replaces that whole flag of FILE, and a later --override wins over an
earlier one. A flag's $refs resolve in the file that defines it, and its
metadata merges with that file's. An override is read strictly: one with
a broken flag is refused whole, and so is one that does not exist (eval
reads it once). --explain then names the file that defined the flag.

Exit status: 0 resolved, 1 the resolution failed (its error is printed),
2 bad input.

Example:
  flagsnap eval flags.json new-checkout --context '{"targetingKey":"user-1","email":"ada@example.com"}'
  value     true
  variant   on
  reason    TARGETING_MATCH
  metadata  {"flagSetId":"shop","owner":"payments","team":"checkout"}
`

func (c *cmd) eval(args []string) int {
	fs := c.newFlagSet(evalUsage)
	inline := fs.String("context", "", "evaluation context as a JSON object")
	file := fs.String("context-file", "", "read the evaluation context from this JSON file")
	typ := fs.String("type", "", "resolve as bool, string, int, float or object (default: the type of the flag's variants)")
	frac := fs.String("fractional", "", "fractional bucketing version: v1, v2 or v3 (default v2)")
	explain := fs.Bool("explain", false, "print the path the rule took")
	format := fs.String("format", "text", "output format: text or json")
	var overrides overridePaths
	fs.Var(&overrides, "override", overrideUsage)
	pos, status, ok := c.parseExactly(fs, args, 2, "FILE and FLAG")
	if !ok {
		return status
	}
	path, key := pos[0], pos[1]
	if *typ != "" {
		if err := checkOneOf("type", *typ, typeNames...); err != nil {
			return c.fail(exitBadInput, "%v", err)
		}
	}
	if err := checkOneOf("format", *format, "text", "json"); err != nil {
		return c.fail(exitBadInput, "%v", err)
	}
	version, err := parseVersion("fractional", *frac)
	if err != nil {
		return c.fail(exitBadInput, "%v", err)
	}
	ctx, err := readContext(*inline, *file)
	if err != nil {
		return c.fail(exitBadInput, "%v", err)
	}
	opt := evaluator.WithFractionalVersion(version)
	_, set, err := loadFlags(path, opt)
	if err == nil {
		set, err = layerOverrides(path, set, overrides, opt)
	}
	if err != nil {
		return c.fail(exitBadInput, "%v", err)
	}
	if !hasFlag(set, key) {
		return c.fail(exitBadInput, "%v", undefinedFlag(set, key, withOverrides(path, overrides)))
	}
	var r result
	if *typ == "" {
		r = resolveAny(set, key, ctx)
	} else {
		r = resolve(set, key, *typ, ctx)
	}
	var tree *evaluator.Explanation
	if *explain {
		x, err := set.Explain(key, ctx)
		if err != nil {
			return c.fail(exitBadInput, "%v", err)
		}
		tree = &x
	}
	writeEval(c.stdout, *format, key, r, tree)
	if r.Error != "" {
		return exitNegative
	}
	return exitOK
}

// writeEval writes the resolution of key, and its explanation when there
// is one, in format.
func writeEval(w io.Writer, format, key string, r result, tree *evaluator.Explanation) {
	if format == "json" {
		writeJSON(w, struct {
			Flag string `json:"flag"`
			result
			Explanation *evaluator.Explanation `json:"explanation,omitempty"`
		}{key, r, tree})
		return
	}
	printResult(w, r)
	if tree != nil {
		fmt.Fprintf(w, "\n%s", tree)
	}
}

func printResult(w io.Writer, r result) {
	value := "(the caller's default)"
	if r.Variant != "" && r.Error == "" {
		value = jsonline.String(r.Value)
	}
	fmt.Fprintf(w, "value     %s\n", value)
	if r.Variant != "" {
		fmt.Fprintf(w, "variant   %s\n", r.Variant)
	}
	fmt.Fprintf(w, "reason    %s\n", r.Reason)
	if r.Error != "" {
		fmt.Fprintf(w, "error     %s: %s\n", r.Error, r.Message)
	}
	if len(r.Metadata) > 0 {
		fmt.Fprintf(w, "metadata  %s\n", jsonline.String(r.Metadata))
	}
}
