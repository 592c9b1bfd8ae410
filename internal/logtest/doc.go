// Package logtest gives the library's tests one place to collect log output
// that the provider and its sources write from their own goroutines, so a
// test can read it while they still run.
package logtest
