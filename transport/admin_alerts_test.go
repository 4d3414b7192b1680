package transport_test

// Alert actions through the admin API: acknowledge, snooze (and its end),
// resolve; the alert list and the activity they write (decisions.md 2, 4.6).

import (
	"bytes"
	"testing"
	"time"

	"backupmon/internal/testserver"
)

func TestAdminAlertActions(t *testing.T) {
	s, f := startFixture(t)
	base := "/workspaces/" + f.WS
	created := testserver.T0.Add(time.Hour)
	s.SetClock(created)
	aid := admReport(s, f.Job, f.ReportKey, "failed").JSON["alert_id"].(string)
	alertPath := base + "/alerts/" + aid

	// The alert as listed.
	r := s.Admin("GET", base+"/alerts", nil)
	admWantData(t, "alerts", r, 200)
	list := r.List()
	if len(list) != 1 {
		t.Fatalf("alerts: %s", r.Body)
	}
	a := list[0]
	admWantKeys(t, "alert", a, admAlertFields...)
	want := map[string]any{"id": aid, "type": "failed", "severity": "critical", "status": "open", "clientId": f.Client, "jobId": f.Job,
		"jobName": "Nightly backup", "createdAt": testserver.TS(created), "acknowledgedAt": nil, "snoozedUntil": nil, "resolvedAt": nil,
		"recoverySeconds": nil, "ai": nil}
	for k, v := range want {
		if a[k] != v {
			t.Errorf("alert %s = %#v, want %#v", k, a[k], v)
		}
	}
	if s, _ := a["summary"].(string); s == "" {
		t.Errorf("alert summary empty")
	}

	check := func(what string, r testserver.Response, want map[string]any) map[string]any {
		t.Helper()
		admWantData(t, what, r, 200)
		al := r.Data()
		admWantKeys(t, what, al, admAlertFields...)
		for k, v := range want {
			if al[k] != v {
				t.Errorf("%s: %s = %#v, want %#v", what, k, al[k], v)
			}
		}
		// The list and the job view agree with the answer.
		for _, l := range s.MustAdmin(200, "GET", base+"/alerts", nil).List() {
			if l["id"] == aid {
				for k, v := range want {
					if l[k] != v {
						t.Errorf("%s: listed %s = %#v, want %#v", what, k, l[k], v)
					}
				}
			}
		}
		return al
	}

	// Acknowledge: once; a second acknowledge changes nothing.
	s.SetClock(testserver.T0.Add(2 * time.Hour))
	check("acknowledge", s.Admin("POST", alertPath+"/acknowledge", nil), map[string]any{"status": "acknowledged", "acknowledgedAt": testserver.TS(testserver.T0.Add(2 * time.Hour))})
	s.SetClock(testserver.T0.Add(3 * time.Hour))
	check("acknowledge again", s.Admin("POST", alertPath+"/acknowledge", []byte(`{}`)), map[string]any{"status": "acknowledged", "acknowledgedAt": testserver.TS(testserver.T0.Add(2 * time.Hour))})

	// Snooze until a time in the future.
	until := testserver.T0.Add(5 * time.Hour)
	check("snooze", s.Admin("POST", alertPath+"/snooze", map[string]any{"until": "2026-03-04T16:00:00+01:00"}), map[string]any{"status": "snoozed", "snoozedUntil": testserver.TS(until), "resolvedAt": nil})
	if ua := admList(t, s.Job(f.WS, f.Job), "unresolvedAlerts"); len(ua) != 1 || ua[0]["status"] != "snoozed" {
		t.Errorf("job view while snoozed: %v", ua)
	}
	s.SetClock(until.Add(-time.Millisecond))
	if l := s.MustAdmin(200, "GET", base+"/alerts", nil).List()[0]; l["status"] != "snoozed" || l["snoozedUntil"] != testserver.TS(until) {
		t.Errorf("just before the snooze ends: %v", l)
	}
	// The snooze ends at its time: open again, snoozedUntil null.
	s.SetClock(until)
	if l := s.MustAdmin(200, "GET", base+"/alerts", nil).List()[0]; l["status"] != "open" || l["snoozedUntil"] != nil {
		t.Errorf("at the snooze's end: %v", l)
	}
	if ua := admList(t, s.Job(f.WS, f.Job), "unresolvedAlerts"); len(ua) != 1 || ua[0]["status"] != "open" || ua[0]["snoozedUntil"] != nil {
		t.Errorf("job view after the snooze: %v", ua)
	}
	s.Restart()
	if l := s.MustAdmin(200, "GET", base+"/alerts", nil).List()[0]; l["status"] != "open" || l["snoozedUntil"] != nil {
		t.Errorf("after the snooze's end and a restart: %v", l)
	}

	// Snooze again, then resolve while snoozed: recoverySeconds counts from
	// the alert's creation.
	check("snooze again", s.Admin("POST", alertPath+"/snooze", map[string]any{"until": admIn(until.Add(time.Hour))}), map[string]any{"status": "snoozed"})
	resolved := until.Add(7 * time.Second)
	s.SetClock(resolved)
	r = s.Admin("POST", alertPath+"/resolve", nil)
	check("resolve", r, map[string]any{"status": "resolved", "resolvedAt": testserver.TS(resolved), "snoozedUntil": nil,
		"recoverySeconds": resolved.Sub(created).Seconds()})
	if !bytes.Contains(r.Body, []byte(`"recoverySeconds":14407,`)) {
		t.Errorf("recoverySeconds bytes: %s", r.Body)
	}
	j := s.Job(f.WS, f.Job)
	if len(admList(t, j, "unresolvedAlerts")) != 0 || j["status"] != "failed" {
		t.Errorf("job after resolve: status %v, unresolved %v", j["status"], j["unresolvedAlerts"])
	}

	// A new problem opens a new alert, listed first (newest first).
	s.Advance(time.Minute)
	b := admReport(s, f.Job, f.ReportKey, "warn").JSON["alert_id"].(string)
	list = s.MustAdmin(200, "GET", base+"/alerts", nil).List()
	if len(list) != 2 || list[0]["id"] != b || list[1]["id"] != aid || list[0]["type"] != "warning" || list[0]["severity"] != "warning" {
		t.Errorf("alerts after a new problem: %v", list)
	}
	// Acknowledge, then snooze an acknowledged alert, then acknowledge the
	// snoozed one.
	bp := base + "/alerts/" + b
	check2 := func(what string, r testserver.Response, status string) {
		t.Helper()
		admWantData(t, what, r, 200)
		if r.Data()["status"] != status || r.Data()["id"] != b {
			t.Errorf("%s: %v", what, r.Data())
		}
	}
	check2("acknowledge b", s.Admin("POST", bp+"/acknowledge", nil), "acknowledged")
	check2("snooze acknowledged b", s.Admin("POST", bp+"/snooze", map[string]any{"until": admIn(resolved.Add(time.Hour))}), "snoozed")
	check2("acknowledge snoozed b", s.Admin("POST", bp+"/acknowledge", nil), "acknowledged")
	if r := s.MustAdmin(200, "GET", base+"/alerts", nil).List()[0]; r["snoozedUntil"] != nil {
		t.Errorf("acknowledged alert keeps snoozedUntil: %v", r)
	}

	// The activity log holds each change, newest first, by the admin.
	acts := s.MustAdmin(200, "GET", base+"/activity", nil).List()
	var types []string
	for _, a := range acts {
		if a["alertId"] != nil {
			types = append(types, a["type"].(string)+":"+map[bool]string{true: "a", false: "b"}[a["alertId"] == aid])
			if a["actor"] != "admin" || a["jobId"] != f.Job {
				t.Errorf("alert activity entry: %v", a)
			}
			admWantTime(t, "activity at", a["at"], time.Time{})
		}
	}
	wantTypes := []string{"alert.acknowledged:b", "alert.snoozed:b", "alert.acknowledged:b", "alert.resolved:a", "alert.snoozed:a", "alert.snoozed:a", "alert.acknowledged:a"}
	if len(types) != len(wantTypes) {
		t.Fatalf("alert activity %v, want %v", types, wantTypes)
	}
	for i := range types {
		if types[i] != wantTypes[i] {
			t.Errorf("alert activity %v, want %v", types, wantTypes)
			break
		}
	}
}

