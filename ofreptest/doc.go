// Package ofreptest checks flagsnap's OFREP server (the OpenFeature Remote
// Evaluation Protocol) against the two programs it has to agree with:
//
//   - OpenFeature's Go OFREP provider
//     (github.com/open-feature/go-sdk-contrib/providers/ofrep), the client
//     a Go service would point at flagsnap.OFREPHandler or at
//     `flagsnap serve --http`: for every flag, context and typed method,
//     its answer must be the answer of an in-process flagsnap provider on
//     the same flags, but where the protocol or that provider cannot carry
//     something, each such case written down with the reason;
//   - the flagd daemon's own OFREP service (FLAGD_BIN), on the same flag
//     files: the raw answers, single and bulk, must be the same but for the
//     deliberate differences listed in docs/targeting.md.
//
// The flags are flagd's conformance data (flagd-testbed, found through
// FLAGD_TESTBED_DIR or beside the repository) and the files in testdata/.
//
// It is a module of its own so that the OFREP provider and what it brings
// never become dependencies of the library: the library's go.mod lists what
// a program that imports flagsnap must download, and that must not grow for
// tests. The package holds tests only.
package ofreptest
