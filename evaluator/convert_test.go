package evaluator

import (
	"testing"

	"github.com/flagsnap/flagsnap/fractional"
)

// Values that the engine puts into containers of its own (set) must read
// back as the reference engine sees them: its Go int stays an int.
func TestValuesThroughContainersAgreeWithOracle(t *testing.T) {
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
	}
	for _, c := range cases {
		ours, theirs, ourErr, theirErr, ok := compareWithOracle(t, c.rule, c.ctx, fractional.V2)
		if theirErr != nil || !sameJSON(theirs, c.flagd) {
			t.Errorf("%s: the reference engine now answers %s (%s)", c.name, diffShow(theirs), describeErr(theirErr))
			continue
		}
		if !ok {
			t.Errorf("%s: ours %s (%s), reference %s", c.name, diffShow(ours), describeErr(ourErr), diffShow(theirs))
		}
	}
}
