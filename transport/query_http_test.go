package transport_test

// What the query-parameter and cursor fuzz tests found, checked once more
// through the real HTTP surface.

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"backupmon/internal/testserver"
)

// restGet sends a REST API GET with key.
func restGet(s *testserver.Server, key, pathAndQuery string) testserver.Response {
	s.T.Helper()
	return s.Do("GET", s.PublicURL+"/api/v1"+pathAndQuery, map[string]string{"Authorization": "Bearer " + key}, nil)
}

func wantParamError(t *testing.T, what string, r testserver.Response, param string) {
	t.Helper()
	e, _ := r.JSON["error"].(map[string]any)
	got, has := e["parameter"].(string)
	if r.Status != 400 || e["code"] != "INVALID_PARAMETER" || !has || got != param {
		t.Fatalf("%s: status %d, want 400 INVALID_PARAMETER naming %q: %s", what, r.Status, param, r.Body)
	}
}

// A parameter with an empty name (`?=1`) is an unknown parameter: 400,
// naming it (""), not a request without parameters.
func TestQueryParameterWithoutNameIsRefused(t *testing.T) {
	s, f := startFixture(t)
	for _, q := range []string{"/jobs?=1", "/jobs?limit=5&=x", "/health?=30", "/workspace?=1"} {
		wantParamError(t, q, restGet(s, f.RestKey, q), "")
	}
	if r := restGet(s, f.RestKey, "/jobs?&&"); r.Status != 200 {
		t.Fatalf("/jobs?&&: status %d: %s", r.Status, r.Body)
	}
}

// A cursor whose last character differs only in the bits base64 leaves
// spare is another cursor: refused, naming cursor.
func TestCursorWithChangedSpareBitsIsRefused(t *testing.T) {
	s, f := startFixture(t)
	s.NewJob(f.WS, f.Client, "Second backup", map[string]any{"intervalMinutes": 1440})
	first := restGet(s, f.RestKey, "/jobs?limit=1")
	pg, _ := first.JSON["pagination"].(map[string]any)
	cur, _ := pg["nextCursor"].(string)
	if first.Status != 200 || cur == "" {
		t.Fatalf("first page: status %d: %s", first.Status, first.Body)
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	last := strings.IndexByte(alphabet, cur[len(cur)-1])
	for bit := range 6 {
		changed := cur[:len(cur)-1] + string(alphabet[last^1<<bit])
		wantParamError(t, "cursor with its last character changed", restGet(s, f.RestKey, "/jobs?limit=1&cursor="+changed), "cursor")
	}
	if r := restGet(s, f.RestKey, "/jobs?limit=1&cursor="+cur); r.Status != 200 {
		t.Fatalf("the cursor itself: status %d: %s", r.Status, r.Body)
	}
}

// The pages of one listing share the window of the first: a window of 93
// days with only `from` given (to is now) stays usable on the next page
// after the clock has moved past the 93 days.
func TestNextPageKeepsTheFirstPagesWindow(t *testing.T) {
	s, f := startFixture(t)
	for i := range 3 {
		if r := s.Report(f.Job, f.ReportKey, "", `{"status":"ok"}`); r.Status != 200 {
			t.Fatalf("report %d: status %d: %s", i, r.Status, r.Body)
		}
		s.Advance(time.Minute)
	}
	now := s.Clock.Now()
	from := now.Add(-93*24*time.Hour + time.Minute).UTC().Format(time.RFC3339)
	q := "/reports?limit=1&from=" + url.QueryEscape(from)
	first := restGet(s, f.RestKey, q)
	pg, _ := first.JSON["pagination"].(map[string]any)
	cur, _ := pg["nextCursor"].(string)
	if first.Status != 200 || cur == "" {
		t.Fatalf("first page: status %d: %s", first.Status, first.Body)
	}
	s.Advance(2 * time.Minute) // from … now is now longer than 93 days
	if r := restGet(s, f.RestKey, q); r.Status != 400 {
		t.Fatalf("a new first page over more than 93 days: status %d: %s", r.Status, r.Body)
	}
	next := restGet(s, f.RestKey, q+"&cursor="+cur)
	if next.Status != 200 {
		t.Fatalf("next page: status %d: %s", next.Status, next.Body)
	}
	items, _ := next.JSON["data"].([]any)
	if len(items) != 1 {
		t.Fatalf("next page: %d items: %s", len(items), next.Body)
	}
}
