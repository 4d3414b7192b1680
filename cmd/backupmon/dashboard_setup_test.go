package main

// End-to-end tests of the dashboard's set-up pages and trends against the
// real binary over plain HTTP (docs/decisions.md "Set-up in the dashboard",
// "Size drops"): every role's rights on them, the admin API's own messages
// on bad input with nothing changed, the ingest address and the ready
// lines, a report key shown once, the trend charts' points, and the size
// drop: flagged on the job page and in the queue, sent to channels as a
// notice, with no alert and no REST answer changed (dashboard_trend_test.go
// holds the trend and size-drop tests). dashboard_setup_e2e_test.go
// walks the same pages in Chromium. Names start with "setup".

import (
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"backupmon/internal/testserver"
)

func TestDashboardSetup(t *testing.T) {
	s := dashStart(t)
	for _, part := range []struct {
		name string
		run  func(*testing.T, *dashServer)
	}{{"Roles", setupRoles}, {"AdminMessages", setupMessages}, {"ClientsAndJobs", setupFlow}, {"ReportKeyAndLines", setupReportKey}, {"TrendPoints", setupTrend}} {
		t.Run(part.name, func(t *testing.T) { part.run(t, s) })
	}
}

// setupJobForm is a valid job form for client cid.
func setupJobForm(cid, name string) url.Values {
	return url.Values{"clientId": {cid}, "name": {name}, "vendor": {"veeam"}, "deviceName": {"File server"}, "deviceType": {"server"},
		"hostname": {"fs01.example"}, "intervalMinutes": {"1440"}, "graceMinutes": {"60"}, "slaTarget": {"95"},
		"expectedDays": {"mon", "tue", "wed", "thu", "fri", "sat", "sun"}}
}

// setupState is what the admin API says of a workspace's clients and jobs,
// to check that a refused change changed nothing.
func (s *dashServer) setupState(t testing.TB, w *dashWS) string {
	t.Helper()
	_, clients := s.adminRaw(t, "GET", w.path("/clients"), nil)
	_, jobs := s.adminRaw(t, "GET", w.path("/jobs"), nil)
	return clients + "\n" + jobs
}

// setupRoles: owners and admins get the set-up pages and forms and their
// actions work; members and viewers get none of the forms, and each action
// answers them 403 and changes nothing.
func setupRoles(t *testing.T, s *dashServer) {
	w := s.workspace(t, "setup-roles", dashJobs[:1])
	job := w.jobs[dashJobs[0].name]
	for _, role := range dashRoles {
		t.Run(role, func(t *testing.T) {
			sess := s.login(t, w.users[role])
			manage := role == "owner" || role == "admin"
			// What the pages offer.
			pages := []struct{ path, marker string }{
				{"/clients", `action="/clients"`},
				{"/clients/" + w.clients[0], `id="add-job"`},
				{"/jobs/" + job, `id="edit-job"`},
				{"/jobs/" + job, `id="report-key-form"`},
			}
			for _, p := range pages {
				r := s.page(t, "GET", p.path, sess, nil)
				if r.status != 200 || strings.Contains(r.body, p.marker) != manage {
					t.Errorf("%s as %s: %d, shows %s: %v, want %v", p.path, role, r.status, p.marker, !manage, manage)
				}
			}
			// Owners and admins read the ingest address (an admin-only
			// secret, as in the APIs); members and viewers do not.
			if r := s.page(t, "GET", "/jobs/"+job, sess, nil); strings.Contains(r.body, w.ingest[dashJobs[0].name]) != manage {
				t.Errorf("the job page shows %s its ingest address %s: %v, want %v", role, w.ingest[dashJobs[0].name], !manage, manage)
			}
			for _, p := range []string{"/jobs/new", "/jobs/" + job + "/edit"} {
				r := s.page(t, "GET", p, sess, nil)
				if want := map[bool]int{true: 200, false: 403}[manage]; r.status != want {
					t.Errorf("GET %s as %s: %s, want %d", p, role, r, want)
				}
			}
			// The actions.
			tag := role
			actions := []struct {
				path string
				form url.Values
			}{
				{"/clients", url.Values{"name": {"Client by " + tag}}},
				{"/clients/" + w.clients[1], url.Values{"name": {"Renamed by " + tag}}},
				{"/clients/" + w.clients[1], url.Values{"status": {"paused"}}},
				{"/jobs", setupJobForm(w.clients[1], "Job by "+tag)},
				{"/jobs/" + job + "/edit", func() url.Values {
					f := setupJobForm("", "Edited by "+tag)
					f.Del("clientId")
					return f
				}()},
				{"/jobs/" + job + "/report-key", url.Values{"name": {"Key by " + tag}}},
			}
			for _, a := range actions {
				before := s.setupState(t, w) + fmt.Sprint(len(s.adminKeys(t, w)))
				r := s.post(t, a.path, sess, a.form)
				after := s.setupState(t, w) + fmt.Sprint(len(s.adminKeys(t, w)))
				switch {
				case !manage && (r.status != 403 || !strings.Contains(r.body, dashNoRole)):
					t.Errorf("POST %s as %s: %s, want 403 %q", a.path, role, r, dashNoRole)
				case !manage && before != after:
					t.Errorf("POST %s as %s was refused but changed the workspace", a.path, role)
				case manage && (r.status != 303 && r.status != 200 || before == after):
					t.Errorf("POST %s as %s: %s, want it done", a.path, role, r)
				}
			}
			// Back to active for the next role's pause.
			s.admin(t, "PATCH", w.path("/clients/"+w.clients[1]), map[string]any{"status": "active"}, 200, nil)
		})
	}
	// Delete, last: an admin's deletion works, a member's does not.
	member := s.login(t, w.users["member"])
	if r := s.post(t, "/jobs/"+job+"/delete", member, url.Values{"confirm": {s.c.For(t).Job(w.id, job)["name"].(string)}}); r.status != 403 {
		t.Errorf("POST delete as member: %s, want 403", r)
	}
	admin := s.login(t, w.users["admin"])
	name := s.c.For(t).Job(w.id, job)["name"].(string)
	if r := s.post(t, "/jobs/"+job+"/delete", admin, url.Values{"confirm": {name}}); r.status != 303 || s.location(r) != "/clients/"+w.clients[0] {
		t.Errorf("POST delete as admin: %s, want 303 to the client", r)
	}
	if st, _ := s.adminRaw(t, "GET", w.path("/jobs/"+job), nil); st != 404 {
		t.Errorf("the deleted job answers %d in the admin API, want 404", st)
	}
}

