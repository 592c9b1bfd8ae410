package flaggen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// reference is bench's generate as it was before this package, verbatim:
// the benchmarks' published figures were measured on its bytes, so
// Generate must not drift from it.
func reference(n int, salt int) []byte {
	rng := rand.New(rand.NewPCG(42, uint64(n)))
	var b strings.Builder
	b.Grow(n * 220)
	b.WriteString(`{"flags":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"flag_%d":`, i)
		roll := rng.Float64()
		def := "on"
		if salt != 0 && i == n/2 {
			def = "off"
		}
		switch {
		case roll < 0.60:
			if rng.IntN(2) == 0 {
				fmt.Fprintf(&b, `{"state":"ENABLED","defaultVariant":%q,"variants":{"on":true,"off":false}}`, def)
			} else {
				fmt.Fprintf(&b, `{"state":"ENABLED","defaultVariant":%q,"variants":{"on":"value-%d","off":"other-%d"}}`, def, i, i)
			}
		case roll < 0.85:
			attr := rng.IntN(100)
			if rng.IntN(2) == 0 {
				fmt.Fprintf(&b, `{"state":"ENABLED","defaultVariant":%q,"variants":{"on":true,"off":false},"targeting":{"if":[{"==":[{"var":"attr_%d"},"value-%d"]},"on","off"]}}`, def, attr, attr)
			} else {
				fmt.Fprintf(&b, `{"state":"ENABLED","defaultVariant":%q,"variants":{"on":true,"off":false},"targeting":{"if":[{"in":[{"var":"attr_%d"},["a","b","value-%d"]]},"on","off"]}}`, def, attr, attr)
			}
		default:
			switch rng.IntN(3) {
			case 0:
				conds := make([]string, 3+rng.IntN(3))
				for j := range conds {
					conds[j] = fmt.Sprintf(`{"==":[{"var":"attr_%d"},"value-%d"]}`, rng.IntN(100), j)
				}
				half := len(conds) / 2
				fmt.Fprintf(&b, `{"state":"ENABLED","defaultVariant":%q,"variants":{"on":true,"off":false},"targeting":{"if":[{"or":[{"and":[%s]},{"and":[%s]}]},"on","off"]}}`,
					def, strings.Join(conds[:half], ","), strings.Join(conds[half:], ","))
			case 1:
				fmt.Fprintf(&b, `{"state":"ENABLED","defaultVariant":%q,"variants":{"on":true,"off":false},"targeting":{"fractional":[{"var":"targetingKey"},["on",%d],["off",%d]]}}`, def, 1+rng.IntN(99), 1+rng.IntN(99))
			default:
				fmt.Fprintf(&b, `{"state":"ENABLED","defaultVariant":%q,"variants":{"on":true,"off":false},"targeting":{"if":[{"sem_ver":[{"var":"version"},">=","%d.%d.0"]},"on","off"]}}`, def, rng.IntN(5), rng.IntN(10))
			}
		}
	}
	b.WriteString(`}}`)
	return []byte(b.String())
}

func TestGenerateIsTheReference(t *testing.T) {
	for _, n := range []int{0, 1, 5, 50, 200, 1000, 10_000, 100_000} {
		for _, salt := range []int{0, 1} {
			got, want := Generate(n, salt), reference(n, salt)
			if !bytes.Equal(got, want) {
				i := 0
				for i < len(got) && i < len(want) && got[i] == want[i] {
					i++
				}
				t.Fatalf("Generate(%d, %d) differs from the reference at byte %d of %d/%d:\n got  %.120s\n want %.120s",
					n, salt, i, len(got), len(want), got[max(i-40, 0):], want[max(i-40, 0):])
			}
		}
	}
}

// TestFlagsDescribeTheDocument reads the document back and checks each
// flag against its description, so that an engine translating Flags
// loads what flagsnap loads.
func TestFlagsDescribeTheDocument(t *testing.T) {
	const n = 10_000
	flags := Flags(n, 1)
	var doc struct {
		Flags map[string]struct {
			State          string
			DefaultVariant string
			Variants       map[string]any
			Targeting      json.RawMessage
		}
	}
	if err := json.Unmarshal(Generate(n, 1), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Flags) != n {
		t.Fatalf("%d flags in the document, want %d", len(doc.Flags), n)
	}
	kinds := map[Kind]int{}
	for _, f := range flags {
		kinds[f.Kind]++
		d, ok := doc.Flags[f.Key]
		if !ok {
			t.Fatalf("%s is not in the document", f.Key)
		}
		if d.State != "ENABLED" || d.DefaultVariant != f.Default || len(d.Variants) != len(f.Variants) {
			t.Fatalf("%s: document %+v, description %+v", f.Key, d, f)
		}
		for _, v := range f.Variants {
			if d.Variants[v.Name] != v.Value {
				t.Fatalf("%s: variant %s is %v in the document, %v in the description", f.Key, v.Name, d.Variants[v.Name], v.Value)
			}
		}
		if (f.Kind == Static) != (d.Targeting == nil) {
			t.Fatalf("%s: kind %v, targeting %s", f.Key, f.Kind, d.Targeting)
		}
		var want string
		switch f.Kind {
		case Equals, In:
			want = `{"if":[` + cond(f.Rule[0][0]) + `,"on","off"]}`
		case AndOr:
			ands := make([]string, len(f.Rule))
			for i, and := range f.Rule {
				cs := make([]string, len(and))
				for j, c := range and {
					cs[j] = cond(c)
				}
				ands[i] = `{"and":[` + strings.Join(cs, ",") + `]}`
			}
			want = `{"if":[{"or":[` + strings.Join(ands, ",") + `]},"on","off"]}`
		case Fractional:
			want = fmt.Sprintf(`{"fractional":[{"var":"targetingKey"},["on",%d],["off",%d]]}`, f.Buckets[0].Weight, f.Buckets[1].Weight)
		case SemVer:
			want = fmt.Sprintf(`{"if":[{"sem_ver":[{"var":"version"},%q,%q]},"on","off"]}`, f.SemVerOp, f.SemVer)
		}
		if f.Kind != Static && string(d.Targeting) != want {
			t.Fatalf("%s: targeting %s, description gives %s", f.Key, d.Targeting, want)
		}
	}
	// The standard's mix, within sampling error.
	for k, share := range map[Kind]float64{Static: 0.60, Equals: 0.125, In: 0.125, AndOr: 0.05, Fractional: 0.05, SemVer: 0.05} {
		if got := float64(kinds[k]) / n; got < share*0.85 || got > share*1.15 {
			t.Errorf("%v: %.3f of the flags, want about %.3f", k, got, share)
		}
	}
}

func cond(c Cond) string {
	if c.Op == "==" {
		return fmt.Sprintf(`{"==":[{"var":%q},%q]}`, c.Attribute, c.Values[0])
	}
	return fmt.Sprintf(`{"in":[{"var":%q},["%s"]]}`, c.Attribute, strings.Join(c.Values, `","`))
}
