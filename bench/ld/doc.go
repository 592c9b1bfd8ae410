// Package ld compares flagsnap with LaunchDarkly's Go evaluator
// (github.com/launchdarkly/go-server-sdk-evaluation/v3) and, in
// BenchmarkEvalVsLD, with flagd's own Go provider.
//
// It is a module of its own so that flagsnap does not depend on
// LaunchDarkly's or flagd's code. `go test ./...` at the repository's
// root does not enter it; the README's test command names it.
//
// BenchmarkLoadVsLD loads the same flag sets into both: time, allocations
// and the heap that the loaded flags hold. The flags are
// bench/flaggen's standard mix, translated flag by flag from
// flaggen.Flags; TestSameVariants checks that both engines answer the
// same for them, so that both loads are of equal work. Run it with
//
//	cd bench/ld && go test -run '^$' -bench LoadVsLD -count 6
//
// BenchmarkEvalVsLD evaluates bench's E and O rows in three engines, row
// by row, and keeps the name it had when it compared two:
//
//   - flagsnap/<row>: flagsnap's provider at its typed methods;
//   - flagd/<row>: flagd's own Go provider
//     (github.com/open-feature/go-sdk-contrib/providers/flagd) in its
//     in-process mode on the same flags read from a file, at the same
//     typed methods with the same prebuilt contexts, so that the
//     OpenFeature SDK's client layer is left out for both;
//   - launchdarkly/<row>: LaunchDarkly's evaluator on the same flags in
//     its model and the same contexts, built once.
//
// Every row reports allocations. TestEvalVsLDSameVariants checks that
// all three serve each row's variant (in fractional rows, one of the
// row's variants). For E10 flagd answers as flagsnap does, the caller's
// default with reason DISABLED and no variant; for E11 the
// FLAG_NOT_FOUND error. Run it with
//
//	cd bench/ld && go test -run '^$' -bench EvalVsLD -count 4 -benchtime 500ms
//
// and compare the flagsnap/, flagd/ and launchdarkly/ rows of the same
// name. flagd's provider, on every evaluation of a flag with targeting,
// copies the context, adds its $flagd properties, encodes it as JSON and
// has its JSON Logic library decode it again with the rule; it also
// gives each evaluation a context with its 500ms deadline. That is part
// of what its rows time. flagd takes the array that O1 and O2 give
// fractional first ([{"var": "targetingKey"}]) for one more bucket, of
// weight 1, named by no variant; the rows' targeting key does not fall
// in it.
package ld
