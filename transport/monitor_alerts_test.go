package transport_test

// Time-driven monitoring through the real HTTP surface, driven by the
// development clock (decisions.md 4.4, 4.6, 8): a job late and then missing
// at the exact millisecond, the missing alert it opens (or the unresolved
// alert it raises) and its resolution, a snooze's end, an inactive
// workspace, the activity log of admin changes and a trial's end. Every
// helper of this file and monitor_schedule_test.go starts with "mon".

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"backupmon/internal/testserver"
)

// monHourly is a job due an hour after each report, missing 30 minutes
// after that.
func monHourly() map[string]any { return map[string]any{"intervalMinutes": 60, "graceMinutes": 30} }

// monSummary is the summary of a missing alert (decisions.md 4.6, engine).
func monSummary(due time.Time, grace int) string {
	return fmt.Sprintf("No backup report received: one was due at %s and %d minutes of grace have passed", testserver.TS(due), grace)
}

// monAlerts returns every alert of the workspace (admin API), newest first.
func monAlerts(s *testserver.Server, ws string) []map[string]any {
	s.T.Helper()
	return s.MustAdmin(200, "GET", "/workspaces/"+ws+"/alerts", nil).List()
}

// monWantAlerts checks the number of alerts of the workspace and returns
// them, newest first.
func monWantAlerts(t *testing.T, s *testserver.Server, what, ws string, n int) []map[string]any {
	t.Helper()
	list := monAlerts(s, ws)
	if len(list) != n {
		t.Fatalf("%s: %d alerts, want %d: %v", what, len(list), n, list)
	}
	return list
}

// monMissingAlert is the wanted alert object of a job that turned missing
// at due + grace (and nothing since).
func monMissingAlert(id, client, job, jobName string, due time.Time, grace int) map[string]any {
	return map[string]any{
		"id": id, "type": "missing", "severity": "critical", "status": "open", "clientId": client, "jobId": job,
		"jobName": jobName, "summary": monSummary(due, grace), "createdAt": testserver.TS(due.Add(time.Duration(grace) * time.Minute)),
		"acknowledgedAt": nil, "snoozedUntil": nil, "resolvedAt": nil, "recoverySeconds": nil, "ai": nil,
	}
}

// monWantAlert checks every member of an alert object.
func monWantAlert(t *testing.T, what string, a map[string]any, want map[string]any) {
	t.Helper()
	admWantKeys(t, what, a, admAlertFields...)
	rpFields(t, what, a, want)
}

// monFmtDur formats an offset from a due time for a subtest name.
func monFmtDur(d time.Duration) string {
	if d < 0 {
		return d.String()
	}
	return "+" + d.String()
}

// monJob reads a job through the REST API (GET /jobs/{id}).
func monJob(s *testserver.Server, key, id string) map[string]any {
	s.T.Helper()
	return rsData(s.T, "job "+id, rsGet(s, key, "/jobs/"+id))
}

// monRESTAlerts returns the REST alert list with the given query.
func monRESTAlerts(s *testserver.Server, key, query string) []map[string]any {
	s.T.Helper()
	return rsItems(s.T, "/alerts"+query, rsGet(s, key, "/alerts"+query))
}

// monActivity returns the workspace's activity log, newest first.
func monActivity(s *testserver.Server, ws string) []map[string]any {
	s.T.Helper()
	return s.MustAdmin(200, "GET", "/workspaces/"+ws+"/activity", nil).List()
}

