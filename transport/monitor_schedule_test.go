package transport_test

// Due times in the workspace's time zone (decisions.md 4.4): a report at R
// makes the job due at R + intervalMinutes, moved forward by whole local
// days, same wall time, to the next expected weekday, across daylight-saving
// changes; and the job's own pause with an end, and its client's pause or
// archiving, which keep it from turning missing and make the due time count
// from the resume. Helpers are in monitor_alerts_test.go.

import (
	"testing"
	"time"

	"backupmon/internal/testserver"
)

// monSchedCase is one job's schedule in a time zone: reported at report
// (a local wall time in zone), it is due at want (UTC, as shown), which is
// wantLocal in zone.
type monSchedCase struct {
	name      string
	zone      string
	days      []string // nil: every day
	interval  int
	report    [5]int // year, month, day, hour, minute, local
	want      string
	wantLocal string // Mon Jan 2 15:04 -0700 in zone
	// between: instants (UTC) after the report's R + interval where the
	// job is not late yet, because the due time moved to an expected day.
	between []string
}

// monRunSchedule checks a case: nextExpectedAt, not late before it, late
// from it on, healthy up to due + grace, missing with one alert after.
func monRunSchedule(t *testing.T, c monSchedCase) {
	t.Helper()
	loc, err := time.LoadLocation(c.zone)
	if err != nil {
		t.Fatal(err)
	}
	R := time.Date(c.report[0], time.Month(c.report[1]), c.report[2], c.report[3], c.report[4], 0, 0, loc)
	due, err := time.Parse(time.RFC3339, c.want)
	if err != nil {
		t.Fatal(err)
	}
	if got := due.In(loc).Format("Mon Jan 2 15:04 -0700"); got != c.wantLocal {
		t.Fatalf("case: %s is %s in %s, not %s", c.want, got, c.zone, c.wantLocal)
	}
	const grace = 45
	s := testserver.Start(t, testserver.Options{})
	s.SetClock(R.Add(-time.Hour))
	sched := map[string]any{"intervalMinutes": c.interval, "graceMinutes": grace}
	if c.days != nil {
		sched["expectedDays"] = c.days
	}
	f := s.Fixture(testserver.FixtureOptions{TimeZone: c.zone, Schedule: sched})
	s.SetClock(R)
	rpSend(s, f.Job, f.ReportKey, "ok")
	key := f.RestKey

	j := monJob(s, key, f.Job)
	wantDays := c.days
	if wantDays == nil {
		wantDays = admAllDays
	}
	rpFields(t, "schedule", admObj(t, j, "schedule"), map[string]any{"nextExpectedAt": testserver.TS(due), "intervalMinutes": c.interval,
		"graceMinutes": grace, "expectedDays": wantDays})
	rsWantLate(t, "just reported", j, time.Time{}, 0)
	for _, b := range c.between {
		at, err := time.Parse(time.RFC3339, b)
		if err != nil {
			t.Fatal(err)
		}
		s.SetClock(at)
		j := monJob(s, key, f.Job)
		rsWantLate(t, "at "+b, j, time.Time{}, 0)
		rpFields(t, "at "+b, j, map[string]any{"status": "healthy"})
	}
	for _, st := range []struct {
		at      time.Duration
		minutes int
		status  string
		alerts  int
	}{
		{-time.Millisecond, -1, "healthy", 0},
		{0, -1, "healthy", 0},
		{time.Minute, 1, "healthy", 0},
		{grace * time.Minute, grace, "healthy", 0},
		{grace*time.Minute + time.Millisecond, grace, "missing", 1},
		{3 * time.Hour, 180, "missing", 1},
	} {
		now := due.Add(st.at)
		s.SetClock(now)
		what := "due" + monFmtDur(st.at)
		j := monJob(s, key, f.Job)
		rpFields(t, what, j, map[string]any{"status": st.status, "lastResult": "ok"})
		rpFields(t, what+": schedule", admObj(t, j, "schedule"), map[string]any{"nextExpectedAt": testserver.TS(due)})
		if st.minutes < 0 {
			rsWantLate(t, what, j, time.Time{}, 0)
		} else {
			rsWantLate(t, what, j, due, st.minutes)
		}
		list := monWantAlerts(t, s, what, f.WS, st.alerts)
		if st.alerts == 1 {
			monWantAlert(t, what+": alert", list[0], monMissingAlert(list[0]["id"].(string), f.Client, f.Job, "Nightly backup", due, grace))
		}
	}
}

