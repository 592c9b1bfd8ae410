package flagsnap_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"
	"github.com/twmb/murmur3"

	"github.com/flagsnap/flagsnap"
	"github.com/flagsnap/flagsnap/fractional"
)

// Fractional v3 through the provider's typed methods: the value a var takes
// from the evaluation context is hashed exactly as fractional.HashValue
// hashes the same Go value, whatever its Go type and wherever it sits.

// v3Buckets is the number of equal buckets of the test flags: enough that
// a value hashed differently lands in another bucket all but once in a
// thousand times.
const v3Buckets = 1024

// v3Paths are the var paths the test flags bucket by, one flag each.
var v3Paths = []string{"h", "u.v", "l.1", "u.l.0.v"}

// v3Flags is a flag document with a flag "by:<path>" per path, bucketing by
// {"var": path} into v3Buckets buckets b0, b1, …, and the flag of the
// README's example.
func v3Flags() string {
	var variants, buckets []string
	for i := range v3Buckets {
		variants = append(variants, fmt.Sprintf(`"b%d": "b%d"`, i, i))
		buckets = append(buckets, fmt.Sprintf(`["b%d", 1]`, i))
	}
	var flags []string
	for _, p := range v3Paths {
		flags = append(flags, fmt.Sprintf(`"by:%s": {"state": "ENABLED", "defaultVariant": "none",
		  "variants": {"none": "none", %s},
		  "targeting": {"fractional": [{"var": %q}, %s]}}`, p, strings.Join(variants, ", "), p, strings.Join(buckets, ", ")))
	}
	flags = append(flags, `"example": {"state": "ENABLED", "defaultVariant": "none",
	  "variants": {"none": "none", "a": "a", "b": "b", "c": "c"},
	  "targeting": {"fractional": [{"var": "h"}, ["a", 50], ["b", 30], ["c", 20]]}}`)
	return `{"flags": {` + strings.Join(flags, ",\n") + `}}`
}

// v3Provider is a provider of v3Flags with the given bucketing version.
func v3Provider(t *testing.T, v fractional.Version) *flagsnap.Provider {
	t.Helper()
	path := filepath.Join(t.TempDir(), "flags.json")
	if err := os.WriteFile(path, []byte(v3Flags()), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := flagsnap.NewProvider(flagsnap.WithFile(path), flagsnap.WithFractionalVersion(v))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Shutdown)
	if err := p.Init(openfeature.EvaluationContext{}); err != nil {
		t.Fatal(err)
	}
	return p
}

var v3Table = func() *fractional.Table {
	w := make([]float64, v3Buckets)
	for i := range w {
		w[i] = 1
	}
	tb, err := fractional.NewTable(w)
	if err != nil {
		panic(err)
	}
	return tb
}()

// bucketOf evaluates flag "by:<path>" over ctx and returns its variant,
// failing the test unless the rule chose one.
func bucketOf(t *testing.T, p *flagsnap.Provider, path string, ctx openfeature.FlattenedContext) string {
	t.Helper()
	r := p.StringEvaluation(context.Background(), "by:"+path, "default", ctx)
	if r.Error() != nil || r.Reason != openfeature.TargetingMatchReason {
		t.Fatalf("by:%s over %#v: %q, %s, %v", path, ctx, r.Value, r.Reason, r.Error())
	}
	return r.Value
}

// expectedBucket is the bucket fractional.HashValue puts x in.
func expectedBucket(t *testing.T, x any) string {
	t.Helper()
	h, err := fractional.HashValue(fractional.V3, x)
	if err != nil {
		t.Fatalf("HashValue(%#v): %v", x, err)
	}
	return fmt.Sprintf("b%d", v3Table.Pick(fractional.V3, h))
}

type (
	v3UserID  int64
	v3Score   float32
	v3Label   string
	v3Account struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	}
)

// placements puts x where each test flag's path finds it, and at the top
// of a container the flag "by:h" hashes whole.
func placements(x any) []struct {
	where, path string
	ctx         openfeature.FlattenedContext
	hashed      any // what the flag hashes
} {
	type placement = struct {
		where, path string
		ctx         openfeature.FlattenedContext
		hashed      any
	}
	inMap := map[string]any{"v": x, "k": "s"}
	inList := map[string]any{"l": []any{"s", x, nil}}
	return []placement{
		{"top level", "h", openfeature.FlattenedContext{"h": x}, x},
		{"in a map", "h", openfeature.FlattenedContext{"h": inMap}, inMap},
		{"in a list in a map", "h", openfeature.FlattenedContext{"h": inList}, inList},
		{"at a path into a map", "u.v", openfeature.FlattenedContext{"u": map[string]any{"v": x}}, x},
		{"at a path into a list", "l.1", openfeature.FlattenedContext{"l": []any{"s", x}}, x},
		{"at a path into a list in a map", "u.l.0.v", openfeature.FlattenedContext{"u": map[string]any{"l": []any{map[string]any{"v": x}}}}, x},
	}
}

