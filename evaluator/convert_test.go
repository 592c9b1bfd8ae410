package evaluator

import (
	"testing"

	"github.com/flagsnap/flagsnap/fractional"
)

// Values that the engine puts into containers of its own (set) or hands
// to the hashing of fractional must come out as the reference engine sees
// them: its Go int stays an int, and invalid UTF-8 from a caller reads as
// U+FFFD, in object keys and in map[string]string values too.
func TestValuesThroughContainersAgreeWithOracle(t *testing.T) {
	const buckets = `["a", 1], ["b", 1], ["c", 1], ["d", 1]`
	cases := []struct {
		name  string
		rule  string
		ctx   map[string]any
		flagd any
	}{
		{
			name:  "the integer zero of - keeps its type inside set",
			rule:  `{"map": [{"merge": [{"set": [{"var": "o"}, "k", {"-": []}]}]}, {"===": [{"var": "k"}, 0]}]}`,
			ctx:   map[string]any{"targetingKey": "u", "o": map[string]any{"a": 1.0, "b": 2.0}},
			flagd: []any{false},
		},
		{
			name:  "the integer zero of / is not found among numbers after set",
			rule:  `{"map": [{"merge": [{"set": [{"var": "o"}, "k", {"/": []}]}]}, {"in": [{"var": "k"}, [0]]}]}`,
			ctx:   map[string]any{"targetingKey": "u", "o": map[string]any{"a": 1.0, "b": 2.0}},
			flagd: []any{false},
		},
		{
			name:  "invalid UTF-8 in a map[string]string value is hashed as U+FFFD",
			rule:  `{"fractional": [{"var": "labels"}, ` + buckets + `]}`,
			ctx:   map[string]any{"targetingKey": "u", "labels": map[string]string{"a": "\xff"}},
			flagd: "b",
		},
		{
			name:  "invalid UTF-8 in a map[string]string key is hashed as U+FFFD",
			rule:  `{"fractional": [{"var": "labels"}, ` + buckets + `]}`,
			ctx:   map[string]any{"targetingKey": "u", "labels": map[string]string{"\xff": "a"}},
			flagd: "d",
		},
		{
			name:  "invalid UTF-8 in an object key is hashed as U+FFFD",
			rule:  `{"fractional": [{"var": "obj"}, ` + buckets + `]}`,
			ctx:   map[string]any{"targetingKey": "u", "obj": map[string]any{"\xff": 1.0}},
			flagd: "d",
		},
		{
			name:  "invalid UTF-8 in a top-level key is hashed as U+FFFD",
			rule:  `{"fractional": [{"var": ""}, ` + buckets + `]}`,
			ctx:   map[string]any{"targetingKey": "u", "\xff": 1.0},
			flagd: "a",
		},
	}
	for _, c := range cases {
		ours, theirs, ourErr, theirErr, ok := compareWithOracle(t, c.rule, c.ctx, fractional.V3)
		if theirErr != nil || !sameJSON(theirs, c.flagd) {
			t.Errorf("%s: the reference engine now answers %s (%s)", c.name, diffShow(theirs), describeErr(theirErr))
			continue
		}
		if !ok {
			t.Errorf("%s: ours %s (%s), reference %s", c.name, diffShow(ours), describeErr(ourErr), diffShow(theirs))
		}
	}
}
