// Package flagsnap is an OpenFeature provider that evaluates flagd flag
// definitions in-process, from a watched file, a flagd sync stream
// (flagd.sync.v1), an HTTP(S) URL, an object in S3, GCS or Azure Blob
// (module blob), or memory.
//
//	provider, err := flagsnap.NewProvider(flagsnap.WithFile("flags.json"))
//	if err != nil {
//		log.Fatal(err)
//	}
//	if err := openfeature.SetProviderAndWait(provider); err != nil {
//		log.Fatal(err)
//	}
//	defer openfeature.Shutdown()
//	client := openfeature.NewDefaultClient()
//	on := client.Boolean(ctx, "new-checkout", false, openfeature.NewEvaluationContext("user-1", nil))
//
// The flags come from a file ([WithFile]), a sync server such as flagd
// ([WithResolver] with [ResolverInProcess], and [WithHost]), a URL
// ([WithURL]), a document in memory ([WithFlags]) or any [source.Source]
// ([WithSource]), the blob module's object sources among them. The FLAGD_*
// environment variables configure the same as flagd's providers read them;
// options given in code win over them (see [Option] and [FromEnv]).
//
// Overrides ([WithOverrideFile], FLAGSNAP_OVERRIDE_FILE, and
// [WithOverrideSource]) layer flag documents over any source: a key an
// override defines replaces that whole flag, whatever state the source is
// in, which is how a flag is turned off while the source is down.
// [Provider.SourceStatus] names the flags each override answers for.
//
// Each flag set is compiled once (see package evaluator) and swapped in
// atomically; evaluations read the snapshot in force without locks,
// network calls or allocations. Bucketing with flagd's fractional operator
// is identical to every other flagd provider in the same
// [fractional.Version].
//
// Events follow flagd's providers: READY once flags are loaded,
// CONFIGURATION_CHANGED with the keys of the flags that changed, STALE as
// soon as the source is lost and ERROR when the grace period passes
// without it (the last flags are still served), READY and
// CONFIGURATION_CHANGED when it comes back. A flag set that cannot be
// parsed is reported with an ERROR event and the flags in force stay.
// [Provider.SourceStatus] reports the source's health, and
// [Provider.Usage] which flags the service evaluates.
//
// [OFREPHandler] serves the same flags to browsers, apps and services in
// other languages over OFREP, and [Provider.EvaluateAll] evaluates every
// flag for one context; [DebugHandler] shows them to a person.
//
// Package flagsnaptest gives tests clients whose flags come from memory.
package flagsnap
