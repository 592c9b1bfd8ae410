package semver

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestParseVersion(t *testing.T) {
	valid := map[string]Version{
		"1.2.3":                    {major: "1", minor: "2", patch: "3"},
		"v1.2.3":                   {major: "1", minor: "2", patch: "3"},
		"V0.0.0":                   {major: "0", minor: "0", patch: "0"},
		"1":                        {major: "1", minor: "0", patch: "0"},
		"1.2":                      {major: "1", minor: "2", patch: "0"},
		"1.2.3-rc.1":               {major: "1", minor: "2", patch: "3", pre: []string{"rc", "1"}},
		"1.2.3+build.5":            {major: "1", minor: "2", patch: "3"},
		"1.2.3-a-b+c":              {major: "1", minor: "2", patch: "3", pre: []string{"a-b"}},
		"99999999999999999999.0.0": {major: "99999999999999999999", minor: "0", patch: "0"},
	}
	for s, want := range valid {
		got, ok := Parse(s)
		if !ok || got.major != want.major || got.minor != want.minor || got.patch != want.patch || !slices.Equal(got.pre, want.pre) {
			t.Errorf("%q: %+v %v, want %+v", s, got, ok, want)
		}
	}
	for _, s := range []string{"", "v", "1.", ".1", "1.2.3.4", "01.2.3", "1.02.3", "1.2-rc", "1.2.3-", "1.2.3-01", "1.2.3+", "1.2.3-a..b", "a.b.c", "1.2.3 ", "-1.2.3", "1.2.3-é"} {
		if v, ok := Parse(s); ok {
			t.Errorf("%q parsed as %+v", s, v)
		}
	}
}

func TestSemverPrecedence(t *testing.T) {
	// Each Version is lower than the next (Semantic Versioning 2.0.0, 11).
	ordered := []string{"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.0.1", "1.1.0", "2.0.0", "10.0.0"}
	for _, s := range ordered {
		if _, ok := Parse(s); !ok {
			t.Fatalf("%q does not parse", s)
		}
	}
	for i := range ordered {
		for j := range ordered {
			a, _ := Parse(ordered[i])
			b, _ := Parse(ordered[j])
			got := a.Compare(&b)
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got != want {
				t.Errorf("compare(%s, %s) = %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
}

// versionGrammar is Semantic Versioning 2.0.0's own regular expression
// (semver.org), widened as flagd reads versions: an optional leading v,
// and MINOR and PATCH optional when there is no prerelease or build part.
var versionGrammar = regexp.MustCompile(`^[vV]?(?:` +
	`(0|[1-9]\d*)(?:\.(0|[1-9]\d*)(?:\.(0|[1-9]\d*))?)?` + `|` +
	`(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)` +
	`(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?` +
	`(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?)$`)

// The parser accepts exactly what the grammar does, with the same parts,
// for every string of up to seven characters over an alphabet that has all
// the grammar's kinds of character.
func TestParseVersionAgainstGrammar(t *testing.T) {
	alphabet := []byte("01.-+av")
	var walk func(prefix []byte)
	walk = func(prefix []byte) {
		s := string(prefix)
		var got Version
		ok := ParseInto(s, &got)
		m := versionGrammar.FindStringSubmatch(s)
		if ok != (m != nil) {
			t.Fatalf("%q: parsed %v, grammar %v", s, ok, m != nil)
		}
		if ok {
			want := Version{major: "0", minor: "0", patch: "0"}
			if m[4] != "" {
				want.major, want.minor, want.patch = m[4], m[5], m[6]
				if m[7] != "" {
					want.pre = strings.Split(m[7], ".")
				}
			} else {
				want.major = m[1]
				if m[2] != "" {
					want.minor = m[2]
				}
				if m[3] != "" {
					want.patch = m[3]
				}
			}
			if got.major != want.major || got.minor != want.minor || got.patch != want.patch || !slices.Equal(got.pre, want.pre) {
				t.Fatalf("%q: %+v, want %+v", s, got, want)
			}
		}
		if len(prefix) == 7 {
			return
		}
		for _, c := range alphabet {
			walk(append(prefix, c))
		}
	}
	walk(nil)
}
