//go:build race

package syncserver

// raceEnabled tells tests that every memory access costs several times
// more, so that they can scale down what they push through.
const raceEnabled = true
