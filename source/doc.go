// Package source holds the sources of flag sets: anything that produces
// complete flag documents and reports when it loses or regains its origin.
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
// provider.
package source
