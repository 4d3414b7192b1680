package transport_test

// Job objects over time (decisions.md 4.4, docs/decisions.md "Jobs and
// schedules"): `late` and `missing` at exact times on the development clock,
// live status filters, the 20 latest results, and job objects that follow
// every change that shows in them (the server keeps jobs encoded between
// changes, so each case reads the job before and after).

import (
	"testing"
	"time"

	"backupmon/internal/testserver"
)

// rsJobOf reads one job through /jobs/{id} and checks that /jobs lists the
// same object (both are read at the same instant of the stopped clock).
func rsJobOf(s *testserver.Server, key, id string) map[string]any {
	s.T.Helper()
	t := s.T
	one := rsData(t, "job", rsGet(s, key, "/jobs/"+id))
	for _, j := range rsWalk(s, key, "/jobs", 100) {
		if j["id"] != id {
			continue
		}
		for k, v := range j {
			if rpJSONOf(t, one[k]) != rpJSONOf(t, v) {
				t.Errorf("job %s: /jobs has %s = %s, /jobs/{id} %s", id, k, rpJSONOf(t, v), rpJSONOf(t, one[k]))
			}
		}
		return one
	}
	t.Fatalf("job %s not listed", id)
	return nil
}

// rsWantLate checks `late`: nil for null, else dueAt and whole minutes.
func rsWantLate(t *testing.T, what string, j map[string]any, dueAt time.Time, minutes int) {
	t.Helper()
	if dueAt.IsZero() {
		if j["late"] != nil {
			t.Errorf("%s: late %v, want null", what, j["late"])
		}
		return
	}
	l, ok := j["late"].(map[string]any)
	if !ok {
		t.Errorf("%s: late %#v, want {dueAt %s, minutes %d}", what, j["late"], testserver.TS(dueAt), minutes)
		return
	}
	admWantKeys(t, what+".late", l, "dueAt", "minutes")
	rpFields(t, what+".late", l, map[string]any{"dueAt": testserver.TS(dueAt), "minutes": minutes})
}

// rsLateSteps are instants after the due time of a job with 30 minutes of
// grace, in order, with its late.minutes then (-1: late is null) and its
// status.
var rsLateSteps = []rsLateStep{
	{-time.Minute, -1, "healthy"},
	{-time.Millisecond, -1, "healthy"},
	{0, -1, "healthy"}, // at the due time exactly: not yet late
	{time.Millisecond, 0, "healthy"},
	{time.Minute - time.Millisecond, 0, "healthy"},
	{time.Minute, 1, "healthy"},
	{2*time.Minute + 59*time.Second, 2, "healthy"},
	{29*time.Minute + 59*time.Second + 999*time.Millisecond, 29, "healthy"},
	{30 * time.Minute, 30, "healthy"}, // due + grace exactly: not yet missing
	{30*time.Minute + time.Millisecond, 30, "missing"},
	{30*time.Minute + time.Second, 30, "missing"},
	{31 * time.Minute, 31, "missing"},
	{2 * time.Hour, 120, "missing"},
	{25 * time.Hour, 25 * 60, "missing"},
}

type rsLateStep struct {
	at      time.Duration // after due
	minutes int
	status  string
}

// missing is 1 once the job is missing, else 0.
func (c rsLateStep) missing() int {
	if c.status == "missing" {
		return 1
	}
	return 0
}

