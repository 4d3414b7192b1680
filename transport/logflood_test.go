package transport_test

import (
	"strings"
	"testing"

	"backupmon/internal/testserver"
)

// TestGarbledRequestsLogOneLine: every request the listener cannot read
// makes fasthttp tell why, and anyone who reaches a listener can send
// them as fast as it connects: within 10 seconds, one line per listener
// goes to the log, whatever their number, and each is still answered.
func TestGarbledRequestsLogOneLine(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	garbled := []string{"GET / HTTP/1.1\r\nHost x\r\n\r\n", "GET /api/v1/jobs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"}
	const n = 40
	for _, base := range []string{s.PublicURL, s.AdminURL} {
		before := len(s.Logs.String())
		for i := range n {
			if _, r := wireExchange(t, base, garbled[i%len(garbled)]); r.Status != 400 {
				t.Fatalf("a garbled request to %s was answered %d, want 400", base, r.Status)
			}
		}
		logged := s.Logs.String()[before:]
		if got := strings.Count(logged, "error when serving connection"); got != 1 {
			t.Errorf("%d garbled requests to %s logged %d lines, want 1:\n%s", n, base, got, logged)
		}
	}
}