func TestMonitorLateThenMissing(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	f := s.Fixture(testserver.FixtureOptions{Schedule: monHourly()})
	key := f.RestKey
	// A report at an uneven instant: every time below is exact to the
	// millisecond.
	T := testserver.T0.Add(7*time.Minute + 13*time.Second + 250*time.Millisecond)
	s.SetClock(T)
	rpSend(s, f.Job, f.ReportKey, "ok")
	due := T.Add(time.Hour)
	var alertID string

	for _, c := range rsLateSteps { // after 30 minutes, one alert: no second one for the same due time
		now := due.Add(c.at)
		alerts := c.missing()
		rpRun(t, s, "due"+monFmtDur(c.at), func(t *testing.T) {
			s.SetClock(now)
			j := monJob(s, key, f.Job)
			rpFields(t, "job", j, map[string]any{"status": c.status, "lastResult": "ok", "lastReportAt": testserver.TS(T), "paused": false})
			rpFields(t, "schedule", admObj(t, j, "schedule"), map[string]any{"nextExpectedAt": testserver.TS(due), "intervalMinutes": 60, "graceMinutes": 30})
			if c.minutes < 0 {
				rsWantLate(t, "job", j, time.Time{}, 0)
			} else {
				rsWantLate(t, "job", j, due, c.minutes)
			}
			list := monWantAlerts(t, s, "admin alerts", f.WS, alerts)
			ua := admList(t, j, "unresolvedAlerts")
			h := rsData(t, "health", rsGet(s, key, "/health"))
			missing := 0
			if c.status == "missing" {
				missing = 1
			}
			rpFields(t, "health", h, map[string]any{"missing": missing, "healthy": 1 - missing, "openAlerts": alerts,
				"unresolvedAlerts": alerts, "clientsNeedingAttention": missing})
			if alerts == 0 {
				if len(ua) != 0 {
					t.Errorf("unresolvedAlerts %v, want none", ua)
				}
				return
			}
			a := list[0]
			if alertID == "" {
				alertID, _ = a["id"].(string)
			}
			if !rpUUIDRe.MatchString(alertID) {
				t.Errorf("alert id %q is not UUID-shaped", alertID)
			}
			want := monMissingAlert(alertID, f.Client, f.Job, "Nightly backup", due, 30)
			monWantAlert(t, "admin alert", a, want)
			if len(ua) != 1 {
				t.Fatalf("unresolvedAlerts %v, want the missing alert", ua)
			}
			monWantAlert(t, "job.unresolvedAlerts[0]", ua[0], want)
			for _, q := range []string{"", "?status=open", "?status=unresolved", "?severity=critical", "?jobId=" + f.Job} {
				rl := monRESTAlerts(s, key, q)
				if len(rl) != 1 {
					t.Fatalf("/alerts%s: %d alerts, want 1", q, len(rl))
				}
				monWantAlert(t, "/alerts"+q, rl[0], want)
			}
			if rl := monRESTAlerts(s, key, "?status=resolved"); len(rl) != 0 {
				t.Errorf("/alerts?status=resolved: %v", rl)
			}
		})
	}
	if alertID == "" {
		t.Fatal("no missing alert")
	}

	// An ok report resolves it: resolvedAt the receipt, recoverySeconds the
	// whole seconds since it opened (due + grace), the job healthy again
	// and due an hour after the report.
	R := due.Add(2*time.Hour + 17*time.Second + 400*time.Millisecond)
	s.SetClock(R)
	if id := rpSend(s, f.Job, f.ReportKey, "ok"); id != "" {
		t.Errorf("ok report: alert_id %q", id)
	}
	resolved := monMissingAlert(alertID, f.Client, f.Job, "Nightly backup", due, 30)
	resolved["status"], resolved["resolvedAt"], resolved["recoverySeconds"] = "resolved", testserver.TS(R), 5417 // 1h30m17.4s
	monWantAlert(t, "resolved alert", monWantAlerts(t, s, "after the ok report", f.WS, 1)[0], resolved)
	rl := monRESTAlerts(s, key, "?status=resolved")
	if len(rl) != 1 {
		t.Fatalf("/alerts?status=resolved: %v", rl)
	}
	monWantAlert(t, "REST resolved alert", rl[0], resolved)
	if rl := monRESTAlerts(s, key, "?status=unresolved"); len(rl) != 0 {
		t.Errorf("/alerts?status=unresolved after the ok report: %v", rl)
	}
	j := monJob(s, key, f.Job)
	rpFields(t, "job after the ok report", j, map[string]any{"status": "healthy", "lastResult": "ok", "lastReportAt": testserver.TS(R), "late": nil})
	rpFields(t, "schedule after the ok report", admObj(t, j, "schedule"), map[string]any{"nextExpectedAt": testserver.TS(R.Add(time.Hour))})
	if ua := admList(t, j, "unresolvedAlerts"); len(ua) != 0 {
		t.Errorf("unresolvedAlerts after the ok report: %v", ua)
	}
	rpFields(t, "health after the ok report", rsData(t, "health", rsGet(s, key, "/health")),
		map[string]any{"missing": 0, "healthy": 1, "openAlerts": 0, "unresolvedAlerts": 0})

	// The next missed due time opens a new alert.
	due2 := R.Add(time.Hour)
	s.SetClock(due2.Add(30 * time.Minute))
	monWantAlerts(t, s, "at the second due time plus grace", f.WS, 1)
	s.SetClock(due2.Add(30*time.Minute + time.Millisecond))
	list := monWantAlerts(t, s, "past the second due time plus grace", f.WS, 2)
	if list[0]["id"] == alertID {
		t.Fatalf("the second missed due time reused the resolved alert")
	}
	monWantAlert(t, "second missing alert", list[0], monMissingAlert(list[0]["id"].(string), f.Client, f.Job, "Nightly backup", due2, 30))
	monWantAlert(t, "first alert, unchanged", list[1], resolved)
}

