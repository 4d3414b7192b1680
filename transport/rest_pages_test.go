package transport_test

// Keyset pagination (api.md 4.2, decisions.md 5, docs/decisions.md
// "Cursors"): the orders with their id tie-breaks, every page walked to
// the end with small and changing limits, items inserted and deleted
// between pages, cursors bound to the endpoint, the filters and the first
// page's window, and every kind of bad cursor.

import (
	"bytes"
	"encoding/base64"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"backupmon/internal/testserver"
)

// rsWalkCount walks like rsWalk and also returns the number of pages.
func rsWalkCount(s *testserver.Server, key, path string, limit int) ([]string, int) {
	s.T.Helper()
	var ids []string
	cursor, pages := "", 0
	for {
		p := path + "?limit=" + strconv.Itoa(limit)
		if strings.Contains(path, "?") {
			p = path + "&limit=" + strconv.Itoa(limit)
		}
		if cursor != "" {
			p += "&cursor=" + url.QueryEscape(cursor)
		}
		pg := rsList(s.T, p, rsGet(s, key, p))
		pages++
		ids = append(ids, rsIDs(pg.Items)...)
		if !pg.HasMore {
			return ids, pages
		}
		cursor = pg.Next
	}
}

func TestRESTPaginationOrders(t *testing.T) {
	s, f := startFixture(t)
	key := f.RestKey
	limits := [][]int{{1}, {2}, {3}, {7}, {100}, {1, 4, 2, 9}, {5, 1}}

	// Clients whose names differ only in case, made out of name order so
	// that the id tie-break shows.
	clients := map[string]string{f.Client: "Globex"}
	for _, n := range []string{"beta", "Alpha", "ALPHA", "gamma", "alpha", "Beta", "globex", "GLOBEX", "Delta", "aLpHa", "_under", "Zed", "zed"} {
		clients[s.NewClient(f.WS, n)] = n
	}
	wantClients := rsSortedByName(clients)
	// Jobs on two clients, also differing only in case.
	jobs := map[string]string{f.Job: "Nightly backup"}
	var second string
	for id, n := range clients {
		if n == "beta" {
			second = id
		}
	}
	secondJobs := map[string]string{}
	for i, n := range []string{"nightly BACKUP", "Nightly Backup", "daily", "DAILY", "Daily", "weekly", "a", "A"} {
		c := f.Client
		if i%2 == 1 {
			c = second
		}
		id := s.NewJob(f.WS, c, n, testserver.Daily())
		jobs[id] = n
		if c == second {
			secondJobs[id] = n
		}
	}
	wantJobs := rsSortedByName(jobs)

	for _, l := range limits {
		s.Advance(time.Minute) // a fresh minute of 300 requests
		rsWantIDs(t, "clients by "+strconv.Itoa(l[0]), rsIDs(rsWalk(s, key, "/clients", l...)), wantClients)
		rsWantIDs(t, "jobs by "+strconv.Itoa(l[0]), rsIDs(rsWalk(s, key, "/jobs", l...)), wantJobs)
		rsWantIDs(t, "jobs of a client by "+strconv.Itoa(l[0]), rsIDs(rsWalk(s, key, "/jobs?clientId="+second, l...)), rsSortedByName(secondJobs))
	}
	// Filters with pages: the search matches a subset, in the same order.
	var alphas []string
	for _, id := range wantClients {
		if strings.EqualFold(clients[id], "alpha") {
			alphas = append(alphas, id)
		}
	}
	rsWantIDs(t, "clients search alpha", rsIDs(rsWalk(s, key, "/clients?search=ALPHA", 1)), alphas)

	// Results: received in a few milliseconds, many in the same one, so
	// that the order is (receivedAt desc, id desc).
	s.Advance(time.Minute)
	keys := []string{f.ReportKey}
	for i := 0; i < 2; i++ {
		k, _ := s.NewKey(f.WS, "report", nil)
		keys = append(keys, k)
	}
	type res struct {
		id string
		at time.Time
	}
	var results []res
	n := 0
	for step := 0; step < 4; step++ {
		for id := range jobs {
			for i := 0; i < 2; i++ {
				r := s.Report(id, keys[n/50], "", `{"status":"ok"}`)
				n++
				if r.Status != 200 {
					t.Fatalf("report: %d %s", r.Status, r.Body)
				}
			}
		}
		s.SetClock(rpNow(s).Add(time.Millisecond))
	}
	for id := range jobs {
		for _, h := range rpHistory(s, f.WS, id) {
			at, _ := time.Parse(time.RFC3339Nano, h["receivedAt"].(string))
			results = append(results, res{h["id"].(string), at})
		}
	}
	slices.SortFunc(results, func(a, b res) int {
		if c := b.at.Compare(a.at); c != 0 {
			return c
		}
		return strings.Compare(b.id, a.id)
	})
	var wantResults, wantSecondResults, wantJobResults []string
	for _, r := range results {
		wantResults = append(wantResults, r.id)
	}
	for _, id := range wantResults {
		for _, h := range rpHistory(s, f.WS, f.Job) {
			if h["id"] == id {
				wantJobResults = append(wantJobResults, id)
			}
		}
	}
	for _, id := range wantResults {
		for j := range secondJobs {
			for _, h := range rpHistory(s, f.WS, j) {
				if h["id"] == id {
					wantSecondResults = append(wantSecondResults, id)
				}
			}
		}
	}
	if len(wantResults) != 72 {
		t.Fatalf("%d results, want 72", len(wantResults))
	}
	s.Advance(time.Minute)
	for _, l := range limits {
		s.Advance(time.Minute) // a fresh minute of 300 requests
		rsWantIDs(t, "reports by "+strconv.Itoa(l[0]), rsIDs(rsWalk(s, key, "/reports", l...)), wantResults)
		rsWantIDs(t, "reports of a client by "+strconv.Itoa(l[0]), rsIDs(rsWalk(s, key, "/reports?clientId="+second, l...)), wantSecondResults)
		rsWantIDs(t, "reports of a job by "+strconv.Itoa(l[0]), rsIDs(rsWalk(s, key, "/reports?jobId="+f.Job, l...)), wantJobResults)
	}
	// The admin history of a job lists the same order.
	var hist []string
	for _, h := range rpHistory(s, f.WS, f.Job) {
		hist = append(hist, h["id"].(string))
	}
	rsWantIDs(t, "admin history", hist, wantJobResults)

	// Alerts: one failed report per job, in two milliseconds; the order is
	// (createdAt desc, id desc), the admin list's order too.
	s.Advance(time.Minute)
	i := 0
	for id := range jobs {
		if i == 4 {
			s.SetClock(rpNow(s).Add(time.Millisecond))
		}
		admReport(s, id, f.ReportKey, "failed")
		i++
	}
	var wantAlerts []string
	for _, a := range rpAlerts(s, f.WS) {
		wantAlerts = append(wantAlerts, a["id"].(string))
	}
	sorted := slices.Clone(wantAlerts)
	slices.Sort(sorted)
	slices.Reverse(sorted)
	rsWantIDs(t, "alerts in the same two milliseconds sort by id desc", wantAlerts, sorted)
	for _, l := range limits {
		s.Advance(time.Minute) // a fresh minute of 300 requests
		rsWantIDs(t, "alerts by "+strconv.Itoa(l[0]), rsIDs(rsWalk(s, key, "/alerts", l...)), wantAlerts)
		rsWantIDs(t, "unresolved alerts by "+strconv.Itoa(l[0]), rsIDs(rsWalk(s, key, "/alerts?status=unresolved", l...)), wantAlerts)
	}

	rpRun(t, s, "no empty last page", func(t *testing.T) {
		// 9 jobs: 3 pages of 3, the last saying there is no more.
		ids, pages := rsWalkCount(s, key, "/jobs", 3)
		if len(ids) != 9 || pages != 3 {
			t.Errorf("9 jobs by 3: %d items in %d pages", len(ids), pages)
		}
		ids, pages = rsWalkCount(s, key, "/jobs", 9)
		if len(ids) != 9 || pages != 1 {
			t.Errorf("9 jobs by 9: %d items in %d pages", len(ids), pages)
		}
		// An empty list.
		p := rsList(t, "empty", rsGet(s, key, "/jobs?status=missing"))
		if len(p.Items) != 0 || p.HasMore || p.Next != "" {
			t.Errorf("empty list: %+v", p)
		}
	})
}

