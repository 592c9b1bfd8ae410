package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/flagsnap/flagsnap/evaluator"
	"github.com/flagsnap/flagsnap/fractional"
	"github.com/flagsnap/flagsnap/internal/suggest"
)

// fixer says how to mend the problems of one document (schemaInstance,
// nil if it could not be decoded). It reads what is written where a
// problem is, never the problem's message, which is free to change: a fix
// is offered only where the document itself shows what is wrong, so it
// cannot contradict it. What it gathers from the document is gathered once,
// so that a file of many problems costs no more per problem than a file of
// few.
type fixer struct {
	doc          any
	entriesByKey map[string][]int          // entries of an array of flags, by key
	variantKinds map[string]map[string]int // variants of a flag (its pointer) by type
	evaluators   []string                  // the names in $evaluators, sorted
}

func newFixer(doc any) *fixer { return &fixer{doc: doc} }

// fix is one line on how to mend the problem at path (keys and indexes
// from the top of the document, as evaluator.FlagProblem.Path), or "" when
// there is no obvious one.
func (fx *fixer) fix(path []string) string {
	if len(path) < 2 || path[0] != "flags" {
		return ""
	}
	if len(path) == 2 {
		return fx.fixDefinition(path)
	}
	def, _ := lookup(fx.doc, path[:2]).(map[string]any)
	if def == nil {
		return ""
	}
	last := path[len(path)-1]
	v, written := lookupOK(fx.doc, path)
	switch {
	case len(path) == 3 && last == "variants":
		return fixVariants(v, written)
	case len(path) == 4 && path[2] == "variants":
		return fx.fixVariant(path[:2], def, v)
	case len(path) == 3 && last == "defaultVariant":
		return fixDefault(def, v)
	case len(path) == 3 && (last == "key" || last == "source"):
		return fixKeyOrSource(last)
	case len(path) == 3 && last == "state":
		return `set "state" to "ENABLED" or "DISABLED"`
	case len(path) == 3 && last == "metadata":
		if _, ok := v.(map[string]any); !ok {
			return `write "metadata" as an object of names and values, e.g. {"owner": "team-a"}`
		}
		return "keep strings, numbers and booleans only: other metadata is dropped"
	case path[2] != "targeting" || !written:
		return ""
	case last == "$ref":
		return fx.fixRef(v)
	}
	parent, _ := lookup(fx.doc, path[:len(path)-1]).(map[string]any)
	if len(parent) == 1 {
		// last is the operator of an operation.
		switch last {
		case "fractional", "fractionalEvaluation":
			return fixWeights(v)
		case "var":
			return fixVar(v)
		}
		if !slices.Contains(operatorNames, last) {
			if hint := suggest.Hint(last, operatorNames); hint != "" {
				return hint
			}
		}
		return ""
	}
	if len(path) >= 2 && (path[len(path)-2] == "fractional" || path[len(path)-2] == "fractionalEvaluation") {
		return fixBucket(v)
	}
	return ""
}

// fixDefinition is for a flag's definition as a whole: not an object, or
// an entry of an array of flags without a key or with another's.
func (fx *fixer) fixDefinition(path []string) string {
	v, ok := lookupOK(fx.doc, path)
	if !ok {
		return ""
	}
	def, isObject := v.(map[string]any)
	if !isObject {
		return `write the flag as an object with "state", "variants" and "defaultVariant"`
	}
	list, isArray := lookup(fx.doc, path[:1]).([]any)
	if !isArray {
		return ""
	}
	key, _ := def["key"].(string)
	if key == "" {
		return `give the entry a "key", the flag's name`
	}
	if fx.entriesByKey == nil {
		fx.entriesByKey = map[string][]int{}
		for i, el := range list {
			if obj, ok := el.(map[string]any); ok {
				if k, ok := obj["key"].(string); ok {
					fx.entriesByKey[k] = append(fx.entriesByKey[k], i)
				}
			}
		}
	}
	self, _ := strconv.Atoi(path[1])
	for _, i := range fx.entriesByKey[key] {
		if i != self {
			return fmt.Sprintf("rename or remove one of the flags %q: the other is /flags/%d", key, i)
		}
	}
	return ""
}