func TestFractionalV3HashesTheCallersValue(t *testing.T) {
	p := v3Provider(t, fractional.V3)
	newYear := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	half := newYear.Add(500 * time.Millisecond)
	cases := []struct {
		name string
		x    any
		cbor string // the encoding written out by hand, when given
	}{
		{"int64 max", int64(math.MaxInt64), "1b7fffffffffffffff"},
		{"int64 min", int64(math.MinInt64), "3b7fffffffffffffff"},
		{"int 2^53+1", 1<<53 + 1, "1b0020000000000001"},
		{"uint64 max", uint64(math.MaxUint64), "1bffffffffffffffff"},
		{"int8", int8(-7), "26"},
		{"int16", int16(-300), "39012b"},
		{"int32", int32(70000), "1a00011170"},
		{"uint8", uint8(200), "18c8"},
		{"uint16", uint16(65535), "19ffff"},
		{"uint32", uint32(math.MaxUint32), "1affffffff"},
		{"uint", uint(1 << 40), "1b0000010000000000"},
		{"float32", float32(272180.5625), "fa4884e692"},
		{"float32 0.1 widened", float32(0.1), "fa3dcccccd"},
		{"float64 0.1", 0.1, "fb3fb999999999999a"},
		{"whole float64", 42.0, "182a"},
		{"json.Number beyond 2^53", json.Number("9223372036854775807"), "1b7fffffffffffffff"},
		{"json.Number fraction", json.Number("2.5"), "f94100"},
		{"named int64", v3UserID(1<<53 + 1), "1b0020000000000001"},
		{"named float32", v3Score(0.1), "fa3dcccccd"},
		{"named string", v3Label("ada"), "63616461"},
		{"time", newYear, "c11a65920080"},
		{"time with a fraction of a second", half, "c1fb41d9648020200000"},
		{"time pointer", &newYear, "c11a65920080"},
		{"time before the epoch", time.Unix(-1, 750_000_000), "c1f9b400"},
		{"struct as its JSON form", v3Account{ID: math.MaxInt64, Name: "x"}, "a26269641b7fffffffffffffff646e616d656178"},
		{"string", "user-1", "66757365722d31"},
		{"bool", true, "f5"},
		{"map of exact values", map[string]any{"id": int64(math.MaxInt64), "t": newYear},
			"a2" + "6174c11a65920080" + "6269641b7fffffffffffffff"},
		{"typed map", map[string]int64{"id": math.MaxInt64}, "a16269641b7fffffffffffffff"},
		{"typed list in a map", map[string]any{"f": []float32{0.1}}, "a1616681fa3dcccccd"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.cbor != "" {
				got, err := fractional.AppendCBOR(nil, c.x)
				if err != nil || hex.EncodeToString(got) != c.cbor {
					t.Fatalf("AppendCBOR(%#v) = %x, %v; want %s", c.x, got, err, c.cbor)
				}
				// From the bytes written out by hand to the bucket.
				want, _ := hex.DecodeString(c.cbor)
				if b := fmt.Sprintf("b%d", v3Table.Pick(fractional.V3, murmur3.Sum32(want))); b != bucketOf(t, p, "h", openfeature.FlattenedContext{"h": c.x}) {
					t.Errorf("the bytes %s hash into %s, the provider disagrees", c.cbor, b)
				}
			}
			for _, pl := range placements(c.x) {
				if got, want := bucketOf(t, p, pl.path, pl.ctx), expectedBucket(t, pl.hashed); got != want {
					t.Errorf("%s: %s, want %s as fractional.HashValue has it", pl.where, got, want)
				}
			}
		})
	}
}

// The example of the README: a 64-bit id and a float32 score bucket as
// fractional.HashValue buckets them.
func TestFractionalV3Example(t *testing.T) {
	p := v3Provider(t, fractional.V3)
	tb, err := fractional.NewTable([]float64{50, 30, 20})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []any{int64(math.MaxInt64), float32(272180.5625)} {
		sum, err := fractional.HashValue(fractional.V3, h)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"a", "b", "c"}[tb.Pick(fractional.V3, sum)]
		if want != "a" {
			t.Errorf("h = %T(%v): fractional.HashValue buckets it in %q, the README says a", h, h, want)
		}
		got := p.StringEvaluation(context.Background(), "example", "default", openfeature.FlattenedContext{"h": h})
		if got.Value != want || got.Reason != openfeature.TargetingMatchReason {
			t.Errorf("h = %T(%v): %q (%s), want %q", h, h, got.Value, got.Reason, want)
		}
		// What JSON carries of h is another number, in another bucket:
		// the one flagd's Go provider, and this one before, chose.
		asJSON := map[any]float64{int64(math.MaxInt64): 9223372036854775807, float32(272180.5625): 272180.56}[h]
		other, _ := fractional.HashValue(fractional.V3, asJSON)
		if tb.Pick(fractional.V3, other) == tb.Pick(fractional.V3, sum) {
			t.Errorf("h = %T(%v) lands where its JSON form does; the example shows nothing", h, h)
		}
	}
}