func TestRESTPaginationChanges(t *testing.T) {
	s, f := startFixture(t)
	key := f.RestKey

	rpRun(t, s, "reports arriving between pages", func(t *testing.T) {
		for i := 0; i < 12; i++ {
			admReport(s, f.Job, f.ReportKey, "ok")
		}
		before := rsIDs(rsWalk(s, key, "/reports", 100))
		p1 := rsList(t, "page 1", rsGet(s, key, "/reports?limit=5"))
		// New reports in the same millisecond of the stopped clock, and
		// later ones.
		other, _ := s.NewKey(f.WS, "report", nil)
		for i := 0; i < 5; i++ {
			admReport(s, f.Job, other, "ok")
		}
		s.Advance(time.Second)
		admReport(s, f.Job, other, "failed")
		got := rsIDs(p1.Items)
		cursor := p1.Next
		for cursor != "" {
			p := rsList(t, "next page", rsGet(s, key, "/reports?limit=4&cursor="+url.QueryEscape(cursor)))
			got = append(got, rsIDs(p.Items)...)
			cursor = p.Next
			admReport(s, f.Job, other, "ok")
		}
		rsWantIDs(t, "pages with reports arriving", got, before)
	})

	rpRun(t, s, "alerts arriving between pages", func(t *testing.T) {
		for i := 0; i < 6; i++ {
			j := s.NewJob(f.WS, f.Client, "Alerting "+strconv.Itoa(i), testserver.Daily())
			admReport(s, j, f.ReportKey, "failed")
		}
		before := rsIDs(rsWalk(s, key, "/alerts?status=unresolved", 100))
		p := rsList(t, "page 1", rsGet(s, key, "/alerts?status=unresolved&limit=2"))
		got := rsIDs(p.Items)
		for i := 0; p.HasMore; i++ {
			// A new alert on a new job, and one of the listed alerts resolved.
			j := s.NewJob(f.WS, f.Client, "Late "+strconv.Itoa(i), testserver.Daily())
			admReport(s, j, f.ReportKey, "failed")
			p = rsList(t, "next page", rsGet(s, key, "/alerts?status=unresolved&limit=2&cursor="+url.QueryEscape(p.Next)))
			got = append(got, rsIDs(p.Items)...)
		}
		rsWantIDs(t, "pages with alerts arriving", got, before)
	})

	rpRun(t, s, "clients and jobs arriving and leaving between pages", func(t *testing.T) {
		names := map[string]string{}
		for _, c := range rsWalk(s, key, "/clients", 100) {
			names[c["id"].(string)] = c["name"].(string)
		}
		for _, n := range []string{"c", "e", "g", "i", "k"} {
			names[s.NewClient(f.WS, n)] = n
		}
		p := rsList(t, "page 1", rsGet(s, key, "/clients?limit=2")) // c, e
		got := rsIDs(p.Items)
		// One before the position (not shown: its place was passed), one
		// after it (shown when its place comes).
		s.NewClient(f.WS, "a")
		after := s.NewClient(f.WS, "h")
		names[after] = "h"
		p = rsList(t, "page 2", rsGet(s, key, "/clients?limit=2&cursor="+url.QueryEscape(p.Next))) // g, Globex
		got = append(got, rsIDs(p.Items)...)
		p = rsList(t, "page 3", rsGet(s, key, "/clients?limit=10&cursor="+url.QueryEscape(p.Next))) // h, i, k
		got = append(got, rsIDs(p.Items)...)
		if p.HasMore {
			t.Errorf("page 3 says there is more")
		}
		rsWantIDs(t, "clients with arrivals", got, rsSortedByName(names))

		// Jobs: the job a cursor points at is deleted; the next page goes on
		// from its place.
		var js []string
		for _, n := range []string{"j1", "j2", "j3", "j4", "j5"} {
			js = append(js, s.NewJob(f.WS, f.Client, n, testserver.Daily()))
		}
		p = rsList(t, "jobs page 1", rsGet(s, key, "/jobs?search=j&limit=2")) // j1, j2
		rsWantIDs(t, "jobs page 1", rsIDs(p.Items), js[:2])
		s.MustAdmin(204, "DELETE", "/workspaces/"+f.WS+"/jobs/"+js[1], nil)
		s.MustAdmin(204, "DELETE", "/workspaces/"+f.WS+"/jobs/"+js[3], nil)
		p = rsList(t, "jobs page 2", rsGet(s, key, "/jobs?search=j&limit=2&cursor="+url.QueryEscape(p.Next)))
		rsWantIDs(t, "jobs after deletions", rsIDs(p.Items), []string{js[2], js[4]})
		if p.HasMore {
			t.Errorf("jobs page 2 says there is more")
		}
	})

	rpRun(t, s, "the first page's window holds for every page", func(t *testing.T) {
		// /reports without from/to covers 30 days back from the first
		// page's now; 40 days later the next pages still cover that window.
		all := rsIDs(rsWalk(s, key, "/reports", 100))
		p := rsList(t, "page 1", rsGet(s, key, "/reports?limit=10"))
		got := rsIDs(p.Items)
		s.SetClock(rpNow(s).Add(40 * 24 * time.Hour))
		if n := len(rsItems(t, "now empty", rsGet(s, key, "/reports"))); n != 0 {
			t.Fatalf("40 days later the default window still lists %d results", n)
		}
		for p.HasMore {
			p = rsList(t, "next page", rsGet(s, key, "/reports?limit=10&cursor="+url.QueryEscape(p.Next)))
			got = append(got, rsIDs(p.Items)...)
		}
		rsWantIDs(t, "pages of the first window", got, all)
	})
}

