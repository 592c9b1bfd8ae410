package evaluator

import (
	"maps"
	"slices"
)

// Layer is the flag set of one document among several served as one (see
// Layered), with the name of where it came from, for explanations and
// status: a file path, a server address.
type Layer struct {
	Name string
	Set  *FlagSet
}

// layering is what a set made by Layered knows of its layers.
type layering struct {
	names []string
	// above is the layer of each key a layer above the first defines.
	above map[string]int
}

// Layered is one flag set of the flags of layers, the first at the bottom:
// a key that a later layer defines replaces that whole flag of the earlier
// ones, as flagd merges its sources. Each flag stays as its own document
// compiled it, its $refs and metadata resolved there, so nothing is
// compiled again: layering costs an index of the keys. The set's metadata,
// enrichment, clock and bucketing version are the first layer's, and an
// evaluation costs what it costs in any set.
func Layered(layers ...Layer) *FlagSet {
	base := layers[0].Set
	if len(layers) == 1 {
		return base
	}
	lay := layering{above: map[string]int{}}
	for _, l := range layers {
		lay.names = append(lay.names, l.Name)
	}
	var flags []*flag
	for i := len(layers) - 1; i >= 1; i-- {
		for _, f := range layers[i].Set.index.flags {
			if _, higher := lay.above[f.key]; !higher {
				lay.above[f.key] = i
				flags = append(flags, f)
			}
		}
	}
	for _, f := range base.index.flags {
		if _, over := lay.above[f.key]; !over {
			flags = append(flags, f)
		}
	}
	set := &FlagSet{
		metadata: base.metadata,
		version:  base.version,
		clock:    base.clock,
		enrich:   base.enrich,
		id:       lastSetID.Add(1),
		layers:   &lay,
		missing:  &missingKeys{},
		// A key no layer defines answers as in the first layer: its absent
		// flag holds nothing but the metadata, which is the set's.
		absent: base.absent,
	}
	set.index, _ = indexFlags(flags)
	for i, l := range layers {
		for _, p := range l.Set.problems {
			if layer, ok := lay.above[p.Flag]; ok && layer == i || !ok && i == 0 {
				set.problems = append(set.problems, p)
			}
		}
	}
	set.countBroken()
	return set
}

// Layers names the layers of a set made by Layered, the first at the
// bottom; nil for the set of one document.
func (s *FlagSet) Layers() []string {
	if s.layers == nil {
		return nil
	}
	return slices.Clone(s.layers.names)
}

// Layer is the layer (an index of Layers) that defines key: 0 for a key of
// the first layer or of the set of one document, -1 for a key the set does
// not define.
func (s *FlagSet) Layer(key string) int {
	if s.index.get(key) == nil {
		return -1
	}
	if s.layers != nil {
		return s.layers.above[key] // 0 when absent: the first layer's
	}
	return 0
}

// Overridden is the keys that a layer above the first defines, with the
// layer (an index of Layers) of each; nil for the set of one document.
func (s *FlagSet) Overridden() map[string]int {
	if s.layers == nil {
		return nil
	}
	return maps.Clone(s.layers.above)
}

// layerName is the name of the layer that defines key, "" for a set of
// one document.
func (s *FlagSet) layerName(key string) string {
	if s.layers == nil {
		return ""
	}
	return s.layers.names[s.layers.above[key]]
}
