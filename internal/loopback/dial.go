// Package loopback connects tests to a listener from chosen loopback
// addresses (all of 127.0.0.0/8 is loopback on Linux), so that per-address
// limits can be tried from one machine.
package loopback

import (
	"bufio"
	"net"
	"testing"
	"time"
)

// Conn is a test's connection from a chosen loopback address, with a
// reader of its answers.
type Conn struct {
	net.Conn
	R *bufio.Reader
}

// Dial connects to addr from the loopback address src, closes the
// connection when the test ends, and bounds every read and write on it by
// deadline from now. It fails the test when it cannot connect.
func Dial(t testing.TB, src, addr string, deadline time.Duration) *Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial %s from %s: %v", addr, src, err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(deadline))
	return &Conn{Conn: c, R: bufio.NewReader(c)}
}
