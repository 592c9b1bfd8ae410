// Command flagsnap checks, explains, simulates and serves flagd flag files
// with the same packages the flagsnap provider evaluates them with.
//
//	flagsnap validate FILE...              report every problem with file, line and column
//	flagsnap eval FILE FLAG [--explain]    resolve one flag for a context, and say why
//	flagsnap simulate FILE FLAG            the variant shares of many synthetic users
//	flagsnap serve FILE                    serve a watched file over flagd.sync.v1 (and HTTP, OFREP)
//	flagsnap usage FILE USAGE_JSON         the flags a service's usage snapshot shows stale
//	flagsnap version                       the command's version and the Go version it was built with
//
// Install it from a checkout of the repository with
//
//	go install ./cmd/flagsnap
//
// or run it with go run ./cmd/flagsnap. It is a module of its own, built
// with the library beside it. Every command
// explains itself with --help. Exit status 0 means success, 1 a negative
// answer (an invalid file, a resolution that failed), 2 input that could
// not be used (a missing file, an unknown flag, a bad option), and 130 an
// interrupted simulation.
package main
