package flagsnap

// Which kind of source the options and variables choose, and which choice
// wins: an option wins over a variable, and options that choose different
// kinds of source contradict each other.

import (
	"slices"
	"strings"
)

// sourceKind is where the flags come from, as far as the options and
// variables have chosen.
type sourceKind uint8

const (
	kindNone sourceKind = iota
	kindFile
	kindServer
	kindMemory
)

// pick is an option that chose a kind of source: its name, as an error
// shows it (WithResolver with its value), and what it asks for, in the
// words of an error.
type pick struct {
	option string
	kind   sourceKind
	does   string
}

// name is the option's function name, without WithResolver's value.
func (p pick) name() string {
	name, _, _ := strings.Cut(p.option, "(")
	return name
}

func resolverKind(r Resolver) sourceKind {
	switch r {
	case ResolverFile:
		return kindFile
	case ResolverInProcess, ResolverRPC:
		return kindServer
	}
	return kindNone
}

// choose records that the option chose a kind of source. A later value
// of the same option replaces the earlier one, as with any option. What
// the variables chose for another kind is dropped, because the options
// win; what other options chose is kept, for resolve to report.
func (c *config) choose(option string, kind sourceKind, does string) {
	p := pick{option: option, kind: kind, does: does}
	if i := slices.IndexFunc(c.picks, func(q pick) bool { return q.name() == p.name() }); i >= 0 {
		c.picks[i] = p
	} else {
		c.picks = append(c.picks, p)
	}
	c.drop(kind, true)
}

// drop clears what chose a kind of source other than kind; with envOnly,
// only what the variables set.
func (c *config) drop(kind sourceKind, envOnly bool) {
	if kind != kindMemory && !envOnly {
		c.flags, c.source = nil, nil
	}
	if kind != kindFile && (c.pathFromEnv || !envOnly) {
		c.OfflineFlagSourcePath, c.pathFromEnv = "", false
	}
	if c.Resolver != "" && resolverKind(c.Resolver) != kind && (c.resolverFromEnv || !envOnly) {
		c.Resolver, c.resolverFromEnv = "", false
	}
}

// contradictions reports options that choose different sources, one
// pair for each two kinds of source, so that a file given with a host and
// a port is one error.
func (c *config) contradictions() {
	reported := map[[2]sourceKind]bool{}
	for i, a := range c.picks {
		for _, b := range c.picks[i+1:] {
			kinds := [2]sourceKind{min(a.kind, b.kind), max(a.kind, b.kind)}
			if !contradict(a, b) || reported[kinds] {
				continue
			}
			reported[kinds] = true
			c.fail("%s and %s contradict each other: %s %s, and %s %s; give one or the other",
				a.option, b.option, a.option, a.does, b.option, b.does)
		}
	}
}

func contradict(a, b pick) bool {
	switch {
	case a.kind == kindMemory || b.kind == kindMemory:
		// Two memory picks are WithFlags and WithSource: the same option
		// is a single pick.
		return true
	case a.kind == b.kind:
		return false
	}
	// flagd's providers read in-process (or rpc) with a flag file as the
	// file resolver (rpc stays rpc), and the conformance suite checks it.
	serverResolver := func(p pick) bool { return p.kind == kindServer && p.name() == "WithResolver" }
	file := func(p pick) bool { return p.name() == "WithFile" }
	return !(serverResolver(a) && file(b) || serverResolver(b) && file(a))
}
