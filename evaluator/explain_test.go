package evaluator

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/twmb/murmur3"

	"github.com/flagsnap/flagsnap/fractional"
)

const explainDoc = `{
  "metadata": {"team": "shop"},
  "$evaluators": {"staff": {"ends_with": [{"var": "email"}, "@example.com"]}},
  "flags": {
    "checkout": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off",
      "targeting": {"if": [{"$ref": "staff"}, "on", {"==": [{"var": "tier"}, "gold"]}, "on", "off"]}},
    "color": {"state": "ENABLED", "variants": {"red": "red", "green": "green", "blue": "blue"}, "defaultVariant": "red",
      "targeting": {"fractional": [["red", 50], ["green", 30], ["blue", 20]]}},
    "by-user": {"state": "ENABLED", "variants": {"a": "a", "b": "b"}, "defaultVariant": "a",
      "targeting": {"fractional": [{"var": "user.id"}, ["a", 1], ["b", 1]]}},
    "computed": {"state": "ENABLED", "variants": {"a": "a", "b": "b"}, "defaultVariant": "a",
      "targeting": {"fractional": [{"cat": [{"var": "$flagd.flagKey"}, {"var": "org"}]}, ["a", {"+": [1, 1]}], ["b", 2]]}},
    "picked": {"state": "ENABLED", "variants": {"red": "red", "b": "b"}, "defaultVariant": "b",
      "targeting": {"fractional": [{"var": "user.id"}, [{"var": "color"}, 1], ["b", 1]]}},
    "picked-weighted": {"state": "ENABLED", "variants": {"red": "red", "b": "b"}, "defaultVariant": "b",
      "targeting": {"fractional": [{"var": "user.id"}, [{"var": "color"}, {"var": "w"}], ["b", 1]]}},
    "any-admin": {"state": "ENABLED", "variants": {"yes": true, "no": false}, "defaultVariant": "no",
      "targeting": {"if": [{"some": [{"var": "roles"}, {"==": [{"var": ""}, "admin"]}]}, "yes", "no"]}},
    "static": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on"},
    "off": {"state": "DISABLED", "variants": {"on": true}, "defaultVariant": "on"},
    "broken": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on", "targeting": {"nope": []}},
    "general": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on", "targeting": {"cat": ["x"]}},
    "negated": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off",
      "targeting": {"if": [{"!": {"var": "off"}}, "on", "off"]}}
  }
}`

var explainContexts = []map[string]any{
	nil,
	{"email": "ada@example.com"},
	{"email": "bob@elsewhere.org", "tier": "gold"},
	{"targetingKey": "user-3", "tier": "silver"},
	{"targetingKey": "", "user": map[string]any{"id": int64(9007199254740993)}},
	{"targetingKey": "user-7", "user": map[string]any{"id": "u-7"}, "org": "acme", "roles": []any{"dev", "admin"}},
	{"roles": []string{"dev"}, "user": map[string]any{"id": 12.5}},
}

