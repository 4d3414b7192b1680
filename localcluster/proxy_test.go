package localcluster

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// echoServer answers each line it reads with the same line, until the
// test ends.
func echoServer(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	return ln.Addr().String()
}

// echo writes a line on c and returns how it went: the line read back
// within wait, or the error ("timeout" when nothing came).
func echo(c net.Conn, r *bufio.Reader, wait time.Duration) (string, error) {
	c.SetDeadline(time.Now().Add(wait))
	defer c.SetDeadline(time.Time{})
	if _, err := c.Write([]byte("ping\n")); err != nil {
		return "", err
	}
	return r.ReadString('\n')
}

// TestProxyFaults: through the proxy a line comes back; cut, the
// connection is closed at once and a new one refused; blackholed, the
// connection stays open and nothing comes back, on it or on a connection
// made meanwhile, until Heal, when both carry the lines held; delayed,
// a line takes the delay both ways.
func TestProxyFaults(t *testing.T) {
	target := echoServer(t)
	dial := func(t *testing.T, p *Proxy) (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", p.Addr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c, bufio.NewReader(c)
	}
	tests := []struct {
		name string
		run  func(t *testing.T, p *Proxy)
	}{
		{"cut closes at once", func(t *testing.T, p *Proxy) {
			c, r := dial(t, p)
			if got, err := echo(c, r, 2*time.Second); err != nil || got != "ping\n" {
				t.Fatalf("before the cut: %q %v", got, err)
			}
			p.Cut()
			if _, err := echo(c, r, 2*time.Second); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("cut: %v, want the connection closed at once", err)
			}
			c2, r2 := dial(t, p)
			if _, err := echo(c2, r2, 2*time.Second); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("a new connection while cut: %v, want it closed", err)
			}
			p.Heal()
			c3, r3 := dial(t, p)
			if got, err := echo(c3, r3, 2*time.Second); err != nil || got != "ping\n" {
				t.Fatalf("healed: %q %v", got, err)
			}
		}},
		{"blackhole holds every byte and closes nothing", func(t *testing.T, p *Proxy) {
			c, r := dial(t, p)
			if got, err := echo(c, r, 2*time.Second); err != nil || got != "ping\n" {
				t.Fatalf("before the blackhole: %q %v", got, err)
			}
			p.Blackhole()
			if got, err := echo(c, r, 500*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("blackholed: %q %v, want a timeout", got, err)
			}
			c2, r2 := dial(t, p)
			if got, err := echo(c2, r2, 500*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("a new connection while blackholed: %q %v, want a timeout", got, err)
			}
			p.Heal()
			// Each connection gets the line held, then the new one.
			for i, cr := range []struct {
				c net.Conn
				r *bufio.Reader
			}{{c, r}, {c2, r2}} {
				if got, err := echo(cr.c, cr.r, 2*time.Second); err != nil || got != "ping\n" {
					t.Fatalf("connection %d healed: %q %v", i+1, got, err)
				}
				if got, err := cr.r.ReadString('\n'); err != nil || got != "ping\n" {
					t.Fatalf("connection %d healed, second line: %q %v", i+1, got, err)
				}
			}
		}},
		{"delay holds each byte", func(t *testing.T, p *Proxy) {
			c, r := dial(t, p)
			echo(c, r, 2*time.Second)
			p.Delay(150 * time.Millisecond)
			start := time.Now()
			if got, err := echo(c, r, 2*time.Second); err != nil || got != "ping\n" {
				t.Fatalf("delayed: %q %v", got, err)
			}
			if took := time.Since(start); took < 300*time.Millisecond || took > 1500*time.Millisecond {
				t.Fatalf("a round trip took %v through a delay of 150 ms each way", took)
			}
			p.Heal()
			start = time.Now()
			echo(c, r, 2*time.Second)
			if took := time.Since(start); took > 100*time.Millisecond {
				t.Fatalf("healed: a round trip took %v", took)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewProxy(target)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			tt.run(t, p)
		})
	}
}
