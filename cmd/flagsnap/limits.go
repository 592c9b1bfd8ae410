package main

import (
	yaml "go.yaml.in/yaml/v3"
)

// What follows tells why the loader refused a document that is well formed
// but made to exhaust a reader, so that validate can say what to change:
// it reads such a document without expanding it, in time and memory that
// grow with the file.

// nestsDeeper reports whether a JSON document opens more than limit
// objects and arrays within one another anywhere, strings skipped.
func nestsDeeper(data []byte, limit int) bool {
	depth, inString, escaped := 0, false, false
	for _, c := range data {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			if depth++; depth > limit {
				return true
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return false
}

// aliasFactor bounds the growth validate puts down to aliases: when the
// decoder refuses a YAML document whose aliases, expanded, make it more
// than aliasFactor times the values written, the aliases are to blame.
const aliasFactor = 10

// aliasExpansion counts the values of a YAML document as written and as
// its aliases make them once expanded, which the YAML decoder does and
// bounds. ok is false for a document that does not parse, or an anchor
// that holds an alias of itself (which the decoder reports as such).
func aliasExpansion(data []byte) (written, expanded int64, ok bool) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return 0, 0, false
	}
	const saturated = int64(1) << 62
	sizes := map[*yaml.Node]int64{} // of the anchored nodes counted
	busy := map[*yaml.Node]bool{}   // anchored nodes being counted
	ok = true
	var expandedSize func(n *yaml.Node) int64
	expandedSize = func(n *yaml.Node) int64 {
		if n.Kind == yaml.AliasNode {
			if n.Alias == nil {
				return 1
			}
			// An anchor comes before its aliases: it is counted already,
			// unless the alias is within it.
			n = n.Alias
			if s, known := sizes[n]; known {
				return s
			}
		}
		if busy[n] {
			ok = false
			return 0
		}
		if n.Anchor != "" {
			busy[n] = true
		}
		written++
		size := int64(1)
		for _, c := range n.Content {
			size = min(size+expandedSize(c), saturated)
		}
		if n.Anchor != "" {
			delete(busy, n)
			sizes[n] = size
		}
		return size
	}
	expanded = expandedSize(&doc)
	return written, expanded, ok
}

// formatCount spells a count with its thousands separated.
func formatCount(n int64) string {
	return englishPrinter.Sprintf("%d", n)
}
