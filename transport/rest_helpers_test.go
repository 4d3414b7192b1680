package transport_test

// Helpers shared by the REST API tests (rest_*_test.go). Every name starts
// with "rs" so that the files of other test authors in this package cannot
// collide with them. Every REST answer a test receives goes through rsCheck:
// the headers every answer carries, the error shape, the timestamp shape of
// every time member, the forbidden content of api.md 1.7, and the OpenAPI
// document's schema for the operation and status (rest_schema_test.go).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"backupmon/internal/testserver"
)

// rsPrefix is the REST API's base path.
const rsPrefix = "/api/v1"

// rsLimitHeaders are the minute-limit headers, rsQuotaHeaders the monthly
// quota's (api.md 8.1).
var (
	rsLimitHeaders = []string{"X-Ratelimit-Limit", "X-Ratelimit-Remaining", "X-Ratelimit-Reset"}
	rsQuotaHeaders = []string{"X-Quota-Limit", "X-Quota-Remaining", "X-Quota-Reset"}
)

// rsTimeMembers are the members that hold times (api.md 2, decisions.md 4):
// each is a contract timestamp or null wherever it appears.
var rsTimeMembers = map[string]bool{
	"createdAt": true, "trialEndsAt": true, "expiresAt": true, "lastUsedAt": true, "lastReportAt": true,
	"lastSuccessAt": true, "lastFailureAt": true, "pausedUntil": true, "nextExpectedAt": true, "dueAt": true,
	"completedAt": true, "startedAt": true, "receivedAt": true, "acknowledgedAt": true, "snoozedUntil": true,
	"resolvedAt": true, "from": true, "to": true, "timestamp": true,
}

