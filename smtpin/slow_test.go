package smtpin

import (
	"bufio"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"
)

// A client slower than the timeout is disconnected: one that connects and
// says nothing, and one that stops in the middle of a command, are told 421
// (go-smtp first answers the part of the command read when the time ran
// out); one that sends a command a byte at a time (each byte within the
// timeout, the line far beyond it) has each piece read as a bad command
// until too many errors end the session, and its command never succeeds.
// Meanwhile the listener goes on greeting others.
func TestSlowClientsAreDisconnected(t *testing.T) {
	const timeout = 300 * time.Millisecond
	const idle = "421 4.4.2 Idle timeout, bye bye\r\n"
	srv := New(nil, nil, Config{Domain: "ingest.example", Timeout: timeout, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.srv.Close() })
	for _, tc := range []struct {
		name string
		send func(c net.Conn) // after the greeting
		last string           // the last answer before the close
	}{
		{"silent", func(c net.Conn) {}, idle},
		{"stops mid-command", func(c net.Conn) { io.WriteString(c, "EHLO cli") }, idle},
		{"a byte at a time", func(c net.Conn) {
			for _, b := range []byte("EHLO client.example\r\n") {
				if _, err := c.Write([]byte{b}); err != nil {
					return
				}
				time.Sleep(timeout / 5)
			}
		}, "500 5.5.1 Too many errors. Quiting now\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// From before the dial: the server's clock starts when it
			// accepts and greets, before the greeting is read here (a
			// start taken after it saw the close 0.3 ms early once).
			start := time.Now()
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			r := bufio.NewReader(c)
			if greet, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(greet, "220 ") {
				t.Fatalf("greeting %q %v", greet, err)
			}
			go tc.send(c)
			c.SetReadDeadline(time.Now().Add(10 * timeout))
			var rest []byte
			for {
				line, err := r.ReadString('\n')
				rest = append(rest, line...)
				if err != nil {
					var ne net.Error
					if errors.As(err, &ne) && ne.Timeout() {
						t.Fatalf("still connected after %v; read %q", time.Since(start), rest)
					}
					break // closed by the server
				}
			}
			if !strings.HasSuffix(string(rest), tc.last) || tc.name == "silent" && string(rest) != idle || tc.name == "a byte at a time" && strings.Contains(string(rest), "250") {
				t.Fatalf("answers before the close: %q, want the last to be %q", rest, tc.last)
			}
			if d := time.Since(start); d < timeout || d > 5*timeout {
				t.Errorf("disconnected after %v, want about %v", d, timeout)
			}
			// Others are still served.
			o, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			if greet, err := bufio.NewReader(o).ReadString('\n'); err != nil || !strings.HasPrefix(greet, "220 ") {
				t.Errorf("another client's greeting %q %v", greet, err)
			}
		})
	}
}
