// Package otelflagsnap reports a flagsnap provider's evaluations and the
// health of its flag source as OpenTelemetry metrics:
//
//	unregister, err := otelflagsnap.Register(provider) // the global meter provider
//	defer unregister()
//
// Every instrument is observable. When a reader collects, one callback
// reads provider.Usage() and provider.SourceStatus() and reports what they
// say; an evaluation does no more work than without this package. The
// instruments belong to the meter named
// "github.com/flagsnap/flagsnap/otelflagsnap".
//
// Every series carries two attributes that say whose it is:
//
//   - feature_flag.provider.name = "flagsnap", the provider's
//     implementation, as OpenTelemetry's semantic conventions for feature
//     flags have it: the same for every flagsnap provider.
//   - flagsnap.provider.name, the name of this provider, which tells the
//     series of two providers apart: the name given with WithProviderName,
//     by default the provider's origin, provider.SourceStatus().Source (a
//     file path, a sync server's address, a URL without its password,
//     "memory" for flags given with flagsnap.WithFlags or a source.Memory).
//     An empty name is an error.
//
// Two providers reported through one meter provider need two names:
// Register refuses a name already registered with the same meter provider
// (an SDK's, or the global one) until its unregister is called. Two
// providers of flags in memory, both "memory" by default, need
// WithProviderName.
//
// Evaluations, from provider.Usage(), with the attribute names of
// OpenTelemetry's semantic conventions for feature flags:
//
//   - feature_flag.evaluations, a counter in {evaluation}: one series per
//     flag key (feature_flag.key) and variant served
//     (feature_flag.result.variant); the failed evaluations in series of
//     their own with error.type, the OpenFeature error code in lower case
//     (parse_error, type_mismatch, general) and no variant; the evaluations
//     that served no variant without an error (a disabled flag, a rule that
//     chose none) in a series with neither. A flag's series add up to its
//     FlagUsage.Evaluations. A flag in force that was never evaluated has
//     that last series alone, at 0.
//   - feature_flag.missing_evaluations, a counter in {evaluation}: the
//     evaluations of keys that the flags in force do not define, by key
//     (feature_flag.key).
//   - feature_flag.bulk_evaluations, a counter in {evaluation}: the flags'
//     evaluations by bulk evaluations (provider.EvaluateAll, OFREP's bulk
//     endpoint), which feature_flag.evaluations leaves out, by key
//     (feature_flag.key); FlagUsage.Bulk. Only flags read that way have a
//     series: a flag that code never asks for but a front-end reads shows
//     here.
//
// Only the 1,000 most evaluated flags (WithFlagLimit) have series of their
// own; the others are summed under feature_flag.key = "_other", with
// error.type for their failures and no variant, so that a set of 100,000
// flags does not make 100,000 series. The limit applies to the missing
// keys and to the bulk evaluations too. A flag that enters or leaves the
// most evaluated takes its counts out of "_other" or into it, and a
// counter that goes down reads as a reset, as it does after
// provider.ResetUsage() or when an update removes a flag. With
// flagsnap.WithoutUsage() nothing is counted and the three instruments
// report nothing.
//
// The flag source, from provider.SourceStatus():
//
//   - flagsnap.source.state, a gauge in {state}: a series per state (attribute
//     state: connecting, serving, stale, error, fatal, stopped), 1 for the
//     current one and 0 for the others.
//   - flagsnap.source.flags, a gauge in {flag}: the flags in force.
//   - flagsnap.source.applied_time, a gauge in s: when the flags in force
//     were put in force, in Unix seconds; absent while no flags are in
//     force.
//   - flagsnap.source.flag_sets, a counter in {flag_set}: the flag sets by
//     result (attribute result): received from the source, applied,
//     rejected, and unchanged (polls that found the flags in force).
//   - flagsnap.source.reconnects, a counter in {reconnect}: the times the
//     source came back after a loss.
//
// The Prometheus exporter of OpenTelemetry names them with underscores and
// suffixes: feature_flag_evaluations_total, flagsnap_source_state,
// flagsnap_source_applied_time_seconds, and so on, with the labels
// feature_flag_provider_name and flagsnap_provider_name (docs/metrics.md;
// the program in the example directory serves them for Prometheus).
package otelflagsnap
