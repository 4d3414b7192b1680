package transport_test

// Records, shapes and defaults of the admin API (decisions.md 2, 4.1, 4.2;
// api.md 2.5).

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"backupmon/internal/testserver"
)

var admUUIDRe = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

func TestAdminWorkspaceRecordAndDefaults(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})

	r := s.Admin("POST", "/workspaces", map[string]any{"name": "Acme IT", "plan": "pro"})
	admWantData(t, "create", r, 201)
	w := r.Data()
	admWantKeys(t, "workspace", w, admWorkspaceFields...)
	if !admUUIDRe.MatchString(fmt.Sprint(w["id"])) {
		t.Errorf("id %v is not a UUID", w["id"])
	}
	want := map[string]any{"name": "Acme IT", "timeZone": "UTC", "plan": "pro", "status": "active", "trialEndsAt": nil}
	for k, v := range want {
		if w[k] != v {
			t.Errorf("default %s = %#v, want %#v", k, w[k], v)
		}
	}
	admWantTime(t, "createdAt", w["createdAt"], testserver.T0)
	id := w["id"].(string)

	// Every field given; trialEndsAt with an offset comes back in UTC.
	r = s.Admin("POST", "/workspaces", map[string]any{"name": "Beta", "timeZone": "Europe/Berlin", "plan": "trial",
		"status": "suspended", "trialEndsAt": "2026-04-01T12:00:00+02:00"})
	admWantData(t, "create with every field", r, 201)
	w2 := r.Data()
	for k, v := range map[string]any{"name": "Beta", "timeZone": "Europe/Berlin", "plan": "trial", "status": "suspended", "trialEndsAt": "2026-04-01T10:00:00.000Z"} {
		if w2[k] != v {
			t.Errorf("%s = %#v, want %#v", k, w2[k], v)
		}
	}

	// GET one and the list (oldest first) answer the same records.
	r = s.Admin("GET", "/workspaces/"+id, nil)
	admWantData(t, "get", r, 200)
	if !bytes.Contains(r.Body, []byte(`"id":"`+id+`"`)) || r.Data()["name"] != "Acme IT" {
		t.Errorf("get: %s", r.Body)
	}
	r = s.Admin("GET", "/workspaces", nil)
	admWantData(t, "list", r, 200)
	list := r.List()
	if len(list) != 2 || list[0]["id"] != id || list[1]["id"] != w2["id"] {
		t.Fatalf("list: %s", r.Body)
	}
	for i, w := range list {
		admWantKeys(t, fmt.Sprintf("list[%d]", i), w, admWorkspaceFields...)
	}

	// PATCH: each field on its own, then an empty body.
	steps := []struct {
		body map[string]any
		key  string
		want any
	}{
		{map[string]any{"name": "Acme Managed IT"}, "name", "Acme Managed IT"},
		{map[string]any{"timeZone": "America/New_York"}, "timeZone", "America/New_York"},
		{map[string]any{"plan": "growth"}, "plan", "growth"},
		{map[string]any{"status": "cancelled"}, "status", "cancelled"},
		{map[string]any{"status": "active"}, "status", "active"},
		{map[string]any{"plan": "trial", "trialEndsAt": "2026-03-20T00:00:00Z"}, "trialEndsAt", "2026-03-20T00:00:00.000Z"},
		{map[string]any{"trialEndsAt": nil}, "trialEndsAt", nil},
	}
	for _, st := range steps {
		r := s.Admin("PATCH", "/workspaces/"+id, st.body)
		admWantData(t, fmt.Sprintf("patch %v", st.body), r, 200)
		admWantKeys(t, "patched workspace", r.Data(), admWorkspaceFields...)
		if got := r.Data()[st.key]; got != st.want {
			t.Errorf("patch %v: %s = %#v, want %#v", st.body, st.key, got, st.want)
		}
		if got := s.MustAdmin(200, "GET", "/workspaces/"+id, nil).Data()[st.key]; got != st.want {
			t.Errorf("get after patch %v: %s = %#v, want %#v", st.body, st.key, got, st.want)
		}
	}
	before := s.MustAdmin(200, "GET", "/workspaces/"+id, nil).Body
	r = s.Admin("PATCH", "/workspaces/"+id, map[string]any{})
	admWantData(t, "empty patch", r, 200)
	if after := s.MustAdmin(200, "GET", "/workspaces/"+id, nil).Body; !bytes.Equal(before, after) {
		t.Errorf("empty patch changed the workspace: %s → %s", before, after)
	}
	if w := r.Data(); w["name"] != "Acme Managed IT" || w["plan"] != "trial" || w["createdAt"] != testserver.TS(testserver.T0) {
		t.Errorf("empty patch answer: %v", w)
	}
}

