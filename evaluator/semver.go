package evaluator

import "github.com/flagsnap/flagsnap/internal/semver"

// versionOf reads a sem_ver operand: a version string, or a number taken as
// its decimal text (a context may carry 1.2 or 2 as numbers).
func versionOf(v value) (semver.Version, bool) {
	switch v.k {
	case kStr:
		return semver.Parse(v.str())
	case kNum:
		return semver.Parse(formatPlain(v.n))
	}
	return semver.Version{}, false
}