// setupMessages: each bad input gets, on the dashboard, the very message
// the admin API answers for the same value (400), and changes nothing.
func setupMessages(t *testing.T, s *dashServer) {
	w := s.workspace(t, "setup-msgs", dashJobs[:1])
	job := w.jobs[dashJobs[0].name]
	sess := s.login(t, w.users["owner"])
	cid := w.clients[0]
	long := strings.Repeat("x", 201)
	type apiCase struct {
		name   string
		form   func(url.Values) // the change to a valid form
		body   func(map[string]any)
		method string // the admin call: POST (create) or PATCH (edit)
	}
	device := func(m map[string]any) map[string]any { return m["device"].(map[string]any) }
	schedule := func(m map[string]any) map[string]any { return m["schedule"].(map[string]any) }
	cases := []apiCase{
		{"empty name", func(f url.Values) { f.Set("name", "") }, func(m map[string]any) { m["name"] = "" }, "POST"},
		{"long name", func(f url.Values) { f.Set("name", long) }, func(m map[string]any) { m["name"] = long }, "POST"},
		{"unknown vendor", func(f url.Values) { f.Set("vendor", "tapes") }, func(m map[string]any) { m["vendor"] = "tapes" }, "POST"},
		{"unknown device type", func(f url.Values) { f.Set("deviceType", "toaster") }, func(m map[string]any) { device(m)["type"] = "toaster" }, "POST"},
		{"empty hostname", func(f url.Values) { f.Set("hostname", " ") }, func(m map[string]any) { device(m)["hostname"] = " " }, "POST"},
		{"interval too short", func(f url.Values) { f.Set("intervalMinutes", "2") }, func(m map[string]any) { schedule(m)["intervalMinutes"] = 2 }, "POST"},
		{"interval not a number", func(f url.Values) { f.Set("intervalMinutes", "daily") }, func(m map[string]any) { schedule(m)["intervalMinutes"] = "daily" }, "POST"},
		{"interval missing", func(f url.Values) { f.Set("intervalMinutes", "") }, func(m map[string]any) { delete(schedule(m), "intervalMinutes") }, "POST"},
		{"grace too long", func(f url.Values) { f.Set("graceMinutes", "99999") }, func(m map[string]any) { schedule(m)["graceMinutes"] = 99999 }, "POST"},
		{"no expected day", func(f url.Values) { f.Del("expectedDays") }, func(m map[string]any) { schedule(m)["expectedDays"] = []string{} }, "POST"},
		{"unknown day", func(f url.Values) { f["expectedDays"] = []string{"Mon"} }, func(m map[string]any) { schedule(m)["expectedDays"] = []string{"Mon"} }, "POST"},
		{"SLA over 100", func(f url.Values) { f.Set("slaTarget", "101") }, func(m map[string]any) { m["slaTarget"] = 101 }, "POST"},
		{"SLA not a number", func(f url.Values) { f.Set("slaTarget", "high") }, func(m map[string]any) { m["slaTarget"] = "high" }, "POST"},
		{"unknown client", func(f url.Values) { f.Set("clientId", "0190f0a0-0000-7000-8000-000000000000") }, func(m map[string]any) { m["clientId"] = "0190f0a0-0000-7000-8000-000000000000" }, "POST"},
		{"edit: interval too short", func(f url.Values) { f.Set("intervalMinutes", "3") }, func(m map[string]any) { schedule(m)["intervalMinutes"] = 3 }, "PATCH"},
		{"edit: empty device name", func(f url.Values) { f.Set("deviceName", "") }, func(m map[string]any) { device(m)["name"] = "" }, "PATCH"},
		{"edit: unknown vendor", func(f url.Values) { f.Set("vendor", "x") }, func(m map[string]any) { m["vendor"] = "x" }, "PATCH"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := testserver.JobBody(cid, "Valid job", map[string]any{"intervalMinutes": 1440, "graceMinutes": 60,
				"expectedDays": []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}}, nil)
			body["vendor"] = "veeam"
			body["device"] = map[string]any{"name": "File server", "type": "server", "hostname": "fs01.example"}
			body["slaTarget"] = 95
			c.body(body)
			path, form := w.path("/jobs"), setupJobForm(cid, "Valid job")
			page := "/jobs"
			if c.method == "PATCH" {
				delete(body, "clientId")
				path, page = w.path("/jobs/"+job), "/jobs/"+job+"/edit"
				form.Del("clientId")
			}
			c.form(form)
			before := s.setupState(t, w)
			st, raw := s.adminRaw(t, c.method, path, body)
			var e struct {
				Error struct{ Code, Message string }
			}
			if err := json.Unmarshal([]byte(raw), &e); err != nil || st != 400 || e.Error.Message == "" {
				t.Fatalf("admin %s %s: %d %s, want 400 with a message", c.method, path, st, raw)
			}
			r := s.post(t, page, sess, form)
			want := "Not saved: " + e.Error.Message + "."
			if r.status != 400 || !strings.Contains(dashVisible(r.body), want) {
				t.Errorf("POST %s: %s, want 400 with %q (the admin API's message)", page, r, want)
			}
			if after := s.setupState(t, w); after != before {
				t.Errorf("a refused form changed the workspace")
			}
		})
	}
	// Clients: the admin API's messages, as the flash of the redirect.
	clientCases := []struct {
		name, path string
		form       url.Values
		body       map[string]any
		method     string
	}{
		{"client: empty name", "/clients", url.Values{"name": {""}}, map[string]any{"name": ""}, "POST"},
		{"client: long name", "/clients", url.Values{"name": {long}}, map[string]any{"name": long}, "POST"},
		{"client: rename to blank", "/clients/" + cid, url.Values{"name": {"   "}}, map[string]any{"name": "   "}, "PATCH"},
		{"client: unknown status", "/clients/" + cid, url.Values{"status": {"frozen"}}, map[string]any{"status": "frozen"}, "PATCH"},
	}
	for _, c := range clientCases {
		t.Run(c.name, func(t *testing.T) {
			path := w.path("/clients")
			if c.method == "PATCH" {
				path = w.path("/clients/" + cid)
			}
			before := s.setupState(t, w)
			st, raw := s.adminRaw(t, c.method, path, c.body)
			var e struct{ Error struct{ Message string } }
			_ = json.Unmarshal([]byte(raw), &e)
			if st != 400 || e.Error.Message == "" {
				t.Fatalf("admin %s %s: %d %s, want 400", c.method, path, st, raw)
			}
			r := s.post(t, c.path, sess, c.form)
			prefix := map[string]string{"POST": "Not added: ", "PATCH": "Not changed: "}[c.method]
			if want := "!" + prefix + e.Error.Message + "."; r.status != 303 || r.flash() != want {
				t.Errorf("POST %s: %s, flash %q, want 303 with %q", c.path, r, r.flash(), want)
			}
			if after := s.setupState(t, w); after != before {
				t.Errorf("a refused form changed the workspace")
			}
		})
	}
	// The size-drop threshold, which the admin API does not take: the
	// engine's own message.
	f := setupJobForm(cid, "Valid job")
	f.Set("sizeDropPercent", "101")
	before := s.setupState(t, w)
	if r := s.post(t, "/jobs", sess, f); r.status != 400 || !strings.Contains(dashVisible(r.body), "Not saved: sizeDropPercent must be an integer from 0 to 100.") {
		t.Errorf("a threshold of 101: %s", r)
	}
	if s.setupState(t, w) != before {
		t.Errorf("a refused threshold added the job anyway")
	}
}

