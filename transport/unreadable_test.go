package transport_test

// Requests the listener cannot read (docs/decisions.md "Body sizes",
// "Requests the listener cannot read"): answered before routing, in the
// Report API's shape on its path and in the REST shape (code
// INVALID_REQUEST) elsewhere, each with X-Request-Id, and every answer
// described by the OpenAPI document. Sent with a raw client, since net/http
// sends neither a body that stops nor a chunked body cut short.

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"backupmon/internal/testserver"
)

// unreadableTimeout is the test servers' read timeout: short, so that a
// slow body is answered within the test.
const unreadableTimeout = time.Second

// wantUnreadable checks a listener's answer: status, exact body in the
// route's shape, X-Request-Id (and requestId) and the OpenAPI document.
func wantUnreadable(t *testing.T, what string, r testserver.Response, report bool, status int, msg string, method, path string) {
	t.Helper()
	id := r.Header.Get("X-Request-Id")
	want := fmt.Sprintf(`{"error":{"code":"INVALID_REQUEST","message":%q,"requestId":%q}}`, msg, id)
	if report {
		want = rpErr(msg)
	}
	if r.Status != status || string(r.Body) != want {
		t.Errorf("%s:\n got %d %s\nwant %d %s", what, r.Status, r.Body, status, want)
	}
	rpCheckHeaders(t, what, r)
	for _, h := range append(rsLimitHeaders, "Retry-After") {
		if v := r.Header.Get(h); v != "" {
			t.Errorf("%s: %s %q on an answer given before routing", what, h, v)
		}
	}
	rsValidate(t, method, path, r)
}

func TestUnreadableRequests(t *testing.T) {
	s := testserver.Start(t, testserver.Options{ReadTimeout: unreadableTimeout})
	f := s.Fixture(testserver.FixtureOptions{})
	chunk := "10000\r\n" + strings.Repeat("x", 1<<16) + "\r\n" // 64 KiB
	for _, target := range []struct {
		name   string
		report bool
		method string
		path   string // below /api/v1
		header string
	}{
		{"Report API", true, "POST", "/jobs/" + f.Job + "/report", "Authorization: Bearer " + f.ReportKey + "\r\nContent-Type: application/json\r\n"},
		{"REST API", false, "GET", "/jobs", "Authorization: Bearer " + f.RestKey + "\r\n"},
	} {
		head := target.method + " /api/v1" + target.path + " HTTP/1.1\r\nHost: backupmon\r\nIdempotency-Key: k\r\n" + target.header
		for _, c := range []struct {
			name   string
			send   []string // written in turn, then the client waits for the answer
			status int
			msg    string
		}{
			{"Content-Length over 1 MiB", []string{head + "Content-Length: 1048577\r\n\r\n"}, 413, "Request body too large"},
			{"Content-Length of 1 GiB", []string{head + "Content-Length: 1073741824\r\n\r\n{"}, 413, "Request body too large"},
			// 16 chunks of 64 KiB are 1 MiB, read; the 17th's size line
			// takes it over.
			{"chunked over 1 MiB", append(append([]string{head + "Transfer-Encoding: chunked\r\n\r\n"},
				strings.Split(strings.Repeat(chunk+"|", 16), "|")[:16]...), "10000\r\n"), 413, "Request body too large"},
			{"one chunk over 1 MiB", []string{head + "Transfer-Encoding: chunked\r\n\r\n100001\r\n"}, 413, "Request body too large"},
			{"slow body", []string{head + "Content-Length: 100\r\n\r\n{\"status\":"}, 408, "Request timeout"},
			{"slow chunked body", []string{head + "Transfer-Encoding: chunked\r\n\r\n5\r\n{\"sta\r\n"}, 408, "Request timeout"},
			{"broken chunked body", []string{head + "Transfer-Encoding: chunked\r\n\r\nzz\r\n"}, 400, "Malformed HTTP request"},
		} {
			t.Run(target.name+"/"+c.name, func(t *testing.T) {
				w := wireDial(t, s.PublicURL)
				start := time.Now()
				for _, part := range c.send {
					if err := w.write([]byte(part)); err != nil {
						t.Fatalf("send: %v", err)
					}
				}
				_, r := w.read()
				wantUnreadable(t, c.name, r, target.report, c.status, c.msg, target.method, target.path)
				if took := time.Since(start); c.status == 408 && (took < unreadableTimeout-100*time.Millisecond || took > 5*unreadableTimeout) {
					t.Errorf("408 after %v, read timeout %v", took, unreadableTimeout)
				}
			})
		}
	}
	// The listener's refusals recorded nothing, and the server still
	// serves both APIs on new connections.
	if h := rpHistory(s, f.WS, f.Job); len(h) != 0 {
		t.Errorf("%d results recorded, want none", len(h))
	}
	rpWant(t, "a report after them", s.Report(f.Job, f.ReportKey, "k", `{"status":"ok"}`), 200, rpOK("ok", "", false, false))
	rsList(t, "a list after them", rsGet(s, f.RestKey, "/jobs"))
}

