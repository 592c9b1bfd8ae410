// Package ld compares loading flagsnap's benchmark flag sets with loading
// the same flags into LaunchDarkly's Go evaluator
// (github.com/launchdarkly/go-server-sdk-evaluation/v3): time, allocations
// and the heap that the loaded flags hold.
//
// It is a module of its own so that flagsnap does not depend on
// LaunchDarkly's code; `go test ./...` at the repository's root does not
// enter it. Run it with
//
//	cd bench/ld && go test -run '^$' -bench . -count 6
//
// The flags are internal/flaggen's standard mix, translated flag by flag
// from flaggen.Flags; TestSameVariants checks that both engines answer
// the same for them, so that both loads are of equal work.
package ld
