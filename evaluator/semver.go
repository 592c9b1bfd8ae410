package evaluator

import "strings"

// version is a parsed semantic version. Numeric parts keep their digits so
// that arbitrarily long numbers compare correctly; build metadata is
// dropped because it never takes part in a comparison.
type version struct {
	major, minor, patch string
	pre                 []string
}

// parseVersion accepts MAJOR[.MINOR[.PATCH]][-PRERELEASE][+BUILD] with an
// optional leading v or V. Missing minor and patch parts are zero. A
// prerelease or build part needs all three numbers, as in Semantic
// Versioning 2.0.0.
func parseVersion(s string) (version, bool) {
	var v version
	ok := parseVersionInto(s, &v)
	return v, ok
}

// parseVersionInto is parseVersion writing into v, which evaluation keeps
// on its stack: a version is too large to come back from a call in
// registers. The parts are written one by one, since a version built whole
// is copied in wide moves that stall on the stores just made.
func parseVersionInto(s string, v *version) bool {
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
func parseCore(s string, v *version) (end, count int, ok bool) {
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
func (v *version) compare(w *version) int {
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

type semverOp uint8

const (
	svInvalid semverOp = iota
	svEq
	svNe
	svLt
	svLe
	svGt
	svGe
	svMajor // ^: same major
	svMinor // ~: same major and minor
)

func parseSemverOp(s string) semverOp {
	switch s {
	case "=":
		return svEq
	case "!=":
		return svNe
	case "<":
		return svLt
	case "<=":
		return svLe
	case ">":
		return svGt
	case ">=":
		return svGe
	case "^":
		return svMajor
	case "~":
		return svMinor
	}
	return svInvalid
}

func (op semverOp) holds(a, b *version) bool {
	switch op {
	case svMajor:
		return cmpNum(a.major, b.major) == 0
	case svMinor:
		return cmpNum(a.major, b.major) == 0 && cmpNum(a.minor, b.minor) == 0
	}
	c := a.compare(b)
	switch op {
	case svEq:
		return c == 0
	case svNe:
		return c != 0
	case svLt:
		return c < 0
	case svLe:
		return c <= 0
	case svGt:
		return c > 0
	case svGe:
		return c >= 0
	}
	return false
}

// versionOf reads a sem_ver operand: a version string, or a number taken as
// its decimal text (a context may carry 1.2 or 2 as numbers).
func versionOf(v value) (version, bool) {
	switch v.k {
	case kStr:
		return parseVersion(v.str())
	case kNum:
		return parseVersion(formatPlain(v.n))
	}
	return version{}, false
}
