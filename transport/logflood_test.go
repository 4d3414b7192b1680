package transport_test

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"backupmon/internal/testserver"
)

// TestGarbledRequestsLogOneLine: every request the listener cannot read
// makes fasthttp tell why, and anyone who reaches a listener can send
// them as fast as it connects: within 10 seconds, one line per listener
// goes to the log, whatever their number, and each is still answered.
func TestGarbledRequestsLogOneLine(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	const n = 40
	for _, l := range []struct{ name, addr string }{{"public", s.PublicAddr}, {"admin", s.AdminAddr}} {
		t.Run(l.name, func(t *testing.T) {
			before := len(s.Logs.String())
			for _, raw := range []string{"GET / HTTP/1.1\r\nHost x\r\n\r\n", "GET /api/v1/jobs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"} {
				for range n / 2 {
					c, err := net.Dial("tcp", l.addr)
					if err != nil {
						t.Fatal(err)
					}
					c.SetDeadline(time.Now().Add(5 * time.Second))
					io.WriteString(c, raw)
					answer, _ := io.ReadAll(c)
					c.Close()
					if !strings.HasPrefix(string(answer), "HTTP/1.1 400 ") {
						t.Fatalf("a garbled request was answered %.40q, want 400", answer)
					}
				}
			}
			logged := s.Logs.String()[before:]
			if got := strings.Count(logged, "error when serving connection"); got != 1 {
				t.Errorf("%d garbled requests to the %s listener logged %d lines, want 1:\n%s", n, l.name, got, logged)
			}
		})
	}
}
