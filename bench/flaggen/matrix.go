package flaggen

import (
	"fmt"
	"math/rand/v2"

	"github.com/open-feature/go-sdk/openfeature"
)

// Matrix is the flag set of the evaluation rows (E1–E11, O1–O6), in the
// shapes of the cross-language benchmark standard, which every engine
// compared with flagsnap evaluates. The fractional flags "frac2"/"frac8"
// are the standard's configurations, whose first element
// [{"var": "targetingKey"}] is a bucket (weight 1) whose variant is an
// expression; "frac2s"/"frac8s" bucket by a string value, the common form.
const Matrix = `{"flags": {
  "static": {"state": "ENABLED", "defaultVariant": "on", "variants": {"on": true, "off": false}},
  "simple": {"state": "ENABLED", "defaultVariant": "off", "variants": {"on": true, "off": false},
    "targeting": {"if": [{"==": [{"var": "tier"}, "premium"]}, "on", "off"]}},
  "complex": {"state": "ENABLED", "defaultVariant": "basic",
    "variants": {"premium": "premium-tier", "standard": "standard-tier", "basic": "basic-tier"},
    "targeting": {"if": [
      {"and": [{"==": [{"var": "tier"}, "premium"]}, {">": [{"var": "score"}, 90]}]},
      "premium",
      {"if": [{"or": [{"==": [{"var": "tier"}, "standard"]}, {">": [{"var": "score"}, 50]}]}, "standard", "basic"]}]}},
  "role": {"state": "ENABLED", "defaultVariant": "user", "variants": {"admin": "admin-value", "user": "user-value"},
    "targeting": {"if": [{"==": [{"var": "role"}, "admin"]}, "admin", null]}},
  "disabled": {"state": "DISABLED", "defaultVariant": "on", "variants": {"on": true, "off": false}},
  "frac2": {"state": "ENABLED", "defaultVariant": "control", "variants": {"control": "control", "treatment": "treatment"},
    "targeting": {"fractional": [[{"var": "targetingKey"}], ["control", 50], ["treatment", 50]]}},
  "frac8": {"state": "ENABLED", "defaultVariant": "v1",
    "variants": {"v1": "v1", "v2": "v2", "v3": "v3", "v4": "v4", "v5": "v5", "v6": "v6", "v7": "v7", "v8": "v8"},
    "targeting": {"fractional": [[{"var": "targetingKey"}],
      ["v1", 12], ["v2", 13], ["v3", 12], ["v4", 13], ["v5", 12], ["v6", 13], ["v7", 12], ["v8", 13]]}},
  "frac2s": {"state": "ENABLED", "defaultVariant": "control", "variants": {"control": "control", "treatment": "treatment"},
    "targeting": {"fractional": [{"var": "targetingKey"}, ["control", 50], ["treatment", 50]]}},
  "frac8s": {"state": "ENABLED", "defaultVariant": "v1",
    "variants": {"v1": "v1", "v2": "v2", "v3": "v3", "v4": "v4", "v5": "v5", "v6": "v6", "v7": "v7", "v8": "v8"},
    "targeting": {"fractional": [{"var": "targetingKey"},
      ["v1", 12], ["v2", 13], ["v3", 12], ["v4", 13], ["v5", 12], ["v6", 13], ["v7", 12], ["v8", 13]]}},
  "semverEq": {"state": "ENABLED", "defaultVariant": "off", "variants": {"on": true, "off": false},
    "targeting": {"if": [{"sem_ver": [{"var": "version"}, "=", "1.2.3"]}, "on", "off"]}},
  "semverRange": {"state": "ENABLED", "defaultVariant": "off", "variants": {"on": true, "off": false},
    "targeting": {"if": [{"sem_ver": [{"var": "version"}, "^", "1.2.0"]}, "on", "off"]}},
  "startsWith": {"state": "ENABLED", "defaultVariant": "off", "variants": {"on": true, "off": false},
    "targeting": {"if": [{"starts_with": [{"var": "email"}, "admin"]}, "on", "off"]}},
  "endsWith": {"state": "ENABLED", "defaultVariant": "off", "variants": {"on": true, "off": false},
    "targeting": {"if": [{"ends_with": [{"var": "email"}, "@example.com"]}, "on", "off"]}}
}}`

// The contexts of the evaluation rows.
var (
	EmptyContext = openfeature.FlattenedContext{}
	SmallContext = openfeature.FlattenedContext{
		"targetingKey": "user-123", "tier": "premium", "role": "admin", "region": "us-east", "score": 85,
	}
	LargeContext = func() openfeature.FlattenedContext {
		c := openfeature.FlattenedContext{}
		for k, v := range SmallContext {
			c[k] = v
		}
		rng := rand.New(rand.NewPCG(42, 42))
		for i := range 100 {
			key := fmt.Sprintf("attr_%d", i)
			switch rng.IntN(3) {
			case 0:
				c[key] = fmt.Sprintf("value-%d", i)
			case 1:
				c[key] = rng.IntN(1000)
			default:
				c[key] = rng.IntN(2) == 0
			}
		}
		return c
	}()
	NoMatchContext = openfeature.FlattenedContext{
		"targetingKey": "user-123", "tier": "basic", "role": "viewer", "region": "us-east", "score": 10,
	}
	FractionalContext  = openfeature.FlattenedContext{"targetingKey": "user-123"}
	SemverEqContext    = openfeature.FlattenedContext{"version": "1.2.3"}
	SemverRangeContext = openfeature.FlattenedContext{"version": "1.5.0"}
	StartsWithContext  = openfeature.FlattenedContext{"email": "admin@example.com"}
	EndsWithContext    = openfeature.FlattenedContext{"email": "user@example.com"}
)
