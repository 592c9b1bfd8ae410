// Package leaktest gives the library's test packages one way to run their
// tests and then fail the run if any of them left a goroutine behind: a
// watcher, a server, a stream or a provider.
package leaktest