func TestAdminClientRecordAndFigures(t *testing.T) {
	s, f := startFixture(t)

	r := s.Admin("POST", "/workspaces/"+f.WS+"/clients", map[string]any{"name": "initech"})
	admWantData(t, "create client", r, 201)
	c := r.Data()
	admCheckClient(t, "client", c)
	if c["name"] != "initech" || c["status"] != "active" || c["needsAttention"] != false || c["openAlerts"] != float64(0) {
		t.Errorf("new client: %v", c)
	}
	for _, k := range admClientJobs {
		if admObj(t, c, "jobs")[k] != float64(0) {
			t.Errorf("new client jobs.%s = %v", k, admObj(t, c, "jobs")[k])
		}
	}
	if !bytes.Contains(r.Body, []byte(`"sla":{"successRate":null,"reports":0,"periodDays":30,"jobsMeetingTarget":0,"jobsBelowTarget":0}`)) {
		t.Errorf("new client sla: %s", r.Body)
	}
	admWantTime(t, "client createdAt", c["createdAt"], testserver.T0)
	cid := c["id"].(string)

	r = s.Admin("POST", "/workspaces/"+f.WS+"/clients", map[string]any{"name": "Hooli", "status": "paused"})
	admWantData(t, "create paused client", r, 201)
	if r.Data()["status"] != "paused" {
		t.Errorf("status: %v", r.Data()["status"])
	}

	// Figures: one ok job, one failed job with its open alert.
	j1 := s.NewJob(f.WS, cid, "Alpha", map[string]any{"intervalMinutes": 1440})
	j2 := s.NewJob(f.WS, cid, "beta", map[string]any{"intervalMinutes": 1440})
	admReport(s, j1, f.ReportKey, "ok")
	admReport(s, j2, f.ReportKey, "failed")
	list := s.MustAdmin(200, "GET", "/workspaces/"+f.WS+"/clients", nil)
	admWantData(t, "list clients", list, 200)
	var got map[string]any
	var names []string
	for _, c := range list.List() {
		admCheckClient(t, "listed client", c)
		names = append(names, c["name"].(string))
		if c["id"] == cid {
			got = c
		}
	}
	// Ordered by name without case.
	if want := []string{"Globex", "Hooli", "initech"}; !slices.Equal(names, want) {
		t.Errorf("client order %v, want %v", names, want)
	}
	if got == nil {
		t.Fatalf("client %s not listed: %s", cid, list.Body)
	}
	jobs := admObj(t, got, "jobs")
	if jobs["total"] != float64(2) || jobs["healthy"] != float64(1) || jobs["failed"] != float64(1) || jobs["waiting"] != float64(0) {
		t.Errorf("client jobs: %v", jobs)
	}
	if got["openAlerts"] != float64(1) || got["needsAttention"] != true {
		t.Errorf("client attention: %v", got)
	}
	sla := admObj(t, got, "sla")
	if sla["successRate"] != 50.0 || sla["reports"] != float64(2) || sla["jobsMeetingTarget"] != float64(1) || sla["jobsBelowTarget"] != float64(1) {
		t.Errorf("client sla: %v", sla)
	}
	if !bytes.Contains(list.Body, []byte(`"successRate":50.0`)) {
		t.Errorf("successRate not shown with one decimal: %s", list.Body)
	}

	// Rename: the answer and the jobs' clientName follow.
	r = s.Admin("PATCH", "/workspaces/"+f.WS+"/clients/"+cid, map[string]any{"name": "Initech Corp"})
	admWantData(t, "rename client", r, 200)
	admCheckClient(t, "renamed client", r.Data())
	if r.Data()["name"] != "Initech Corp" || admObj(t, r.Data(), "jobs")["total"] != float64(2) {
		t.Errorf("renamed client: %v", r.Data())
	}
	if j := s.Job(f.WS, j1); j["clientName"] != "Initech Corp" {
		t.Errorf("job clientName after rename: %v", j["clientName"])
	}
	// An empty PATCH changes nothing and answers the record.
	r = s.Admin("PATCH", "/workspaces/"+f.WS+"/clients/"+cid, map[string]any{})
	admWantData(t, "empty client patch", r, 200)
	if r.Data()["name"] != "Initech Corp" {
		t.Errorf("empty patch: %v", r.Data())
	}
}

