package blackhole

import (
	"errors"
	"io"
	"net"
	"sync"
)

// Proxy forwards TCP connections from its own loopback address to a
// target, until Blackhole.
type Proxy struct {
	lis    net.Listener
	target string

	mu     sync.Mutex
	silent bool
	conns  map[*link]struct{}
	closed bool
	wg     sync.WaitGroup
}

// link is one proxied connection. A link that lived through a silence
// never forwards again: the bytes dropped in between would leave its two
// ends out of step.
type link struct {
	client, server net.Conn
	dead           bool
}

// New starts a proxy to target (host:port) on a free loopback port.
func New(target string) (*Proxy, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{lis: lis, target: target, conns: map[*link]struct{}{}}
	p.wg.Add(1)
	go p.acceptLoop()
	return p, nil
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.lis.Addr().String() }

// Port is the proxy's TCP port.
func (p *Proxy) Port() int { return p.lis.Addr().(*net.TCPAddr).Port }

// Blackhole makes every connection, open or new, silent: nothing is
// forwarded and nothing is closed.
func (p *Proxy) Blackhole() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.silent = true
	for l := range p.conns {
		l.dead = true
	}
}

// Heal forwards again, for connections made from now on.
func (p *Proxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.silent = false
}

// Close stops the proxy and closes every connection.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	for l := range p.conns {
		l.client.Close()
		l.server.Close()
	}
	p.mu.Unlock()
	p.lis.Close()
	p.wg.Wait()
}

// acceptLoop hands every accepted connection to forwardConn until the
// listener closes.
func (p *Proxy) acceptLoop() {
	defer p.wg.Done()
	for {
		c, err := p.lis.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go p.forwardConn(c)
	}
}

// forwardConn dials the target for client and forwards between the two
// until both directions have ended.
func (p *Proxy) forwardConn(client net.Conn) {
	defer p.wg.Done()
	l := &link{client: client}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		client.Close()
		return
	}
	// A connection accepted while silent is held open and never
	// forwarded, as a SYN answered by a middlebox that drops the rest.
	l.dead = p.silent
	p.conns[l] = struct{}{}
	p.mu.Unlock()

	server, err := net.Dial("tcp", p.target)
	if err != nil {
		p.untrack(l)
		client.Close()
		return
	}
	p.mu.Lock()
	l.server = server
	closed := p.closed
	p.mu.Unlock()
	if closed {
		client.Close()
		server.Close()
		return
	}
	done := make(chan struct{}, 2)
	go p.copyWhileAlive(l, server, client, done)
	go p.copyWhileAlive(l, client, server, done)
	<-done
	<-done
	p.untrack(l)
}

// untrack removes a link from the proxy's set once its forwarding ended.
func (p *Proxy) untrack(l *link) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, l)
}

// copyWhileAlive copies from src to dst while the link is alive and
// swallows what arrives after: the sender sees its writes succeed, the receiver sees
// nothing. It returns when src fails, which Close causes.
func (p *Proxy) copyWhileAlive(l *link, dst, src net.Conn, done chan<- struct{}) {
	defer func() { done <- struct{}{} }()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			dead := l.dead
			p.mu.Unlock()
			if !dead {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					dead = true
				}
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) || l.isDead(p) {
				// A silent link does not pass a close on either.
				return
			}
			// An orderly close by one end reaches the other.
			if tc, ok := dst.(*net.TCPConn); ok {
				_ = tc.CloseWrite()
			}
			return
		}
	}
}

func (l *link) isDead(p *Proxy) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return l.dead
}