// Forbidden content (api.md 1.7, 5.4, decisions.md 2, 3, 10, 11): checked
// on every REST body. Key secrets in full, the admin token, report sources
// ("api:" + a key prefix, "email:" + a vendor), ingest addresses, e-mail
// addresses (users, channels), and members that would carry secrets,
// passwords, ingest tokens, notes, sources, idempotency keys or history.
var (
	rsSecretRe    = regexp.MustCompile(`svc_live_[0-9a-f]{48}`)
	rsSourceRe    = regexp.MustCompile(`"(api|email):`)
	rsEmailRe     = regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}`)
	rsForbidWords = []string{"password", "secret", "token", "ingest", "email", "source", "idempot", "note", "history",
		"hash", "webhook", "contact", "subject", "sender", "billing", "prompt", "user", "actor"}
)

// rsQ builds a query string from name/value pairs, in order, each escaped;
// a name may repeat. rsQ() is "".
func rsQ(kv ...string) string {
	if len(kv) == 0 {
		return ""
	}
	var b strings.Builder
	for i := 0; i+1 < len(kv); i += 2 {
		if i == 0 {
			b.WriteByte('?')
		} else {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(kv[i]))
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(kv[i+1]))
	}
	return b.String()
}

// rsAuth is the Authorization header of a key ("" sends none).
func rsAuth(key string) map[string]string {
	if key == "" {
		return nil
	}
	return map[string]string{"Authorization": "Bearer " + key}
}

// rsSend sends a request to the public listener without touching a
// testing.T (safe on any goroutine); path is below /api/v1.
// Every REST answer with a body is a JSON object, whatever its
// Content-Type says (rsCheck checks that).
func rsSend(s *testserver.Server, method, path string, header map[string]string) (testserver.Response, error) {
	r, err := s.Send(method, s.PublicURL+rsPrefix+path, header, nil)
	if err == nil && len(r.Body) > 0 && r.JSON == nil {
		if err := json.Unmarshal(r.Body, &r.JSON); err != nil {
			return r, fmt.Errorf("%s %s: answer is not a JSON object: %v: %s", method, path, err, r.Body)
		}
	}
	return r, err
}

// rsDo sends a request and checks it with rsCheck.
func rsDo(s *testserver.Server, method, path string, header map[string]string) testserver.Response {
	s.T.Helper()
	r, err := rsSend(s, method, path, header)
	if err != nil {
		s.T.Fatal(err)
	}
	rsCheck(s.T, method, path, r)
	return r
}

// rsGet sends GET path (below /api/v1) with key and checks the answer.
func rsGet(s *testserver.Server, key, path string) testserver.Response {
	s.T.Helper()
	return rsDo(s, "GET", path, rsAuth(key))
}

// rsCheck checks what every REST answer must satisfy, whatever its status.
// It only reports (t.Errorf), so it may run on any goroutine.
func rsCheck(t testing.TB, method, path string, r testserver.Response) {
	t.Helper()
	what := method + " " + path
	if method == "HEAD" {
		if id := r.Header.Get("X-Request-Id"); !rpRequestIDRe.MatchString(id) {
			t.Errorf("%s: X-Request-Id %q", what, id)
		}
		return
	}
	rpCheckHeaders(t, what, r)
	if r.JSON == nil {
		t.Errorf("%s: %d with no JSON body", what, r.Status)
		return
	}
	hasLimits := r.Header.Get("X-Ratelimit-Limit") != ""
	for _, h := range rsLimitHeaders {
		if (r.Header.Get(h) != "") != hasLimits {
			t.Errorf("%s: limit headers only in part: %v", what, r.Header)
		}
	}
	switch r.Status {
	case 200, 400, 429:
		// 400 here is always a parameter error, answered after the limits;
		// a request unreadable to the listener is not sent by these tests.
		if !hasLimits {
			t.Errorf("%s: %d without X-RateLimit-* headers", what, r.Status)
		}
	case 401, 403, 405:
		if hasLimits || r.Header.Get("X-Quota-Limit") != "" || r.Header.Get("Retry-After") != "" {
			t.Errorf("%s: %d with limit headers: %v", what, r.Status, r.Header)
		}
	}
	hasQuota := r.Header.Get("X-Quota-Limit") != ""
	for _, h := range rsQuotaHeaders {
		if (r.Header.Get(h) != "") != hasQuota {
			t.Errorf("%s: quota headers only in part: %v", what, r.Header)
		}
	}
	if hasQuota && !hasLimits {
		t.Errorf("%s: quota headers without limit headers", what)
	}
	if (r.Status == 429) != (r.Header.Get("Retry-After") != "") {
		t.Errorf("%s: %d with Retry-After %q", what, r.Status, r.Header.Get("Retry-After"))
	}
	if r.Status == 200 {
		if _, ok := r.JSON["data"]; !ok {
			t.Errorf("%s: 200 without data: %s", what, r.Body)
		}
		rsWalkTimes(t, what, "", r.JSON)
	} else {
		rsCheckErrorShape(t, what, r)
	}
	rsCheckForbidden(t, what, r.Body, r.JSON)
	rsValidate(t, method, path, r)
}

// rsCheckErrorShape checks {"error":{"code","message","parameter"?,
// "requestId"}} with requestId equal to X-Request-Id and parameter present
// exactly for INVALID_PARAMETER (api.md 7.1).
func rsCheckErrorShape(t testing.TB, what string, r testserver.Response) {
	t.Helper()
	e, ok := r.JSON["error"].(map[string]any)
	if !ok || len(r.JSON) != 1 {
		t.Errorf("%s: not {\"error\":{...}}: %s", what, r.Body)
		return
	}
	want := []string{"code", "message", "requestId"}
	if e["code"] == "INVALID_PARAMETER" {
		want = append(want, "parameter")
		if _, ok := e["parameter"].(string); !ok {
			t.Errorf("%s: INVALID_PARAMETER without a parameter: %s", what, r.Body)
		}
	}
	admWantKeys(t, what+": error", e, want...)
	if m, _ := e["message"].(string); m == "" {
		t.Errorf("%s: empty message: %s", what, r.Body)
	}
	if id := r.Header.Get("X-Request-Id"); id == "" || e["requestId"] != id {
		t.Errorf("%s: error.requestId %v, X-Request-Id %q", what, e["requestId"], id)
	}
}

// rsWalkTimes checks every time member below v.
func rsWalkTimes(t testing.TB, what, name string, v any) {
	t.Helper()
	switch x := v.(type) {
	case map[string]any:
		for k, m := range x {
			if rsTimeMembers[k] {
				if s, ok := m.(string); m != nil && (!ok || !testserver.TimeRe.MatchString(s)) {
					t.Errorf("%s: %s.%s = %#v is not a contract timestamp", what, name, k, m)
				}
				continue
			}
			rsWalkTimes(t, what, name+"."+k, m)
		}
	case []any:
		for i, m := range x {
			rsWalkTimes(t, what, name+"["+strconv.Itoa(i)+"]", m)
		}
	}
}

// rsCheckForbidden checks a body for the content of api.md 1.7 (see
// rsForbidWords and the expressions above) and the admin token.
func rsCheckForbidden(t testing.TB, what string, body []byte, v any) {
	t.Helper()
	for _, re := range []*regexp.Regexp{rsSecretRe, rsSourceRe, rsEmailRe} {
		if m := re.Find(body); m != nil {
			t.Errorf("%s: body holds %q (%s): %s", what, m, re, body)
		}
	}
	if bytes.Contains(body, []byte(testserver.AdminToken)) {
		t.Errorf("%s: body holds the admin token", what)
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, m := range x {
				lk := strings.ToLower(k)
				for _, w := range rsForbidWords {
					if strings.Contains(lk, w) {
						t.Errorf("%s: forbidden member %s.%s", what, path, k)
					}
				}
				walk(path+"."+k, m)
			}
		case []any:
			for _, m := range x {
				walk(path+"[]", m)
			}
		}
	}
	walk("", v)
}

// rsWantErr checks a REST error answer: status, code and the parameter
// named ("" when there must be none). rsCheck already checked the shape.
func rsWantErr(t *testing.T, what string, r testserver.Response, status int, code, param string) {
	t.Helper()
	e, _ := r.JSON["error"].(map[string]any)
	got, _ := e["parameter"].(string)
	if r.Status != status || e["code"] != code || got != param {
		t.Errorf("%s: %d %s, want %d %s parameter %q", what, r.Status, r.Body, status, code, param)
	}
}

// rsData requires a 200 single-object answer {data: {...}} and returns data.
func rsData(t testing.TB, what string, r testserver.Response) map[string]any {
	t.Helper()
	if r.Status != 200 {
		t.Fatalf("%s: %d %s", what, r.Status, r.Body)
	}
	d, ok := r.JSON["data"].(map[string]any)
	if !ok || len(r.JSON) != 1 {
		t.Fatalf("%s: not {\"data\":{...}}: %s", what, r.Body)
	}
	return d
}

// rsPage is one page of a list.
type rsPage struct {
	Items   []map[string]any
	Next    string // "" for null
	HasMore bool
}

// rsList requires a 200 list answer {data: [...], pagination: {nextCursor,
// hasMore}}, with nextCursor null exactly when hasMore is false.
func rsList(t testing.TB, what string, r testserver.Response) rsPage {
	t.Helper()
	if r.Status != 200 {
		t.Fatalf("%s: %d %s", what, r.Status, r.Body)
	}
	admWantKeys(t, what, r.JSON, "data", "pagination")
	p := admObj(t, r.JSON, "pagination")
	admWantKeys(t, what+": pagination", p, "nextCursor", "hasMore")
	var pg rsPage
	pg.Items = admList(t, r.JSON, "data")
	more, ok := p["hasMore"].(bool)
	if !ok {
		t.Fatalf("%s: hasMore %#v", what, p["hasMore"])
	}
	pg.HasMore = more
	switch c := p["nextCursor"].(type) {
	case nil:
		if more {
			t.Errorf("%s: hasMore true with a null nextCursor", what)
		}
	case string:
		if !more || c == "" {
			t.Errorf("%s: nextCursor %q with hasMore %v", what, c, more)
		}
		if url.QueryEscape(c) != c {
			t.Errorf("%s: nextCursor %q is not URL-safe", what, c)
		}
		pg.Next = c
	default:
		t.Errorf("%s: nextCursor %#v", what, c)
	}
	return pg
}

// rsItems returns the items of a single-page list answer (hasMore false).
func rsItems(t testing.TB, what string, r testserver.Response) []map[string]any {
	t.Helper()
	p := rsList(t, what, r)
	if p.HasMore {
		t.Errorf("%s: more than one page", what)
	}
	return p.Items
}

// rsWalk reads every page of path (which may carry a query) with the
// given page sizes in turn (the last repeats), and returns every item in
// order. It fails on a repeated id, an empty page that says there is more,
// or a page larger than its limit.
func rsWalk(s *testserver.Server, key, path string, limits ...int) []map[string]any {
	s.T.Helper()
	t := s.T
	var all []map[string]any
	seen := map[any]bool{}
	cursor := ""
	for n := 0; ; n++ {
		if n > 1000 {
			t.Fatalf("%s: more than 1000 pages", path)
		}
		limit := limits[min(n, len(limits)-1)]
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		p := path + sep + "limit=" + strconv.Itoa(limit)
		if cursor != "" {
			p += "&cursor=" + url.QueryEscape(cursor)
		}
		pg := rsList(t, p, rsGet(s, key, p))
		if len(pg.Items) > limit || (pg.HasMore && len(pg.Items) != limit) {
			t.Fatalf("%s: page of %d items, limit %d, hasMore %v", p, len(pg.Items), limit, pg.HasMore)
		}
		for _, it := range pg.Items {
			if seen[it["id"]] {
				t.Errorf("%s: item %v repeated", p, it["id"])
			}
			seen[it["id"]] = true
		}
		all = append(all, pg.Items...)
		if !pg.HasMore {
			return all
		}
		cursor = pg.Next
	}
}

// rsIDs returns the ids of items, in order.
func rsIDs(items []map[string]any) []string {
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i], _ = it["id"].(string)
	}
	return ids
}

// rsWantIDs checks a list of ids against the wanted one, in order.
func rsWantIDs(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got %d %v\nwant %d %v", what, len(got), got, len(want), want)
	}
}

// rsRaw returns the raw JSON of member name of the first object in body
// that has it, e.g. `"successRate":66.7` → "66.7".
func rsRaw(body []byte, name string) string {
	re := regexp.MustCompile(`"` + regexp.QuoteMeta(name) + `":("[^"]*"|[^,}\]]*)`)
	m := re.FindSubmatch(body)
	if m == nil {
		return "<absent>"
	}
	return string(m[1])
}