func TestAdminWorkspaceInactiveStopsReports(t *testing.T) {
	s, f := startFixture(t)
	wpath := "/workspaces/" + f.WS
	report := func(what string, want int) {
		t.Helper()
		n := len(admList(t, s.Job(f.WS, f.Job), "history"))
		r := s.Report(f.Job, f.ReportKey, "", `{"status":"ok"}`)
		if r.Status != want {
			t.Errorf("%s: report answered %d, want %d: %s", what, r.Status, want, r.Body)
		}
		if want == 403 {
			if string(r.Body) != `{"error":"Workspace suspended"}` {
				t.Errorf("%s: body %s", what, r.Body)
			}
			if m := len(admList(t, s.Job(f.WS, f.Job), "history")); m != n {
				t.Errorf("%s: a refused report was recorded", what)
			}
		}
		s.Advance(time.Minute)
	}
	report("active", 200)
	s.MustAdmin(200, "PATCH", wpath, map[string]any{"status": "suspended"})
	report("suspended", 403)
	s.Restart()
	report("suspended after restart", 403)
	s.MustAdmin(200, "PATCH", wpath, map[string]any{"status": "cancelled"})
	report("cancelled", 403)
	s.MustAdmin(200, "PATCH", wpath, map[string]any{"status": "active"})
	report("active again", 200)

	// A trial is active until trialEndsAt, inactive from then on.
	now := testserver.T0.Add(4 * time.Minute)
	s.MustAdmin(200, "PATCH", wpath, map[string]any{"plan": "trial", "trialEndsAt": admIn(now.Add(time.Hour))})
	report("trial running", 200)
	s.SetClock(now.Add(time.Hour))
	report("trial ended", 403)
	s.MustAdmin(200, "PATCH", wpath, map[string]any{"trialEndsAt": admIn(now.Add(48 * time.Hour))})
	report("trial extended", 200)
	s.SetClock(now.Add(48 * time.Hour))
	report("extended trial ended", 403)
	s.MustAdmin(200, "PATCH", wpath, map[string]any{"plan": "growth"})
	report("trial ended but plan growth", 200)
	s.MustAdmin(200, "PATCH", wpath, map[string]any{"plan": "trial", "trialEndsAt": nil})
	report("trial without an end", 200)

	// A workspace created as an ended trial is inactive at once.
	w := s.MustAdmin(201, "POST", "/workspaces", map[string]any{"name": "Old trial", "plan": "trial", "trialEndsAt": "2020-01-01T00:00:00Z"}).Data()["id"].(string)
	c := s.MustAdmin(201, "POST", "/workspaces/"+w+"/clients", map[string]any{"name": "C"}).Data()["id"].(string)
	j := s.NewJob(w, c, "J", map[string]any{"intervalMinutes": 60})
	k := s.MustAdmin(201, "POST", "/workspaces/"+w+"/keys", map[string]any{"name": "r", "type": "report"}).Data()["key"].(string)
	if r := s.Report(j, k, "", `{"status":"ok"}`); r.Status != 403 || string(r.Body) != `{"error":"Workspace suspended"}` {
		t.Errorf("ended trial at creation: %d %s", r.Status, r.Body)
	}
	// Created suspended: inactive too; the admin API still works on it.
	w2 := s.MustAdmin(201, "POST", "/workspaces", map[string]any{"name": "Suspended", "plan": "pro", "status": "suspended"}).Data()["id"].(string)
	c2 := s.MustAdmin(201, "POST", "/workspaces/"+w2+"/clients", map[string]any{"name": "C"}).Data()["id"].(string)
	j2 := s.NewJob(w2, c2, "J", map[string]any{"intervalMinutes": 60})
	k2 := s.MustAdmin(201, "POST", "/workspaces/"+w2+"/keys", map[string]any{"name": "r", "type": "report"}).Data()["key"].(string)
	if r := s.Report(j2, k2, "", `{"status":"ok"}`); r.Status != 403 {
		t.Errorf("created suspended: %d %s", r.Status, r.Body)
	}
}