// monSendNoAlert sends a report that must be accepted without an alert
// (a paused job, or a paused or archived client).
func monSendNoAlert(s *testserver.Server, job, key, status string) {
	s.T.Helper()
	rpWant(s.T, "report "+status+" while monitoring is off", s.Report(job, key, "", `{"status":"`+status+`"}`), 200, rpOK(status, "", false, false))
}

var monWeekdays = []string{"mon", "tue", "wed", "thu", "fri"}

// Europe/Berlin, 2026: summer time begins Sunday 29 March (02:00 CET →
// 03:00 CEST) and ends Sunday 25 October (03:00 CEST → 02:00 CET).
func TestMonitorScheduleBerlin(t *testing.T) {
	for _, c := range []monSchedCase{
		{
			name: "Friday 22:30 to Monday 22:30 over the spring change", zone: "Europe/Berlin", days: monWeekdays, interval: 1440,
			report: [5]int{2026, 3, 27, 22, 30}, // 21:30Z, CET
			want:   "2026-03-30T20:30:00Z", wantLocal: "Mon Mar 30 22:30 +0200",
			// Saturday 22:31 and Sunday 22:30 local: not due, not late.
			between: []string{"2026-03-28T21:31:00Z", "2026-03-29T20:30:00Z"},
		},
		{
			name: "Friday 22:30 to Monday 22:30 over the autumn change", zone: "Europe/Berlin", days: monWeekdays, interval: 1440,
			report: [5]int{2026, 10, 23, 22, 30}, // 20:30Z, CEST
			want:   "2026-10-26T21:30:00Z", wantLocal: "Mon Oct 26 22:30 +0100",
			between: []string{"2026-10-24T20:31:00Z", "2026-10-25T21:30:00Z"},
		},
		{
			// Saturday 01:30 CET + 24 h is Sunday 01:30 CET (the change
			// comes at 02:00 local, 01:00Z); Sunday is not expected:
			// Monday 01:30, now CEST.
			name: "Saturday 01:30 over the spring change", zone: "Europe/Berlin", days: monWeekdays, interval: 1440,
			report: [5]int{2026, 3, 28, 1, 30}, // 00:30Z
			want:   "2026-03-29T23:30:00Z", wantLocal: "Mon Mar 30 01:30 +0200",
			between: []string{"2026-03-29T00:31:00Z"},
		},
		{
			// Saturday 02:30 CET + 24 h is Sunday 03:30 CEST (the clocks
			// went forward in between): Monday 03:30 CEST.
			name: "Saturday 02:30 over the spring change", zone: "Europe/Berlin", days: monWeekdays, interval: 1440,
			report: [5]int{2026, 3, 28, 2, 30}, // 01:30Z
			want:   "2026-03-30T01:30:00Z", wantLocal: "Mon Mar 30 03:30 +0200",
			between: []string{"2026-03-29T01:31:00Z"},
		},
		{
			// Saturday 01:30 CEST + 24 h is Sunday 01:30 CEST (before the
			// change at 03:00 CEST, 01:00Z); Monday 01:30 is CET.
			name: "Saturday 01:30 over the autumn change", zone: "Europe/Berlin", days: monWeekdays, interval: 1440,
			report: [5]int{2026, 10, 24, 1, 30}, // Friday 23:30Z
			want:   "2026-10-26T00:30:00Z", wantLocal: "Mon Oct 26 01:30 +0100",
			between: []string{"2026-10-24T23:31:00Z"},
		},
		{
			// Saturday 03:30 CEST + 24 h is Sunday 02:30 CET (the clocks
			// went back in between): Monday 02:30 CET.
			name: "Saturday 03:30 over the autumn change", zone: "Europe/Berlin", days: monWeekdays, interval: 1440,
			report: [5]int{2026, 10, 24, 3, 30}, // 01:30Z
			want:   "2026-10-26T01:30:00Z", wantLocal: "Mon Oct 26 02:30 +0100",
			between: []string{"2026-10-25T01:31:00Z"},
		},
		{
			// Sundays only: Friday 02:30 + 24 h is Saturday 02:30; Sunday
			// 02:30 does not exist (the gap): 03:30 CEST, as far past the
			// gap as the wall time was into it.
			name: "into the spring gap", zone: "Europe/Berlin", days: []string{"sun"}, interval: 1440,
			report: [5]int{2026, 3, 27, 2, 30}, // 01:30Z
			want:   "2026-03-29T01:30:00Z", wantLocal: "Sun Mar 29 03:30 +0200",
			between: []string{"2026-03-28T01:31:00Z"},
		},
		{
			name: "every day: the interval is elapsed time", zone: "Europe/Berlin", interval: 1440,
			report: [5]int{2026, 3, 28, 22, 30}, // 21:30Z; + 24 h is Sunday 23:30 CEST
			want:   "2026-03-29T21:30:00Z", wantLocal: "Sun Mar 29 23:30 +0200",
		},
	} {
		t.Run(c.name, func(t *testing.T) { monRunSchedule(t, c) })
	}
}