// fixKeyOrSource is for a "key" or "source" that is not a string, which
// breaks the flag.
func fixKeyOrSource(member string) string {
	if member == "key" {
		return `write "key" as a string, the flag's name`
	}
	return `write "source" as a string, or leave it out`
}

// fixVariants is for "variants" missing, not an object, or empty.
func fixVariants(v any, written bool) string {
	obj, isObject := v.(map[string]any)
	switch {
	case !written:
		return `add "variants", e.g. "variants": {"on": true, "off": false}`
	case !isObject:
		return `write "variants" as an object of names and values, e.g. {"on": true, "off": false}`
	case len(obj) == 0:
		return `add a variant, e.g. "on": true`
	}
	return ""
}

// fixVariant is for one variant: a number out of range, or a type that is
// not the others'. flag is the flag's path.
func (fx *fixer) fixVariant(flag []string, def map[string]any, v any) string {
	const inRange = "write a number within ±1.7976931348623157e308"
	switch n := v.(type) {
	case json.Number:
		if f, err := strconv.ParseFloat(string(n), 64); err != nil || math.IsInf(f, 0) {
			return inRange
		}
	case float64: // YAML's .inf or .nan
		if math.IsInf(n, 0) || math.IsNaN(n) {
			return inRange
		}
	}
	ptr := "/" + strings.Join(flag, "/")
	count := fx.variantKinds[ptr]
	if count == nil {
		count = map[string]int{}
		variants, _ := def["variants"].(map[string]any)
		for _, x := range variants {
			count[kindOf(x)]++
		}
		if fx.variantKinds == nil {
			fx.variantKinds = map[string]map[string]int{}
		}
		fx.variantKinds[ptr] = count
	}
	if len(count) < 2 {
		return ""
	}
	kinds := make([]string, 0, len(count))
	for k := range count {
		kinds = append(kinds, k)
	}
	// The type most variants have first: the one to keep, most likely.
	sort.Slice(kinds, func(i, j int) bool {
		if count[kinds[i]] != count[kinds[j]] {
			return count[kinds[i]] > count[kinds[j]]
		}
		return kinds[i] < kinds[j]
	})
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = plural(count[k], k)
	}
	return fmt.Sprintf("give every variant the same type (now %s)", strings.Join(parts, ", "))
}

// kindOf names the type of a variant's value as the evaluator groups them:
// an array is an object value.
func kindOf(x any) string {
	switch x.(type) {
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number, float64:
		return "number"
	case nil:
		return "null"
	}
	return "object"
}

func fixDefault(def map[string]any, v any) string {
	variants, _ := def["variants"].(map[string]any)
	if len(variants) == 0 {
		return ""
	}
	names := make([]string, 0, len(variants))
	for name := range variants {
		names = append(names, name)
	}
	slices.Sort(names)
	s, isString := v.(string)
	if !isString {
		return fmt.Sprintf("write the name of a variant as a string, e.g. %q", names[0])
	}
	if _, found := variants[s]; found {
		return ""
	}
	if hint := suggest.Hint(s, names); hint != "" {
		return hint
	}
	return "use one of the variants: " + quoteList(names)
}

// fixRef is for a $ref that names no entry of $evaluators.
func (fx *fixer) fixRef(v any) string {
	name, ok := v.(string)
	if !ok {
		return ""
	}
	top, _ := fx.doc.(map[string]any)
	evaluators, _ := top["$evaluators"].(map[string]any)
	if _, found := evaluators[name]; found {
		return ""
	}
	if fx.evaluators == nil {
		fx.evaluators = make([]string, 0, len(evaluators))
		for n := range evaluators {
			fx.evaluators = append(fx.evaluators, n)
		}
		slices.Sort(fx.evaluators)
	}
	if hint := suggest.Hint(name, fx.evaluators); hint != "" {
		return hint
	}
	return fmt.Sprintf("add %q to \"$evaluators\"", name)
}

func fixVar(v any) string {
	switch t := v.(type) {
	case string, json.Number, nil:
		return ""
	case []any:
		if len(t) == 0 {
			return ""
		}
		if _, ok := t[0].(string); ok {
			return ""
		}
	}
	return `name the context property with a string, e.g. {"var": "email"}`
}

