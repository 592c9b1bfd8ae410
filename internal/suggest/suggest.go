// Package suggest finds the name that a misspelt one most likely meant,
// for the "did you mean" of messages: flagsnap validate's fixes, and the
// errors of an unknown operator or a missing flag at evaluation.
package suggest

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// The bounds past which no suggestion is made. Comparing two names takes
// time that grows with the product of their lengths, and every candidate
// is compared: a long name or a long list costs more than a hint is worth.
const (
	MaxNameLen    = 64
	MaxCandidates = 1024
)

// Nearest is the candidate that name most likely meant: the same but for
// case and separators ("startsWith", "starts-with" for "starts_with"), or
// an edit away for every four letters (a typo, not another word: "nope" is
// not "none"); "" when none is that close, or two are equally close.
func Nearest(name string, candidates []string) string {
	var m matcher
	m.name = appendNormal(nil, name)
	if len(m.name) > MaxNameLen || len(candidates) > MaxCandidates {
		return ""
	}
	n := len(m.name)
	best, bestDist, ties := "", n, 0
	for _, c := range candidates {
		m.cand = appendNormal(m.cand[:0], c)
		if diff := max(len(m.cand), n) - min(len(m.cand), n); diff > 0 && 4*diff >= n {
			continue // at least diff edits away: too far to count
		}
		d := m.distance()
		switch {
		case d < bestDist:
			best, bestDist, ties = c, d, 0
		case d == bestDist:
			ties++
		}
	}
	if best == "" || ties > 0 || bestDist > 0 && 4*bestDist >= n {
		return ""
	}
	return best
}

// Hint is `did you mean "NAME"?` for the candidate Nearest finds, or "".
func Hint(name string, candidates []string) string {
	if near := Nearest(name, candidates); near != "" {
		return "did you mean " + strconv.Quote(near) + "?"
	}
	return ""
}

// appendNormal appends s in the form names are compared in: lower case,
// without the separators '_', '-' and ' '.
func appendNormal(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			// Rare in names; strings.ToLower knows the rest of Unicode.
			return appendNormalASCII(buf, strings.ToLower(s))
		}
	}
	return appendNormalASCII(buf, s)
}

func appendNormalASCII(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '_' || c == '-' || c == ' ':
		case 'A' <= c && c <= 'Z':
			buf = append(buf, c+'a'-'A')
		default:
			buf = append(buf, c)
		}
	}
	return buf
}

// matcher compares one name with candidates, with the rows of the
// distance table kept from one candidate to the next.
type matcher struct {
	name, cand       []byte
	prev2, prev, cur []int
}

// distance counts the insertions, deletions, substitutions and
// transpositions of adjacent bytes that turn m.name into m.cand.
func (m *matcher) distance() int {
	a, b := m.name, m.cand
	m.prev2, m.prev, m.cur = resize(m.prev2, len(b)+1), resize(m.prev, len(b)+1), resize(m.cur, len(b)+1)
	prev2, prev, cur := m.prev2, m.prev, m.cur
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// resize is s with length n, reusing its array when it is large enough.
func resize(s []int, n int) []int {
	if cap(s) < n {
		return make([]int, n)
	}
	return s[:n]
}