// America/New_York (2026: EDT from Sunday 8 March, EST from Sunday 1
// November) and Asia/Kolkata (+05:30, no daylight saving).
func TestMonitorScheduleZones(t *testing.T) {
	for _, c := range []monSchedCase{
		{
			// Friday 21:00 EST is Saturday in UTC; the weekday is the
			// workspace's: Friday is expected.
			name: "New York: the local weekday counts", zone: "America/New_York", days: monWeekdays, interval: 1440,
			report: [5]int{2026, 3, 5, 21, 0}, // Friday 02:00Z
			want:   "2026-03-07T02:00:00Z", wantLocal: "Fri Mar 6 21:00 -0500",
		},
		{
			name: "New York: Friday 23:00 to Monday 23:00 over the spring change", zone: "America/New_York", days: monWeekdays, interval: 1440,
			report: [5]int{2026, 3, 6, 23, 0}, // Saturday 04:00Z
			want:   "2026-03-10T03:00:00Z", wantLocal: "Mon Mar 9 23:00 -0400",
			between: []string{"2026-03-08T04:01:00Z", "2026-03-09T03:00:00Z"},
		},
		{
			name: "New York: Friday 23:00 to Monday 23:00 over the autumn change", zone: "America/New_York", days: monWeekdays, interval: 1440,
			report: [5]int{2026, 10, 30, 23, 0}, // Saturday 03:00Z
			want:   "2026-11-03T04:00:00Z", wantLocal: "Mon Nov 2 23:00 -0500",
			between: []string{"2026-11-01T03:01:00Z", "2026-11-02T04:00:00Z"},
		},
		{
			name: "New York: every day, elapsed time over the spring change", zone: "America/New_York", interval: 1440,
			report: [5]int{2026, 3, 7, 22, 0}, // Sunday 03:00Z
			want:   "2026-03-09T03:00:00Z", wantLocal: "Sun Mar 8 23:00 -0400",
		},
		{
			name: "Kolkata: Friday 23:30 to Monday 23:30", zone: "Asia/Kolkata", days: monWeekdays, interval: 1440,
			report: [5]int{2026, 3, 6, 23, 30}, // 18:00Z
			want:   "2026-03-09T18:00:00Z", wantLocal: "Mon Mar 9 23:30 +0530",
			between: []string{"2026-03-07T18:01:00Z", "2026-03-08T18:00:00Z"},
		},
		{
			// Monday 03:00 IST is still Sunday in UTC.
			name: "Kolkata: Mondays only, due on a UTC Sunday", zone: "Asia/Kolkata", days: []string{"mon"}, interval: 1440,
			report: [5]int{2026, 3, 8, 3, 0}, // Saturday 21:30Z
			want:   "2026-03-08T21:30:00Z", wantLocal: "Mon Mar 9 03:00 +0530",
		},
		{
			// 12 hours after Friday 14:00 is Saturday 02:00: Monday 02:00.
			name: "Kolkata: a 12-hour interval over the weekend", zone: "Asia/Kolkata", days: monWeekdays, interval: 720,
			report: [5]int{2026, 3, 6, 14, 0}, // 08:30Z
			want:   "2026-03-08T20:30:00Z", wantLocal: "Mon Mar 9 02:00 +0530",
			between: []string{"2026-03-06T20:31:00Z"},
		},
	} {
		t.Run(c.name, func(t *testing.T) { monRunSchedule(t, c) })
	}
}

