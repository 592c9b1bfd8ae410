package flagsnap

// Which kind of source the options and variables choose, and which choice
// wins: an option wins over a variable, and options that choose different
// kinds of source contradict each other.

import (
	"fmt"
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
	kindURL
)

// sourceChoice is an option that chose a kind of source, kept to name both
// sides of a contradiction.
type sourceChoice struct {
	option string     // as an error shows it: WithResolver with its value
	kind   sourceKind // what it chose
	effect string     // what it asks for, in the words of an error
}

// optionName is the option's function name, without WithResolver's value.
func (sc sourceChoice) optionName() string {
	name, _, _ := strings.Cut(sc.option, "(")
	return name
}

// resolverKind is the kind of source a resolver reads from.
func resolverKind(r Resolver) sourceKind {
	switch r {
	case ResolverFile:
		return kindFile
	case ResolverInProcess, ResolverRPC:
		return kindServer
	}
	return kindNone
}

// chooseSource records that the option chose a kind of source. A later
// value of the same option replaces the earlier one, as with any option.
// What the variables chose for another kind is dropped, because the
// options win; what other options chose is kept, for settle to report.
func (c *config) chooseSource(option string, kind sourceKind, effect string) {
	choice := sourceChoice{option: option, kind: kind, effect: effect}
	same := func(other sourceChoice) bool { return other.optionName() == choice.optionName() }
	if i := slices.IndexFunc(c.sourceChoices, same); i >= 0 {
		c.sourceChoices[i] = choice
	} else {
		c.sourceChoices = append(c.sourceChoices, choice)
	}
	c.dropOtherSources(kind, true)
}

// dropOtherSources clears what chose a kind of source other than kind;
// with envOnly, only what the variables set.
func (c *config) dropOtherSources(kind sourceKind, envOnly bool) {
	if kind != kindMemory && !envOnly {
		c.flags, c.source = nil, nil
	}
	if kind != kindURL && !envOnly {
		c.URL = ""
	}
	if kind != kindFile && (c.pathFromEnv || !envOnly) {
		c.OfflineFlagSourcePath, c.pathFromEnv = "", false
	}
	if c.Resolver != "" && resolverKind(c.Resolver) != kind && (c.resolverFromEnv || !envOnly) {
		c.Resolver, c.resolverFromEnv = "", false
	}
}

// sourceOption is an option that only the sources of kinds read.
type sourceOption struct {
	option string
	kinds  []sourceKind
}

// readBy records that option was given, and that only the sources of
// kinds read it.
func (c *config) readBy(option string, kinds ...sourceKind) {
	c.sourceOptions = append(c.sourceOptions, sourceOption{option, kinds})
}

// kindNames name the kinds of source in errors.
var kindNames = map[sourceKind]string{
	kindFile:   "a flag file",
	kindServer: "a sync server",
	kindMemory: "flags in memory or a source of your own",
	kindURL:    "a URL",
}

// reportUnreadOptions reports the options given that the source settled
// on does not read: a selector with a file filters nothing, and should not
// look as if it did.
func (c *config) reportUnreadOptions() {
	if c.Resolver == ResolverRPC {
		// flagd's configuration, which NewConfig reports as flagd's
		// providers read it; NewProvider refuses the rpc resolver itself.
		return
	}
	kind := c.kindInForce()
	overrideFiles := slices.ContainsFunc(c.overrides, func(o overrideSpec) bool { return o.path != "" })
	for _, so := range c.sourceOptions {
		if slices.Contains(so.kinds, kind) || overrideFiles && slices.Contains(so.kinds, kindFile) {
			continue // an override file reads a file's options too
		}
		readers := make([]string, len(so.kinds))
		for i, k := range so.kinds {
			readers[i] = kindNames[k]
		}
		c.fail("%s does not apply to the flags' source, %s: only %s reads it; drop it", so.option, kindNames[kind], strings.Join(readers, " or "))
	}
}

