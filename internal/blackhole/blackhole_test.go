package blackhole

import (
	"bufio"
	"net"
	"os"
	"testing"
	"time"

	"github.com/flagsnap/flagsnap/internal/leaktest"
)

func TestMain(m *testing.M) { os.Exit(leaktest.Run(m)) }

// echo serves lines back until the test ends.
func echo(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	conns := make(chan net.Conn, 16)
	go func() {
		defer close(done)
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			conns <- c
			go func() {
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if _, err := c.Write([]byte(line)); err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		lis.Close()
		<-done
		close(conns)
		for c := range conns {
			c.Close()
		}
	})
	return lis.Addr().String()
}

// roundTrip sends a line and reports whether it came back within wait.
func roundTrip(t *testing.T, c net.Conn, wait time.Duration) bool {
	t.Helper()
	if _, err := c.Write([]byte("ping\n")); err != nil {
		return false
	}
	_ = c.SetReadDeadline(time.Now().Add(wait))
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && line == "ping\n"
}

func TestBlackholeAndHeal(t *testing.T) {
	p, err := New(echo(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	dial := func() net.Conn {
		c, err := net.Dial("tcp", p.Addr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	before := dial()
	if !roundTrip(t, before, 5*time.Second) {
		t.Fatal("no echo through a healthy proxy")
	}
	p.Blackhole()
	if roundTrip(t, before, 200*time.Millisecond) {
		t.Error("an open connection still echoes while blackholed")
	}
	during := dial() // accepted, then silent
	if roundTrip(t, during, 200*time.Millisecond) {
		t.Error("a new connection echoes while blackholed")
	}
	p.Heal()
	if !roundTrip(t, dial(), 5*time.Second) {
		t.Error("no echo over a new connection after healing")
	}
	if roundTrip(t, before, 200*time.Millisecond) {
		t.Error("a connection that lived through the silence came back")
	}
}