// A job paused until P shows paused, is never late or missing and opens
// no alert, even past its due time; at P monitoring resumes: status follows
// lastResult, the job is due P + interval, and missing after that plus
// grace with one alert (decisions.md 3, 4.4).
func TestMonitorPausedUntil(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	f := s.Fixture(testserver.FixtureOptions{Schedule: monHourly()})
	key := f.RestKey
	jobPath := "/workspaces/" + f.WS + "/jobs/" + f.Job
	T := testserver.T0.Add(3 * time.Minute)
	s.SetClock(T)
	rpSend(s, f.Job, f.ReportKey, "ok")
	P := T.Add(5*time.Hour + 30*time.Second)
	s.SetClock(T.Add(10 * time.Minute))
	r := s.MustAdmin(200, "PATCH", jobPath, map[string]any{"paused": true, "pausedUntil": admIn(P)})
	rpFields(t, "PATCH answer", r.Data(), map[string]any{"status": "paused", "paused": true, "pausedUntil": testserver.TS(P), "late": nil})

	for _, at := range []time.Time{T.Add(time.Hour + time.Minute), T.Add(90*time.Minute + time.Millisecond), T.Add(4 * time.Hour), P.Add(-time.Millisecond)} {
		s.SetClock(at)
		what := "paused, at " + testserver.TS(at)
		j := monJob(s, key, f.Job)
		rpFields(t, what, j, map[string]any{"status": "paused", "paused": true, "pausedUntil": testserver.TS(P), "lastResult": "ok"})
		rsWantLate(t, what, j, time.Time{}, 0)
		monWantAlerts(t, s, what, f.WS, 0)
		rpFields(t, what+": health", rsData(t, "health", rsGet(s, key, "/health")), map[string]any{"paused": 1, "missing": 0, "openAlerts": 0})
	}
	due := P.Add(time.Hour)
	for _, st := range []struct {
		at      time.Time
		minutes int
		status  string
		alerts  int
	}{
		{P, -1, "healthy", 0},
		{due, -1, "healthy", 0},
		{due.Add(time.Millisecond), 0, "healthy", 0},
		{due.Add(30 * time.Minute), 30, "healthy", 0},
		{due.Add(30*time.Minute + time.Millisecond), 30, "missing", 1},
		{due.Add(2 * time.Hour), 120, "missing", 1},
	} {
		s.SetClock(st.at)
		what := "resumed, at " + testserver.TS(st.at)
		j := monJob(s, key, f.Job)
		rpFields(t, what, j, map[string]any{"status": st.status, "paused": false, "pausedUntil": nil, "lastResult": "ok"})
		rpFields(t, what+": schedule", admObj(t, j, "schedule"), map[string]any{"nextExpectedAt": testserver.TS(due)})
		if st.minutes < 0 {
			rsWantLate(t, what, j, time.Time{}, 0)
		} else {
			rsWantLate(t, what, j, due, st.minutes)
		}
		list := monWantAlerts(t, s, what, f.WS, st.alerts)
		if st.alerts == 1 {
			monWantAlert(t, what+": alert", list[0], monMissingAlert(list[0]["id"].(string), f.Client, f.Job, "Nightly backup", due, 30))
		}
	}
}

