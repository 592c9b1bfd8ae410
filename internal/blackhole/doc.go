// Package blackhole is a TCP proxy for tests that can go silent: while it
// blackholes, it keeps every connection open and drops what either side
// sends, as a frozen server or a firewall that drops packets does, so that
// nothing tells the client its server is gone. Healing forwards again,
// over new connections; the ones that lived through the silence stay
// dead, as a TCP connection whose packets were dropped does.
//
// It listens on loopback only.
package blackhole
