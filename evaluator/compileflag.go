package evaluator

// One flag's definition compiled: its variants, default variant and rule.

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

func newFlag(key string) *flag {
	return &flag{key: key, defaultIdx: -1}
}

// compileFlag compiles a definition and lists its problems: all of them,
// for flagsnap validate. A flag with problems answers the first.
func (l *loader) compileFlag(fd *flagDef) (*flag, []FlagProblem) {
	def, raw, fromEntry := fd.fields, fd.raw, false
	if entry, ok := l.entryNamed(fd.ref); ok {
		// A definition that is one $ref is the entry it names.
		def, raw, fromEntry = nil, entry, true
		if obj, isObject := entry.(map[string]any); isObject {
			if _, err := keyAndSourceError(obj["key"], obj["source"]); err != nil {
				return brokenDefinition(fd, err)
			}
			def = fieldsOf(obj)
		} else {
			fd.object = false
		}
	}
	if def == nil {
		return brokenDefinition(fd, fmt.Errorf("definition is %s, not an object", jsonType(raw)))
	}
	return l.compileFields(fd, def, fromEntry)
}

// brokenDefinition is the flag of a definition that cannot be compiled,
// which answers err.
func brokenDefinition(fd *flagDef, err error) (*flag, []FlagProblem) {
	f := newFlag(fd.key)
	f.breakWith(err, fd.path())
	return f, []FlagProblem{{Flag: fd.key, Path: fd.path(), Err: err}}
}

// defFields are the members of a definition that the loader reads, as
// decoded.
type defFields struct {
	state, defaultVariant, targeting, metadata any
	// variantMembers holds "variants" when it is an object (not nil, even
	// when empty), in the order written until sortVariants; variants
	// holds it otherwise, nil when it is missing.
	variants       any
	variantMembers []member
}

// member is a member of an object, as read.
type member struct {
	name string
	val  any
}

// setVariants sets "variants" as decoded: an object into variantMembers,
// anything else into variants.
func (def *defFields) setVariants(v any) {
	def.variants, def.variantMembers = v, nil
	if vs, ok := v.(map[string]any); ok {
		def.variants = nil
		def.variantMembers = make([]member, 0, len(vs))
		for name, val := range vs {
			def.variantMembers = append(def.variantMembers, member{name: name, val: val})
		}
	}
}

// sortVariants sorts the variants by name and keeps the last of a name
// written twice, as an object decoded into a map does.
func (def *defFields) sortVariants() {
	list := def.variantMembers
	slices.SortStableFunc(list, func(a, b member) int { return strings.Compare(a.name, b.name) })
	kept := list[:0]
	for i, m := range list {
		if i+1 == len(list) || list[i+1].name != m.name {
			kept = append(kept, m)
		}
	}
	clear(list[len(kept):])
	def.variantMembers = kept
}

// appendVariants is canonicalAppend of the variants, an object as the
// map it stands for.
func (def *defFields) appendVariants(b []byte) []byte {
	if def.variantMembers == nil {
		return canonicalAppend(b, def.variants)
	}
	b = append(b, 'm')
	b = binary.AppendUvarint(b, uint64(len(def.variantMembers)))
	for _, m := range def.variantMembers {
		b = binary.AppendUvarint(b, uint64(len(m.name)))
		b = append(b, m.name...)
		b = canonicalAppend(b, m.val)
	}
	return b
}

