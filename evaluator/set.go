package evaluator

import "slices"

// Metadata is the flag-set metadata. It must not be modified.
func (s *FlagSet) Metadata() map[string]any { return s.metadata }

// Keys lists the flag keys in sorted order.
func (s *FlagSet) Keys() []string {
	keys := make([]string, len(s.index.flags))
	for i, f := range s.index.flags {
		keys[i] = f.key
	}
	slices.Sort(keys)
	return keys
}

// Len is the number of flags, broken ones included.
func (s *FlagSet) Len() int { return len(s.index.flags) }

// Problems lists the flags that could not be compiled and why; each of them
// answers PARSE_ERROR.
func (s *FlagSet) Problems() []FlagProblem { return slices.Clone(s.problems) }

// BrokenFlags counts the flags that answer PARSE_ERROR whatever the
// context (whole) and those with a part of the rule that fails only the
// evaluations that reach it (partly; see FlagProblem.WhenReached). The
// counts are taken at load: reading them costs nothing.
func (s *FlagSet) BrokenFlags() (whole, partly int) { return s.brokenWhole, s.brokenPartly }

// countBroken takes the counts of BrokenFlags.
func (s *FlagSet) countBroken() {
	for _, f := range s.index.flags {
		if f.broken != nil {
			s.brokenWhole++
		}
	}
	for i, p := range s.problems {
		// A flag's problems are listed together.
		if p.WhenReached && (i == 0 || s.problems[i-1].Flag != p.Flag) {
			s.brokenPartly++
		}
	}
}

// WithEnrichment returns a flag set that shares this one's compiled flags
// and adds enrich to the data of every evaluation (after $flagd and before
// the caller's context). The map must not be modified afterwards.
func (s *FlagSet) WithEnrichment(enrich map[string]any) *FlagSet {
	c := *s
	c.enrich = enrich
	return &c
}

// Enrichment is the map given to WithEnrichment.
func (s *FlagSet) Enrichment() map[string]any { return s.enrich }

// Changes lists the flags added, removed and changed between old and s (in
// state, variants, default variant, targeting or metadata). A nil old is an
// empty flag set. When s took flags from old (WithPrevious), those it took
// are the same, and only the flags it compiled are looked for in old.
func (s *FlagSet) Changes(old *FlagSet) (added, removed, changed []string) {
	var before flagIndex
	if old != nil {
		before = old.index
	}
	candidates, present := s.index.flags, 0
	if old != nil && s.from != 0 && s.from == old.id {
		candidates, present = s.fresh, s.reused
	}
	// Only what changed is sorted: an update that changes one flag of many
	// sorts one key.
	for _, f := range candidates {
		switch prev := before.get(f.key); {
		case prev == nil:
			added = append(added, f.key)
		case prev.fingerprint != f.fingerprint:
			present++
			changed = append(changed, f.key)
		default:
			present++
		}
	}
	if present < len(before.flags) {
		for _, f := range before.flags {
			if s.index.get(f.key) == nil {
				removed = append(removed, f.key)
			}
		}
	}
	slices.Sort(added)
	slices.Sort(removed)
	slices.Sort(changed)
	return added, removed, changed
}

// FlagKey is the key of the flag at index i (Evaluation.Index), from 0 to
// Len()-1. An index names the same flag for the set's life, so that what
// is kept per flag can be kept in a slice.
func (s *FlagSet) FlagKey(i int) string { return s.index.flags[i].key }

// VariantCount is how many variants the flag at index i has.
func (s *FlagSet) VariantCount(i int) int { return len(s.index.flags[i].vals) }

// VariantName is the name of variant j of the flag at index i, in the
// order of Evaluation.VariantIndex.
func (s *FlagSet) VariantName(i, j int) string { return s.index.flags[i].vals[j].name }

// Index is the index of the flag with key, -1 when the set has none.
func (s *FlagSet) Index(key string) int {
	_, i := s.index.lookup(key)
	return i
}

// FlagInfo is what a flag of a set is, as compiled: enough to list the
// flags beside their usage (a debug page) without the document they came
// from.
type FlagInfo struct {
	Key      string
	Disabled bool
	// Variants are the variant names in the order of VariantName.
	Variants []string
	// DefaultVariant is "" when the flag has none.
	DefaultVariant string
	// Targeting says the flag has a rule that runs at evaluation; a broken
	// flag runs none.
	Targeting bool
	// Broken is the error every evaluation of the flag answers, nil for a
	// flag that can be evaluated.
	Broken *Error
}

// Info describes the flag with key; false when the set has none. It is
// not meant for the evaluation path: it allocates the list of variant
// names.
func (s *FlagSet) Info(key string) (FlagInfo, bool) {
	f := s.index.get(key)
	if f == nil {
		return FlagInfo{}, false
	}
	x := FlagInfo{Key: f.key, Disabled: f.disabled, Targeting: f.rule != nil, Broken: f.broken}
	x.Variants = make([]string, len(f.vals))
	for i := range f.vals {
		x.Variants[i] = f.vals[i].name
	}
	if f.defaultIdx >= 0 {
		x.DefaultVariant = f.vals[f.defaultIdx].name
	}
	return x, true
}

// VariantValue is the value of variant j of the flag at index i, as
// Evaluation.Value gives it; shared with the set, it must not be modified.
func (s *FlagSet) VariantValue(i, j int) any { return s.index.flags[i].vals[j].obj }

// FlagMetadata is the metadata of the flag at index i over its flag set's,
// as Evaluation.Metadata gives it; shared with the set, it must not be
// modified.
func (s *FlagSet) FlagMetadata(i int) map[string]any { return s.index.flags[i].metadata }