// reportContradictions reports options that choose different sources, one
// pair for each two kinds of source, so that a file given with a host and
// a port is one error.
func (c *config) reportContradictions() {
	reported := map[[2]sourceKind]bool{}
	for i, a := range c.sourceChoices {
		for _, b := range c.sourceChoices[i+1:] {
			kinds := [2]sourceKind{min(a.kind, b.kind), max(a.kind, b.kind)}
			if !contradicts(a, b) || reported[kinds] {
				continue
			}
			reported[kinds] = true
			c.fail("%s and %s contradict each other: %s %s, and %s %s; give one or the other",
				a.option, b.option, a.option, a.effect, b.option, b.effect)
		}
	}
}

// contradicts tells whether two options that chose a source cannot be
// given together.
func contradicts(a, b sourceChoice) bool {
	switch {
	case a.kind == kindMemory || b.kind == kindMemory:
		// Two memory choices are WithFlags and WithSource: the same option
		// is a single choice.
		return true
	case a.kind == b.kind:
		return false
	}
	// flagd's providers read in-process (or rpc) with a flag file as the
	// file resolver (rpc stays rpc), and the conformance suite checks it.
	serverResolver := func(sc sourceChoice) bool { return sc.kind == kindServer && sc.optionName() == "WithResolver" }
	file := func(sc sourceChoice) bool { return sc.optionName() == "WithFile" }
	return !(serverResolver(a) && file(b) || serverResolver(b) && file(a))
}

// rpcRefused is the error of a configuration that runs the rpc resolver,
// which flagsnap does not: it names what chose rpc, the variable or the
// option, or that nothing did, and what to change there.
func (c *config) rpcRefused() error {
	const why = "the rpc resolver asks flagd for every evaluation, and flagsnap evaluates in-process"
	path := c.OfflineFlagSourcePath
	switch {
	case c.resolverFromEnv && path != "":
		return fmt.Errorf("%s=rpc chose the rpc resolver for the flag file %s: %s; set %s=file, or unset it, to read the file",
			EnvResolver, path, why, EnvResolver)
	case c.resolverFromEnv && c.fileReplaced != "":
		return fmt.Errorf("%s=rpc, which FromEnv applies after WithFile, replaced the flag file %s with the rpc resolver: %s; "+
			"set %s=file, or unset it, to read the file, or give FromEnv before WithFile to let WithFile win", EnvResolver, c.fileReplaced, why, EnvResolver)
	case c.resolverFromEnv:
		return fmt.Errorf("%s=rpc chose the rpc resolver: %s; set %s=in-process to follow a sync server, or %s=file with %s to read a flag file",
			EnvResolver, why, EnvResolver, EnvResolver, EnvOfflineFlagSourcePath)
	case !c.rpcByDefault && path != "":
		return fmt.Errorf("WithResolver(ResolverRPC) was given with the flag file %s: %s; drop WithResolver(ResolverRPC), or give WithResolver(ResolverFile), to read the file",
			path, why)
	case !c.rpcByDefault:
		return fmt.Errorf("WithResolver(ResolverRPC) chose the rpc resolver: %s; give WithResolver(ResolverInProcess) instead to follow a sync server, or WithFile to read a flag file", why)
	}
	for _, sc := range c.sourceChoices {
		if sc.kind == kindServer {
			return fmt.Errorf("%s names a sync server, but no resolver was chosen, and flagd's default resolver is rpc: %s; "+
				"give WithResolver(ResolverInProcess) (or %s=in-process) to follow the sync server", sc.optionName(), why, EnvResolver)
		}
	}
	return fmt.Errorf("no flag source was given, and flagd's default resolver is rpc: %s; give WithFile (or %s) to read a flag file, "+
		"or WithResolver(ResolverInProcess) (or %s=in-process) to follow a sync server", why, EnvOfflineFlagSourcePath, EnvResolver)
}