func TestRESTLateAndMissing(t *testing.T) {
	s, f := startFixture(t)
	hourly := map[string]any{"intervalMinutes": 60, "graceMinutes": 30}
	rep := s.NewJob(f.WS, f.Client, "Reporting", hourly)
	wait := s.NewJob(f.WS, f.Client, "Waiting", hourly)
	paused := s.NewJob(f.WS, f.Client, "Paused", hourly)
	s.MustAdmin(200, "PATCH", "/workspaces/"+f.WS+"/jobs/"+paused, map[string]any{"paused": true})
	admReport(s, rep, f.ReportKey, "ok")
	due := testserver.T0.Add(time.Hour)
	key := f.RestKey

	statusList := func(status string) []string {
		t.Helper()
		return rsIDs(rsItems(t, "jobs?status="+status, rsGet(s, key, "/jobs?status="+status)))
	}
	for _, c := range rsLateSteps {
		now := due.Add(c.at)
		clientMissing := c.missing()
		s.SetClock(now)
		what := "at due" + rsFmtDur(c.at)
		j := rsJobOf(s, key, rep)
		w := rsJobOf(s, key, wait)
		p := rsJobOf(s, key, paused)
		if c.minutes < 0 {
			rsWantLate(t, what+": reporting job", j, time.Time{}, 0)
			rsWantLate(t, what+": waiting job", w, time.Time{}, 0)
		} else {
			rsWantLate(t, what+": reporting job", j, due, c.minutes)
			// A waiting job is late too (docs/decisions.md), never missing.
			rsWantLate(t, what+": waiting job", w, due, c.minutes)
		}
		rsWantLate(t, what+": paused job", p, time.Time{}, 0)
		rpFields(t, what+": reporting job", j, map[string]any{"status": c.status, "lastResult": "ok"})
		rpFields(t, what+": waiting job", w, map[string]any{"status": "waiting", "lastResult": "none"})
		rpFields(t, what+": paused job", p, map[string]any{"status": "paused", "paused": true})
		rpFields(t, what+": schedule", admObj(t, j, "schedule"), map[string]any{"nextExpectedAt": testserver.TS(due)})
		// The status filter, client figures and health follow the clock.
		want := []string{}
		if clientMissing == 1 {
			want = []string{rep}
		}
		rsWantIDs(t, what+": /jobs?status=missing", statusList("missing"), want)
		if clientMissing == 0 {
			want = []string{rep}
		} else {
			want = []string{}
		}
		rsWantIDs(t, what+": /jobs?status=healthy", statusList("healthy"), want)
		cl := rsData(t, "client", rsGet(s, key, "/clients/"+f.Client))
		rpFields(t, what+": client", cl, map[string]any{"needsAttention": clientMissing == 1})
		rpFields(t, what+": client.jobs", admObj(t, cl, "jobs"), map[string]any{"missing": clientMissing, "healthy": 1 - clientMissing})
		h := rsData(t, "health", rsGet(s, key, "/health"))
		rpFields(t, what+": health", h, map[string]any{"missing": clientMissing, "clientsNeedingAttention": clientMissing,
			"timestamp": testserver.TS(now)})
	}
	// A report ends it: healthy, not late, due an hour after receipt.
	admReport(s, rep, f.ReportKey, "ok")
	now := due.Add(25 * time.Hour)
	j := rsJobOf(s, key, rep)
	rsWantLate(t, "after a report", j, time.Time{}, 0)
	rpFields(t, "after a report", j, map[string]any{"status": "healthy", "lastReportAt": testserver.TS(now)})
	rpFields(t, "after a report", admObj(t, j, "schedule"), map[string]any{"nextExpectedAt": testserver.TS(now.Add(time.Hour))})
}

func rsFmtDur(d time.Duration) string {
	if d < 0 {
		return d.String()
	}
	return "+" + d.String()
}

func TestRESTJobRecentResults(t *testing.T) {
	s, f := startFixture(t)
	// 25 reports in one millisecond of the stopped clock: the 20 newest
	// by id (the tie-break of receivedAt), newest first.
	for i := 0; i < 25; i++ {
		if r := s.Report(f.Job, f.ReportKey, "", `{"status":"ok"}`); r.Status != 200 {
			t.Fatalf("report %d: %d %s", i, r.Status, r.Body)
		}
	}
	var history []string
	for _, h := range rpHistory(s, f.WS, f.Job) {
		history = append(history, h["id"].(string))
	}
	if len(history) != 25 {
		t.Fatalf("history has %d results", len(history))
	}
	j := rsData(t, "job", rsGet(s, f.RestKey, "/jobs/"+f.Job))
	rr := admList(t, j, "recentResults")
	rsWantIDs(t, "recentResults", rsIDs(rr), history[:20])
	rsWantIDs(t, "/reports", rsIDs(rsWalk(s, f.RestKey, "/reports?jobId="+f.Job, 7)), history)
	for i := 1; i < len(rr); i++ {
		if rr[i-1]["id"].(string) <= rr[i]["id"].(string) {
			t.Errorf("recentResults not newest (highest id) first at %d", i)
		}
	}
	// The first report is the job's latest; the others were superseded
	// (same millisecond), which they are still listed as results.
	rpFields(t, "job", j, map[string]any{"lastReportAt": testserver.TS(testserver.T0)})
	rpFields(t, "job.sla", admObj(t, j, "sla"), map[string]any{"reports": 25})
}

