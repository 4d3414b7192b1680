package transport_test

// Helpers shared by the Report API tests (report_*_test.go). Every name
// starts with "rp" so that other test files of this package cannot collide
// with them.

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"backupmon/internal/testserver"
)

// rpJSONType is the Content-Type of every JSON answer (decisions.md 3).
const rpJSONType = "application/json; charset=utf-8"

// rpRequestIDRe is the shape of X-Request-Id values (24 hex characters).
var rpRequestIDRe = regexp.MustCompile(`^[0-9a-f]{24}$`)

// rpUUIDRe is the UUID shape of ids (api.md 2.5, 2.7).
var rpUUIDRe = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// rpOK is the exact 200 body of an accepted report (api.md 2.9); alertID ""
// means null.
func rpOK(status, alertID string, duplicate, superseded bool) string {
	a := "null"
	if alertID != "" {
		a = strconv.Quote(alertID)
	}
	return fmt.Sprintf(`{"ok":true,"status":%q,"alert_id":%s,"duplicate":%t,"superseded":%t}`, status, a, duplicate, superseded)
}

// rpDup is the exact duplicate answer (decisions.md 3).
func rpDup(status string) string { return rpOK(status, "", true, false) }

// rpErr is the exact Report API error body (api.md 7.2).
func rpErr(msg string) string {
	var b bytes.Buffer
	b.WriteString(`{"error":"`)
	b.WriteString(msg)
	b.WriteString(`"}`)
	return b.String()
}

// Report API messages, copied from api.md 7.2 and decisions.md 3.
const (
	rpMsgInvalidJSON = "Invalid JSON body"
	rpMsgStatus      = "status must be one of: ok, warn, failed"
	rpMsgSize        = "size_bytes must be a non-negative number"
	rpMsgDuration    = "duration_seconds must be a number of seconds between 0 and 604800"
	rpMsgIdemLong    = "idempotency_key must be at most 255 characters"
	rpMsgMalformed   = "Missing or malformed Authorization header"
	rpMsgInvalidKey  = "Invalid API key"
	rpMsgExpired     = "API key has expired"
	rpMsgSuspended   = "Workspace suspended"
	rpMsgKeyType     = "API key cannot use the Report API"
	rpMsgJobNotFound = "Job not found"
	rpMsgRateLimit   = "Rate limit exceeded — max 60 requests/minute"
	rpMsgDailyCap    = "Daily ingest cap (100 reports/job) reached — try again after the trailing 24h window rolls over"
	rpMsgInFlight    = "A report with this Idempotency-Key is still being processed — retry shortly"
	rpMsgTooLarge    = "Request body too large"
)

// rpCheckHeaders checks what every public answer carries: a request id, no
// Server header, no CORS header, and the JSON content type.
func rpCheckHeaders(t testing.TB, what string, r testserver.Response) {
	t.Helper()
	if id := r.Header.Get("X-Request-Id"); !rpRequestIDRe.MatchString(id) {
		t.Errorf("%s: X-Request-Id %q", what, id)
	}
	if v := r.Header.Values("Server"); len(v) != 0 {
		t.Errorf("%s: Server header %q", what, v)
	}
	for h := range r.Header {
		if strings.HasPrefix(strings.ToLower(h), "access-control-") {
			t.Errorf("%s: CORS header %s: %q", what, h, r.Header.Get(h))
		}
	}
	if ct := r.Header.Get("Content-Type"); ct != rpJSONType {
		t.Errorf("%s: Content-Type %q, want %q", what, ct, rpJSONType)
	}
}

// rpWant checks a Report API answer: status, exact body and the common
// headers.
func rpWant(t testing.TB, what string, r testserver.Response, status int, body string) {
	t.Helper()
	if r.Status != status || string(r.Body) != body {
		t.Errorf("%s:\n got %d %s\nwant %d %s", what, r.Status, r.Body, status, body)
	}
	rpCheckHeaders(t, what, r)
}

// rpWantErr checks a Report API error answer with its exact message.
func rpWantErr(t *testing.T, what string, r testserver.Response, status int, msg string) {
	t.Helper()
	rpWant(t, what, r, status, rpErr(msg))
}