// A job that turns missing while it has an unresolved alert raises that
// alert (decisions.md 4.6): type missing, the higher severity, the missing
// summary; an acknowledged alert whose severity rises is open again, one
// whose severity stays is not; a snoozed one stays snoozed.
func TestMonitorMissingRaisesAlert(t *testing.T) {
	s, f := startFixture(t)
	base := "/workspaces/" + f.WS
	T := testserver.T0.Add(time.Minute)
	type tc struct {
		name, report, action string
		job, alert           string
		at                   time.Time // the report, and the action
		wantStatus           string
		ackd, snoozed        bool // acknowledgedAt, snoozedUntil kept
	}
	snoozeEnd := T.Add(10 * time.Hour)
	cases := []*tc{
		{name: "acknowledged warning", report: "warn", action: "acknowledge", wantStatus: "open"},
		{name: "acknowledged failure", report: "failed", action: "acknowledge", wantStatus: "acknowledged", ackd: true},
		{name: "snoozed warning", report: "warn", action: "snooze", wantStatus: "snoozed", snoozed: true},
		{name: "open warning", report: "warn", wantStatus: "open"},
	}
	for i, c := range cases {
		// One second apart, so that the lists' order is by createdAt.
		c.at = T.Add(time.Duration(i) * time.Second)
		s.SetClock(c.at)
		c.job = s.NewJob(f.WS, f.Client, c.name, monHourly())
		c.alert = rpSend(s, c.job, f.ReportKey, c.report)
		switch c.action {
		case "acknowledge":
			s.MustAdmin(200, "POST", base+"/alerts/"+c.alert+"/acknowledge", nil)
		case "snooze":
			s.MustAdmin(200, "POST", base+"/alerts/"+c.alert+"/snooze", map[string]any{"until": admIn(snoozeEnd)})
		}
	}
	for _, c := range cases {
		due := c.at.Add(time.Hour)
		rpRun(t, s, c.name, func(t *testing.T) {
			s.SetClock(due.Add(30 * time.Minute))
			a := rpAlert(s, f.WS, c.alert)
			rpFields(t, "at due + grace: not raised yet", a, map[string]any{"type": map[string]string{"warn": "warning", "failed": "failed"}[c.report]})
			s.SetClock(due.Add(30*time.Minute + time.Millisecond))
			monWantAlerts(t, s, "past due + grace: no new alert", f.WS, len(cases))
			want := monMissingAlert(c.alert, f.Client, c.job, c.name, due, 30)
			want["createdAt"] = testserver.TS(c.at) // the alert keeps its creation
			want["status"] = c.wantStatus
			if c.ackd {
				want["acknowledgedAt"] = testserver.TS(c.at)
			}
			if c.snoozed {
				want["snoozedUntil"] = testserver.TS(snoozeEnd)
			}
			monWantAlert(t, "raised alert", rpAlert(s, f.WS, c.alert), want)
			j := monJob(s, f.RestKey, c.job)
			rpFields(t, "job", j, map[string]any{"status": "missing", "lastResult": map[string]string{"warn": "warning", "failed": "failed"}[c.report]})
			ua := admList(t, j, "unresolvedAlerts")
			if len(ua) != 1 {
				t.Fatalf("unresolvedAlerts %v", ua)
			}
			monWantAlert(t, "job.unresolvedAlerts[0]", ua[0], want)
		})
	}
	// The raised alerts count as the REST filters say, newest first.
	rsWantIDs(t, "/alerts?status=open", rsIDs(monRESTAlerts(s, f.RestKey, "?status=open")), []string{cases[3].alert, cases[0].alert})
	rsWantIDs(t, "/alerts?status=snoozed", rsIDs(monRESTAlerts(s, f.RestKey, "?status=snoozed")), []string{cases[2].alert})
	rsWantIDs(t, "/alerts?status=acknowledged", rsIDs(monRESTAlerts(s, f.RestKey, "?status=acknowledged")), []string{cases[1].alert})
	rsWantIDs(t, "/alerts?severity=warning", rsIDs(monRESTAlerts(s, f.RestKey, "?severity=warning")), []string{})
	rpFields(t, "health", rsData(t, "health", rsGet(s, f.RestKey, "/health")), map[string]any{"missing": 4, "openAlerts": 2, "unresolvedAlerts": 4})
}

