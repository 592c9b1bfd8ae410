// Package flagsnap is an OpenFeature provider that evaluates flagd flag
// definitions in-process.
//
// The provider takes its flags from a watched file ([WithFile]) or any
// [source.Source] ([WithSource]), compiles each flag set once (see package
// evaluator) and swaps it in atomically; evaluations read the snapshot in
// force without locks or network calls. Bucketing with flagd's fractional
// operator is identical to every other flagd provider in the same
// [fractional.Version].
//
// Events follow flagd's providers: READY once flags are loaded,
// CONFIGURATION_CHANGED with the keys of the flags that changed, STALE as
// soon as the source is lost and ERROR when the grace period passes
// without it (the last flags are still served), READY and
// CONFIGURATION_CHANGED when it comes back. A flag set that cannot be
// parsed is reported with an ERROR event and the flags in force stay.
//
// [source.Source]: https://pkg.go.dev/github.com/flagsnap/flagsnap/source#Source
// [fractional.Version]: https://pkg.go.dev/github.com/flagsnap/flagsnap/fractional#Version
package flagsnap
