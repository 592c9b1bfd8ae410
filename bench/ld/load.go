package ld

import (
	"fmt"
	"os"

	"github.com/launchdarkly/go-jsonstream/v3/jreader"
	"github.com/launchdarkly/go-server-sdk-evaluation/v3/ldmodel"
)

// Item is what LaunchDarkly's in-memory data store keeps for a flag
// (ldstoretypes.ItemDescriptor in its SDK): the version and the flag
// behind an interface.
type Item struct {
	Version int
	Item    any
}

// Load reads a data set written by Document into what LaunchDarkly's SDK
// holds once it can evaluate: every flag unmarshalled with
// ldmodel.UnmarshalFeatureFlagFromJSONReader, which also runs
// ldmodel.PreprocessFlag (the lookup sets of "in" clauses, parsed
// versions), as the SDK's streaming and polling sources do for a full
// data set, and kept by key.
func Load(path string) (map[string]Item, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var flags map[string]Item
	r := jreader.NewReader(data)
	for top := r.Object(); top.Next(); {
		if string(top.Name()) != "flags" {
			r.SkipValue()
			continue
		}
		obj := r.Object()
		flags = make(map[string]Item)
		for obj.Next() {
			key := string(obj.Name())
			f := ldmodel.UnmarshalFeatureFlagFromJSONReader(&r)
			if r.Error() != nil {
				break
			}
			flags[key] = Item{Version: f.Version, Item: &f}
		}
	}
	if err := r.Error(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if flags == nil {
		return nil, fmt.Errorf("%s: no flags", path)
	}
	return flags, nil
}

// Flag returns the flag of key in a loaded data set, or nil.
func Flag(flags map[string]Item, key string) *ldmodel.FeatureFlag {
	f, _ := flags[key].Item.(*ldmodel.FeatureFlag)
	return f
}