// fixWeights is for the weights of a fractional operation written as
// numbers: whole numbers in the same proportions when some are not, smaller
// ones when they are too large.
func fixWeights(v any) string {
	args, _ := v.([]any)
	var weights []*big.Rat
	for _, a := range args {
		bucket, _ := a.([]any)
		if len(bucket) < 2 {
			continue
		}
		n, ok := bucket[1].(json.Number)
		if !ok || !plainDecimal(string(n)) {
			// Computed, or a number written so that reading it exactly
			// could take as long as its exponent is large.
			return ""
		}
		r, _ := new(big.Rat).SetString(string(n))
		weights = append(weights, r)
	}
	if len(weights) == 0 {
		return ""
	}
	wholeAtScale := func(scale *big.Rat) ([]string, bool) {
		out := make([]string, len(weights))
		sum := new(big.Int)
		for i, w := range weights {
			x := new(big.Rat).Mul(w, scale)
			if !x.IsInt() {
				return nil, false
			}
			if x.Sign() > 0 {
				sum.Add(sum, x.Num())
			}
			out[i] = x.RatString()
		}
		return out, sum.IsInt64() && sum.Int64() <= fractional.MaxWeight
	}
	if _, ok := wholeAtScale(big.NewRat(1, 1)); ok {
		return ""
	}
	for _, scale := range []int64{2, 4, 5, 10, 20, 100, 1000, 10000} {
		if ws, ok := wholeAtScale(big.NewRat(scale, 1)); ok {
			return fmt.Sprintf("use whole numbers in the same proportions: %s (×%d)", strings.Join(ws, ", "), scale)
		}
	}
	// Too large: the greatest common divisor keeps the proportions.
	gcd := new(big.Int)
	for _, w := range weights {
		if !w.IsInt() {
			return ""
		}
		gcd.GCD(nil, nil, gcd, new(big.Int).Abs(w.Num()))
	}
	if gcd.Cmp(big.NewInt(1)) > 0 {
		if ws, ok := wholeAtScale(new(big.Rat).SetFrac(big.NewInt(1), gcd)); ok {
			return fmt.Sprintf("use smaller weights in the same proportions: %s (÷%s)", strings.Join(ws, ", "), gcd)
		}
	}
	return fmt.Sprintf("use smaller weights: only their proportions count, and they may add up to %d at most", fractional.MaxWeight)
}

// plainDecimal tells a number written as a few digits, a point and a few
// more (-12.5), with no exponent.
func plainDecimal(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" || len(s) > 24 || strings.Count(s, ".") > 1 || s[0] == '.' || s[len(s)-1] == '.' {
		return false
	}
	return strings.Trim(s, "0123456789.") == ""
}

func fixBucket(v any) string {
	switch t := v.(type) {
	case string:
		return fmt.Sprintf("write the bucket as [%q, weight]", t)
	case []any:
		if len(t) == 0 {
			return `write the bucket as ["variant", weight]`
		}
		if len(t) >= 2 {
			switch t[1].(type) {
			case string, bool:
				return "write the weight as a number"
			}
		}
	}
	return ""
}

// operatorNames are the operators the evaluator knows, which "did you
// mean" offers, as the evaluator's own errors do.
var operatorNames = evaluator.OperatorNames()

func quoteList(names []string) string {
	const most = 6
	quoted := make([]string, 0, most+1)
	for i, n := range names {
		if i == most {
			quoted = append(quoted, fmt.Sprintf("… (%d in all)", len(names)))
			break
		}
		quoted = append(quoted, strconv.Quote(n))
	}
	return strings.Join(quoted, ", ")
}

// lookup is the value at path in a decoded document, nil if there is none.
func lookup(doc any, path []string) any {
	v, _ := lookupOK(doc, path)
	return v
}

func lookupOK(doc any, path []string) (any, bool) {
	v := doc
	for _, tok := range path {
		switch t := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = t[tok]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(t) {
				return nil, false
			}
			v = t[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// splitPointer is the reference tokens of a JSON pointer.
func splitPointer(ptr string) []string {
	var out []string
	for ptr != "" && ptr[0] == '/' {
		var tok string
		tok, ptr = nextToken(ptr)
		out = append(out, tok)
	}
	return out
}