func TestRESTCursors(t *testing.T) {
	s, f := startFixture(t)
	key := f.RestKey
	for i := 0; i < 4; i++ {
		c := s.NewClient(f.WS, "Client "+strconv.Itoa(i))
		j := s.NewJob(f.WS, c, "Job "+strconv.Itoa(i), testserver.Daily())
		admReport(s, j, f.ReportKey, "failed")
	}
	next := func(path string) string {
		t.Helper()
		p := rsList(t, path, rsGet(s, key, path))
		if p.Next == "" {
			t.Fatalf("%s: no next page", path)
		}
		return p.Next
	}
	bad := func(what, path string) {
		t.Helper()
		rsWantErr(t, what+": "+path, rsGet(s, key, path), 400, "INVALID_PARAMETER", "cursor")
	}
	ok := func(what, path string) rsPage {
		t.Helper()
		return rsList(t, what+": "+path, rsGet(s, key, path))
	}
	q := url.QueryEscape

	rpRun(t, s, "bound to the filters", func(t *testing.T) {
		c := next("/jobs?status=failed&vendor=veeam&limit=1")
		ok("same filters", "/jobs?status=failed&vendor=veeam&limit=1&cursor="+q(c))
		ok("same filters in another order", "/jobs?vendor=veeam&cursor="+q(c)+"&status=failed")
		ok("another limit", "/jobs?status=failed&vendor=veeam&limit=100&cursor="+q(c))
		bad("no filters", "/jobs?cursor="+q(c))
		bad("one filter fewer", "/jobs?status=failed&cursor="+q(c))
		bad("another value", "/jobs?status=healthy&vendor=veeam&cursor="+q(c))
		bad("a filter more", "/jobs?status=failed&vendor=veeam&search=job&cursor="+q(c))
		bad("a filter more", "/jobs?status=failed&vendor=veeam&clientId="+f.Client+"&cursor="+q(c))
		c = next("/reports?from=2026-03-01&limit=1")
		ok("same window", "/reports?from=2026-03-01&limit=1&cursor="+q(c))
		bad("another from", "/reports?from=2026-03-02&limit=1&cursor="+q(c))
		bad("a to added", "/reports?from=2026-03-01&to=2026-03-04&limit=1&cursor="+q(c))
		c = next("/alerts?status=unresolved&limit=1")
		bad("another status", "/alerts?status=open&limit=1&cursor="+q(c))
		bad("no status", "/alerts?limit=1&cursor="+q(c))
	})

	rpRun(t, s, "bound to the endpoint", func(t *testing.T) {
		cursors := map[string]string{
			"/clients": next("/clients?limit=1"),
			"/jobs":    next("/jobs?limit=1"),
			"/reports": next("/reports?limit=1"),
			"/alerts":  next("/alerts?limit=1"),
		}
		for from, c := range cursors {
			for to := range cursors {
				if to == from {
					ok("own endpoint", to+"?limit=1&cursor="+q(c))
				} else {
					bad("cursor of "+from, to+"?cursor="+q(c))
				}
			}
			// Endpoints without pages do not take a cursor at all.
			for _, p := range []string{"/health", "/workspace", "/clients/" + f.Client, "/jobs/" + f.Job, "/clients/" + f.Client + "/health"} {
				bad("cursor of "+from, p+"?cursor="+q(c))
			}
		}
	})

	rpRun(t, s, "tampered, truncated, random", func(t *testing.T) {
		c := next("/clients?limit=1")
		raw, err := base64.RawURLEncoding.DecodeString(c)
		if err != nil {
			t.Fatalf("cursor %q is not URL-safe base64: %v", c, err)
		}
		flip := func(s string, i int) string {
			b := []byte(s)
			if b[i] == 'A' {
				b[i] = 'B'
			} else {
				b[i] = 'A'
			}
			return string(b)
		}
		for _, i := range []int{0, 1, len(c) / 3, len(c) / 2, len(c) - 2, len(c) - 1} {
			bad("character "+strconv.Itoa(i)+" changed", "/clients?cursor="+q(flip(c, i)))
		}
		// Every other character in the last place, and in a few others:
		// only the cursor as given is accepted (the last character's unused
		// bits included: one cursor has one spelling).
		const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
		for _, i := range []int{len(c) - 1, len(c) - 2, len(c) / 2, 0} {
			s.Advance(time.Minute) // 63 requests each
			for _, ch := range alphabet {
				if byte(ch) == c[i] {
					continue
				}
				v := c[:i] + string(ch) + c[i+1:]
				bad("character "+strconv.Itoa(i)+" made "+string(ch), "/clients?cursor="+q(v))
			}
		}
		// Every byte of the decoded cursor changed in turn.
		s.Advance(time.Minute)
		for i := range raw {
			b := slices.Clone(raw)
			b[i] ^= 0x01
			bad("byte "+strconv.Itoa(i)+" changed", "/clients?cursor="+q(base64.RawURLEncoding.EncodeToString(b)))
		}
		for _, v := range []string{c[:len(c)-1], c[1:], c[:len(c)/2], c + "A", c + c, c + "=", strings.ToUpper(c),
			base64.StdEncoding.EncodeToString(raw), "abc", "x", "!!!!", "%00", " ", strings.Repeat("A", 5000),
			base64.RawURLEncoding.EncodeToString(make([]byte, 80)), base64.RawURLEncoding.EncodeToString(raw[:len(raw)-16])} {
			if v == c {
				continue
			}
			bad("not a cursor", "/clients?cursor="+q(v))
		}
		ok("the cursor itself", "/clients?cursor="+q(c))
	})

	rpRun(t, s, "bound to the workspace", func(t *testing.T) {
		// Another workspace with the same listing: its cursors carry the
		// same endpoint and filters, but not the same workspace.
		g := s.Fixture(testserver.FixtureOptions{})
		s.NewJob(g.WS, g.Client, "Second", testserver.Daily())
		s.NewClient(g.WS, "Initech")
		scoped, _ := s.NewKey(g.WS, "rest", map[string]any{"scopes": []string{"clients:read"}})
		for _, path := range []string{"/jobs?limit=1", "/clients?limit=1"} {
			mine, theirs := next(path), rsList(t, path, rsGet(s, g.RestKey, path)).Next
			rsWantErr(t, "their cursor with my key", rsGet(s, key, path+"&cursor="+q(theirs)), 400, "INVALID_PARAMETER", "cursor")
			rsWantErr(t, "my cursor with their key", rsGet(s, g.RestKey, path+"&cursor="+q(mine)), 400, "INVALID_PARAMETER", "cursor")
			ok("my cursor with my key", path+"&cursor="+q(mine))
			rsList(t, "their cursor with their key", rsGet(s, g.RestKey, path+"&cursor="+q(theirs)))
			// At the parameter step: the scope is checked first.
			if path == "/jobs?limit=1" {
				rsWantErr(t, "my cursor with their key without the scope", rsGet(s, scoped, path+"&cursor="+q(mine)), 403, "INSUFFICIENT_SCOPE", "")
			}
		}
	})

	rpRun(t, s, "opaque: no name inside", func(t *testing.T) {
		secret := "Payroll Ledger Export"
		c := s.NewClient(f.WS, "Quarterly Finance Client")
		s.NewJob(f.WS, c, secret, testserver.Daily())
		for _, path := range []string{"/jobs", "/clients"} {
			var names []string
			for _, it := range rsWalk(s, key, path, 100) {
				name := it["name"].(string)
				names = append(names, name, strings.ToLower(name))
			}
			for cur := next(path + "?limit=1"); cur != ""; {
				raw, err := base64.RawURLEncoding.DecodeString(cur)
				if err != nil {
					t.Fatalf("cursor %q: %v", cur, err)
				}
				for _, n := range names {
					if bytes.Contains(raw, []byte(n)) {
						t.Errorf("%s: cursor %q shows the name %q", path, cur, n)
					}
				}
				cur = ok("next", path+"?limit=1&cursor="+q(cur)).Next
			}
		}
	})

	rpRun(t, s, "after a restart", func(t *testing.T) {
		// Cursors stay valid across restarts (docs/decisions.md): the
		// harness keeps its cursor key, as backupmon serve keeps
		// <data>/cursor.key. The cursor gives the same next page.
		c := next("/jobs?limit=1")
		p := "/jobs?limit=1&cursor=" + q(c)
		before := rsGet(s, f.RestKey, p)
		s.Restart()
		after := rsGet(s, f.RestKey, p)
		if before.Status != 200 || after.Status != 200 || !bytes.Equal(before.Body, after.Body) {
			t.Errorf("the page of a cursor\nbefore the restart: %d %s\nafter it:           %d %s", before.Status, before.Body, after.Status, after.Body)
		}
	})
}