// A snooze ends at its time: the alert is snoozed, with snoozedUntil, up
// to the millisecond before, and open with snoozedUntil null from then on,
// in every view and filter (decisions.md 4.6).
func TestMonitorSnoozeExpiry(t *testing.T) {
	s, f := startFixture(t) // daily: never missing in this test
	key := f.RestKey
	T := testserver.T0.Add(5 * time.Minute)
	s.SetClock(T)
	aid := rpSend(s, f.Job, f.ReportKey, "failed")
	X := T.Add(2*time.Hour + 500*time.Millisecond)
	r := s.MustAdmin(200, "POST", "/workspaces/"+f.WS+"/alerts/"+aid+"/snooze", map[string]any{"until": admIn(X)})
	rpFields(t, "snooze answer", r.Data(), map[string]any{"status": "snoozed", "snoozedUntil": testserver.TS(X)})

	for _, c := range []struct {
		at      time.Time
		snoozed bool
	}{
		{T.Add(time.Hour), true},
		{X.Add(-time.Millisecond), true},
		{X, false},
		{X.Add(time.Millisecond), false},
		{X.Add(5 * time.Hour), false},
	} {
		rpRun(t, s, "at "+testserver.TS(c.at), func(t *testing.T) {
			s.SetClock(c.at)
			want := map[string]any{"id": aid, "type": "failed", "severity": "critical", "status": "open", "snoozedUntil": nil,
				"createdAt": testserver.TS(T), "acknowledgedAt": nil, "resolvedAt": nil}
			open, snoozed := []string{aid}, []string{}
			openCount := 1
			if c.snoozed {
				want["status"], want["snoozedUntil"] = "snoozed", testserver.TS(X)
				open, snoozed = []string{}, []string{aid}
				openCount = 0
			}
			monWantAlert(t, "admin alert", monWantAlerts(t, s, "admin", f.WS, 1)[0], want)
			ua := admList(t, monJob(s, key, f.Job), "unresolvedAlerts")
			if len(ua) != 1 {
				t.Fatalf("unresolvedAlerts %v", ua)
			}
			monWantAlert(t, "job.unresolvedAlerts[0]", ua[0], want)
			all := monRESTAlerts(s, key, "")
			if len(all) != 1 {
				t.Fatalf("/alerts: %v", all)
			}
			monWantAlert(t, "/alerts", all[0], want)
			rsWantIDs(t, "/alerts?status=open", rsIDs(monRESTAlerts(s, key, "?status=open")), open)
			rsWantIDs(t, "/alerts?status=snoozed", rsIDs(monRESTAlerts(s, key, "?status=snoozed")), snoozed)
			rsWantIDs(t, "/alerts?status=unresolved", rsIDs(monRESTAlerts(s, key, "?status=unresolved")), []string{aid})
			rpFields(t, "health", rsData(t, "health", rsGet(s, key, "/health")), map[string]any{"openAlerts": openCount, "unresolvedAlerts": 1})
			cl := rsData(t, "client", rsGet(s, key, "/clients/"+f.Client))
			rpFields(t, "client", cl, map[string]any{"openAlerts": openCount})
		})
	}
	// The snooze's end is kept across a restart.
	s.Restart()
	rpFields(t, "after a restart", monWantAlerts(t, s, "after a restart", f.WS, 1)[0], map[string]any{"status": "open", "snoozedUntil": nil})
}