// setupFlow: an owner adds a client and a job, edits, pauses, archives and
// deletes them; the admin API sees each change as made.
func setupFlow(t *testing.T, s *dashServer) {
	w := s.workspace(t, "setup-flow", nil)
	owner := w.users["owner"]
	sess := s.login(t, owner)

	r := s.post(t, "/clients", sess, url.Values{"name": {"Osprey Vets"}})
	cid := strings.TrimPrefix(s.location(r), "/clients/")
	if r.status != 303 || cid == "" {
		t.Fatalf("POST /clients: %s", r)
	}
	c := s.setupClient(t, w, cid)
	// The page the redirect leads to shows its message once, and clears
	// it where the redirect set it (path /).
	shown := s.page(t, "GET", "/clients/"+cid, sess, nil, "Cookie", "flash="+r.cookie("flash").Value)
	if gone := shown.cookie("flash"); !strings.Contains(dashVisible(shown.body), "Client added.") || gone == nil || gone.Path != "/" || !gone.Expires.Before(dashT0) {
		t.Errorf("the client's page after the redirect: flash cookie %+v, want the message shown and the cookie of path / deleted", gone)
	}
	if c.Name != "Osprey Vets" || c.Status != "active" {
		t.Errorf("the new client reads %+v", c)
	}
	// The job form offers the client, chosen.
	if r := s.page(t, "GET", "/jobs/new?client="+cid, sess, nil); r.status != 200 || !strings.Contains(r.body, `<option value="`+cid+`" selected>Osprey Vets</option>`) {
		t.Errorf("GET /jobs/new?client=: %s, want the client chosen", r)
	}
	f := setupJobForm(cid, "Nightly image")
	f.Set("vendor", "macrium")
	f["expectedDays"] = []string{"mon", "wed", "fri"}
	f.Set("sizeDropPercent", "30")
	r = s.post(t, "/jobs", sess, f)
	jid := strings.TrimPrefix(s.location(r), "/jobs/")
	if r.status != 303 || !strings.HasPrefix(s.location(r), "/jobs/") {
		t.Fatalf("POST /jobs: %s", r)
	}
	j := s.c.For(t).Job(w.id, jid)
	sc, _ := j["schedule"].(map[string]any)
	if j["name"] != "Nightly image" || j["vendor"] != "macrium" || fmt.Sprint(sc["expectedDays"], sc["graceMinutes"], sc["intervalMinutes"]) != "[mon wed fri] 60 1440" || j["clientId"] != cid {
		t.Errorf("the new job reads %v", j)
	}
	page := s.page(t, "GET", "/jobs/"+jid, sess, nil)
	if !strings.Contains(dashVisible(page.body), "flagged under 30% of the median of the last 10 successful runs") {
		t.Errorf("the job page does not show its own threshold of 30%%")
	}
	if !strings.Contains(page.body, `value="`+j["ingestAddress"].(string)+`"`) || !strings.Contains(dashVisible(page.body), "How to point Macrium Reflect at it") ||
		!strings.Contains(dashVisible(page.body), "the e-mail notification address") {
		t.Errorf("the job page lacks the ingest address %v or Macrium's steps", j["ingestAddress"])
	}
	// The edit form shows the job as it is; saving it unchanged logs nothing.
	acts := len(s.activity(t, w))
	edit := s.page(t, "GET", "/jobs/"+jid+"/edit", sess, nil)
	for _, want := range []string{`name="name" maxlength="200" value="Nightly image"`, `<option value="macrium" selected>`, `value="mon" checked`, `value="tue">`, `name="sizeDropPercent" inputmode="numeric" value="30"`} {
		if !strings.Contains(edit.body, want) {
			t.Errorf("the edit form lacks %s", want)
		}
	}
	same := setupJobForm("", "Nightly image")
	same.Del("clientId")
	same.Set("vendor", "macrium")
	same["expectedDays"] = []string{"mon", "wed", "fri"}
	same.Set("sizeDropPercent", "30")
	if r := s.post(t, "/jobs/"+jid+"/edit", sess, same); r.status != 303 || len(s.activity(t, w)) != acts {
		t.Errorf("saving the form unchanged: %s, %d activity entries, want %d", r, len(s.activity(t, w)), acts)
	}
	// A change: name, interval and the threshold back to the default.
	same.Set("name", "Nightly image (new NAS)")
	same.Set("intervalMinutes", "720")
	same.Set("sizeDropPercent", "")
	if r := s.post(t, "/jobs/"+jid+"/edit", sess, same); r.status != 303 || s.location(r) != "/jobs/"+jid {
		t.Fatalf("POST edit: %s", r)
	}
	j = s.c.For(t).Job(w.id, jid)
	if j["name"] != "Nightly image (new NAS)" || fmt.Sprint(j["schedule"].(map[string]any)["intervalMinutes"]) != "720" {
		t.Errorf("after the edit the job reads %v", j)
	}
	list := dashFindActivity(s.activity(t, w), "job.updated", jid)
	if len(list) != 3 || list[0].Actor != "user:"+owner.email || list[1].Actor != "user:"+owner.email {
		t.Errorf("activity after the edit: %+v, want three job.updated by user:%s (the threshold at creation, the fields, the threshold)", list, owner.email)
	}
	if !strings.Contains(dashVisible(s.page(t, "GET", "/jobs/"+jid, sess, nil).body), "flagged under 50% of the median of the last 10 successful runs (the default)") {
		t.Errorf("the job page does not show the default threshold after clearing it")
	}
	// Rename, pause, archive and make active again.
	steps := []struct {
		form                url.Values
		wantName, wantState string
	}{
		{url.Values{"name": {"Osprey Veterinary"}}, "Osprey Veterinary", "active"},
		{url.Values{"status": {"paused"}}, "Osprey Veterinary", "paused"},
		{url.Values{"status": {"archived"}}, "Osprey Veterinary", "archived"},
		{url.Values{"status": {"active"}}, "Osprey Veterinary", "active"},
	}
	for _, st := range steps {
		r := s.post(t, "/clients/"+cid, sess, st.form)
		c = s.setupClient(t, w, cid)
		if r.status != 303 || r.flash() == "" || strings.HasPrefix(r.flash(), "!") || c.Name != st.wantName || c.Status != st.wantState {
			t.Errorf("POST /clients/%s %v: %s (flash %q); the client reads %+v", cid, st.form, r, r.flash(), c)
		}
	}
	// Delete: the name must be typed.
	if r := s.post(t, "/jobs/"+jid+"/delete", sess, url.Values{"confirm": {"nightly"}}); r.status != 303 || !strings.HasPrefix(r.flash(), "!Not deleted") {
		t.Errorf("delete without the name: %s, flash %q", r, r.flash())
	}
	if st, _ := s.adminRaw(t, "GET", w.path("/jobs/"+jid), nil); st != 200 {
		t.Fatalf("a delete without confirmation deleted the job")
	}
	if r := s.post(t, "/jobs/"+jid+"/delete", sess, url.Values{"confirm": {"Nightly image (new NAS)"}}); r.status != 303 || s.location(r) != "/clients/"+cid {
		t.Errorf("delete: %s", r)
	}
	if st, _ := s.adminRaw(t, "GET", w.path("/jobs/"+jid), nil); st != 404 {
		t.Errorf("the deleted job answers %d, want 404", st)
	}
	// Each change names the owner in the activity log, as every change
	// made in the dashboard does.
	by := "user:" + owner.email
	entries := s.activity(t, w)
	for _, typ := range []string{"client.created", "client.updated", "client.paused", "client.archived", "client.resumed"} {
		if list := dashFindActivity(entries, typ, ""); len(list) == 0 || list[0].Actor != by {
			t.Errorf("no %s entry by %s in the activity log", typ, by)
		}
	}
	for _, typ := range []string{"job.created", "job.deleted"} {
		if list := dashFindActivity(entries, typ, jid); len(list) != 1 || list[0].Actor != by {
			t.Errorf("%s entries of the job: %+v, want one by %s", typ, list, by)
		}
	}
}

