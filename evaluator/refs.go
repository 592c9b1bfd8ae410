package evaluator

// $ref: references to the document's $evaluators, in a flag's rule, its
// other members or the whole flag, substituted before it is compiled.

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/flagsnap/flagsnap/internal/suggest"
)

// resolveRefs replaces {"$ref": "name"} with the named entry of
// $evaluators, not searched again (no nested $ref). A $ref that cannot be
// substituted is a problem at its "$ref" member, and an unresolvedRef.
func (l *loader) resolveRefs(raw any) (any, []issue) {
	if l.noRefs {
		return raw, nil
	}
	s := substitution{l: l}
	out, _ := s.substitute(raw)
	for i := range s.problems {
		p := &s.problems[i]
		p.at = append(p.at, "targeting")
		slices.Reverse(p.at)
		if ce, ok := p.err.(*CompileError); ok {
			ce.at = p.at
		}
	}
	// Objects are walked in no set order: the first problem, which the
	// flag answers, must not change from one load to the next.
	slices.SortFunc(s.problems, func(a, b issue) int { return slices.Compare(a.at, b.at) })
	return out, s.problems
}

// warnEmptyEvaluators warns of each $evaluators entry that is empty: flagd
// refuses a whole document with an entry written in fewer than three
// characters ({}, [], "", 7), where flagsnap substitutes the value.
func (l *loader) warnEmptyEvaluators() {
	for _, name := range slices.Sorted(maps.Keys(l.evaluators)) {
		if writtenShort(l.evaluators[name]) {
			l.warn("", []string{"$evaluators", name}, `flagd refuses the whole document over this evaluator, empty or under three characters long ("evaluator object is empty"); flagsnap substitutes its value`)
		}
	}
}

// writtenShort tells whether a decoded value is written in fewer than
// three characters: {}, [], "" or a number of one or two.
func writtenShort(v any) bool {
	switch t := v.(type) {
	case map[string]any:
		return len(t) == 0
	case []any:
		return len(t) == 0
	case string:
		return t == ""
	case json.Number:
		return len(t) < 3
	}
	return false
}

// resolveFieldRefs substitutes $evaluators into the members of a flag
// besides its rule (state, variants, defaultVariant, metadata), as flagd
// does, whose substitution works on the whole text of the document.
func (l *loader) resolveFieldRefs(def *defFields) {
	if l.noRefs {
		return
	}
	def.state, def.defaultVariant = l.resolveDataRefs(def.state), l.resolveDataRefs(def.defaultVariant)
	def.metadata = l.resolveDataRefs(def.metadata)
	if vs := def.variantMembers; len(vs) == 1 && vs[0].name == "$ref" {
		// "variants" that is one reference stands for the whole object,
		// which is not searched again.
		if entry, ok := l.entryNamed(vs[0].val); ok {
			def.setVariants(entry)
			def.sortVariants()
			return
		}
	}
	for i := range def.variantMembers {
		def.variantMembers[i].val = l.resolveDataRefs(def.variantMembers[i].val)
	}
}

// entryNamed is the entry of $evaluators that {"$ref": ref} names, if
// any: a whole "variants" or flag written so is that entry, as flagd's
// substitution in the text of the document makes it. What the entry holds
// is not searched again.
func (l *loader) entryNamed(ref any) (any, bool) {
	name, ok := ref.(string)
	if !ok {
		return nil, false
	}
	entry, found := l.evaluators[name]
	return entry, found
}

// resolveDataRefs substitutes $evaluators into data; there a name of no
// entry stays as written, as in flagd.
func (l *loader) resolveDataRefs(raw any) any {
	if l.noRefs {
		return raw
	}
	s := substitution{l: l, data: true}
	out, _ := s.substitute(raw)
	return out
}

// substitution is one rule's resolveRefs, or resolveDataRefs.
type substitution struct {
	l    *loader
	data bool // a $ref to no entry stays as written
	// problems have their paths innermost first while the rule is
	// walked: each level adds its key on the way out, which costs nothing
	// where nothing is wrong.
	problems []issue
}

// substitute is resolveRefs, also telling whether anything was replaced.
func (s *substitution) substitute(raw any) (any, bool) {
	switch t := raw.(type) {
	case *op1:
		if name, ok := t.val.(string); ok && t.key == "$ref" {
			return s.evaluator(name, t)
		}
		n := len(s.problems)
		r, changed := s.substitute(t.val)
		s.inside(n, t.key)
		if !changed {
			return t, false
		}
		return &op1{key: t.key, val: r}, true
	case map[string]any:
		// Only an object whose one member is "$ref" is a reference, as in
		// flagd: one with other members beside it is data.
		if name, ok := t["$ref"].(string); ok && len(t) == 1 {
			return s.evaluator(name, t)
		}
		var out map[string]any
		for k, v := range t {
			n := len(s.problems)
			r, changed := s.substitute(v)
			s.inside(n, k)
			if changed {
				if out == nil {
					out = maps.Clone(t)
				}
				out[k] = r
			}
		}
		if out == nil {
			return t, false
		}
		return out, true
	case []any:
		var out []any
		for i, v := range t {
			n := len(s.problems)
			r, changed := s.substitute(v)
			if len(s.problems) > n {
				s.inside(n, strconv.Itoa(i))
			}
			if changed {
				if out == nil {
					out = slices.Clone(t)
				}
				out[i] = r
			}
		}
		if out == nil {
			return t, false
		}
		return out, true
	}
	return raw, false
}

// evaluator is what written, {"$ref": name}, stands for. A name of no
// entry stays as written in data; in a rule it is a problem at the "$ref"
// member, and the part that stands for it says so when an evaluation
// reaches it.
func (s *substitution) evaluator(name string, written any) (any, bool) {
	entry, found := s.l.evaluators[name]
	switch {
	case found:
		return entry, true
	case s.data:
		return written, false
	}
	names := slices.Collect(maps.Keys(s.l.evaluators))
	err := &CompileError{Msg: fmt.Sprintf("$ref %q names no entry of $evaluators", name), hint: suggest.Hint(name, names), cause: ErrUnresolvedRef}
	s.problems = append(s.problems, issue{[]string{"$ref"}, err})
	return unresolvedRef{err: err}, true
}

// inside adds key to the paths of the problems from the n-th on, met
// within key.
func (s *substitution) inside(n int, key string) {
	for i := n; i < len(s.problems); i++ {
		s.problems[i].at = append(s.problems[i].at, key)
	}
}