// A suspended workspace, and a trial that has ended, open no missing
// alert; once active again, a job that turned missing meanwhile gets
// exactly one, created when it turned missing.
func TestMonitorInactiveWorkspace(t *testing.T) {
	for _, c := range []struct {
		name       string
		plan       string
		deactivate func(at time.Time) map[string]any // the workspace PATCH that makes it inactive at at
		reactivate func(at time.Time) map[string]any
	}{
		{"suspended", "pro",
			func(time.Time) map[string]any { return map[string]any{"status": "suspended"} },
			func(at time.Time) map[string]any { return map[string]any{"status": "active"} }},
		{"trial ended", "trial",
			func(at time.Time) map[string]any { return map[string]any{"trialEndsAt": admIn(at)} },
			func(at time.Time) map[string]any {
				return map[string]any{"trialEndsAt": admIn(at.Add(30 * 24 * time.Hour))}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := testserver.Start(t, testserver.Options{})
			f := s.Fixture(testserver.FixtureOptions{Plan: c.plan, Schedule: monHourly()})
			base := "/workspaces/" + f.WS
			T := testserver.T0.Add(time.Minute)
			s.SetClock(T)
			rpSend(s, f.Job, f.ReportKey, "ok")
			due := T.Add(time.Hour)
			s.SetClock(T.Add(10 * time.Minute))
			s.MustAdmin(200, "PATCH", base, c.deactivate(T.Add(20*time.Minute)))
			for _, at := range []time.Time{due.Add(30*time.Minute + time.Millisecond), due.Add(5 * time.Hour)} {
				s.SetClock(at)
				monWantAlerts(t, s, "inactive at "+testserver.TS(at), f.WS, 0)
				if r := rsGet(s, f.RestKey, "/alerts"); r.Status != 403 {
					t.Errorf("REST while inactive: %d %s", r.Status, r.Body)
				}
			}
			s.Restart()
			monWantAlerts(t, s, "inactive, after a restart", f.WS, 0)
			A := due.Add(6 * time.Hour)
			s.SetClock(A)
			s.MustAdmin(200, "PATCH", base, c.reactivate(A))
			want := monMissingAlert("", f.Client, f.Job, "Nightly backup", due, 30)
			list := monWantAlerts(t, s, "active again", f.WS, 1)
			want["id"] = list[0]["id"]
			monWantAlert(t, "missing alert", list[0], want)
			j := monJob(s, f.RestKey, f.Job)
			rpFields(t, "job", j, map[string]any{"status": "missing", "lastResult": "ok"})
			rsWantLate(t, "job", j, due, 6*60)
			if ua := admList(t, j, "unresolvedAlerts"); len(ua) != 1 || ua[0]["id"] != want["id"] {
				t.Errorf("unresolvedAlerts %v", ua)
			}
			// Not again: later clock moves, another PATCH, a restart.
			s.Advance(time.Hour)
			s.MustAdmin(200, "PATCH", base, map[string]any{"name": "Acme IT 2"})
			s.Restart()
			s.Advance(time.Hour)
			monWantAlert(t, "missing alert at the end", monWantAlerts(t, s, "at the end", f.WS, 1)[0], want)
		})
	}
}

