package semver

import "strings"

// Version is a parsed semantic version. Numeric parts keep their digits so
// that arbitrarily long numbers compare correctly; build metadata is
// dropped because it never takes part in a comparison.
type Version struct {
	major, minor, patch string
	pre                 []string
}

// Parse accepts MAJOR[.MINOR[.PATCH]][-PRERELEASE][+BUILD] with an
// optional leading v or V. Missing minor and patch parts are zero. A
// prerelease or build part needs all three numbers, as in Semantic
// Versioning 2.0.0.
func Parse(s string) (Version, bool) {
	var v Version
	ok := ParseInto(s, &v)
	return v, ok
}

// ParseInto is Parse writing into v, which evaluation keeps
// on its stack: a Version is too large to come back from a call in
// registers. The parts are written one by one, since a Version built whole
// is copied in wide moves that stall on the stores just made.
func ParseInto(s string, v *Version) bool {
	if len(s) > 0 && (s[0] == 'v' || s[0] == 'V') {
		s = s[1:]
	}
	v.pre = nil
	end, count, ok := parseCore(s, v)
	if !ok {
		return false
	}
	if end == len(s) {
		return true // most versions: plain numbers and dots
	}
	// A prerelease or build part needs all three numbers.
	if count != 3 {
		return false
	}
	rest, build := s[end:], ""
	if i := strings.IndexByte(rest, '+'); i >= 0 {
		rest, build = rest[:i], rest[i+1:]
		if !validIdents(build, false) {
			return false
		}
	}
	if rest != "" { // "-PRERELEASE"
		if !validIdents(rest[1:], true) {
			return false
		}
		v.pre = strings.Split(rest[1:], ".")
	}
	return true
}

// parseCore reads MAJOR[.MINOR[.PATCH]] from the start of s into v, in one
// pass, up to the end of s or a '-' or '+'. Missing parts are zero. end is
// where it stopped, count how many numbers it read.
func parseCore(s string, v *Version) (end, count int, ok bool) {
	v.major, v.minor, v.patch = "0", "0", "0"
	start := 0
	for i := 0; ; i++ {
		if i < len(s) {
			if c := s[i]; c >= '0' && c <= '9' {
				continue
			} else if c != '.' && c != '-' && c != '+' {
				return 0, 0, false
			}
		}
		// Only digits are behind: the number needs one, and no leading zero.
		if count == 3 || i == start || (i-start > 1 && s[start] == '0') {
			return 0, 0, false
		}
		switch count {
		case 0:
			v.major = s[start:i]
		case 1:
			v.minor = s[start:i]
		default:
			v.patch = s[start:i]
		}
		count++
		if i == len(s) || s[i] != '.' {
			return i, count, true
		}
		start = i + 1
	}
}

// validIdents checks dot-separated identifiers of [0-9A-Za-z-]; numeric
// prerelease identifiers may not have leading zeros.
func validIdents(s string, prerelease bool) bool {
	for _, id := range strings.Split(s, ".") {
		if id == "" {
			return false
		}
		numeric := true
		for i := 0; i < len(id); i++ {
			c := id[i]
			switch {
			case c >= '0' && c <= '9':
			case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '-':
				numeric = false
			default:
				return false
			}
		}
		if prerelease && numeric && len(id) > 1 && id[0] == '0' {
			return false
		}
	}
	return true
}

// cmpNum compares two digit strings without leading zeros. They are
// short: a loop here costs less than a call to compare them.
func cmpNum(a, b string) int {
	if len(a) != len(b) {
		if len(a) < len(b) {
			return -1
		}
		return 1
	}
	for i := 0; i < len(a); i++ {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

func isNumeric(id string) bool {
	for i := 0; i < len(id); i++ {
		if id[i] < '0' || id[i] > '9' {
			return false
		}
	}
	return true
}

// compare orders versions by Semantic Versioning 2.0.0 precedence.
func (v *Version) Compare(w *Version) int {
	if c := cmpNum(v.major, w.major); c != 0 {
		return c
	}
	if c := cmpNum(v.minor, w.minor); c != 0 {
		return c
	}
	if c := cmpNum(v.patch, w.patch); c != 0 {
		return c
	}
	switch {
	case len(v.pre) == 0 && len(w.pre) == 0:
		return 0
	case len(v.pre) == 0:
		return 1
	case len(w.pre) == 0:
		return -1
	}
	for i := 0; i < len(v.pre) && i < len(w.pre); i++ {
		a, b := v.pre[i], w.pre[i]
		an, bn := isNumeric(a), isNumeric(b)
		var c int
		switch {
		case an && bn:
			c = cmpNum(a, b)
		case an:
			c = -1
		case bn:
			c = 1
		default:
			c = strings.Compare(a, b)
		}
		if c != 0 {
			return c
		}
	}
	switch {
	case len(v.pre) < len(w.pre):
		return -1
	case len(v.pre) > len(w.pre):
		return 1
	}
	return 0
}

type Op uint8

const (
	Invalid Op = iota
	Eq
	Ne
	Lt
	Le
	Gt
	Ge
	Major // ^: same major
	Minor // ~: same major and minor
)

func ParseOp(s string) Op {
	switch s {
	case "=":
		return Eq
	case "!=":
		return Ne
	case "<":
		return Lt
	case "<=":
		return Le
	case ">":
		return Gt
	case ">=":
		return Ge
	case "^":
		return Major
	case "~":
		return Minor
	}
	return Invalid
}

func (op Op) Holds(a, b *Version) bool {
	switch op {
	case Major:
		return cmpNum(a.major, b.major) == 0
	case Minor:
		return cmpNum(a.major, b.major) == 0 && cmpNum(a.minor, b.minor) == 0
	}
	c := a.Compare(b)
	switch op {
	case Eq:
		return c == 0
	case Ne:
		return c != 0
	case Lt:
		return c < 0
	case Le:
		return c <= 0
	case Gt:
		return c > 0
	case Ge:
		return c >= 0
	}
	return false
}