type setupClientView struct{ ID, Name, Status string }

// setupClient returns a client as the admin API lists it.
func (s *dashServer) setupClient(t testing.TB, w *dashWS, id string) setupClientView {
	t.Helper()
	var list []setupClientView
	s.admin(t, "GET", w.path("/clients"), nil, 200, &list)
	for _, c := range list {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no client %s in the admin API's list", id)
	return setupClientView{}
}

var setupSecret = regexp.MustCompile(`<output class="secret" id="new-key">(svc_live_[0-9a-f]{48})</output>`)

// setupReportKey: the ready lines name the job's report address; a report
// key made on the page is shown once, in them, and the curl line as shown
// reports a run.
func setupReportKey(t *testing.T, s *dashServer) {
	w := s.workspace(t, "setup-key", dashJobs[:1])
	job := w.jobs[dashJobs[0].name]
	sess := s.login(t, w.users["admin"])
	page := s.page(t, "GET", "/jobs/"+job, sess, nil)
	reportURL := s.c.PublicURL + "/api/v1/jobs/" + job + "/report"
	curl := "curl -s -X POST " + reportURL + " -H 'Authorization: Bearer <report key>' -H 'Content-Type: application/json' -d '{\"status\":\"ok\",\"duration_seconds\":1200,\"size_bytes\":5368709120}'"
	ps := "Invoke-RestMethod -Method Post -Uri '" + reportURL + "' -Headers @{ Authorization = 'Bearer <report key>' } -ContentType 'application/json' -Body '{\"status\":\"ok\",\"duration_seconds\":1200,\"size_bytes\":5368709120}'"
	if !strings.Contains(page.body, html.EscapeString(curl)) || !strings.Contains(page.body, html.EscapeString(ps)) {
		t.Errorf("the job page lacks the ready lines\n%s\n%s", curl, ps)
	}
	keys := len(s.adminKeys(t, w))
	r := s.post(t, "/jobs/"+job+"/report-key", sess, url.Values{"name": {"Agent on fs01"}})
	m := setupSecret.FindStringSubmatch(r.body)
	if r.status != 200 || m == nil {
		t.Fatalf("POST report-key: %s, want 200 with the key", r)
	}
	found := false
	for _, k := range s.adminKeys(t, w) {
		found = found || k.Name == "Agent on fs01" && k.Type == "report" && k.Prefix == m[1][:16]
	}
	if !found || len(s.adminKeys(t, w)) != keys+1 {
		t.Errorf("the admin API's keys %+v, want the new report key among them", s.adminKeys(t, w))
	}
	withKey := strings.ReplaceAll(curl, "<report key>", m[1])
	if !strings.Contains(r.body, html.EscapeString(withKey)) || !strings.Contains(r.body, html.EscapeString(strings.ReplaceAll(ps, "<report key>", m[1]))) {
		t.Errorf("the answer's ready lines do not carry the new key")
	}
	res, err := testserver.Curl(s.c.HTTP, withKey)
	if err != nil || res.Status != 200 || res.JSON["ok"] != true {
		t.Errorf("the curl line as shown: %v %d %s", err, res.Status, res.Body)
	}
	if again := s.page(t, "GET", "/jobs/"+job, sess, nil); strings.Contains(again.body, m[1]) {
		t.Errorf("the key is shown again on the job page")
	}
	// A bad name gets the admin API's message, and no key.
	keys = len(s.adminKeys(t, w))
	st, raw := s.adminRaw(t, "POST", w.path("/keys"), map[string]any{"name": "", "type": "report"})
	var e struct{ Error struct{ Message string } }
	_ = json.Unmarshal([]byte(raw), &e)
	r = s.post(t, "/jobs/"+job+"/report-key", sess, url.Values{"name": {""}})
	if want := "Not created: " + e.Error.Message + "."; st != 400 || r.status != 400 || !strings.Contains(dashVisible(r.body), want) || len(s.adminKeys(t, w)) != keys {
		t.Errorf("an empty key name: %s, want 400 with %q and no key", r, want)
	}
}