// compileFields is compileFlag on the members of the definition. addSetMetadata
// adds the flag set's metadata, and its fingerprint. The members of an
// entry of $evaluators (fromEntry) are not searched for $refs again.
func (l *loader) compileFields(fd *flagDef, def *defFields, fromEntry bool) (*flag, []FlagProblem) {
	key := fd.key
	def.sortVariants()
	targeting, refProblems := def.targeting, []issue(nil)
	if !fromEntry {
		l.resolveFieldRefs(def)
		targeting, refProblems = l.resolveRefs(def.targeting)
	}
	f := newFlag(key)
	meta, metaErr := objectMember("metadata", def.metadata)
	f.metadata = l.metadata(fd, meta)
	var stateErr error
	switch state := def.state; state.(type) {
	case string, nil:
		if state == "DISABLED" {
			f.disabled = true
		} else if state != "ENABLED" {
			l.warn(key, fd.path("state"), fmt.Sprintf(`state should be "ENABLED" or "DISABLED", not %v; treated as ENABLED`, state))
		}
	default:
		// flagd refuses a whole document over it.
		stateErr = fmt.Errorf(`"state" is %s, not a string`, jsonType(state))
	}

	asWritten := targeting
	if refProblems != nil {
		// The flag breaks below; its rule as written still tells changes
		// apart.
		asWritten = def.targeting
	}
	// flagd keeps a default variant as a plain string, so every flag set it
	// re-encodes says "" for a flag that had none: read once, as none.
	defaultVariant := def.defaultVariant
	if defaultVariant == "" {
		defaultVariant = nil
	}
	f.fingerprint = l.fingerprint(def, defaultVariant, asWritten)

	// The problems are gathered in the order they were always checked in,
	// so that the first, which the flag answers, is the one it answered
	// when the loader stopped there.
	var problems []FlagProblem
	add := func(err error, at ...string) { problems = append(problems, fd.problemAt(err, at...)) }
	if stateErr != nil {
		add(stateErr, "state")
	}
	if metaErr != nil {
		add(metaErr, "metadata")
	}
	variantsOK := true
	for _, p := range f.setVariants(def) {
		add(p.err, p.at...)
		variantsOK = variantsOK && len(p.at) > 1 // one variant's problem
	}
	if err := f.setDefault(defaultVariant, variantsOK); err != nil {
		add(err, "defaultVariant")
	}
	whole := len(problems) > 0
	for _, p := range refProblems {
		add(p.err, p.at...)
	}
	rule, ruleProblems, ruleWhole := l.compileRule(fd, targeting)
	for _, err := range ruleProblems {
		var ce *CompileError
		if errors.As(err, &ce) {
			add(err, ce.at...)
		} else {
			add(err, "targeting")
		}
	}
	if whole || ruleWhole {
		f.breakWith(problems[0].Err, problems[0].Path)
		return f, problems
	}
	for i := range problems {
		// The rest of the rule answers as usual, as in flagd.
		problems[i].WhenReached = true
	}
	if rule != nil {
		f.rule, f.keyRef = rule, f.key
	}
	return f, problems
}

// problemAt is err as a problem of the flag fd defines, at at within the
// definition. An evaluation that reaches a part of the rule with the
// problem says where it is as the problem does.
func (fd *flagDef) problemAt(err error, at ...string) FlagProblem {
	path := fd.path(at...)
	if ce, ok := err.(*CompileError); ok {
		ce.pointer = jsonPointer(path)
	}
	return FlagProblem{Flag: fd.key, Path: path, Err: err}
}

// breakWith makes f answer PARSE_ERROR because of err, which is written at
// path.
func (f *flag) breakWith(err error, path []string) *flag {
	f.broken = &Error{Code: CodeParseError, Flag: f.key, Err: err, path: path}
	f.broken.text = f.broken.Error()
	return f
}

// issue is a problem within a flag's definition, at a path relative to it.
type issue struct {
	at  []string
	err error
}

// setVariants reads the "variants" object. Every variant is read, so that
// each one's problem is reported: a variant is of the wrong type when it
// differs from the first (in name order) that can be.
func (f *flag) setVariants(def *defFields) []issue {
	if def.variantMembers == nil {
		if def.variants == nil {
			return []issue{{[]string{"variants"}, fmt.Errorf(`"variants" is missing`)}}
		}
		return []issue{{[]string{"variants"}, fmt.Errorf(`"variants" is %s, not an object`, jsonType(def.variants))}}
	}
	list := def.variantMembers
	if len(list) == 0 {
		return []issue{{[]string{"variants"}, fmt.Errorf(`"variants" is empty`)}}
	}
	if len(list) > maxScannedVariants {
		f.variants = make(map[string]int, len(list))
	}
	f.vals = make([]variant, len(list))
	var problems []issue
	first := -1 // the first variant read, whose type the others must have
	for i, m := range list {
		name := m.name
		v, err := newVariant(name, m.val)
		switch {
		case err != nil:
			problems = append(problems, issue{[]string{"variants", name}, err})
		case first < 0:
			first = i
		case v.kind() != f.vals[first].kind():
			problems = append(problems, issue{[]string{"variants", name},
				fmt.Errorf("variants mix types: %q is %s, %q is %s", list[first].name, kindName(f.vals[first].kind()), name, kindName(v.kind()))})
		}
		// Kept even when wrong, so that a defaultVariant naming it is
		// not a problem too.
		f.vals[i] = v
		if f.variants != nil {
			f.variants[name] = i
		}
	}
	return problems
}

