// Package flagdtest runs the flagd daemon for the tests that compare
// flagsnap with it, on free loopback ports, and the other programs those
// tests run beside it, each until its test ends. Only tests use it.
package flagdtest