// rsWorkspace creates a workspace with a REST key of every scope; extra
// members go into the create body.
func rsWorkspace(s *testserver.Server, name, plan string, extra map[string]any) (ws, key string) {
	s.T.Helper()
	body := map[string]any{"name": name, "plan": plan}
	for k, v := range extra {
		body[k] = v
	}
	ws = s.MustAdmin(201, "POST", "/workspaces", body).Data()["id"].(string)
	key, _ = s.NewKey(ws, "rest", nil)
	return ws, key
}

// rsJob creates a job with its own device and vendor and returns its id;
// change edits the create body first (admJobBody).
func rsJob(s *testserver.Server, ws, client, name string, change func(m map[string]any)) string {
	s.T.Helper()
	body := admJobBody(client, func(m map[string]any) {
		m["name"] = name
		m["device"] = map[string]any{"name": "Host of " + name, "type": "server", "hostname": "h-" + strings.ToLower(strings.ReplaceAll(name, " ", "-"))}
		if change != nil {
			change(m)
		}
	})
	return s.MustAdmin(201, "POST", "/workspaces/"+ws+"/jobs", body).Data()["id"].(string)
}

// rsSortedByName returns ids ordered by (name without case, id), the order
// of clients and jobs (decisions.md 5).
func rsSortedByName(names map[string]string) []string {
	ids := make([]string, 0, len(names))
	for id := range names {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, k int) bool {
		a, b := strings.ToLower(names[ids[i]]), strings.ToLower(names[ids[k]])
		if a != b {
			return a < b
		}
		return ids[i] < ids[k]
	})
	return ids
}

// rsUnix is t in Unix seconds as a header value.
func rsUnix(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }

// rsHeaders checks header values (a value "" means the header is absent).
func rsHeaders(t *testing.T, what string, r testserver.Response, want map[string]string) {
	t.Helper()
	for h, w := range want {
		if got := r.Header.Values(h); (w == "" && len(got) != 0) || (w != "" && (len(got) != 1 || got[0] != w)) {
			t.Errorf("%s: %s %q, want %q", what, h, got, w)
		}
	}
}

// rsPacer moves the development clock a minute every 250 requests, for
// tests that send more requests than a Pro workspace's minute allows.
type rsPacer struct {
	s *testserver.Server
	n int
}

func (p *rsPacer) tick() {
	p.s.T.Helper()
	if p.n++; p.n%250 == 0 {
		p.s.Advance(time.Minute)
	}
}
