package transport_test

// Routing and headers of the public listener around the Report API
// (api.md 4, 5.2; decisions.md 3): routing before authentication, 405 with
// Allow: POST on the report path (OPTIONS too, no CORS), 404 elsewhere, the
// REST error shape for both, X-Request-Id on every answer.

import (
	"strings"
	"testing"

	"backupmon/internal/testserver"
)

// rpWantREST checks a REST-shaped error: status, code, the exact member
// set, and error.requestId equal to X-Request-Id.
func rpWantREST(t *testing.T, what string, r testserver.Response, status int, code string) {
	t.Helper()
	if r.Status != status {
		t.Errorf("%s: status %d, want %d: %s", what, r.Status, status, r.Body)
	}
	rpCheckHeaders(t, what, r)
	e, ok := r.JSON["error"].(map[string]any)
	if !ok || len(r.JSON) != 1 {
		t.Fatalf("%s: not {\"error\":{...}}: %s", what, r.Body)
	}
	if len(e) != 3 || e["code"] != code {
		t.Errorf("%s: error %v, want exactly code %s, message, requestId", what, e, code)
	}
	if m, _ := e["message"].(string); m == "" {
		t.Errorf("%s: empty message", what)
	}
	if id := r.Header.Get("X-Request-Id"); e["requestId"] != id {
		t.Errorf("%s: error.requestId %v, X-Request-Id %q", what, e["requestId"], id)
	}
}

func TestReportRouting(t *testing.T) {
	s, f := startFixture(t)
	path := s.PublicURL + "/api/v1/jobs/" + f.Job + "/report"
	auth := map[string]string{"Authorization": "Bearer " + f.ReportKey, "Content-Type": "application/json", "Origin": "https://evil.example"}

	for _, method := range []string{"GET", "PUT", "PATCH", "DELETE", "OPTIONS"} {
		rpRun(t, s, method+" on the report path", func(t *testing.T) {
			// With a valid key and body, and without any: routing comes first.
			for _, h := range []map[string]string{auth, nil} {
				r := s.Do(method, path, h, []byte(`{"status":"ok"}`))
				rpWantREST(t, method, r, 405, "METHOD_NOT_ALLOWED")
				if a := r.Header.Values("Allow"); len(a) != 1 || a[0] != "POST" {
					t.Errorf("%s: Allow %q, want POST", method, a)
				}
			}
		})
	}
	rpRun(t, s, "OPTIONS preflight", func(t *testing.T) {
		r := s.Do("OPTIONS", path, map[string]string{
			"Origin": "https://evil.example", "Access-Control-Request-Method": "POST",
			"Access-Control-Request-Headers": "authorization, content-type",
		}, nil)
		rpWantREST(t, "preflight", r, 405, "METHOD_NOT_ALLOWED") // also checks: no Access-Control-* header
		if a := r.Header.Get("Allow"); a != "POST" {
			t.Errorf("Allow %q", a)
		}
	})
	rpRun(t, s, "HEAD on the report path", func(t *testing.T) {
		r := s.Do("HEAD", path, auth, nil)
		if r.Status != 405 || r.Header.Get("Allow") != "POST" || r.Header.Get("X-Request-Id") == "" {
			t.Errorf("HEAD: %d Allow %q X-Request-Id %q", r.Status, r.Header.Get("Allow"), r.Header.Get("X-Request-Id"))
		}
	})

	for _, p := range []string{
		"/api/v1/jobs/" + f.Job + "/report/",
		"/api/v1/jobs/" + f.Job + "/reports",
		"/api/v1/jobs/" + f.Job + "/Report",
		"/api/v1/jobs/" + f.Job + "/report/x",
		"/api/v1/job/" + f.Job + "/report",
		"/api/v2/jobs/" + f.Job + "/report",
		"/api/v1/report",
		"/api/v1/nope",
		"/jobs/" + f.Job + "/report",
	} {
		rpRun(t, s, "POST "+strings.ReplaceAll(p, f.Job, "{job}"), func(t *testing.T) {
			// A valid key does not change it, and a missing key is not
			// looked at: 404 before authentication.
			for _, h := range []map[string]string{auth, nil} {
				rpWantREST(t, p, s.Do("POST", s.PublicURL+p, h, []byte(`{"status":"ok"}`)), 404, "NOT_FOUND")
			}
		})
	}
	if h := rpHistory(s, f.WS, f.Job); len(h) != 0 {
		t.Errorf("a request on another path was recorded: %v", h)
	}

	rpRun(t, s, "every answer carries a request id, unique", func(t *testing.T) {
		seen := map[string]bool{}
		for _, r := range []testserver.Response{
			s.Report(f.Job, f.ReportKey, "", `{"status":"ok"}`),         // 200
			s.Report(f.Job, f.ReportKey, "", `{"status":"x"}`),          // 400
			s.Report(f.Job, "", "", `{"status":"ok"}`),                  // 401
			s.Report(f.Job, f.RestKey, "", `{"status":"ok"}`),           // 403
			s.Report("nope", f.ReportKey, "", `{"status":"ok"}`),        // 404
			s.Do("GET", path, nil, nil),                                 // 405
			s.Report(f.Job, f.ReportKey, "", rpBigBody(65<<10)),         // 413
			s.Do("POST", s.PublicURL+"/api/v1/nope", nil, []byte(`{}`)), // 404 REST
		} {
			id := r.Header.Get("X-Request-Id")
			rpCheckHeaders(t, "answer "+string(r.Body), r)
			if seen[id] {
				t.Errorf("request id %s given twice", id)
			}
			seen[id] = true
			if e, ok := r.JSON["error"].(string); ok && strings.Contains(e, id) {
				t.Errorf("Report API error carries the request id in its message: %s", r.Body)
			}
		}
	})
}
