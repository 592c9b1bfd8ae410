package evaluator

// flagIndex, the flag set's one collection of its flags: in a slice, where
// a flag's position is its index (Evaluation.Index), and by key.
type flagIndex struct {
	flags []*flag
	at    map[string]int32 // the position of each key in flags
}

// indexFlags indexes flags, which it keeps; unique is false when two have
// the same key, and the index is then incomplete.
func indexFlags(flags []*flag) (x flagIndex, unique bool) {
	x = flagIndex{flags: flags, at: make(map[string]int32, len(flags))}
	for i, f := range flags {
		if _, dup := x.at[f.key]; dup {
			return x, false
		}
		x.at[f.key] = int32(i)
	}
	return x, true
}

// get returns the flag with key, or nil (from a nil index too).
func (x *flagIndex) get(key string) *flag {
	if x == nil {
		return nil
	}
	f, _ := x.lookup(key)
	return f
}

// lookup returns the flag with key and its index, or nil and -1.
func (x *flagIndex) lookup(key string) (*flag, int) {
	i, ok := x.at[key]
	if !ok {
		return nil, -1
	}
	return x.flags[i], int(i)
}
