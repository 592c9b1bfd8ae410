//go:build !race

package syncserver

const raceEnabled = false