// A request line or header over 16 KiB is refused before its path is
// known: 431 in the REST shape, whatever the path (api.md 7.1 has no code
// for it: INVALID_REQUEST, docs/decisions.md). Malformed request lines
// answer 400 the same way.
func TestUnreadableHeaders(t *testing.T) {
	s := testserver.Start(t, testserver.Options{ReadTimeout: unreadableTimeout})
	f := s.Fixture(testserver.FixtureOptions{})
	long := strings.Repeat("a", 17000)
	for _, c := range []struct {
		name, req    string
		method, path string // for the document
		status       int
		msg          string
	}{
		{"search of 17,000 characters", "GET /api/v1/jobs?search=" + long + " HTTP/1.1\r\nHost: b\r\nAuthorization: Bearer " + f.RestKey + "\r\n\r\n",
			"GET", "/jobs", 431, "Request header too large"},
		{"a 17 KB header", "GET /api/v1/jobs HTTP/1.1\r\nHost: b\r\nAuthorization: Bearer " + f.RestKey + "\r\nX-Filler: " + long + "\r\n\r\n",
			"GET", "/jobs", 431, "Request header too large"},
		{"a 17 KB header on the Report API's path", "POST /api/v1/jobs/" + f.Job + "/report HTTP/1.1\r\nHost: b\r\nAuthorization: Bearer " + f.ReportKey +
			"\r\nX-Filler: " + long + "\r\nContent-Length: 15\r\n\r\n{\"status\":\"ok\"}", "POST", "/jobs/" + f.Job + "/report", 431, "Request header too large"},
		{"a malformed header line", "GET /api/v1/jobs HTTP/1.1\r\nHost: b\r\nno colon here\r\n\r\n", "GET", "/jobs", 400, "Malformed HTTP request"},
		{"a slow header", "GET /api/v1/jobs HTTP/1.1\r\nHost: b\r\n", "GET", "/jobs", 408, "Request timeout"},
		{"a slow header on the Report API's path", "POST /api/v1/jobs/" + f.Job + "/report HTTP/1.1\r\nHost: b\r\n",
			"POST", "/jobs/" + f.Job + "/report", 408, "Request timeout"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, r := wireExchange(t, s.PublicURL, c.req)
			wantUnreadable(t, c.name, r, false, c.status, c.msg, c.method, c.path)
			if c.status == 431 {
				var body struct {
					Error map[string]any `json:"error"`
				}
				if err := json.Unmarshal(r.Body, &body); err != nil || body.Error["code"] != "INVALID_REQUEST" {
					t.Errorf("431 body %s", r.Body)
				}
			}
		})
	}
	if h := rpHistory(s, f.WS, f.Job); len(h) != 0 {
		t.Errorf("%d results recorded, want none", len(h))
	}
}
