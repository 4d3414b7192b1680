package main

// What a new user tripped on (issue 22, section 3), through the real
// binary: missing jobs told in the workspace's zone with spans and missed
// runs, the suggestion in the attention queue, the alerts' state column,
// the health line, the 404 page's navigation, the job page's results in
// pages, alert actions naming their job in the activity log, and the API
// reference linked from the keys page. The REST answers stay as the
// contract has them.

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
)

// dashRough is the rough-edges workspace: in New York (local time differs
// from UTC), with a daily job missing for 2 d 8 h, a failed job whose
// report e-mail got a suggestion, a healthy monthly job and a job with 45
// results.
type dashRough struct {
	w                                *dashWS
	missing, failed, healthy, busy   string // job ids
	missingAlert, failedAlert        string
	cause, category, confidence, due string
	sess                             string // the owner's session
}

func (s *dashServer) roughWorkspace(t *testing.T, slug string) *dashRough {
	t.Helper()
	w := s.workspace(t, slug, nil)
	s.admin(t, "PATCH", w.path(""), map[string]any{"timeZone": "America/New_York"}, 200, nil)
	r := &dashRough{w: w}
	job := func(name, vendor string, client int, interval int) string {
		var out struct{ ID, IngestAddress string }
		s.admin(t, "POST", w.path("/jobs"), map[string]any{
			"clientId": w.clients[client], "name": name, "vendor": vendor,
			"device":   map[string]any{"name": "srv", "type": "server", "hostname": "srv." + slug + ".example"},
			"schedule": map[string]any{"intervalMinutes": interval, "graceMinutes": 60},
		}, 201, &out)
		w.jobs[name], w.ingest[name] = out.ID, out.IngestAddress
		return out.ID
	}
	start := s.now
	r.missing = job("Nightly file server", "veeam", 0, 1440)
	s.report(t, w, r.missing, "ok", time.Time{})
	r.healthy = job("Monthly archive", "veeam", 1, 44640)
	s.report(t, w, r.healthy, "ok", time.Time{})
	r.busy = job("Busy job", "veeam", 1, 44640)
	for range 45 {
		s.advance(t, 60) // a report a minute: none supersedes another
		s.report(t, w, r.busy, "ok", time.Time{})
	}
	r.failed = job("Mail archive", "generic", 1, 44640)
	s.mail(t, w.ingest["Mail archive"], "nightly", "Error: the backup destination is full", s.now.Add(-time.Minute))
	// The daily job reported at the start (Thu 5 Nov 12:00 UTC) and was
	// due a day later (Fri 6 Nov 12:00 UTC, 07:00 in New York); 3,366
	// minutes after that it is 2 d 8 h late, and the due times of Friday,
	// Saturday and Sunday have passed with their grace.
	r.due = "Fri 6 Nov 07:00"
	// The login moves the clock a minute on (a session idle for days ends).
	s.clock(t, map[string]any{"set": start.Add(24*time.Hour + 3365*time.Minute).Format(time.RFC3339)})
	r.sess = s.login(t, w.users["owner"])
	for id, a := range s.restAlerts(t, w.restKey) {
		switch a.JobID {
		case r.missing:
			r.missingAlert = id
		case r.failed:
			r.failedAlert = id
			if a.AI == nil {
				t.Fatalf("the failed e-mail's alert has no suggestion: %+v", a)
			}
			r.cause, r.category, r.confidence = a.AI.LikelyCause, a.AI.Category, a.AI.Confidence
		}
	}
	if r.missingAlert == "" || r.failedAlert == "" {
		t.Fatalf("alerts: missing %q, failed %q", r.missingAlert, r.failedAlert)
	}
	return r
}

