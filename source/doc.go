// Package source holds the sources of flag sets: anything that produces
// complete flag documents and reports when it loses or regains its origin.
// A provider runs one and compiles what it delivers.
//
//	flags := source.NewMemory(doc)
//	provider, err := flagsnap.NewProvider(flagsnap.WithSource(flags))
//	// ... once the provider is running:
//	if err := flags.Set(newDoc); err != nil {
//		// the provider refused newDoc and serves the flags it had
//	}
//
// [File] watches a flag file and survives the ways files are really
// replaced: editors that write a temporary file and rename it, Kubernetes
// ConfigMap volumes that swap a symlinked directory, deletion and
// re-creation, file systems that lose change notifications.
//
// [GRPC] follows a flagd sync server (flagd.sync.v1.FlagSyncService): every
// message of its stream is a complete flag set, lost streams are reopened
// with backoff, and the server's sync context comes along with the flags.
//
// [Memory] holds a flag document in memory: its Set returns once the
// provider serves the new flags (or with the provider's reason for refusing
// them), and Lost and Restore simulate an outage, which is what tests need.
//
// Other sources implement [Source] the same way and can be given to the
// provider with flagsnap.WithSource: a Run method that delivers complete
// documents to a [Sink], reports a lost origin, and returns when its context
// ends.
package source
