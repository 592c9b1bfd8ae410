// Package ld compares flagsnap with LaunchDarkly's Go evaluator
// (github.com/launchdarkly/go-server-sdk-evaluation/v3).
//
// It is a module of its own so that flagsnap does not depend on
// LaunchDarkly's code; `go test ./...` at the repository's root does not
// enter it.
//
// BenchmarkLoadVsLD loads the same flag sets into both: time, allocations
// and the heap that the loaded flags hold. The flags are
// internal/flaggen's standard mix, translated flag by flag from
// flaggen.Flags; TestSameVariants checks that both engines answer the
// same for them, so that both loads are of equal work. Run it with
//
//	cd bench/ld && go test -run '^$' -bench LoadVsLD -count 6
//
// BenchmarkEvalVsLD evaluates bench's E and O rows in both, row by row:
// flagsnap at the provider's typed methods, LaunchDarkly's evaluator on
// the same flags in its model and the same contexts, built once.
// TestEvalVsLDSameVariants checks that both serve each row's variant.
// Run it with
//
//	cd bench/ld && go test -run '^$' -bench EvalVsLD -count 6
//
// and compare the flagsnap/ and launchdarkly/ rows of the same name.
package ld
