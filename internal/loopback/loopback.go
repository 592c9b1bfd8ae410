// Package loopback finds loopback ports for the tests that run servers of
// their own choosing (the flagd daemon), which must be told a port rather
// than pick one.
package loopback

import (
	"net"
	"testing"
)

// FreePorts finds n distinct loopback TCP ports that nobody listens on.
// They are held open together while they are found, so that none is found
// twice, and closed before FreePorts returns.
func FreePorts(tb testing.TB, n int) []int {
	tb.Helper()
	ports := make([]int, n)
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		ls = append(ls, l)
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports
}
