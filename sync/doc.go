// Package sync holds the sources of flag sets: anything that produces
// complete flag documents and reports when it loses or regains its origin.
//
// [File] watches a flag file and survives the ways files are really
// replaced: editors that write a temporary file and rename it, Kubernetes
// ConfigMap volumes that swap a symlinked directory, deletion and
// re-creation, file systems that lose change notifications. Other sources
// implement [Source] the same way and can be given to the provider.
package sync