func TestAdminJobRecordAndDefaults(t *testing.T) {
	s, f := startFixture(t)

	r := s.Admin("POST", "/workspaces/"+f.WS+"/jobs", admJobBody(f.Client, nil))
	admWantData(t, "create job", r, 201)
	j := r.Data()
	admCheckAdminJob(t, "job", j, false)
	want := map[string]any{
		"name": "Nightly", "clientId": f.Client, "clientName": "Globex", "vendor": "veeam",
		"vendorName": "Veeam Backup & Replication", "status": "waiting", "late": nil, "lastResult": "none",
		"lastReportAt": nil, "lastSuccessAt": nil, "lastFailureAt": nil, "failureStreak": float64(0),
		"paused": false, "pausedUntil": nil, "createdAt": testserver.TS(testserver.T0),
	}
	for k, v := range want {
		if j[k] != v {
			t.Errorf("job %s = %#v, want %#v", k, j[k], v)
		}
	}
	dev := admObj(t, j, "device")
	if !admUUIDRe.MatchString(fmt.Sprint(dev["id"])) || dev["name"] != "File server" || dev["type"] != "server" || dev["hostname"] != "fs01" {
		t.Errorf("device: %v", dev)
	}
	sched := admObj(t, j, "schedule")
	if sched["intervalMinutes"] != float64(1440) || sched["graceMinutes"] != float64(60) ||
		!slices.Equal(admStrings(t, sched["expectedDays"]), admAllDays) || sched["nextExpectedAt"] != testserver.TS(testserver.T0.Add(24*time.Hour)) {
		t.Errorf("default schedule: %v", sched)
	}
	// slaTarget 95.0 shown with its decimal.
	if !bytes.Contains(r.Body, []byte(`"sla":{"target":95.0,"successRate":null,"met":false,"reports":0,"periodDays":30}`)) {
		t.Errorf("default sla bytes: %s", r.Body)
	}

	// Targets keep their decimals as given, with at least one.
	for _, tc := range []struct {
		in   any
		want string
	}{{99.95, `"target":99.95`}, {100, `"target":100.0`}, {0, `"target":0.0`}, {97.5, `"target":97.5`}} {
		r := s.Admin("POST", "/workspaces/"+f.WS+"/jobs", admJobBody(f.Client, func(m map[string]any) { m["slaTarget"] = tc.in }))
		admWantData(t, fmt.Sprintf("slaTarget %v", tc.in), r, 201)
		if !bytes.Contains(r.Body, []byte(tc.want)) {
			t.Errorf("slaTarget %v: want %s in %s", tc.in, tc.want, r.Body)
		}
	}

	// Devices: same client and hostname (any case) share the device id.
	r1 := s.MustAdmin(201, "POST", "/workspaces/"+f.WS+"/jobs", admJobBody(f.Client, func(m map[string]any) {
		m["device"] = map[string]any{"name": "FS", "type": "server", "hostname": "FS01"}
	})).Data()
	other := s.MustAdmin(201, "POST", "/workspaces/"+f.WS+"/clients", map[string]any{"name": "Other"}).Data()["id"].(string)
	r2 := s.MustAdmin(201, "POST", "/workspaces/"+f.WS+"/jobs", admJobBody(other, nil)).Data()
	if admObj(t, r1, "device")["id"] != dev["id"] {
		t.Errorf("same hostname on one client: device %v, want %v", admObj(t, r1, "device")["id"], dev["id"])
	}
	if admObj(t, r2, "device")["id"] == dev["id"] {
		t.Errorf("another client's job shares the device id %v", dev["id"])
	}

	// Every vendor of decisions.md 6 and every device type is accepted.
	vendors := map[string]string{
		"veeam": "Veeam Backup & Replication", "acronis": "Acronis Cyber Protect", "datto": "Datto BCDR",
		"cove": "N-able Cove Data Protection", "synology": "Synology Active Backup for Business",
		"nakivo": "NAKIVO Backup & Replication", "backupexec": "Veritas Backup Exec", "msp360": "MSP360 Backup",
		"altaro": "Hornetsecurity VM Backup (Altaro)", "macrium": "Macrium Reflect", "generic": "Generic",
	}
	for v, name := range vendors {
		r := s.Admin("POST", "/workspaces/"+f.WS+"/jobs", admJobBody(f.Client, func(m map[string]any) { m["vendor"] = v }))
		admWantData(t, "vendor "+v, r, 201)
		if r.Data()["vendor"] != v || r.Data()["vendorName"] != name {
			t.Errorf("vendor %s: %v / %v", v, r.Data()["vendor"], r.Data()["vendorName"])
		}
	}
	for _, typ := range []string{"server", "workstation", "vm", "nas", "cloud", "database", "other"} {
		r := s.Admin("POST", "/workspaces/"+f.WS+"/jobs", admJobBody(f.Client, func(m map[string]any) {
			m["device"] = map[string]any{"name": "D", "type": typ, "hostname": "h-" + typ}
		}))
		admWantData(t, "device type "+typ, r, 201)
		if admObj(t, r.Data(), "device")["type"] != typ {
			t.Errorf("device type %s: %v", typ, r.Data()["device"])
		}
	}

	// The admin job view: the job object plus its collections.
	jid := j["id"].(string)
	r = s.Admin("GET", "/workspaces/"+f.WS+"/jobs/"+jid, nil)
	admWantData(t, "get job", r, 200)
	d := r.Data()
	admCheckAdminJob(t, "job view", d, true)
	if !bytes.Contains(r.Body, []byte(`"unresolvedAlerts":[],"ingestAddress":"`)) || bytes.Contains(r.Body, []byte(`"recentResults"`)) {
		t.Errorf("empty collections: %s", r.Body)
	}
	for _, k := range admJobAdminFields {
		if fmt.Sprint(d[k]) != fmt.Sprint(j[k]) {
			t.Errorf("job view %s = %v, create answered %v", k, d[k], j[k])
		}
	}

	// A report shows up in history with its source, listed once.
	s.Advance(time.Hour)
	r = s.Report(jid, f.ReportKey, "", `{"status":"failed","duration_seconds":120,"size_bytes":2048}`)
	if r.Status != 200 {
		t.Fatalf("report: %d %s", r.Status, r.Body)
	}
	d = s.Job(f.WS, jid)
	admCheckAdminJob(t, "job view after report", d, true)
	hist := admList(t, d, "history")
	if len(hist) != 1 || hist[0]["source"] != "api:"+f.ReportKeyPrefix || hist[0]["status"] != "failed" ||
		hist[0]["durationSeconds"] != float64(120) || hist[0]["sizeBytes"] != float64(2048) ||
		hist[0]["receivedAt"] != testserver.TS(testserver.T0.Add(time.Hour)) || hist[0]["startedAt"] != testserver.TS(testserver.T0.Add(time.Hour-2*time.Minute)) {
		t.Errorf("history: %v", hist)
	}
	if _, ok := d["recentResults"]; ok {
		t.Errorf("the admin job view lists the results twice: recentResults and history")
	}
	if ua := admList(t, d, "unresolvedAlerts"); len(ua) != 1 || ua[0]["type"] != "failed" || ua[0]["status"] != "open" {
		t.Errorf("unresolvedAlerts: %v", ua)
	}
	if d["status"] != "failed" || d["lastResult"] != "failed" || d["failureStreak"] != float64(1) ||
		d["lastFailureAt"] != testserver.TS(testserver.T0.Add(time.Hour)) || admObj(t, d, "schedule")["nextExpectedAt"] != testserver.TS(testserver.T0.Add(25*time.Hour)) {
		t.Errorf("job after failed report: %v", d)
	}

	// The list: every job, by name without case, in the job shape.
	r = s.Admin("GET", "/workspaces/"+f.WS+"/jobs", nil)
	admWantData(t, "list jobs", r, 200)
	var names []string
	for i, j := range r.List() {
		admCheckAdminJob(t, fmt.Sprintf("jobs[%d]", i), j, false)
		names = append(names, strings.ToLower(j["name"].(string)))
	}
	if !slices.IsSorted(names) || len(names) != 1+1+4+2+11+7 {
		t.Errorf("job list: %d jobs, names %v", len(names), names)
	}
}