// The explanation is the evaluator's own answer: for every flag, version
// and context, the variant, reason and error of Resolve.
func TestExplainAgreesWithResolve(t *testing.T) {
	for _, v := range []fractional.Version{fractional.V1, fractional.V2, fractional.V3} {
		set := mustLoad(t, explainDoc, WithFractionalVersion(v))
		for _, key := range append(set.Keys(), "missing") {
			for _, ctx := range explainContexts {
				x, err := set.Explain(key, ctx)
				r := set.ResolveObject(key, nil, ctx)
				if key == "missing" {
					if err == nil || x.Err == nil || x.Err.Code != CodeFlagNotFound || x.Reason != ReasonError {
						t.Errorf("missing flag: %+v, %v", x, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", key, err)
				}
				wantVariant, wantReason, wantCode := r.Variant, r.Reason, ErrorCode(0)
				if r.Err != nil && r.Err.Code == CodeTypeMismatch {
					// Explain answers the variant whatever its type.
					wantReason = x.Reason
				} else if r.Err != nil {
					wantCode = r.Err.Code
				}
				var gotCode ErrorCode
				if x.Err != nil {
					gotCode = x.Err.Code
				}
				if x.Variant != wantVariant || x.Reason != wantReason || gotCode != wantCode {
					t.Errorf("%s %s %v: explained %q %v %v, resolved %q %v %v", v, key, ctx, x.Variant, x.Reason, gotCode, wantVariant, wantReason, wantCode)
				}
				// A rule with a broken part is a rule all the same.
				if (x.Rule != nil) != (key != "static" && key != "off") {
					t.Errorf("%s %v: rule %v", key, ctx, x.Rule)
				}
				if x.Rule != nil && x.Variant != "" && x.Reason == ReasonTargetingMatch && x.Rule.Result != x.Variant && key != "checkout" && key != "any-admin" {
					t.Errorf("%s %v: rule result %v, variant %q", key, ctx, x.Rule.Result, x.Variant)
				}
			}
		}
	}
}

// shape renders the steps of a rule as "op→result" with their inputs in
// brackets, skipped inputs marked "-".
func shape(s Step) string {
	var b strings.Builder
	if s.Skipped {
		b.WriteString("-")
	}
	switch {
	case s.Op == "var":
		b.WriteString("var:" + s.Var)
	case s.Op != "":
		b.WriteString(s.Op)
	}
	b.WriteString("→")
	res, _ := json.Marshal(s.Result)
	b.Write(res)
	if len(s.Args) > 0 {
		parts := make([]string, len(s.Args))
		for i, a := range s.Args {
			parts[i] = shape(a)
		}
		b.WriteString("[" + strings.Join(parts, " ") + "]")
	}
	return b.String()
}

func TestExplainTree(t *testing.T) {
	set := mustLoad(t, explainDoc)
	tests := []struct {
		key  string
		ctx  map[string]any
		want string
	}{
		{"checkout", map[string]any{"email": "ada@example.com"},
			`if→"on"[ends_with→true[var:email→"ada@example.com" →"@example.com"] →"on" -==→null -→"on" -→"off"]`},
		{"checkout", map[string]any{"email": "bob@elsewhere.org", "tier": "gold"},
			`if→"on"[ends_with→false[var:email→"bob@elsewhere.org" →"@example.com"] -→"on" ==→true[var:tier→"gold" →"gold"] →"on" -→"off"]`},
		{"checkout", map[string]any{"tier": "silver"},
			`if→"off"[ends_with→null[var:email→null →"@example.com"] -→"on" ==→false[var:tier→"silver" →"gold"] -→"on" →"off"]`},
		{"any-admin", map[string]any{"roles": []any{"dev", "admin"}},
			`if→"yes"[some→true[var:roles→["dev","admin"] ==→false[var:→"dev" →"admin"] ==→true[var:→"admin" →"admin"]] →"yes" -→"no"]`},
		{"computed", map[string]any{"targetingKey": "k", "org": "acme"},
			`fractional→"b"[cat→"computedacme"[var:$flagd.flagKey→"computed" var:org→"acme"] array→["a",2][→"a" +→2[→1 →1]] →["b",2]]`},
	}
	for _, tt := range tests {
		x, err := set.Explain(tt.key, tt.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := shape(*x.Rule); got != tt.want {
			t.Errorf("%s %v:\n got %s\nwant %s", tt.key, tt.ctx, got, tt.want)
		}
	}
	// An argument the rule computes rather than lists is the operation's
	// one argument, and its path is the operation's own.
	x, _ := set.Explain("negated", map[string]any{"off": true})
	if got, want := shape(*x.Rule), `if→"off"[!→false[var:off→true] -→"on" →"off"]`; got != want {
		t.Errorf("negated:\n got %s\nwant %s", got, want)
	}
	if got, want := x.Rule.Args[0].Args[0].Path, "targeting.if[0].!.var"; got != want {
		t.Errorf("the computed argument's path is %q, want %q", got, want)
	}
	x, _ = set.Explain("checkout", map[string]any{"email": "bob@elsewhere.org", "tier": "gold"})
	paths := []string{x.Rule.Path, x.Rule.Args[0].Path, x.Rule.Args[0].Args[0].Path, x.Rule.Args[2].Path, x.Rule.Args[4].Path}
	want := []string{"targeting.if", "targeting.if[0].ends_with", "targeting.if[0].ends_with[0].var", "targeting.if[2].==", "targeting.if[4]"}
	if strings.Join(paths, " ") != strings.Join(want, " ") {
		t.Errorf("paths %q, want %q", paths, want)
	}
}

// explainFractionalCases are fractional rules of explainDoc with the input
// each hashes, shared with TestFractionalExplainAgreesWithEvaluation.
var explainFractionalCases = []struct {
	name    string
	version fractional.Version
	key     string
	ctx     map[string]any
	bytes   string // hex; "" when nothing is hashed
	noInput string
	total   uint32
}{
	{"default input v2", fractional.V2, "color", map[string]any{"targetingKey": "user-3"},
		"636f6c6f72" + "757365722d33", "", 100},
	{"default input v1", fractional.V1, "color", map[string]any{"targetingKey": "user-3"},
		"636f6c6f72" + "757365722d33", "", 100},
	// [flagKey, targetingKey] as a CBOR array of two text strings.
	{"default input v3", fractional.V3, "color", map[string]any{"targetingKey": "user-3"},
		"82" + "65" + "636f6c6f72" + "66" + "757365722d33", "", 100},
	{"no targeting key", fractional.V2, "color", map[string]any{}, "", "no targeting key (it must be a non-empty string)", 100},
	{"string value v2", fractional.V2, "by-user", map[string]any{"user": map[string]any{"id": "u-7"}}, "752d37", "", 2},
	{"number value v2", fractional.V2, "by-user", map[string]any{"user": map[string]any{"id": 7}}, "", "v2 hashes only strings, and the bucketing value is a number", 2},
	// v3 hashes the caller's int64 beyond 2^53 exactly.
	{"int64 value v3", fractional.V3, "by-user", map[string]any{"user": map[string]any{"id": int64(9007199254740993)}}, "1b0020000000000001", "", 2},
	{"computed weights", fractional.V2, "computed", map[string]any{"org": "acme"}, "636f6d70757465646163" + "6d65", "", 4},
	// Variants that are expressions: with constant weights the
	// fractional evaluates them itself, with computed ones each bucket
	// is evaluated as an array.
	{"variant expression", fractional.V2, "picked", map[string]any{"user": map[string]any{"id": "u-1"}, "color": "red"}, "752d31", "", 2},
	{"variant expression, other bucket", fractional.V2, "picked", map[string]any{"user": map[string]any{"id": "u-5"}, "color": "red"}, "752d35", "", 2},
	{"variant and weight expressions", fractional.V2, "picked-weighted", map[string]any{"user": map[string]any{"id": "u-1"}, "color": "red", "w": 1}, "752d31", "", 2},
}

func TestExplainFractional(t *testing.T) {
	for _, tt := range explainFractionalCases {
		t.Run(tt.name, func(t *testing.T) {
			set := mustLoad(t, explainDoc, WithFractionalVersion(tt.version))
			x, err := set.Explain(tt.key, tt.ctx)
			if err != nil {
				t.Fatal(err)
			}
			b := x.Rule.Bucketing
			if b == nil {
				t.Fatalf("no bucketing: %+v", x.Rule)
			}
			if b.Version != tt.version || b.Total != tt.total || b.NoInput != tt.noInput || b.Bytes.String() != tt.bytes {
				t.Fatalf("bucketing %+v\nwant bytes %s, total %d, noInput %q", b, tt.bytes, tt.total, tt.noInput)
			}
			if tt.noInput != "" {
				if b.Selected != -1 || x.Rule.Result != nil {
					t.Errorf("selected %d, result %v without input", b.Selected, x.Rule.Result)
				}
				return
			}
			if h := murmur3.Sum32(b.Bytes); h != b.Hash {
				t.Errorf("hash %d, but the bytes hash to %d", b.Hash, h)
			}
			sel := b.Buckets[b.Selected]
			if b.Bucket < sel.Start || b.Bucket >= sel.End {
				t.Errorf("bucket %v outside the selected [%v, %v)", b.Bucket, sel.Start, sel.End)
			}
			if sel.Variant != x.Rule.Result || sel.Variant != x.Variant {
				t.Errorf("selected %v, rule %v, variant %q", sel.Variant, x.Rule.Result, x.Variant)
			}
			var sum uint32
			for _, c := range b.Buckets {
				sum += c.Weight
				if c.Variant == nil {
					t.Errorf("bucket without a variant: %+v", b.Buckets)
				}
			}
			if sum != b.Total || b.Buckets[len(b.Buckets)-1].End != map[bool]float64{true: 100, false: float64(b.Total)}[tt.version == fractional.V1] {
				t.Errorf("buckets %+v, total %d", b.Buckets, b.Total)
			}
		})
	}
}

func TestExplainJSONAndText(t *testing.T) {
	set := mustLoad(t, explainDoc)
	x, _ := set.Explain("color", map[string]any{"targetingKey": "user-3"})
	out, err := json.Marshal(x)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"reason":"TARGETING_MATCH"`, `"fractionalVersion":"v2"`, `"bytes":"636f6c6f72757365722d33"`, `"selected":1`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("JSON lacks %s: %s", want, out)
		}
	}
	x, _ = set.Explain("broken", nil)
	out, _ = json.Marshal(x)
	if !strings.Contains(string(out), `"error":{"code":"PARSE_ERROR"`) {
		t.Errorf("error not spelled: %s", out)
	}
	text := set.mustExplain(t, "checkout", map[string]any{"tier": "gold"}).String()
	want := `flag "checkout" (fractional v2): variant "on", value true, reason TARGETING_MATCH
if → "on"
  ends_with → null
    var email → null
    "@example.com"
  "on" (not evaluated)
  == → true
    var tier → "gold"
    "gold"
  "on"
  "off" (not evaluated)
`
	if text != want {
		t.Errorf("text:\n%s\nwant:\n%s", text, want)
	}
	// v1 buckets are percentages, shown to four places.
	v1 := mustLoad(t, explainDoc, WithFractionalVersion(fractional.V1))
	text = v1.mustExplain(t, "color", map[string]any{"targetingKey": "user-3"}).String()
	want = `flag "color" (fractional v1): variant "green", value "green", reason TARGETING_MATCH
fractional → "green"
  bucketing value: flag key + targeting key = "color" + "user-3"
  bytes (UTF-8, 11): 636f6c6f72757365722d33
  hash: 2976868654 (0xb16f692e)
  bucket: 61.3788% = |int32(hash)| / 2147483647 × 100
  buckets (total weight 100):
    "red"    weight 50  [0.0000, 50.0000)
  → "green"  weight 30  [50.0000, 80.0000)
    "blue"   weight 20  [80.0000, 100.0000)
`
	if text != want {
		t.Errorf("v1 text:\n%s\nwant:\n%s", text, want)
	}
}

// The text of the other ways a fractional chooses: v3's CBOR of the
// default input, a bucketing value, and a value v2 cannot hash.
func TestExplainBucketingText(t *testing.T) {
	v2, v3 := mustLoad(t, explainDoc), mustLoad(t, explainDoc, WithFractionalVersion(fractional.V3))
	cases := []struct {
		set  *FlagSet
		key  string
		ctx  map[string]any
		want string
	}{
		{v3, "color", map[string]any{"targetingKey": "user-3"}, `flag "color" (fractional v3): variant "green", value "green", reason TARGETING_MATCH
fractional → "green"
  bucketing value: [flag key, targeting key] = ["color", "user-3"]
  bytes (CBOR, 14): 8265636f6c6f7266757365722d33
  hash: 2373420563 (0x8d778613)
  bucket: 55 of 100 = (hash × 100) >> 32
  buckets (total weight 100):
    "red"    weight 50  [0, 50)
  → "green"  weight 30  [50, 80)
    "blue"   weight 20  [80, 100)
`},
		{v2, "by-user", map[string]any{"user": map[string]any{"id": "u-7"}}, `flag "by-user" (fractional v2): variant "b", value "b", reason TARGETING_MATCH
fractional → "b"
  var user.id → "u-7"
  bucketing value: "u-7" (string)
  bytes (UTF-8, 3): 752d37
  hash: 2335311468 (0x8b32066c)
  bucket: 1 of 2 = (hash × 2) >> 32
  buckets (total weight 2):
    "a"  weight 1  [0, 1)
  → "b"  weight 1  [1, 2)
`},
		{v2, "by-user", map[string]any{"user": map[string]any{"id": 7}}, `flag "by-user" (fractional v2): variant "a", value "a", reason DEFAULT
fractional → null
  var user.id → 7
  bucketing value: 7 (int)
  nothing hashed: v2 hashes only strings, and the bucketing value is a number
  buckets (total weight 2):
    "a"  weight 1  [0, 1)
    "b"  weight 1  [1, 2)
`},
	}
	for _, c := range cases {
		if got := c.set.mustExplain(t, c.key, c.ctx).String(); got != c.want {
			t.Errorf("%s, %v:\n%s\nwant:\n%s", c.key, c.ctx, got, c.want)
		}
	}
}

func (s *FlagSet) mustExplain(t *testing.T, key string, ctx map[string]any) Explanation {
	t.Helper()
	x, err := s.Explain(key, ctx)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func BenchmarkExplain(b *testing.B) {
	set := mustLoad(b, explainDoc)
	ctx := map[string]any{"targetingKey": "user-3", "email": "bob@elsewhere.org", "tier": "gold"}
	b.ReportAllocs()
	for b.Loop() {
		_, _ = set.Explain("checkout", ctx)
	}
}

// A rule that computes a number JSON cannot hold explains itself in JSON
// all the same, the number written as its text.
func TestExplanationJSONOfNonFiniteNumbers(t *testing.T) {
	set := mustLoad(t, `{"flags": {"f": {"state": "ENABLED", "variants": {"a": "a"}, "defaultVariant": "a",
	  "targeting": {"if": [{"<": [{"/": [1, 0]}, {"-": [0, {"/": [1, 0]}]}]}, "a", {"merge": [[{"/": [0, 0]}]]}]}}}}`)
	x, err := set.Explain("f", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(x.Rule)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	for _, want := range []string{`"result":"+Inf"`, `"result":"-Inf"`, `"result":["NaN"]`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s", b, want)
		}
	}
}

// A var's path is shown with the segments an evaluation reads, those
// nextSegment finds, bytes that are not valid UTF-8 included.
func TestVarTextIsTheSegmentsRead(t *testing.T) {
	for _, p := range []string{"", ".", "...", "a", "a.b.c", "a..b", ".a.", "..a..b..", "é.\xff..x", "\xc3.a", "1.2"} {
		var segs []string
		for rest := p; ; {
			var seg string
			if seg, rest = nextSegment(rest); seg == "" {
				break
			}
			segs = append(segs, seg)
		}
		if got, want := varText(&varSpec{path: splitPath(p)}), strings.Join(segs, "."); got != want {
			t.Errorf("%q: %q, want %q", p, got, want)
		}
	}
}