func newVariant(name string, raw any) (variant, error) {
	v := variant{name: name}
	switch t := raw.(type) {
	case nil:
	case bool, string:
		v.obj = t
	case json.Number:
		f, err := strconv.ParseFloat(string(t), 64)
		if err != nil || math.IsInf(f, 0) {
			return v, fmt.Errorf("variant %q: number %s is out of range", name, t)
		}
		i, whole := exactInt(string(t))
		if whole && !exactFloat(i) && strconv.FormatFloat(f, 'f', -1, 64) == string(t) {
			// flagd's own spelling of a float that holds an integer
			// past 2^53 (2^60 is 1152921504606847000), as a flag set
			// it re-encodes over sync carries it: the float is the
			// value written.
			i = int64(f)
		} else if whole && !exactFloat(i) {
			// flagd reads every number as a 64-bit float, which holds
			// integers exactly only up to 2^53: it would answer another
			// value than the one written.
			return v, fmt.Errorf("variant %q: the integer %s is past 2^53, and flagd reads it as %s: write an integer within ±9007199254740992, or a string", name, t, strconv.FormatFloat(f, 'f', -1, 64))
		}
		v.obj = f
		if whole {
			v.obj = i
		}
	case map[string]any, []any:
		obj, err := plainJSON(t)
		if err != nil {
			return v, fmt.Errorf("variant %q: %w", name, err)
		}
		v.obj = obj
	default:
		return v, fmt.Errorf("variant %q has unsupported type %T", name, raw)
	}
	return v, nil
}

// exactFloat reports whether float64 holds i exactly; 2^63, past the int64
// range, is the one float64 that i could round to and not convert back.
func exactFloat(i int64) bool {
	f := float64(i)
	return f < 1<<63 && int64(f) == i
}

// exactInt reads a JSON number as int64 when its exact decimal value is a
// whole number in range (10.0 and 1e3, not 3.14 or 9223372036854775808).
func exactInt(text string) (int64, bool) {
	if i, err := strconv.ParseInt(text, 10, 64); err == nil {
		return i, true
	}
	r, ok := new(big.Rat).SetString(text)
	if !ok || !r.IsInt() || !r.Num().IsInt64() {
		return 0, false
	}
	return r.Num().Int64(), true
}

func kindName(k kind) string {
	switch k {
	case kBool:
		return "a boolean"
	case kNum:
		return "a number"
	case kStr:
		return "a string"
	case kObj:
		return "an object"
	}
	return "null"
}

// setDefault reads "defaultVariant". Without variants to look in, only its
// type is checked: that it names none of them is the variants' problem.
func (f *flag) setDefault(raw any, variantsOK bool) error {
	switch t := raw.(type) {
	case nil:
		return nil
	case string:
		if !variantsOK {
			return nil
		}
		i := slices.IndexFunc(f.vals, func(v variant) bool { return v.name == t })
		if i < 0 {
			return fmt.Errorf("defaultVariant %q is not one of the variants", t)
		}
		f.defaultIdx = int32(i)
		return nil
	}
	return fmt.Errorf("defaultVariant is %s, not a string", jsonType(raw))
}

// compileRule compiles a flag's rule, $evaluators substituted, and lists
// every problem it has; whole is set when one breaks the whole flag, not
// only the evaluations that reach it.
func (l *loader) compileRule(fd *flagDef, targeting any) (rule *node, problems []error, whole bool) {
	if targeting == nil {
		return nil, nil, false
	}
	if obj, ok := targeting.(map[string]any); ok && len(obj) == 0 {
		return nil, nil, false
	}
	// Nothing keeps a location once the rule is compiled: its errors
	// spell theirs out.
	c := compiler{locs: l.locs[:0]}
	rule, _ = c.compile(targeting, c.loc(root("targeting")))
	l.locs = c.locs[:0]
	if c.usesLegacy {
		l.warn(fd.key, fd.path("targeting"), legacyWarning(c.legacy))
	}
	return rule, c.errs, c.whole
}

// legacyWarning says what to write instead of the legacy fractional
// operator, with the rule to paste.
func legacyWarning(rewritten []any) string {
	msg := `"fractionalEvaluation" is deprecated, and flagd v0.16 no longer evaluates it (flagsnap still does); use "fractional"`
	if len(rewritten) == 0 {
		return msg
	}
	b, err := json.Marshal(map[string]any{"fractional": rewritten[0]})
	if err != nil {
		return msg
	}
	return msg + ": " + string(b)
}