// rpAccepted checks a 200 answer that is neither duplicate nor superseded
// and returns its alert_id ("" for null).
func rpAccepted(t testing.TB, what string, r testserver.Response, status string) string {
	t.Helper()
	if r.Status != 200 {
		t.Fatalf("%s: %d %s", what, r.Status, r.Body)
	}
	id, _ := r.JSON["alert_id"].(string)
	rpWant(t, what, r, 200, rpOK(status, id, false, false))
	if (status == "ok") != (id == "") {
		t.Errorf("%s: alert_id %q for status %s", what, id, status)
	}
	if id != "" && !rpUUIDRe.MatchString(id) {
		t.Errorf("%s: alert_id %q is not UUID-shaped", what, id)
	}
	return id
}

// rpSend posts a report and requires an accepted answer (not duplicate, not
// superseded); it returns the alert_id.
func rpSend(s *testserver.Server, job, key, status string) string {
	s.T.Helper()
	return rpAccepted(s.T, "report "+status, s.Report(job, key, "", `{"status":"`+status+`"}`), status)
}

// rpJob reads the admin job view with up to 1000 history entries.
func rpJob(s *testserver.Server, ws, job string) map[string]any {
	s.T.Helper()
	return s.MustAdmin(200, "GET", "/workspaces/"+ws+"/jobs/"+job+"?limit=1000", nil).Data()
}

// rpHistory returns the job's history, newest first.
func rpHistory(s *testserver.Server, ws, job string) []map[string]any {
	s.T.Helper()
	return admList(s.T, rpJob(s, ws, job), "history")
}

// rpAlerts returns every alert of the workspace, newest first.
func rpAlerts(s *testserver.Server, ws string) []map[string]any {
	s.T.Helper()
	return s.MustAdmin(200, "GET", "/workspaces/"+ws+"/alerts", nil).List()
}

// rpAlert returns the workspace's alert with id, failing when there is none.
func rpAlert(s *testserver.Server, ws, id string) map[string]any {
	s.T.Helper()
	for _, a := range rpAlerts(s, ws) {
		if a["id"] == id {
			return a
		}
	}
	s.T.Fatalf("no alert %s in the workspace", id)
	return nil
}

// rpFields checks that m has each field with the wanted value; want values
// are compared as JSON-decoded values (nil for null, float64 for numbers).
func rpFields(t testing.TB, what string, m map[string]any, want map[string]any) {
	t.Helper()
	for k, w := range want {
		got, ok := m[k]
		if !ok {
			t.Errorf("%s: field %s missing", what, k)
			continue
		}
		if n, isInt := w.(int); isInt {
			w = float64(n)
		}
		if n, isInt := w.(int64); isInt {
			w = float64(n)
		}
		if fmt.Sprint(got) != fmt.Sprint(w) || (got == nil) != (w == nil) {
			t.Errorf("%s: %s = %v, want %v", what, k, got, w)
		}
	}
}

// rpPost sends a request without touching t, for use on other goroutines.
func rpPost(s *testserver.Server, path string, header map[string]string, body string) (testserver.Response, error) {
	return s.Send("POST", s.PublicURL+path, header, []byte(body))
}

// rpReportAsync sends a report on another goroutine; the answer (or the
// transport error) arrives on the returned channel.
func rpReportAsync(s *testserver.Server, job, key, idem, body string) <-chan rpResult {
	ch := make(chan rpResult, 1)
	go func() {
		h := map[string]string{"Content-Type": "application/json", "Authorization": "Bearer " + key}
		if idem != "" {
			h["Idempotency-Key"] = idem
		}
		r, err := rpPost(s, "/api/v1/jobs/"+job+"/report", h, body)
		ch <- rpResult{r, err}
	}()
	return ch
}

type rpResult struct {
	r   testserver.Response
	err error
}

// rpAwait waits for an asynchronous answer, at most 20 seconds.
func rpAwait(t *testing.T, what string, ch <-chan rpResult) testserver.Response {
	t.Helper()
	select {
	case res := <-ch:
		if res.err != nil {
			t.Fatalf("%s: %v", what, res.err)
		}
		return res.r
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: no answer after 20s", what)
	}
	return testserver.Response{}
}

// rpRun runs a subtest with the server's harness reporting to it (the
// harness fails the test it holds), and gives the parent back afterwards.
// Subtests run one after another, never in parallel.
func rpRun(t *testing.T, s *testserver.Server, name string, fn func(t *testing.T)) {
	t.Helper()
	parent := s.T
	t.Run(name, func(t *testing.T) {
		s.T = t
		defer func() { s.T = parent }()
		fn(t)
	})
}
