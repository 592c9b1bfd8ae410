package evaluator

import (
	"fmt"
	"strings"

	"github.com/flagsnap/flagsnap/fractional"
	"github.com/flagsnap/flagsnap/internal/jsonline"
)

// String renders the explanation as indented text: the answer, then one
// line per step of the rule with its result (→), the inputs of each
// operation below it, and for fractional what was hashed and how the
// bucket was chosen.
func (x Explanation) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "flag %q (fractional %s): ", x.Flag, x.FractionalVersion)
	if x.Variant != "" {
		fmt.Fprintf(&b, "variant %q, value %s, ", x.Variant, jsonline.String(x.Value))
	}
	fmt.Fprintf(&b, "reason %s\n", x.Reason)
	if x.Layer != "" {
		fmt.Fprintf(&b, "defined by %s\n", x.Layer)
	}
	if x.Err != nil {
		fmt.Fprintf(&b, "error %s: %v\n", x.Err.Code, x.Err)
	}
	if x.Rule != nil {
		writeStep(&b, x.Rule, 0)
	}
	return b.String()
}

func writeStep(b *strings.Builder, s *Step, depth int) {
	indent := strings.Repeat("  ", depth)
	switch {
	case s.Skipped && s.Op == "":
		fmt.Fprintf(b, "%s%s (not evaluated)\n", indent, jsonline.String(s.Result))
		return
	case s.Skipped:
		fmt.Fprintf(b, "%s%s (not evaluated)\n", indent, s.Op)
		return
	case s.Op == "":
		fmt.Fprintf(b, "%s%s\n", indent, jsonline.String(s.Result))
		return
	case s.Op == "var" && s.Var != "":
		fmt.Fprintf(b, "%svar %s → %s\n", indent, s.Var, jsonline.String(s.Result))
	default:
		fmt.Fprintf(b, "%s%s → %s\n", indent, s.Op, jsonline.String(s.Result))
	}
	for i := range s.Args {
		a := &s.Args[i]
		if s.Bucketing != nil && a.Op == "" {
			continue // constant buckets: the bucket table shows them
		}
		writeStep(b, a, depth+1)
	}
	if s.Bucketing != nil {
		writeBucketing(b, s.Bucketing, indent+"  ")
	}
}

func writeBucketing(b *strings.Builder, bk *Bucketing, indent string) {
	switch {
	case bk.Default && bk.Version == fractional.V3:
		fmt.Fprintf(b, "%sbucketing value: [flag key, targeting key] = [%s, %s]\n", indent, jsonline.String(bk.FlagKey), jsonline.String(bk.TargetingKey))
	case bk.Default:
		fmt.Fprintf(b, "%sbucketing value: flag key + targeting key = %s + %s\n", indent, jsonline.String(bk.FlagKey), jsonline.String(bk.TargetingKey))
	default:
		fmt.Fprintf(b, "%sbucketing value: %s (%T)\n", indent, jsonline.String(bk.Value), bk.Value)
	}
	if bk.NoInput != "" {
		fmt.Fprintf(b, "%snothing hashed: %s\n", indent, bk.NoInput)
	} else {
		enc := "UTF-8"
		if bk.Version == fractional.V3 {
			enc = "CBOR"
		}
		fmt.Fprintf(b, "%sbytes (%s, %d): %s\n", indent, enc, len(bk.Bytes), bk.Bytes)
		fmt.Fprintf(b, "%shash: %d (0x%08x)\n", indent, bk.Hash, bk.Hash)
		if bk.Version == fractional.V1 {
			fmt.Fprintf(b, "%sbucket: %.4f%% = |int32(hash)| / 2147483647 × 100\n", indent, bk.Bucket)
		} else {
			fmt.Fprintf(b, "%sbucket: %.0f of %d = (hash × %d) >> 32\n", indent, bk.Bucket, bk.Total, bk.Total)
		}
	}
	width := 0
	for _, c := range bk.Buckets {
		width = max(width, len(jsonline.String(c.Variant)))
	}
	prec := 0 // v2 and v3 buckets are whole numbers
	if bk.Version == fractional.V1 {
		prec = 4
	}
	fmt.Fprintf(b, "%sbuckets (total weight %d):\n", indent, bk.Total)
	for i, c := range bk.Buckets {
		mark := "  "
		if i == bk.Selected {
			mark = "→ "
		}
		fmt.Fprintf(b, "%s%s%-*s  weight %d  [%.*f, %.*f)\n", indent, mark, width, jsonline.String(c.Variant), c.Weight, prec, c.Start, prec, c.End)
	}
}
