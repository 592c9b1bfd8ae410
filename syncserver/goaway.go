package syncserver

import (
	"encoding/binary"
	"errors"
	"net"
	"sync"
)

// HTTP/2 values of the GOAWAY a grpc-go server sends a client that pings
// more often than its keepalive enforcement policy allows (RFC 9113 §6.8,
// §7): frame type GOAWAY, error ENHANCE_YOUR_CALM, debug data
// "too_many_pings".
const (
	frameGoAway         = 0x7
	errEnhanceYourCalm  = 0xb
	tooManyPingsMessage = "too_many_pings"
)

// trackingListener remembers the connections it accepted, so that the
// server can end them as grpc-go does when a client breaks its keepalive
// policy, without the test waiting for the pings that would provoke it
// (grpc-go clients never ping more often than every 10 seconds).
type trackingListener struct {
	net.Listener
	mu    sync.Mutex
	conns map[*trackedConn]struct{}
}

func newTrackingListener(l net.Listener) *trackingListener {
	return &trackingListener{Listener: l, conns: map[*trackedConn]struct{}{}}
}

func (l *trackingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: c, l: l}
	l.mu.Lock()
	l.conns[tc] = struct{}{}
	l.mu.Unlock()
	return tc, nil
}

// goAwayTooManyPings ends every open connection and reports how many it
// ended.
func (l *trackingListener) goAwayTooManyPings() int {
	l.mu.Lock()
	conns := make([]*trackedConn, 0, len(l.conns))
	for c := range l.conns {
		conns = append(conns, c)
	}
	l.mu.Unlock()
	n := 0
	for _, c := range conns {
		if c.goAway() == nil {
			n++
		}
		_ = c.Close()
	}
	return n
}

// trackedConn serialises writes, so that a GOAWAY frame written from
// outside the gRPC server never lands inside one of the server's own
// frames: the server writes whole frames per Write on a quiet connection.
type trackedConn struct {
	net.Conn
	l       *trackingListener
	writeMu sync.Mutex
	closed  bool // under writeMu
}

func (c *trackedConn) Write(b []byte) (int, error) {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if c.closed {
		return 0, net.ErrClosed
	}
	return c.Conn.Write(b)
}

func (c *trackedConn) Close() error {
	c.writeMu.Lock()
	c.closed = true
	c.writeMu.Unlock()
	c.l.mu.Lock()
	delete(c.l.conns, c)
	c.l.mu.Unlock()
	return c.Conn.Close()
}

// goAway writes a GOAWAY frame (last stream id = the highest a client can
// have opened, so every open stream counts as processed) with
// ENHANCE_YOUR_CALM and "too_many_pings", and marks the connection closed
// for the server's writer.
func (c *trackedConn) goAway() error {
	payload := 8 + len(tooManyPingsMessage)
	frame := make([]byte, 9+payload)
	frame[0], frame[1], frame[2] = byte(payload>>16), byte(payload>>8), byte(payload)
	frame[3] = frameGoAway
	// flags (frame[4]) 0, stream id (frame[5:9]) 0: a connection frame.
	binary.BigEndian.PutUint32(frame[9:], 1<<31-1)
	binary.BigEndian.PutUint32(frame[13:], errEnhanceYourCalm)
	copy(frame[17:], tooManyPingsMessage)

	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if c.closed {
		return errors.New("syncserver: connection already closed")
	}
	_, err := c.Conn.Write(frame)
	c.closed = true
	return err
}
