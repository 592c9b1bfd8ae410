package evaluator

import "slices"

// changesFrom is Changes from the flag set s took flags from: those it
// took are the same, and only the others are looked for in old.
func (s *FlagSet) changesFrom(old *FlagSet) (added, removed, changed []string) {
	present := s.reused
	for _, f := range s.fresh {
		switch prev := old.index.get(f.key); {
		case prev == nil:
			added = append(added, f.key)
		case prev.fingerprint != f.fingerprint:
			present++
			changed = append(changed, f.key)
		default:
			present++
		}
	}
	if present < old.index.n {
		for _, f := range old.index.slots {
			if f != nil && s.index.get(f.key) == nil {
				removed = append(removed, f.key)
			}
		}
	}
	slices.Sort(added)
	slices.Sort(removed)
	slices.Sort(changed)
	return added, removed, changed
}
