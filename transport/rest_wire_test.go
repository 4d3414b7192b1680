package transport_test

// The limit headers as they go out on the wire: api.md 8.1 spells them
// X-RateLimit-*, and net/http's Header.Get would hide any other spelling.

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"backupmon/internal/testserver"
)

func TestRESTLimitHeadersSpelledAsTheContract(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	for _, c := range []struct {
		plan     string
		want     []string // header lines, the value a pattern
		wantNone []string // substrings that must not appear
	}{
		{"pro", []string{`X-RateLimit-Limit: 300`, `X-RateLimit-Remaining: 29[89]`, `X-RateLimit-Reset: \d{10}`},
			[]string{"X-Ratelimit-", "X-Quota-"}},
		{"growth", []string{`X-RateLimit-Limit: 60`, `X-RateLimit-Remaining: 5[89]`, `X-RateLimit-Reset: \d{10}`,
			`X-Quota-Limit: 10000`, `X-Quota-Remaining: 999[89]`, `X-Quota-Reset: \d{10}`},
			[]string{"X-Ratelimit-"}},
	} {
		t.Run(c.plan, func(t *testing.T) {
			f := s.Fixture(testserver.FixtureOptions{Plan: c.plan})
			for _, path := range []string{"/jobs", "/jobs?limit=0"} { // a 200 and a 400 after the limits
				raw, r := wireExchange(t, s.PublicURL, "GET /api/v1"+path+" HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+f.RestKey+"\r\nConnection: close\r\n\r\n")
				head := wireHeaderBlock(raw)
				for _, line := range c.want {
					if !regexp.MustCompile(`\r\n` + line + `\r\n`).MatchString(head) {
						t.Errorf("%s: no line %q in\n%s", path, line, head)
					}
				}
				for _, bad := range c.wantNone {
					if strings.Contains(head, bad) {
						t.Errorf("%s: %q in\n%s", path, bad, head)
					}
				}
				rsCheck(t, "GET", path, r)
			}
			s.Advance(time.Minute) // the next plan starts a new minute
		})
	}
}