// Before v3 only strings are hashed: a time is its JSON text there.
func TestFractionalV2TimeIsText(t *testing.T) {
	p := v3Provider(t, fractional.V2)
	newYear := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	want := fmt.Sprintf("b%d", v3Table.Pick(fractional.V2, fractional.HashString(fractional.V2, "2024-01-01T00:00:00Z")))
	for _, x := range []any{newYear, &newYear} {
		if got := bucketOf(t, p, "h", openfeature.FlattenedContext{"h": x}); got != want {
			t.Errorf("%#v: %s, want %s", x, got, want)
		}
	}
	r := p.StringEvaluation(context.Background(), "by:h", "default", openfeature.FlattenedContext{"h": int64(7)})
	if r.Value != "none" || r.Reason != openfeature.DefaultReason {
		t.Errorf("a number in v2: %q %s, want the default variant", r.Value, r.Reason)
	}
}

// The same JSON number given as every Go type that holds it exactly lands
// in one bucket, at the top level and inside a map.
func TestFractionalV3SameNumberAnyGoType(t *testing.T) {
	p := v3Provider(t, fractional.V3)
	r := rand.New(rand.NewPCG(10, 3))
	for i := range 150 {
		forms := exactForms(r)
		want := expectedBucket(t, forms[0])
		wantNested := expectedBucket(t, map[string]any{"v": forms[0]})
		for _, x := range forms {
			if got := bucketOf(t, p, "h", openfeature.FlattenedContext{"h": x}); got != want {
				t.Errorf("case %d: %T(%v) lands in %s, %T(%v) in %s", i, x, x, got, forms[0], forms[0], want)
			}
			if got := bucketOf(t, p, "h", openfeature.FlattenedContext{"h": map[string]any{"v": x}}); got != wantNested {
				t.Errorf("case %d: %T(%v) in a map lands in %s, %T(%v) in %s", i, x, x, got, forms[0], forms[0], wantNested)
			}
		}
	}
}

// exactForms draws a number and returns it as every Go type that holds it
// exactly, the first being int64, uint64 or float64.
func exactForms(r *rand.Rand) []any {
	switch r.IntN(6) {
	case 0:
		return intForms(int64(r.IntN(600) - 300))
	case 1:
		// Any width up to 63 bits, either sign.
		i := int64(r.Uint64() >> (1 + r.IntN(63)))
		if r.IntN(2) == 0 {
			i = -i
		}
		return intForms(i)
	case 2:
		// Beyond int64.
		return uintForms(1<<63 | r.Uint64())
	case 3:
		// Powers of two, which float32 holds however large.
		i := int64(1) << r.IntN(63)
		if r.IntN(2) == 0 {
			i = -i
		}
		return intForms(i)
	case 4:
		// A float32 with a fraction, widened exactly.
		for {
			f := float64(math.Float32frombits(r.Uint32()))
			if !math.IsNaN(f) && !math.IsInf(f, 0) && f != math.Trunc(f) {
				return floatForms(f)
			}
		}
	}
	// Any float64 with a fraction.
	for {
		f := math.Float64frombits(r.Uint64())
		if !math.IsNaN(f) && !math.IsInf(f, 0) && f != math.Trunc(f) {
			return floatForms(f)
		}
	}
}

func intForms(i int64) []any {
	out := []any{i, int(i), v3UserID(i), json.Number(strconv.FormatInt(i, 10))}
	if i == int64(int8(i)) {
		out = append(out, int8(i))
	}
	if i == int64(int16(i)) {
		out = append(out, int16(i))
	}
	if i == int64(int32(i)) {
		out = append(out, int32(i))
	}
	if i >= 0 {
		out = append(out, uint64(i), uint(i))
		if i <= math.MaxUint8 {
			out = append(out, uint8(i))
		}
		if i <= math.MaxUint16 {
			out = append(out, uint16(i))
		}
		if i <= math.MaxUint32 {
			out = append(out, uint32(i))
		}
	}
	if f := float64(i); f < 0x1p63 && int64(f) == i {
		out = append(out, f, json.Number(strconv.FormatFloat(f, 'e', -1, 64)))
	}
	if f := float32(i); float64(f) < 0x1p63 && int64(f) == i {
		out = append(out, f, v3Score(f))
	}
	return out
}

func uintForms(u uint64) []any {
	out := []any{u, uint(u), json.Number(strconv.FormatUint(u, 10))}
	if f := float64(u); f < 0x1p64 && uint64(f) == u {
		out = append(out, f, json.Number(strconv.FormatFloat(f, 'e', -1, 64)))
	}
	if f := float32(u); float64(f) < 0x1p64 && uint64(f) == u {
		out = append(out, f)
	}
	return out
}

func floatForms(f float64) []any {
	out := []any{f, json.Number(strconv.FormatFloat(f, 'g', -1, 64))}
	if f32 := float32(f); float64(f32) == f {
		out = append(out, f32, v3Score(f32))
	}
	return out
}
