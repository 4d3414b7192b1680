package natstest

import (
	"net"
	"testing"
	"time"
)

// TestStartTriesOtherPorts: a port taken between its pick and the server's
// bind makes Start try again on other ports, not wait and fail.
func TestStartTriesOtherPorts(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	busy := ln.Addr().(*net.TCPAddr).Port
	picks := 0
	pickPorts = func(t testing.TB, n int) []int {
		picks++
		if picks == 1 {
			return []int{busy} // the client port, taken
		}
		return freePorts(t, n)
	}
	tryWait = 2 * time.Second
	defer func() { pickPorts, tryWait = freePorts, 20*time.Second }()
	c := Start(t, 1)
	if got := c.Servers[0].Addr().(*net.TCPAddr).Port; got == busy || picks != 4 {
		t.Fatalf("the server listens on %d after %d picks; want another port than the taken %d, on the second try", got, picks, busy)
	}
	nc := c.Connect(t)
	if _, err := nc.JetStream(); err != nil {
		t.Fatal(err)
	}
}
