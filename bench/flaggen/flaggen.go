// Package flaggen generates the flag sets of flagsnap's loading and memory
// benchmarks: n flags in the cross-language standard's mix (60% static,
// 25% one == or in on one attribute, 15% nested and/or, fractional or
// sem_ver), from a fixed seed, so that every run and every engine
// compared with flagsnap loads the same flags.
//
// Flags describes the set and Generate writes it as a flagd document; the
// two come from the same draws, so another engine's translation of Flags
// is the same work as flagsnap loading Generate.
package flaggen

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
)

// Kind is the shape of a flag's targeting.
type Kind int

const (
	// Static flags have no targeting: they serve Default.
	Static Kind = iota
	// Equals is one == of an attribute with a string (Rule[0][0]).
	Equals
	// In is one in of an attribute and a list of strings (Rule[0][0]).
	In
	// AndOr is an or of two ands of == conditions (Rule).
	AndOr
	// Fractional splits on the targeting key by Buckets.
	Fractional
	// SemVer compares the attribute "version" with SemVer by SemVerOp.
	SemVer
)

func (k Kind) String() string {
	switch k {
	case Static:
		return "static"
	case Equals:
		return "=="
	case In:
		return "in"
	case AndOr:
		return "and/or"
	case Fractional:
		return "fractional"
	case SemVer:
		return "sem_ver"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Flag is one generated flag. Every flag is enabled and has the variants
// "on" and "off", in that order.
type Flag struct {
	Key  string
	Kind Kind
	// Variants are in the order the document lists them.
	Variants []Variant
	// Default is the default variant, served by static flags.
	Default string

	// Rule is an or of ands of conditions, for Equals, In and AndOr:
	// a context that satisfies every condition of one element gets
	// Match, any other NoMatch.
	Rule [][]Cond
	// Buckets are the variants of a Fractional flag and their relative
	// weights, bucketed by the targeting key.
	Buckets []Bucket
	// SemVerOp and SemVer are the comparison of a SemVer flag: the
	// attribute "version" against SemVer. The context satisfies it or
	// not, as a Rule.
	SemVerOp string
	SemVer   string

	// Match and NoMatch are the variants a rule's outcome selects (Equals,
	// In, AndOr, SemVer); the default variant is not used by those flags.
	Match, NoMatch string
}

// Variant is a variant's name and its value, a bool or a string.
type Variant struct {
	Name  string
	Value any
}

// Cond compares a string attribute: Op "==" with Values[0], Op "in" with
// the list Values.
type Cond struct {
	Attribute string
	Op        string
	Values    []string
}

// Bucket is a variant of a fractional split and its relative weight.
type Bucket struct {
	Variant string
	Weight  int
}

// SemVerAttribute is the context attribute that SemVer flags compare.
const SemVerAttribute = "version"

// Flags describes the set of n flags that Generate(n, salt) writes, in the
// same order. A non-zero salt changes one flag's default variant (not its
// key), so that two sets differ in exactly one flag, for updates.
func Flags(n, salt int) []Flag {
	// Seeded by n so that a set of each size is fixed. The order of the
	// draws below is what makes the documents: changing it changes every
	// benchmark's input.
	rng := rand.New(rand.NewPCG(42, uint64(n)))
	boolVariants := []Variant{{"on", true}, {"off", false}}
	flags := make([]Flag, n)
	for i := range flags {
		f := Flag{Key: "flag_" + strconv.Itoa(i), Default: "on", Variants: boolVariants}
		if salt != 0 && i == n/2 {
			f.Default = "off"
		}
		roll := rng.Float64()
		switch {
		case roll < 0.60:
			f.Kind = Static
			if rng.IntN(2) != 0 {
				f.Variants = []Variant{{"on", "value-" + strconv.Itoa(i)}, {"off", "other-" + strconv.Itoa(i)}}
			}
		case roll < 0.85:
			attr := rng.IntN(100)
			c := Cond{Attribute: attrName(attr), Op: "==", Values: []string{attrValue(attr)}}
			f.Kind = Equals
			if rng.IntN(2) != 0 {
				f.Kind = In
				c.Op = "in"
				c.Values = []string{"a", "b", attrValue(attr)}
			}
			f.Rule = [][]Cond{{c}}
			f.Match, f.NoMatch = "on", "off"
		default:
			switch rng.IntN(3) {
			case 0:
				conds := make([]Cond, 3+rng.IntN(3))
				for j := range conds {
					conds[j] = Cond{Attribute: attrName(rng.IntN(100)), Op: "==", Values: []string{attrValue(j)}}
				}
				half := len(conds) / 2
				f.Kind = AndOr
				f.Rule = [][]Cond{conds[:half:half], conds[half:]}
				f.Match, f.NoMatch = "on", "off"
			case 1:
				f.Kind = Fractional
				on := 1 + rng.IntN(99)
				off := 1 + rng.IntN(99)
				f.Buckets = []Bucket{{"on", on}, {"off", off}}
			default:
				f.Kind = SemVer
				major := rng.IntN(5)
				minor := rng.IntN(10)
				f.SemVerOp = ">="
				f.SemVer = fmt.Sprintf("%d.%d.0", major, minor)
				f.Match, f.NoMatch = "on", "off"
			}
		}
		flags[i] = f
	}
	return flags
}

func attrName(i int) string  { return "attr_" + strconv.Itoa(i) }
func attrValue(i int) string { return "value-" + strconv.Itoa(i) }

// Generate writes the flag set of Flags(n, salt) as a flagd document
// ({"flags": {...}}). The bytes must not change from one version to the
// next, so that benchmark results stay comparable across versions.
func Generate(n, salt int) []byte {
	flags := Flags(n, salt)
	b := make([]byte, 0, n*220)
	b = append(b, `{"flags":{`...)
	for i := range flags {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendFlag(b, &flags[i])
	}
	b = append(b, `}}`...)
	if !json.Valid(b) {
		panic("flaggen: generated flag set is not JSON")
	}
	return b
}

func appendFlag(b []byte, f *Flag) []byte {
	b = strconv.AppendQuote(b, f.Key)
	b = append(b, `:{"state":"ENABLED","defaultVariant":`...)
	b = strconv.AppendQuote(b, f.Default)
	b = append(b, `,"variants":{`...)
	for i, v := range f.Variants {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, v.Name)
		b = append(b, ':')
		switch v := v.Value.(type) {
		case bool:
			b = strconv.AppendBool(b, v)
		case string:
			b = strconv.AppendQuote(b, v)
		default:
			panic(fmt.Sprintf("flaggen: variant value %T", v))
		}
	}
	b = append(b, '}')
	switch f.Kind {
	case Static:
		return append(b, '}')
	case Equals, In:
		b = append(b, `,"targeting":{"if":[`...)
		b = appendCond(b, f.Rule[0][0])
	case AndOr:
		b = append(b, `,"targeting":{"if":[{"or":[`...)
		for i, and := range f.Rule {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"and":[`...)
			for j, c := range and {
				if j > 0 {
					b = append(b, ',')
				}
				b = appendCond(b, c)
			}
			b = append(b, "]}"...)
		}
		b = append(b, "]}"...)
	case Fractional:
		b = append(b, `,"targeting":{"fractional":[{"var":"targetingKey"}`...)
		for _, k := range f.Buckets {
			b = append(b, ",["...)
			b = strconv.AppendQuote(b, k.Variant)
			b = append(b, ',')
			b = strconv.AppendInt(b, int64(k.Weight), 10)
			b = append(b, ']')
		}
		return append(b, "]}}"...)
	case SemVer:
		b = append(b, `,"targeting":{"if":[{"sem_ver":[{"var":"version"},`...)
		b = strconv.AppendQuote(b, f.SemVerOp)
		b = append(b, ',')
		b = strconv.AppendQuote(b, f.SemVer)
		b = append(b, "]}"...)
	default:
		panic(fmt.Sprintf("flaggen: kind %v", f.Kind))
	}
	b = append(b, ',')
	b = strconv.AppendQuote(b, f.Match)
	b = append(b, ',')
	b = strconv.AppendQuote(b, f.NoMatch)
	return append(b, "]}}"...)
}

func appendCond(b []byte, c Cond) []byte {
	b = append(b, `{`...)
	b = strconv.AppendQuote(b, c.Op)
	b = append(b, `:[{"var":`...)
	b = strconv.AppendQuote(b, c.Attribute)
	b = append(b, "},"...)
	switch c.Op {
	case "==":
		b = strconv.AppendQuote(b, c.Values[0])
	case "in":
		b = append(b, '[')
		for i, v := range c.Values {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendQuote(b, v)
		}
		b = append(b, ']')
	default:
		panic("flaggen: condition " + c.Op)
	}
	return append(b, "]}"...)
}
