package evaluator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"testing"
	"time"

	jsonlogic "github.com/diegoholiveira/jsonlogic/v3"

	"github.com/flagsnap/flagsnap/fractional"
)

// benchDoc holds one flag per benchmarked shape of targeting.
const benchDoc = `{
  "flags": {
    "static": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "on"},
    "simple": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off",
      "targeting": {"if": [{"==": [{"var": "email"}, "user-3@example.com"]}, "on", "off"]}},
    "complex": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off",
      "targeting": {"if": [{"or": [
        {"and": [{"in": [{"var": "country"}, ["DE", "FR", "NL", "SE"]]}, {">=": [{"var": "age"}, 18]}, {"!=": [{"var": "plan"}, "free"]}]},
        {"and": [{"ends_with": [{"var": "email"}, "@internal.example.com"]}, {"==": [{"var": "beta"}, true]}]}
      ]}, "on", "off"]}},
    "fractional2": {"state": "ENABLED", "variants": {"a": "a", "b": "b"}, "defaultVariant": "a",
      "targeting": {"fractional": [["a", 50], ["b", 50]]}},
    "fractional8": {"state": "ENABLED", "variants": {"a": "a", "b": "b", "c": "c", "d": "d", "e": "e", "f": "f", "g": "g", "h": "h"}, "defaultVariant": "a",
      "targeting": {"fractional": [{"var": "user.id"}, ["a", 10], ["b", 10], ["c", 10], ["d", 10], ["e", 15], ["f", 15], ["g", 15], ["h", 15]]}},
    "fractionalnum": {"state": "ENABLED", "variants": {"a": "a", "b": "b"}, "defaultVariant": "a",
      "targeting": {"fractional": [{"var": "user.num"}, ["a", 50], ["b", 50]]}},
    "semver": {"state": "ENABLED", "variants": {"new": "new", "old": "old"}, "defaultVariant": "old",
      "targeting": {"if": [{"sem_ver": [{"var": "appVersion"}, ">=", "2.4.0"]}, "new", "old"]}},
    "startswith": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off",
      "targeting": {"if": [{"starts_with": [{"var": "email"}, "user-3"]}, "on", "off"]}}
  }
}`

func benchContexts() map[string]map[string]any {
	small := map[string]any{
		"targetingKey": "user-3",
		"email":        "user-3@example.com",
		"country":      "DE",
		"age":          31,
		"plan":         "pro",
		"beta":         true,
		"appVersion":   "2.5.1",
		"user":         map[string]any{"id": "u-12345", "num": int64(1) << 60},
	}
	large := make(map[string]any, 140)
	maps.Copy(large, small)
	for i := range 130 {
		large[fmt.Sprintf("attribute-%03d", i)] = fmt.Sprintf("value-%d", i)
	}
	return map[string]map[string]any{"small": small, "large": large}
}

func BenchmarkResolve(b *testing.B) {
	ctxs := benchContexts()
	for _, v := range []fractional.Version{fractional.V1, fractional.V2, fractional.V3} {
		set := mustLoad(b, benchDoc, WithFractionalVersion(v))
		flags := []string{"static", "simple", "complex", "semver", "startswith"}
		if v != fractional.V2 {
			flags = nil // only fractional depends on the version
		}
		flags = append(flags, "fractional2", "fractional8")
		if v == fractional.V3 {
			// Only v3 buckets by a number.
			flags = append(flags, "fractionalnum")
		}
		for _, key := range flags {
			for _, size := range []string{"small", "large"} {
				ctx := ctxs[size]
				name := fmt.Sprintf("%s/%s/%s", key, size, v)
				if key[:4] != "frac" {
					name = fmt.Sprintf("%s/%s", key, size)
				}
				// A resolution that fails would time the error path.
				if set.flag(key).vals[0].kind() == kStr {
					if r := set.ResolveString(key, "", ctx); r.Err != nil {
						b.Fatalf("%s: %v", name, r.Err)
					}
					b.Run(name, func(b *testing.B) {
						b.ReportAllocs()
						for b.Loop() {
							set.ResolveString(key, "", ctx)
						}
					})
					continue
				}
				if r := set.ResolveBool(key, false, ctx); r.Err != nil {
					b.Fatalf("%s: %v", name, r.Err)
				}
				b.Run(name, func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						set.ResolveBool(key, false, ctx)
					}
				})
			}
		}
	}
}

// BenchmarkVarDepth is one comparison of an attribute with a constant,
// the attribute read at a path of 1, 3 and 6 segments: what each segment
// of a var path costs an evaluation, which walks the path as written.
func BenchmarkVarDepth(b *testing.B) {
	for _, depth := range []int{1, 3, 6} {
		path, ctx := "", map[string]any{}
		inner := ctx
		for d := range depth {
			seg := fmt.Sprintf("level%d", d)
			path += "." + seg
			if d == depth-1 {
				inner[seg] = "gold"
				break
			}
			next := map[string]any{}
			inner[seg], inner = next, next
		}
		doc := fmt.Sprintf(`{"flags": {"f": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off",
  "targeting": {"if": [{"==": [{"var": %q}, "gold"]}, "on", "off"]}}}}`, path[1:])
		set := mustLoad(b, doc)
		if r := set.ResolveBool("f", false, ctx); r.Err != nil || !r.Value {
			b.Fatalf("depth %d: %+v", depth, r)
		}
		b.Run(fmt.Sprint("depth", depth), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				set.ResolveBool("f", false, ctx)
			}
		})
	}
}

// BenchmarkFlagdStyle evaluates the same rules the way flagd's Go core does
// (encode the context and the rule as JSON, let the reference engine decode
// and apply them, encode the result), for comparison with BenchmarkResolve.
func BenchmarkFlagdStyle(b *testing.B) {
	var doc struct {
		Flags map[string]struct {
			Targeting json.RawMessage `json:"targeting"`
		} `json:"flags"`
	}
	if err := json.Unmarshal([]byte(benchDoc), &doc); err != nil {
		b.Fatal(err)
	}
	registerOracle()
	ctxs := benchContexts()
	for _, key := range []string{"simple", "complex"} {
		rule := doc.Flags[key].Targeting
		for _, size := range []string{"small", "large"} {
			ctx := ctxs[size]
			evaluate := func() error {
				data := maps.Clone(ctx)
				data["$flagd"] = map[string]any{"flagKey": key, "timestamp": time.Now().Unix()}
				encoded, err := json.Marshal(data)
				if err != nil {
					return err
				}
				var out bytes.Buffer
				return jsonlogic.Apply(bytes.NewReader(rule), bytes.NewReader(encoded), &out)
			}
			if err := evaluate(); err != nil {
				b.Fatal(err)
			}
			b.Run(key+"/"+size, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					_ = evaluate()
				}
			})
		}
	}
}