// monWantActivity checks one activity entry: its members exactly, and
// their values.
func monWantActivity(t *testing.T, what string, a map[string]any, want map[string]any) {
	t.Helper()
	keys := make([]string, 0, len(want)+1)
	for k := range want {
		keys = append(keys, k)
	}
	admWantKeys(t, what, a, append(keys, "id")...)
	rpFields(t, what, a, want)
	if id, _ := a["id"].(string); !rpUUIDRe.MatchString(id) {
		t.Errorf("%s: id %q is not UUID-shaped", what, id)
	}
}

// Admin changes write activity entries, newest first, each naming what it
// is about (decisions.md 2).
func TestMonitorActivity(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	ws := s.MustAdmin(201, "POST", "/workspaces", map[string]any{"name": "Acme IT", "plan": "pro"}).Data()["id"].(string)
	base := "/workspaces/" + ws
	if acts := monActivity(s, ws); len(acts) != 0 {
		t.Fatalf("a new workspace has activity: %v", acts)
	}
	var want []map[string]any // oldest first
	at := testserver.T0
	step := func() time.Time {
		at = at.Add(time.Minute)
		s.SetClock(at)
		return at
	}
	add := func(m map[string]any) {
		m["at"], m["actor"] = testserver.TS(at), "admin"
		want = append(want, m)
	}

	step()
	client := s.MustAdmin(201, "POST", base+"/clients", map[string]any{"name": "Globex"}).Data()["id"].(string)
	add(map[string]any{"type": "client.created", "clientId": client, "name": "Globex"})
	step()
	job := s.NewJob(ws, client, "Nightly", monHourly())
	add(map[string]any{"type": "job.created", "jobId": job, "jobName": "Nightly"})
	// Changes of the job and the client, each with the entry it adds.
	for _, p := range []struct {
		path, typ string
		body      map[string]any
	}{
		{"/jobs/" + job, "job.updated", map[string]any{"name": "Nightly full"}},
		{"/jobs/" + job, "job.paused", map[string]any{"paused": true}},
		{"/jobs/" + job, "job.resumed", map[string]any{"paused": false}},
		{"/clients/" + client, "client.updated", map[string]any{"name": "Globex Corp"}},
		{"/clients/" + client, "client.paused", map[string]any{"status": "paused"}},
		{"/clients/" + client, "client.resumed", map[string]any{"status": "active"}},
		{"/clients/" + client, "client.archived", map[string]any{"status": "archived"}},
		{"/clients/" + client, "client.resumed", map[string]any{"status": "active"}},
	} {
		step()
		s.MustAdmin(200, "PATCH", base+p.path, p.body)
		if strings.HasPrefix(p.path, "/jobs/") {
			add(map[string]any{"type": p.typ, "jobId": job, "jobName": "Nightly full"})
		} else {
			add(map[string]any{"type": p.typ, "clientId": client, "name": "Globex Corp"})
		}
	}
	step()
	ch := s.MustAdmin(201, "POST", base+"/channels", map[string]any{"type": "email", "name": "On call", "to": "oncall@example.com"}).Data()["id"].(string)
	add(map[string]any{"type": "channel.created", "channelId": ch, "name": "On call"})
	step()
	esc := s.MustAdmin(201, "POST", base+"/escalations", map[string]any{"channelId": ch, "afterMinutes": 30}).Data()["id"].(string)
	add(map[string]any{"type": "escalation.created", "escalationId": esc, "name": "On call"})
	step()
	s.MustAdmin(204, "DELETE", base+"/escalations/"+esc, nil)
	add(map[string]any{"type": "escalation.deleted", "escalationId": esc, "name": "On call"})
	step()
	s.MustAdmin(204, "DELETE", base+"/channels/"+ch, nil)
	add(map[string]any{"type": "channel.deleted", "channelId": ch, "name": "On call"})
	step()
	rk, rkID := s.NewKey(ws, "report", nil)
	add(map[string]any{"type": "key.created", "keyId": rkID, "keyName": "k-report"})
	step()
	aid := rpSend(s, job, rk, "failed") // a report writes no activity
	s.MustAdmin(200, "POST", base+"/alerts/"+aid+"/acknowledge", nil)
	add(map[string]any{"type": "alert.acknowledged", "alertId": aid, "jobId": job, "jobName": "Nightly full"})
	step()
	s.MustAdmin(200, "POST", base+"/alerts/"+aid+"/snooze", map[string]any{"until": admIn(at.Add(time.Hour))})
	add(map[string]any{"type": "alert.snoozed", "alertId": aid, "jobId": job, "jobName": "Nightly full"})
	step()
	s.MustAdmin(200, "POST", base+"/alerts/"+aid+"/resolve", nil)
	add(map[string]any{"type": "alert.resolved", "alertId": aid, "jobId": job, "jobName": "Nightly full"})
	step()
	s.MustAdmin(204, "DELETE", base+"/jobs/"+job, nil)
	add(map[string]any{"type": "job.deleted", "jobId": job, "jobName": "Nightly full"})

	check := func(what string) {
		t.Helper()
		acts := monActivity(s, ws)
		if len(acts) != len(want) {
			var got []any
			for _, a := range acts {
				got = append(got, a["type"])
			}
			t.Fatalf("%s: %d entries %v, want %d", what, len(acts), got, len(want))
		}
		for i, a := range acts {
			w := want[len(want)-1-i]
			monWantActivity(t, fmt.Sprintf("%s: entry %d (%s)", what, i, w["type"]), a, w)
		}
	}
	check("activity")
	// Clock moves add nothing, and the log is kept across a restart.
	s.Advance(48 * time.Hour)
	s.Restart()
	check("after a restart")
}

