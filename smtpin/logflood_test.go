package smtpin

import (
	"bufio"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"backupmon/internal/syncbuf"
)

// TestResetSessionsLogOneLine: go-smtp logs each session that ends on a
// connection error, and any client can reset its connections as fast as
// it opens them: within 10 seconds one line goes to the log, whatever
// their number.
func TestResetSessionsLogOneLine(t *testing.T) {
	var logs syncbuf.Buffer
	f := startOpts(t, fixtureOpts{config: func(c *Config) { c.Logger = slog.New(slog.NewTextHandler(&logs, nil)) }})
	const n = 30
	for range n {
		c, err := net.Dial("tcp", f.addr)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		if greeting, err := bufio.NewReader(c).ReadString('\n'); err != nil || !strings.HasPrefix(greeting, "220 ") {
			t.Fatalf("greeting %q, %v", greeting, err)
		}
		c.(*net.TCPConn).SetLinger(0) // Close resets the connection
		c.Close()
	}
	deadline := time.Now().Add(5 * time.Second)
	for strings.Count(logs.String(), "error handling") == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // the sessions' ends that come late
	if got := strings.Count(logs.String(), "error handling"); got != 1 {
		t.Errorf("%d reset sessions logged %d lines, want 1:\n%s", n, got, logs.String())
	}
}
