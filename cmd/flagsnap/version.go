package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

const versionUsage = `Usage: flagsnap version

Prints the version of the command's module and the Go version it was built
with, as the binary records them. A command built from a checkout (go build,
go run, go install ./cmd/flagsnap) has no release version: it prints
"(devel)", or the pseudo-version of the commit when Go stamped one; a
command installed with go install ...@VERSION prints VERSION.
flagsnap --version is the same.

Example:
  flagsnap version
  flagsnap (devel) go1.26.8
`

// readBuildInfo is debug.ReadBuildInfo, which tests replace.
var readBuildInfo = debug.ReadBuildInfo

func (c *cmd) version(args []string) int {
	fs := c.newFlagSet(versionUsage)
	if _, status, ok := c.parseExactly(fs, args, 0, "no argument"); !ok {
		return status
	}
	fmt.Fprintf(c.stdout, "flagsnap %s %s\n", moduleVersion(), runtime.Version())
	return exitOK
}

// moduleVersion is the version of the command's module as the binary
// records it: "(devel)" for a build from a checkout, "(unknown)" when the
// binary records none.
func moduleVersion() string {
	info, ok := readBuildInfo()
	if !ok || info.Main.Version == "" {
		return "(unknown)"
	}
	return info.Main.Version
}