func TestRESTJobFollowsChanges(t *testing.T) {
	s, f := startFixture(t)
	key := f.RestKey
	base := "/workspaces/" + f.WS
	// Wednesdays only: created on Wednesday T0, due a week later.
	weekly := rsJob(s, f.WS, f.Client, "Weekly", func(m map[string]any) {
		m["schedule"] = map[string]any{"intervalMinutes": 1440, "expectedDays": []string{"wed"}}
		m["device"] = map[string]any{"name": "File server", "type": "server", "hostname": "fs01"}
	})
	job := rsJobOf(s, key, f.Job)
	rpFields(t, "before", job, map[string]any{"clientName": "Globex", "name": "Nightly backup"})
	rpFields(t, "before", admObj(t, rsJobOf(s, key, weekly), "schedule"), map[string]any{"nextExpectedAt": "2026-03-11T10:00:00.000Z"})

	rpRun(t, s, "client renamed", func(t *testing.T) {
		s.MustAdmin(200, "PATCH", base+"/clients/"+f.Client, map[string]any{"name": "Globex Corp"})
		rpFields(t, "job", rsJobOf(s, key, f.Job), map[string]any{"clientName": "Globex Corp"})
		rpFields(t, "client", rsData(t, "client", rsGet(s, key, "/clients/"+f.Client)), map[string]any{"name": "Globex Corp"})
	})
	rpRun(t, s, "shared device renamed by a new job", func(t *testing.T) {
		rsJob(s, f.WS, f.Client, "Other", func(m map[string]any) {
			m["device"] = map[string]any{"name": "NAS box", "type": "nas", "hostname": "FS01"}
		})
		d := admObj(t, rsJobOf(s, key, f.Job), "device")
		rpFields(t, "device", d, map[string]any{"name": "NAS box", "type": "nas"})
	})
	rpRun(t, s, "job renamed", func(t *testing.T) {
		s.MustAdmin(200, "PATCH", base+"/jobs/"+f.Job, map[string]any{"name": "a first job"})
		rpFields(t, "job", rsJobOf(s, key, f.Job), map[string]any{"name": "a first job"})
		if first := rsItems(t, "jobs", rsGet(s, key, "/jobs"))[0]; first["id"] != f.Job {
			t.Errorf("renamed job is not first by name: %v", first["name"])
		}
	})
	rpRun(t, s, "time zone", func(t *testing.T) {
		// Thursday 02:00 in Los Angeles is not a Wednesday: the next is
		// 11 March 02:00 PDT (daylight saving began on 8 March) = 09:00Z.
		s.MustAdmin(200, "PATCH", base, map[string]any{"timeZone": "America/Los_Angeles"})
		rpFields(t, "weekly", admObj(t, rsJobOf(s, key, weekly), "schedule"), map[string]any{"nextExpectedAt": "2026-03-11T09:00:00.000Z"})
		w := rsData(t, "workspace", rsGet(s, key, "/workspace"))
		rpFields(t, "workspace", admObj(t, w, "workspace"), map[string]any{"timeZone": "America/Los_Angeles", "createdAt": testserver.TS(testserver.T0)})
	})
	rpRun(t, s, "schedule and target", func(t *testing.T) {
		admReport(s, f.Job, f.ReportKey, "ok")
		s.MustAdmin(200, "PATCH", base+"/jobs/"+f.Job, map[string]any{"schedule": map[string]any{"intervalMinutes": 120, "graceMinutes": 5}, "slaTarget": 99.5})
		j := rsJobOf(s, key, f.Job)
		rpFields(t, "schedule", admObj(t, j, "schedule"), map[string]any{"intervalMinutes": 120, "graceMinutes": 5, "nextExpectedAt": testserver.TS(testserver.T0.Add(2 * time.Hour))})
		rpFields(t, "sla", admObj(t, j, "sla"), map[string]any{"target": 99.5, "met": true})
	})
	rpRun(t, s, "pause with an end", func(t *testing.T) {
		end := testserver.T0.Add(3 * time.Hour)
		s.MustAdmin(200, "PATCH", base+"/jobs/"+f.Job, map[string]any{"pausedUntil": admIn(end)})
		rpFields(t, "paused", rsJobOf(s, key, f.Job), map[string]any{"status": "paused", "paused": true, "pausedUntil": testserver.TS(end), "late": nil})
		s.SetClock(end.Add(-time.Millisecond))
		rpFields(t, "just before the end", rsJobOf(s, key, f.Job), map[string]any{"status": "paused", "paused": true, "pausedUntil": testserver.TS(end)})
		s.SetClock(end)
		j := rsJobOf(s, key, f.Job)
		rpFields(t, "at the end", j, map[string]any{"status": "healthy", "paused": false, "pausedUntil": nil, "late": nil})
		rpFields(t, "at the end", admObj(t, j, "schedule"), map[string]any{"nextExpectedAt": testserver.TS(end.Add(2 * time.Hour))})
	})
	rpRun(t, s, "client paused and resumed", func(t *testing.T) {
		s.MustAdmin(200, "PATCH", base+"/clients/"+f.Client, map[string]any{"status": "paused"})
		rpFields(t, "paused client", rsJobOf(s, key, f.Job), map[string]any{"status": "paused", "paused": true, "pausedUntil": nil})
		s.MustAdmin(200, "PATCH", base+"/clients/"+f.Client, map[string]any{"status": "active"})
		rpFields(t, "resumed client", rsJobOf(s, key, f.Job), map[string]any{"status": "healthy", "paused": false})
	})
	rpRun(t, s, "a result leaves the SLA window", func(t *testing.T) {
		// Due a month after its report, so that only the 30-day window
		// changes the object at T + 30 days.
		monthly := s.NewJob(f.WS, f.Client, "Monthly", map[string]any{"intervalMinutes": 44640})
		at := rpNow(s)
		admReport(s, monthly, f.ReportKey, "ok")
		rpFields(t, "reported", admObj(t, rsJobOf(s, key, monthly), "sla"), map[string]any{"reports": 1, "met": true})
		s.SetClock(at.Add(30*24*time.Hour - time.Millisecond))
		rpFields(t, "a millisecond before", admObj(t, rsJobOf(s, key, monthly), "sla"), map[string]any{"reports": 1, "successRate": 100, "met": true})
		s.SetClock(at.Add(30 * 24 * time.Hour))
		rpFields(t, "30 days after", admObj(t, rsJobOf(s, key, monthly), "sla"), map[string]any{"reports": 0, "successRate": nil, "met": false})
	})
	rpRun(t, s, "job deleted", func(t *testing.T) {
		// Other jobs may hold alerts (a missing one); the deleted job's
		// alert must leave the count.
		before := rsData(t, "health", rsGet(s, key, "/health"))["unresolvedAlerts"].(float64)
		aid := admReport(s, weekly, f.ReportKey, "failed").JSON["alert_id"].(string)
		if len(rsItems(t, "alerts", rsGet(s, key, "/alerts?jobId="+weekly))) != 1 {
			t.Fatalf("alert %s not listed", aid)
		}
		s.MustAdmin(204, "DELETE", base+"/jobs/"+weekly, nil)
		rsWantErr(t, "deleted job", rsGet(s, key, "/jobs/"+weekly), 404, "NOT_FOUND", "")
		for _, p := range []string{"/jobs", "/reports", "/alerts", "/alerts?status=unresolved", "/reports?jobId=" + weekly, "/alerts?jobId=" + weekly} {
			for _, it := range rsWalk(s, key, p, 100) {
				if it["id"] == weekly || it["jobId"] == weekly {
					t.Errorf("%s lists the deleted job: %v", p, it)
				}
			}
		}
		h := rsData(t, "health", rsGet(s, key, "/health"))
		if h["unresolvedAlerts"] != before {
			t.Errorf("health counts the deleted job's alert: %v", h)
		}
	})
}
