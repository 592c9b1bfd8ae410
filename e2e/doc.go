// Package e2e is flagsnap's conformance suite: the provider-level scenarios
// that every flagd provider runs (the Gherkin features of the
// open-feature/flagd-testbed project), executed with godog against the
// public API only — an OpenFeature client in front of a provider built from
// flagsnap's options.
//
// The suite plays the part of flagd-testbed's control program itself. It
// merges the testbed's flag files into the flag set a flagd server would
// serve, serves it with a real gRPC sync server in the test process
// (package syncserver) or writes it to a watched file, breaks and restores
// the connection, and changes a flag, as the scenarios ask.
//
// The suite runs six times: in in-process (gRPC) mode, with the scenarios
// tagged @in-process, and in file mode, with those tagged @file, each with
// the fractional bucketing versions v2, v3 and v1. Scenarios that only
// concern flagd's remote RPC resolver, or its evaluation cache (@caching),
// are not selected. The test
// log ends with a table of the scenarios passed, failed and skipped in each
// configuration and the tag expression that selected them.
//
// Run it with
//
//	go test ./e2e/...
//	go test -race -v -run 'TestConformance/in-process/v2' ./e2e/
//
// The scenarios and flag files are read at test time from the directory
// named by FLAGD_TESTBED_DIR (a relative path is taken from the module
// root), a checkout of https://github.com/open-feature/flagd-testbed;
// without the variable, from ../shared/flagd-testbed relative to the module
// root. When neither exists the suite is skipped, and the skip says where
// it looked and what to set (go test shows a passing package's skips with
// -v; .ci/run says it in its own words).
//
// With FLAGD_BIN naming a flagd v0.16 binary, the daemon tests run flagd
// itself on loopback ports and compare a provider following its sync
// stream with a provider reading the same file and with flagd's own OFREP
// answers, and check that flagd's orderly stream ends (its stream deadline,
// GOAWAY too_many_pings) cause no provider events. Without it they skip.
package e2e