// A trial's end writes one workspace.trial_ended entry, by the system, at
// the trial's end, when the clock passes it; never again for that end.
func TestMonitorTrialEnd(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	end := testserver.T0.Add(3*time.Hour + 250*time.Millisecond)
	ws := s.MustAdmin(201, "POST", "/workspaces", map[string]any{"name": "Trial Co", "plan": "trial", "trialEndsAt": admIn(end)}).Data()["id"].(string)
	base := "/workspaces/" + ws
	trialEntries := func() []map[string]any {
		t.Helper()
		var out []map[string]any
		for _, a := range monActivity(s, ws) {
			if a["type"] == "workspace.trial_ended" {
				out = append(out, a)
			}
		}
		return out
	}
	s.SetClock(end.Add(-time.Millisecond))
	if e := trialEntries(); len(e) != 0 {
		t.Fatalf("before the end: %v", e)
	}
	if acts := monActivity(s, ws); len(acts) != 0 {
		t.Errorf("activity before the end: %v", acts)
	}
	s.SetClock(end)
	e := trialEntries()
	if len(e) != 1 {
		t.Fatalf("at the end: %d entries %v", len(e), e)
	}
	first := map[string]any{"type": "workspace.trial_ended", "actor": "system", "at": testserver.TS(end)}
	monWantActivity(t, "trial_ended", e[0], first)
	firstID := e[0]["id"]
	if acts := monActivity(s, ws); len(acts) != 1 {
		t.Errorf("activity at the end: %v", acts)
	}
	// Further clock moves and a restart write no other.
	s.Advance(time.Hour)
	s.SetClock(end.Add(10 * 24 * time.Hour))
	s.Restart()
	s.Advance(time.Minute)
	if e := trialEntries(); len(e) != 1 || e[0]["id"] != firstID {
		t.Fatalf("after later clock moves and a restart: %v", e)
	}
	// A longer trial that ends in turn writes one entry for its own end.
	now := end.Add(10*24*time.Hour + time.Minute)
	end2 := now.Add(2 * time.Hour)
	s.MustAdmin(200, "PATCH", base, map[string]any{"trialEndsAt": admIn(end2)})
	s.SetClock(end2.Add(-time.Millisecond))
	if e := trialEntries(); len(e) != 1 {
		t.Fatalf("before the second end: %v", e)
	}
	s.SetClock(end2.Add(time.Hour))
	s.Advance(time.Hour)
	e = trialEntries()
	if len(e) != 2 || e[1]["id"] != firstID {
		t.Fatalf("after the second end: %v", e)
	}
	monWantActivity(t, "second trial_ended", e[0], map[string]any{"type": "workspace.trial_ended", "actor": "system", "at": testserver.TS(end2)})
}