// The clock jumps over a pause's end and the due time after it in one
// move; a report while paused changes the status but opens no alert.
func TestMonitorPausedUntilJump(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	f := s.Fixture(testserver.FixtureOptions{Schedule: monHourly()})
	key := f.RestKey
	T := testserver.T0.Add(time.Minute)
	s.SetClock(T)
	P := T.Add(3 * time.Hour)
	s.MustAdmin(200, "PATCH", "/workspaces/"+f.WS+"/jobs/"+f.Job, map[string]any{"paused": true, "pausedUntil": admIn(P)})
	s.SetClock(T.Add(time.Hour))
	monSendNoAlert(s, f.Job, f.ReportKey, "failed")
	j := monJob(s, key, f.Job)
	rpFields(t, "reported while paused", j, map[string]any{"status": "failed", "paused": true, "lastResult": "failed"})
	s.SetClock(P.Add(-time.Millisecond))
	rpFields(t, "before the end", monJob(s, key, f.Job), map[string]any{"status": "failed", "paused": true, "late": nil})
	monWantAlerts(t, s, "before the end", f.WS, 0)
	// One move over P, P + 60 min and P + 90 min.
	s.SetClock(P.Add(5 * time.Hour))
	due := P.Add(time.Hour)
	list := monWantAlerts(t, s, "after the jump", f.WS, 1)
	monWantAlert(t, "alert", list[0], monMissingAlert(list[0]["id"].(string), f.Client, f.Job, "Nightly backup", due, 30))
	j = monJob(s, key, f.Job)
	rpFields(t, "after the jump", j, map[string]any{"status": "missing", "paused": false, "pausedUntil": nil, "lastResult": "failed"})
	rpFields(t, "after the jump", admObj(t, j, "schedule"), map[string]any{"nextExpectedAt": testserver.TS(due)})
	rsWantLate(t, "after the jump", j, due, 240)
	s.Restart()
	s.Advance(time.Hour)
	monWantAlerts(t, s, "after a restart", f.WS, 1)
}

// monReportThenOff starts a server with an hourly job that reports ok at T
// and, ten minutes later, is switched off by a PATCH of body to its job or
// its client (kind "/jobs/" or "/clients/"), whose path it returns.
func monReportThenOff(t *testing.T, T time.Time, kind string, body map[string]any) (*testserver.Server, testserver.Fixture, string) {
	t.Helper()
	s := testserver.Start(t, testserver.Options{})
	f := s.Fixture(testserver.FixtureOptions{Schedule: monHourly()})
	path := "/workspaces/" + f.WS + kind + f.Job
	if kind == "/clients/" {
		path = "/workspaces/" + f.WS + kind + f.Client
	}
	s.SetClock(T)
	rpSend(s, f.Job, f.ReportKey, "ok")
	s.SetClock(T.Add(10 * time.Minute))
	s.MustAdmin(200, "PATCH", path, body)
	return s, f, path
}

// monWantMissingAfter checks the fixture's job around due + its 30 minutes
// of grace: late with status and lastResult and no alert at due + grace,
// missing with one missing alert a millisecond later.
func monWantMissingAfter(t *testing.T, s *testserver.Server, f testserver.Fixture, what string, due time.Time, status, lastResult string) {
	t.Helper()
	s.SetClock(due.Add(30 * time.Minute))
	j := monJob(s, f.RestKey, f.Job)
	rpFields(t, what+"due + grace", j, map[string]any{"status": status, "lastResult": lastResult})
	rsWantLate(t, what+"due + grace", j, due, 30)
	monWantAlerts(t, s, what+"due + grace", f.WS, 0)
	s.SetClock(due.Add(30*time.Minute + time.Millisecond))
	rpFields(t, what+"past due + grace", monJob(s, f.RestKey, f.Job), map[string]any{"status": "missing", "lastResult": lastResult})
	list := monWantAlerts(t, s, what+"past due + grace", f.WS, 1)
	monWantAlert(t, "alert", list[0], monMissingAlert(list[0]["id"].(string), f.Client, f.Job, "Nightly backup", due, 30))
}