func TestDashboardRoughEdges(t *testing.T) {
	s := dashStart(t)
	r := s.roughWorkspace(t, "rough")
	sess := r.sess
	get := func(t *testing.T, path string) *html.Node {
		t.Helper()
		resp := s.page(t, "GET", path, sess, nil)
		if resp.status != 200 {
			t.Fatalf("GET %s: %s", path, resp)
		}
		return dashParse(t, resp.body)
	}
	row := func(t *testing.T, doc *html.Node, id string) string {
		t.Helper()
		rows := dashAll(doc, "tr", "data-row", id)
		if len(rows) != 1 {
			t.Fatalf("%d rows of %s", len(rows), id)
		}
		return dashText(rows[0])
	}
	summary := "No backup report received: one was due at " + r.due + " EST, and 1 h of grace has passed."
	suggestion := r.cause + " " + r.category + " · confidence " + r.confidence + " · a suggestion, not a diagnosis"

	t.Run("REST unchanged", func(t *testing.T) {
		code, body := s.rest(t, r.w.restKey, "/jobs/"+r.missing)
		var j struct {
			Data struct {
				Status string
				Late   struct{ DueAt, Minutes any }
				SLA    struct{ SuccessRate any }
			}
		}
		if err := json.Unmarshal([]byte(body), &j); code != 200 || err != nil {
			t.Fatalf("GET /jobs/%s: %d %s", r.missing, code, body)
		}
		if d := j.Data; d.Status != "missing" || d.Late.DueAt != "2026-11-06T12:00:00.000Z" || d.Late.Minutes != float64(3366) || d.SLA.SuccessRate != float64(100) {
			t.Errorf("REST job: %+v", d)
		}
		if a := s.restAlerts(t, r.w.restKey)[r.missingAlert]; a.Summary != "No backup report received: one was due at 2026-11-06T12:00:00.000Z and 60 minutes of grace have passed" {
			t.Errorf("REST alert summary %q", a.Summary)
		}
	})

	t.Run("Queue", func(t *testing.T) {
		doc := get(t, "/")
		text := dashText(doc)
		if want := "2 of 4 jobs healthy · 2 job(s) need attention."; !strings.Contains(text, want) {
			t.Errorf("the queue lacks %q:\n%s", want, text)
		}
		want := "Nightly file server Veeam Backup & Replication · srv missing 2 d 8 h late 3 expected runs missed critical open missing " + summary
		if got := row(t, doc, r.missing); !strings.HasPrefix(got, want) {
			t.Errorf("the missing job's row:\n%s\nwant it to start\n%s", got, want)
		}
		if got := row(t, doc, r.failed); !strings.Contains(got, "the backup destination is full "+suggestion) {
			t.Errorf("the failed job's row lacks the suggestion %q:\n%s", suggestion, got)
		}
		for _, bad := range []string{"min late", "2026-11-06T12:00:00.000Z", "60 minutes of grace"} {
			if strings.Contains(text, bad) {
				t.Errorf("the queue shows %q", bad)
			}
		}
	})

	t.Run("Jobs", func(t *testing.T) {
		got := row(t, get(t, "/jobs"), r.missing)
		want := "Nightly file server Veeam Backup & Replication · srv Harbour Dental missing Thu 5 Nov 07:00 overdue since " + r.due + " 3 expected runs missed"
		if got != want {
			t.Errorf("the missing job in /jobs:\n%s\nwant\n%s", got, want)
		}
		if got := row(t, get(t, "/clients/"+r.w.clients[0]), r.missing); got != want {
			t.Errorf("the missing job on its client's page:\n%s\nwant\n%s", got, want)
		}
	})

	t.Run("Job page", func(t *testing.T) {
		doc := get(t, "/jobs/"+r.missing)
		props := map[string]string{}
		for _, dt := range dashAll(doc, "dt") {
			if dd := dt.NextSibling; dd != nil {
				props[dashText(dt)] = strings.ReplaceAll(dashText(dd), " ,", ",")
			}
		}
		for k, want := range map[string]string{
			"Next expected": "overdue since " + r.due + " 2 d 8 h late · 3 expected runs missed",
			"SLA (30 days)": "3 expected runs missed, not counted below: 100.0% of 1 report(s) received, target 95% runs missed",
		} {
			if props[k] != want {
				t.Errorf("%s: %q, want %q", k, props[k], want)
			}
		}
		if text := dashText(doc); !strings.Contains(text, summary) || strings.Contains(text, "2026-11-06T12:00:00.000Z") {
			t.Errorf("the job page's alert summary is not in the zone:\n%s", text)
		}
	})

	t.Run("Alerts state", func(t *testing.T) {
		doc := get(t, "/alerts")
		cells := map[string]string{}
		for _, id := range []string{r.missingAlert, r.failedAlert} {
			for _, td := range dashAll(doc, "td", "data-label", "State") {
				if p := td.Parent; p != nil && dashAttr(p, "data-row") == id {
					cells[id] = dashText(td)
				}
			}
		}
		// The missing alert opened at the due time plus grace: 3,306
		// minutes ago.
		if got := cells[r.missingAlert]; got != "open for 2 d 7 h" {
			t.Errorf("the open alert's state: %q, want %q", got, "open for 2 d 7 h")
		}
		// The e-mail came in 45 minutes after the start.
		if got := cells[r.failedAlert]; got != "open for 3 d 7 h" {
			t.Errorf("the failed alert's state: %q, want %q", got, "open for 3 d 7 h")
		}
	})

	t.Run("Activity names the job", func(t *testing.T) {
		resp := s.post(t, "/alerts/bulk", sess, url.Values{"alert": {r.missingAlert}, "action": {"acknowledge"}, "note": {"looking"}, "back": {"/"}})
		if resp.status != 303 {
			t.Fatalf("acknowledge: %s", resp)
		}
		doc := get(t, "/settings/activity")
		var found string
		for _, tr := range dashAll(doc, "tr") {
			if txt := dashText(tr); strings.Contains(txt, "alert.acknowledged") {
				found = txt
			}
		}
		want := "user:owner@rough.test alert.acknowledged Nightly file server (alert) looking"
		if !strings.HasSuffix(found, want) {
			t.Errorf("the activity row: %q, want it to end %q", found, want)
		}
		var list []struct{ Type, AlertID, JobName string }
		s.admin(t, "GET", r.w.path("/activity"), nil, 200, &list)
		var names []string
		for _, e := range list {
			if e.Type == "alert.acknowledged" && e.AlertID == r.missingAlert {
				names = append(names, e.JobName)
			}
		}
		if len(names) != 1 || names[0] != "Nightly file server" {
			t.Errorf("admin activity: the acknowledgement names %q", names)
		}
	})

	t.Run("404 has the navigation", func(t *testing.T) {
		resp := s.page(t, "GET", "/no/such/page", sess, nil)
		doc := dashParse(t, resp.body)
		nav := dashAll(doc, "nav", "aria-label", "Main")
		if resp.status != 404 || len(nav) != 1 || dashText(nav[0]) != "Attention Clients Jobs Alerts Settings" {
			t.Errorf("404 signed in: %s, navigation %d", resp, len(nav))
		}
		if !strings.Contains(dashText(doc), "Not found There is no page at this address.") {
			t.Errorf("404 text: %s", dashText(doc))
		}
		resp = s.page(t, "GET", "/no/such/page", "", nil)
		if resp.status != 303 && (resp.status != 404 || len(dashAll(dashParse(t, resp.body), "nav", "aria-label", "Main")) != 0) {
			t.Errorf("404 signed out: %s", resp)
		}
		resp = s.page(t, "GET", "/jobs/"+r.w.id, sess, nil)
		if nav := dashAll(dashParse(t, resp.body), "nav", "aria-label", "Main"); resp.status != 404 || len(nav) != 1 {
			t.Errorf("an unknown job: %s, navigation %d", resp, len(nav))
		}
	})

	t.Run("Job results paged", func(t *testing.T) {
		for _, tc := range []struct {
			page       string
			rows       int
			prev, next string
		}{
			{"", 20, "", "/jobs/" + r.busy + "?page=2"},
			{"?page=2", 20, "/jobs/" + r.busy + "?page=1", "/jobs/" + r.busy + "?page=3"},
			{"?page=3", 5, "/jobs/" + r.busy + "?page=2", ""},
		} {
			doc := get(t, "/jobs/"+r.busy+tc.page)
			if n := len(dashAll(doc, "td", "data-label", "Received")); n != tc.rows {
				t.Errorf("page %q: %d results, want %d", tc.page, n, tc.rows)
			}
			if h := dashAll(doc, "h2", "id", "results"); len(h) != 1 || dashText(h[0]) != "Results (45)" {
				t.Errorf("page %q: no heading Results (45)", tc.page)
			}
			for rel, want := range map[string]string{"prev": tc.prev, "next": tc.next} {
				got := ""
				if a := dashAll(doc, "a", "rel", rel); len(a) == 1 {
					got = dashAttr(a[0], "href")
				}
				if got != want {
					t.Errorf("page %q: %s link %q, want %q", tc.page, rel, got, want)
				}
			}
		}
	})

	t.Run("API reference linked", func(t *testing.T) {
		a := dashAll(get(t, "/settings/keys"), "a", "href", "/api/v1/docs")
		if len(a) != 1 || dashText(a[0]) != "the API reference" || dashAttr(a[0], "hx-boost") != "false" {
			t.Errorf("the keys page's link to /api/v1/docs: %d", len(a))
		}
	})
}
