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
// registers.
func parseVersionInto(s string, v *version) bool {
	if len(s) > 0 && (s[0] == 'v' || s[0] == 'V') {
		s = s[1:]
	}
	// Most versions are plain numbers and dots: one pass reads them. The
	// parts are written one by one: a version built whole is copied in
	// wide moves that stall on the stores just made.
	v.major, v.minor, v.patch, v.pre = "0", "0", "0", nil
	count, start := 0, 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) {
			if c := s[i]; c >= '0' && c <= '9' {
				continue
			} else if c != '.' {
				return parseFullVersion(s, v)
			}
		}
		if count == 3 || !validNumber(s[start:i]) {
			return false
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
		start = i + 1
	}
	return true
}

// parseFullVersion is parseVersionInto for versions with a prerelease or
// build part (or characters that make them invalid).
func parseFullVersion(s string, v *version) bool {
	core, pre := s, ""
	hasPre, hasBuild := false, false
	if i := strings.IndexByte(core, '+'); i >= 0 {
		if !validIdents(core[i+1:], false) {
			return false
		}
		core, hasBuild = core[:i], true
	}
	if i := strings.IndexByte(core, '-'); i >= 0 {
		core, pre, hasPre = core[:i], core[i+1:], true
	}
	nums := [3]string{"0", "0", "0"}
	count, start := 0, 0
	for i := 0; i <= len(core); i++ {
		if i < len(core) && core[i] != '.' {
			continue
		}
		if count == 3 || !validNumber(core[start:i]) {
			return false
		}
		nums[count] = core[start:i]
		count++
		start = i + 1
	}
	if (hasPre || hasBuild) && count != 3 {
		return false
	}
	*v = version{major: nums[0], minor: nums[1], patch: nums[2]}
	if hasPre {
		if !validIdents(pre, true) {
			return false
		}
		v.pre = strings.Split(pre, ".")
	}
	return true
}

// validNumber is a non-empty run of digits without a leading zero.
func validNumber(s string) bool {
	if s == "" || (len(s) > 1 && s[0] == '0') {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
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