func TestAdminJobHistoryLimit(t *testing.T) {
	s, f := startFixture(t)
	// 101 reports, 15 minutes apart (under the per-job daily cap).
	for i := 0; i < 101; i++ {
		admReport(s, f.Job, f.ReportKey, "ok")
		s.Advance(15 * time.Minute)
	}
	base := "/workspaces/" + f.WS + "/jobs/" + f.Job
	d := s.Job(f.WS, f.Job)
	hist := admList(t, d, "history")
	if len(hist) != 100 {
		t.Fatalf("default history: %d entries, want 100", len(hist))
	}
	// Newest first: the first is the last report.
	last := testserver.T0.Add(100 * 15 * time.Minute)
	if hist[0]["receivedAt"] != testserver.TS(last) || hist[99]["receivedAt"] != testserver.TS(last.Add(-99*15*time.Minute)) {
		t.Errorf("history order: first %v, last %v", hist[0]["receivedAt"], hist[99]["receivedAt"])
	}
	for _, tc := range []struct {
		q    string
		want int
	}{{"?limit=1", 1}, {"?limit=1000", 101}, {"?limit=5", 5}, {"?limit=101", 101}} {
		r := s.Admin("GET", base+tc.q, nil)
		admWantData(t, tc.q, r, 200)
		if n := len(admList(t, r.Data(), "history")); n != tc.want {
			t.Errorf("%s: %d entries, want %d", tc.q, n, tc.want)
		}
	}
	for _, q := range []string{"?limit=0", "?limit=1001", "?limit=abc", "?limit=", "?limit=-1", "?limit=1&limit=2", "?limit=+5", "?page=2"} {
		field := "limit"
		if q == "?page=2" {
			field = "page"
		}
		admWantError(t, "history "+q, s.Admin("GET", base+q, nil), 400, "INVALID_REQUEST", field)
	}
}