// A job paused without an end is resumed by a PATCH: the due time counts
// from the resume.
func TestMonitorJobResume(t *testing.T) {
	T := testserver.T0.Add(4 * time.Minute)
	s, f, jobPath := monReportThenOff(t, T, "/jobs/", map[string]any{"paused": true})
	key := f.RestKey
	s.SetClock(T.Add(7 * time.Hour))
	j := monJob(s, key, f.Job)
	rpFields(t, "paused", j, map[string]any{"status": "paused", "paused": true, "pausedUntil": nil, "late": nil})
	monWantAlerts(t, s, "paused", f.WS, 0)
	R := T.Add(7*time.Hour + 333*time.Millisecond)
	s.SetClock(R)
	r := s.MustAdmin(200, "PATCH", jobPath, map[string]any{"paused": false})
	due := R.Add(time.Hour)
	rpFields(t, "PATCH answer", r.Data(), map[string]any{"status": "healthy", "paused": false, "late": nil})
	rpFields(t, "PATCH answer", admObj(t, r.Data(), "schedule"), map[string]any{"nextExpectedAt": testserver.TS(due)})
	monWantMissingAfter(t, s, f, "", due, "healthy", "ok")
}

// A paused or archived client keeps its jobs from turning missing: no
// alert, even after a report changed the status; resuming it makes the
// due time count from the resume (decisions.md 3).
func TestMonitorClientPause(t *testing.T) {
	for _, status := range []string{"paused", "archived"} {
		t.Run(status, func(t *testing.T) {
			T := testserver.T0.Add(2 * time.Minute)
			s, f, clientPath := monReportThenOff(t, T, "/clients/", map[string]any{"status": status})
			key := f.RestKey

			s.SetClock(T.Add(3 * time.Hour))
			j := monJob(s, key, f.Job)
			rpFields(t, "client off", j, map[string]any{"status": "paused", "paused": true, "pausedUntil": nil, "lastResult": "ok"})
			rsWantLate(t, "client off", j, time.Time{}, 0)
			monWantAlerts(t, s, "client off", f.WS, 0)

			// A report while the client is off: stored, the status follows
			// it, no alert; still never missing.
			Rp := T.Add(3*time.Hour + time.Minute)
			s.SetClock(Rp)
			monSendNoAlert(s, f.Job, f.ReportKey, "failed")
			s.SetClock(Rp.Add(10 * time.Hour))
			j = monJob(s, key, f.Job)
			rpFields(t, "reported while off", j, map[string]any{"status": "failed", "paused": true, "lastResult": "failed"})
			rsWantLate(t, "reported while off", j, time.Time{}, 0)
			monWantAlerts(t, s, "reported while off", f.WS, 0)

			Rs := Rp.Add(10*time.Hour + 7*time.Second)
			s.SetClock(Rs)
			s.MustAdmin(200, "PATCH", clientPath, map[string]any{"status": "active"})
			due := Rs.Add(time.Hour)
			j = monJob(s, key, f.Job)
			rpFields(t, "resumed", j, map[string]any{"status": "failed", "paused": false, "lastResult": "failed"})
			rpFields(t, "resumed", admObj(t, j, "schedule"), map[string]any{"nextExpectedAt": testserver.TS(due)})
			rsWantLate(t, "resumed", j, time.Time{}, 0)
			monWantMissingAfter(t, s, f, "resumed, ", due, "failed", "failed")
		})
	}
}
