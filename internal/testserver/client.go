package testserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// AdminToken is the admin API token of every server this package starts.
const AdminToken = "test-admin-token"

// Client talks to one server's public and admin listeners. The methods
// without an error result fail T (Fatal) when the exchange fails; For gives
// a copy that fails another test, for subtests and helpers that get theirs.
type Client struct {
	T         testing.TB
	HTTP      *http.Client
	PublicURL string // "http://127.0.0.1:port"
	AdminURL  string
	Token     string // the admin API's bearer token
}

// newHTTPClient is the client of a new server: it keeps connections for
// parallel requests and does not follow redirects (a test sees them).
func newHTTPClient() *http.Client {
	return &http.Client{
		Timeout:       30 * time.Second,
		Transport:     &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 128, IdleConnTimeout: 30 * time.Second, DisableCompression: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// For returns a copy of c that fails t.
func (c *Client) For(t testing.TB) *Client {
	cp := *c
	cp.T = t
	return &cp
}

// Send sends a request to url (a whole address) without touching T.
func (c *Client) Send(method, url string, header map[string]string, body []byte) (Response, error) {
	return Send(c.HTTP, method, url, header, body)
}

// Do is Send that fails T on an error.
func (c *Client) Do(method, url string, header map[string]string, body []byte) Response {
	c.T.Helper()
	r, err := c.Send(method, url, header, body)
	if err != nil {
		c.T.Fatal(err)
	}
	return r
}

// AdminSend calls the admin API (path below /admin/v1) with the token and
// a JSON body (see Admin), without touching T.
func (c *Client) AdminSend(method, path string, body any) (Response, error) {
	b, err := jsonBody(body)
	if err != nil {
		return Response{}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	h := Bearer(c.Token)
	h["Content-Type"] = "application/json"
	return c.Send(method, c.AdminURL+"/admin/v1"+path, h, b)
}

// Admin calls the admin API with the token; body is marshalled unless it is
// nil, []byte or a string, which are sent as they are.
func (c *Client) Admin(method, path string, body any) Response {
	c.T.Helper()
	r, err := c.AdminSend(method, path, body)
	if err != nil {
		c.T.Fatal(err)
	}
	return r
}

// MustAdmin calls the admin API and fails T unless the answer has the
// wanted status.
func (c *Client) MustAdmin(want int, method, path string, body any) Response {
	c.T.Helper()
	r := c.Admin(method, path, body)
	if r.Status != want {
		c.T.Fatalf("%s %s: status %d, want %d: %s", method, path, r.Status, want, r.Body)
	}
	return r
}

// AdminCall calls the admin API and decodes the answer's "data" member into
// out (when out is not nil), without touching T. An answer with another
// status than want is an error quoting the body.
func (c *Client) AdminCall(want int, method, path string, body, out any) error {
	r, err := c.AdminSend(method, path, body)
	if err != nil {
		return err
	}
	if r.Status != want {
		return fmt.Errorf("%s %s: status %d, want %d: %s", method, path, r.Status, want, r.Body)
	}
	if out == nil {
		return nil
	}
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(r.Body, &env); err != nil {
		return fmt.Errorf("%s %s: %w: %s", method, path, err, r.Body)
	}
	if err := json.Unmarshal(env.Data, out); err != nil {
		return fmt.Errorf("%s %s: data: %w: %s", method, path, err, r.Body)
	}
	return nil
}

// AdminInto is AdminCall that fails T on an error.
func (c *Client) AdminInto(want int, method, path string, body, out any) {
	c.T.Helper()
	if err := c.AdminCall(want, method, path, body, out); err != nil {
		c.T.Fatal(err)
	}
}

// ReportSend posts a report body for job with key (no Authorization header
// when key is "") and an Idempotency-Key header when idem is not "",
// without touching T.
func (c *Client) ReportSend(jobID, key, idem, body string) (Response, error) {
	h := Bearer(key)
	h["Content-Type"] = "application/json"
	if idem != "" {
		h["Idempotency-Key"] = idem
	}
	return c.Send("POST", c.PublicURL+"/api/v1/jobs/"+jobID+"/report", h, []byte(body))
}

// Report is ReportSend that fails T on an error.
func (c *Client) Report(jobID, key, idem, body string) Response {
	c.T.Helper()
	r, err := c.ReportSend(jobID, key, idem, body)
	if err != nil {
		c.T.Fatal(err)
	}
	return r
}

// REST sends GET path (below /api/v1) to the public listener with key.
func (c *Client) REST(key, path string) Response {
	c.T.Helper()
	return c.Do("GET", c.PublicURL+"/api/v1"+path, Bearer(key), nil)
}

// Clock sets or moves the development clock (POST /admin/v1/clock with
// body) and returns the time it answers; the call answers once every timer
// that came due has run.
func (c *Client) Clock(body map[string]any) time.Time {
	c.T.Helper()
	var out struct{ Now string }
	c.AdminInto(200, "POST", "/clock", body, &out)
	now, err := time.Parse(time.RFC3339Nano, out.Now)
	if err != nil {
		c.T.Fatalf("clock answer %q: %v", out.Now, err)
	}
	return now
}

// Advance moves the development clock forward by d (whole seconds).
func (c *Client) Advance(d time.Duration) time.Time {
	c.T.Helper()
	return c.Clock(map[string]any{"advanceSeconds": int64(d / time.Second)})
}

// SetClock sets the development clock to at.
func (c *Client) SetClock(at time.Time) time.Time {
	c.T.Helper()
	return c.Clock(map[string]any{"set": at.UTC().Format(time.RFC3339Nano)})
}

// Metrics returns the text of the admin listener's /metrics.
func (c *Client) Metrics() string {
	c.T.Helper()
	r := c.Do("GET", c.AdminURL+"/metrics", nil, nil)
	if r.Status != 200 {
		c.T.Fatalf("GET /metrics: %d %s", r.Status, r.Body)
	}
	return string(r.Body)
}

// Metric returns the value of the /metrics sample line that starts with
// name and a space (0 when there is none).
func (c *Client) Metric(name string) float64 {
	c.T.Helper()
	for line := range strings.SplitSeq(c.Metrics(), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			var f float64
			fmt.Sscan(v, &f)
			return f
		}
	}
	return 0
}

// closeIdle drops the client's idle connections.
func (c *Client) closeIdle() {
	if c.HTTP != nil {
		c.HTTP.CloseIdleConnections()
	}
}

// MustReport posts a report body for job with key and fails T unless the
// answer is 200 with a JSON body.
func (c *Client) MustReport(jobID, key, body string) Response {
	c.T.Helper()
	r := c.Report(jobID, key, "", body)
	if r.Status != 200 || r.JSON == nil {
		c.T.Fatalf("report %s on %s: %d %s", body, jobID, r.Status, r.Body)
	}
	return r
}

// AlertID returns the alert_id a report's answer names ("" for null).
func AlertID(r Response) string {
	id, _ := r.JSON["alert_id"].(string)
	return id
}
