package transport_test

// Report-driven job and alert state (api.md 3.1, 3.2; decisions.md 3,
// 4.4-4.6), read back through the admin API.

import (
	"testing"
	"time"

	"backupmon/internal/testserver"
)

// rpNow reads the development clock the harness gave the server.
func rpNow(s *testserver.Server) time.Time { return s.Clock.Now() }

func TestReportJobStatusTransitions(t *testing.T) {
	s, f := startFixture(t)
	created := testserver.T0

	j := rpJob(s, f.WS, f.Job)
	rpFields(t, "new job", j, map[string]any{
		"status": "waiting", "lastResult": "none", "lastReportAt": nil, "lastSuccessAt": nil,
		"lastFailureAt": nil, "failureStreak": 0, "late": nil, "paused": false,
	})
	rpFields(t, "new job schedule", j["schedule"].(map[string]any), map[string]any{"nextExpectedAt": testserver.TS(created.Add(24 * time.Hour))})

	// waiting → failed: the first report sets the status, opens a failed
	// critical alert, and the next due time counts from receipt.
	s.Advance(time.Hour)
	t1 := rpNow(s)
	alertID := rpSend(s, f.Job, f.ReportKey, "failed")
	j = rpJob(s, f.WS, f.Job)
	rpFields(t, "after failed", j, map[string]any{
		"status": "failed", "lastResult": "failed", "lastReportAt": testserver.TS(t1), "lastSuccessAt": nil,
		"lastFailureAt": testserver.TS(t1), "failureStreak": 1, "late": nil,
	})
	rpFields(t, "schedule after failed", j["schedule"].(map[string]any), map[string]any{"nextExpectedAt": testserver.TS(t1.Add(24 * time.Hour))})
	ua := admList(t, j, "unresolvedAlerts")
	if len(ua) != 1 {
		t.Fatalf("unresolvedAlerts after failed: %v", ua)
	}
	rpFields(t, "alert after failed", ua[0], map[string]any{
		"id": alertID, "type": "failed", "severity": "critical", "status": "open", "jobId": f.Job,
		"clientId": f.Client, "jobName": "Nightly backup", "createdAt": testserver.TS(t1), "resolvedAt": nil,
		"recoverySeconds": nil, "acknowledgedAt": nil, "snoozedUntil": nil, "ai": nil,
	})

	// failed again: the streak grows, the same alert is raised.
	s.Advance(time.Hour)
	t2 := rpNow(s)
	if id := rpSend(s, f.Job, f.ReportKey, "failed"); id != alertID {
		t.Errorf("second failed: alert_id %s, want the open alert %s", id, alertID)
	}
	rpFields(t, "after second failed", rpJob(s, f.WS, f.Job), map[string]any{
		"status": "failed", "lastFailureAt": testserver.TS(t2), "failureStreak": 2,
	})

	// warn resets the streak.
	s.Advance(time.Hour)
	t3 := rpNow(s)
	if id := rpSend(s, f.Job, f.ReportKey, "warn"); id != alertID {
		t.Errorf("warn: alert_id %s, want the open alert %s", id, alertID)
	}
	rpFields(t, "after warn", rpJob(s, f.WS, f.Job), map[string]any{
		"status": "warning", "lastResult": "warning", "lastReportAt": testserver.TS(t3), "lastFailureAt": testserver.TS(t2),
		"lastSuccessAt": nil, "failureStreak": 0,
	})

	s.Advance(time.Hour)
	rpSend(s, f.Job, f.ReportKey, "failed")
	rpFields(t, "failed after warn", rpJob(s, f.WS, f.Job), map[string]any{"failureStreak": 1})

	// ok → healthy, resolves the alert, resets the streak; lastFailureAt
	// keeps the latest failure.
	s.Advance(90*time.Minute + 30*time.Second)
	t5 := rpNow(s)
	rpSend(s, f.Job, f.ReportKey, "ok")
	j = rpJob(s, f.WS, f.Job)
	rpFields(t, "after ok", j, map[string]any{
		"status": "healthy", "lastResult": "ok", "lastReportAt": testserver.TS(t5), "lastSuccessAt": testserver.TS(t5),
		"lastFailureAt": testserver.TS(t5.Add(-90*time.Minute - 30*time.Second)), "failureStreak": 0,
	})
	if ua := admList(t, j, "unresolvedAlerts"); len(ua) != 0 {
		t.Errorf("unresolvedAlerts after ok: %v", ua)
	}
	rpFields(t, "resolved alert", rpAlert(s, f.WS, alertID), map[string]any{
		"status": "resolved", "resolvedAt": testserver.TS(t5), "recoverySeconds": int64(t5.Sub(t1) / time.Second),
		"createdAt": testserver.TS(t1),
	})

	// Each accepted report is one history entry, newest first, with the
	// key's source.
	h := admList(t, j, "history")
	if len(h) != 5 {
		t.Fatalf("history has %d entries, want 5", len(h))
	}
	for i, want := range []string{"ok", "failed", "warning", "failed", "failed"} {
		rpFields(t, "history", h[i], map[string]any{"status": want, "source": "api:" + f.ReportKeyPrefix, "jobId": f.Job, "clientId": f.Client, "vendor": "veeam"})
	}
	if len(f.ReportKeyPrefix) != 16 || f.ReportKeyPrefix != f.ReportKey[:16] {
		t.Errorf("key prefix %q is not the first 16 characters of the key", f.ReportKeyPrefix)
	}
	if rr := admList(t, rsData(t, "job", rsGet(s, f.RestKey, "/jobs/"+f.Job)), "recentResults"); len(rr) != 5 || rr[0]["id"] != h[0]["id"] || rr[0]["source"] != nil {
		t.Errorf("REST recentResults: %v", rr)
	}

	// The key list shows the key's last use (api.md 5.4).
	for _, k := range s.MustAdmin(200, "GET", "/workspaces/"+f.WS+"/keys", nil).List() {
		if k["id"] == f.ReportKeyID {
			rpFields(t, "report key", k, map[string]any{"lastUsedAt": testserver.TS(t5)})
		}
	}
}

func TestReportWaitingToFirstReport(t *testing.T) {
	s, f := startFixture(t)
	for _, c := range []struct{ status, jobStatus, alertType, severity string }{
		{"ok", "healthy", "", ""},
		{"warn", "warning", "warning", "warning"},
		{"failed", "failed", "failed", "critical"},
	} {
		rpRun(t, s, c.status, func(t *testing.T) {
			job := s.NewJob(f.WS, f.Client, "First "+c.status, testserver.Daily())
			// A waiting job never turns missing, however late.
			s.Advance(3 * 24 * time.Hour)
			rpFields(t, "waiting", rpJob(s, f.WS, job), map[string]any{"status": "waiting", "lastResult": "none"})
			id := rpSend(s, job, f.ReportKey, c.status)
			j := rpJob(s, f.WS, job)
			rpFields(t, "after first report", j, map[string]any{"status": c.jobStatus, "late": nil})
			ua := admList(t, j, "unresolvedAlerts")
			if c.alertType == "" {
				if id != "" || len(ua) != 0 {
					t.Errorf("ok opened an alert: %s %v", id, ua)
				}
				return
			}
			if len(ua) != 1 {
				t.Fatalf("unresolvedAlerts: %v", ua)
			}
			rpFields(t, "alert", ua[0], map[string]any{"id": id, "type": c.alertType, "severity": c.severity, "status": "open"})
		})
	}
}

func TestReportSuperseded(t *testing.T) {
	s, f := startFixture(t)
	s.Advance(time.Hour)
	t1 := rpNow(s)
	rpSend(s, f.Job, f.ReportKey, "ok")
	before := rpJob(s, f.WS, f.Job)

	// Older timestamp: stored, status unchanged, no alert, alert_id null.
	s.Advance(time.Hour)
	t2 := rpNow(s)
	rpWant(t, "older failed", s.Report(f.Job, f.ReportKey, "", `{"status":"failed","timestamp":"2026-03-04T10:30:00Z"}`), 200, rpOK("failed", "", false, true))
	// Same time as the latest report: not newer, so superseded too.
	rpWant(t, "equal warn", s.Report(f.Job, f.ReportKey, "", `{"status":"warn","timestamp":"`+testserver.TS(t1)+`"}`), 200, rpOK("warn", "", false, true))
	j := rpJob(s, f.WS, f.Job)
	for _, k := range []string{"status", "lastResult", "lastReportAt", "lastSuccessAt", "lastFailureAt", "failureStreak", "schedule"} {
		if a, b := rpJSONOf(t, j[k]), rpJSONOf(t, before[k]); a != b {
			t.Errorf("superseded reports changed %s: %s → %s", k, b, a)
		}
	}
	if len(rpAlerts(s, f.WS)) != 0 {
		t.Errorf("superseded reports opened an alert: %v", rpAlerts(s, f.WS))
	}
	h := admList(t, j, "history")
	if len(h) != 3 {
		t.Fatalf("history: %d entries, want 3 (superseded reports are stored)", len(h))
	}
	rpFields(t, "superseded warn", h[0], map[string]any{"status": "warning", "completedAt": testserver.TS(t1), "receivedAt": testserver.TS(t2)})
	rpFields(t, "superseded failed", h[1], map[string]any{"status": "failed", "completedAt": "2026-03-04T10:30:00.000Z", "receivedAt": testserver.TS(t2)})
	// Superseded reports are results like any other: they count in the SLA.
	rpFields(t, "sla", j["sla"].(map[string]any), map[string]any{"reports": 3, "successRate": 33.3, "met": false})

	// A superseded ok does not resolve an open alert.
	s.Advance(time.Hour)
	id := rpSend(s, f.Job, f.ReportKey, "failed")
	rpWant(t, "older ok", s.Report(f.Job, f.ReportKey, "", `{"status":"ok","timestamp":"`+testserver.TS(t2)+`"}`), 200, rpOK("ok", "", false, true))
	rpFields(t, "alert after superseded ok", rpAlert(s, f.WS, id), map[string]any{"status": "open", "resolvedAt": nil})
	rpFields(t, "job after superseded ok", rpJob(s, f.WS, f.Job), map[string]any{"status": "failed", "failureStreak": 1})

	// Without a timestamp, a second report in the same millisecond is not
	// newer either (docs/decisions.md).
	rpWant(t, "same instant", s.Report(f.Job, f.ReportKey, "", `{"status":"ok"}`), 200, rpOK("ok", "", false, true))
	rpFields(t, "alert after same-instant ok", rpAlert(s, f.WS, id), map[string]any{"status": "open"})

	// A newer timestamp, even one older than the receipt, is not superseded.
	s.Advance(time.Hour)
	rpWant(t, "newer ok", s.Report(f.Job, f.ReportKey, "", `{"status":"ok","timestamp":"`+testserver.TS(rpNow(s).Add(-time.Minute))+`"}`), 200, rpOK("ok", "", false, false))
	rpFields(t, "alert after newer ok", rpAlert(s, f.WS, id), map[string]any{"status": "resolved"})
}

// rpJSONOf re-encodes a decoded JSON value for comparison.
func rpJSONOf(t testing.TB, v any) string {
	t.Helper()
	return string(admJSON(t, v))
}

// rpClientWithJobs makes a client of ws named name with a daily job for
// each of jobs, then moves the clock a minute on; it returns the client and
// the jobs.
func rpClientWithJobs(s *testserver.Server, ws, name string, jobs ...string) (string, []string) {
	s.T.Helper()
	client := s.NewClient(ws, name)
	ids := make([]string, len(jobs))
	for i, j := range jobs {
		ids[i] = s.NewJob(ws, client, j, testserver.Daily())
	}
	s.Advance(time.Minute)
	return client, ids
}

// rpEachOffWay runs fn as a subtest for each way to switch monitoring off
// (see rpSwitchOff), on one server and fixture, with a new client named
// prefix+how that has the daily jobs a and b, the clock a minute on.
func rpEachOffWay(t *testing.T, prefix, a, b string, fn func(t *testing.T, s *testserver.Server, f testserver.Fixture, how, client, a, b string)) {
	s, f := startFixture(t)
	for _, how := range []string{"paused job", "paused client", "archived client"} {
		rpRun(t, s, how, func(t *testing.T) {
			client, jobs := rpClientWithJobs(s, f.WS, prefix+how, a, b)
			fn(t, s, f, how, client, jobs[0], jobs[1])
		})
	}
}

// rpSwitchOff switches monitoring off the way how says: it pauses each of
// jobs, or pauses or archives client.
func rpSwitchOff(s *testserver.Server, ws, how, client string, jobs ...string) {
	s.T.Helper()
	switch how {
	case "paused job":
		for _, j := range jobs {
			s.MustAdmin(200, "PATCH", "/workspaces/"+ws+"/jobs/"+j, map[string]any{"paused": true})
		}
	case "paused client":
		s.MustAdmin(200, "PATCH", "/workspaces/"+ws+"/clients/"+client, map[string]any{"status": "paused"})
	case "archived client":
		s.MustAdmin(200, "PATCH", "/workspaces/"+ws+"/clients/"+client, map[string]any{"status": "archived"})
	default:
		s.T.Fatalf("no way to switch monitoring off called %q", how)
	}
}

// Paused job, paused client, archived client (api.md 3.1, decisions.md 3):
// the report is stored and updates the job, but no alert is opened or
// raised; an ok still resolves an unresolved alert.
func TestReportMonitoringOff(t *testing.T) {
	rpEachOffWay(t, "Client ", "Quiet", "Alerted", func(t *testing.T, s *testserver.Server, f testserver.Fixture, how, client, quiet, alerted string) {
		alertID := rpSend(s, alerted, f.ReportKey, "warn")
		alertBefore := rpAlert(s, f.WS, alertID)
		alertsBefore := len(rpAlerts(s, f.WS))

		rpSwitchOff(s, f.WS, how, client, quiet, alerted)
		rpFields(t, "quiet job, off", rpJob(s, f.WS, quiet), map[string]any{"status": "paused", "paused": true})

		// failed on a job without an alert: stored, status updated,
		// no alert.
		s.Advance(time.Minute)
		now := rpNow(s)
		rpWant(t, "failed", s.Report(quiet, f.ReportKey, "", `{"status":"failed"}`), 200, rpOK("failed", "", false, false))
		j := rpJob(s, f.WS, quiet)
		rpFields(t, "quiet job after failed", j, map[string]any{
			"status": "failed", "lastResult": "failed", "lastReportAt": testserver.TS(now), "lastFailureAt": testserver.TS(now),
			"failureStreak": 1, "paused": true, "late": nil,
		})
		rpFields(t, "quiet schedule", j["schedule"].(map[string]any), map[string]any{"nextExpectedAt": testserver.TS(now.Add(24 * time.Hour))})
		if len(admList(t, j, "history")) != 1 || len(admList(t, j, "unresolvedAlerts")) != 0 {
			t.Errorf("quiet job: history %v, unresolvedAlerts %v", j["history"], j["unresolvedAlerts"])
		}
		if n := len(rpAlerts(s, f.WS)); n != alertsBefore {
			t.Errorf("a report with monitoring off opened an alert: %d alerts, want %d", n, alertsBefore)
		}
		// While monitoring is off the job never turns missing.
		s.Advance(5 * 24 * time.Hour)
		rpFields(t, "quiet job days later", rpJob(s, f.WS, quiet), map[string]any{"status": "failed", "late": nil})

		// failed on the job with an unresolved warning alert: the alert
		// is not raised.
		rpWant(t, "failed on alerted", s.Report(alerted, f.ReportKey, "", `{"status":"failed"}`), 200, rpOK("failed", "", false, false))
		if a, b := rpJSONOf(t, rpAlert(s, f.WS, alertID)), rpJSONOf(t, alertBefore); a != b {
			t.Errorf("alert changed with monitoring off:\n%s\nwas\n%s", a, b)
		}
		rpFields(t, "alerted job", rpJob(s, f.WS, alerted), map[string]any{"status": "failed"})

		// ok still resolves it.
		s.Advance(time.Minute)
		now = rpNow(s)
		rpWant(t, "ok on alerted", s.Report(alerted, f.ReportKey, "", `{"status":"ok"}`), 200, rpOK("ok", "", false, false))
		rpFields(t, "alert after ok", rpAlert(s, f.WS, alertID), map[string]any{"status": "resolved", "resolvedAt": testserver.TS(now)})
		rpFields(t, "alerted job after ok", rpJob(s, f.WS, alerted), map[string]any{"status": "healthy", "paused": true})

		// Monitoring resumes: the status follows lastResult, the next
		// due time counts from the resume time, not from the report.
		s.Advance(time.Hour)
		resumed := rpNow(s)
		switch how {
		case "paused job":
			for _, j := range []string{quiet, alerted} {
				s.MustAdmin(200, "PATCH", "/workspaces/"+f.WS+"/jobs/"+j, map[string]any{"paused": false})
			}
		default:
			s.MustAdmin(200, "PATCH", "/workspaces/"+f.WS+"/clients/"+client, map[string]any{"status": "active"})
		}
		j = rpJob(s, f.WS, alerted)
		rpFields(t, "alerted job resumed", j, map[string]any{"status": "healthy", "paused": false, "lastResult": "ok"})
		rpFields(t, "alerted job resumed schedule", j["schedule"].(map[string]any), map[string]any{"nextExpectedAt": testserver.TS(resumed.Add(24 * time.Hour))})
		rpFields(t, "quiet job resumed", rpJob(s, f.WS, quiet), map[string]any{"status": "failed", "paused": false})
		// And alerts open again.
		s.Advance(time.Minute)
		rpSend(s, quiet, f.ReportKey, "failed")
	})
}

func TestReportAlertRaise(t *testing.T) {
	s, f := startFixture(t)
	ack := func(id string) {
		s.MustAdmin(200, "POST", "/workspaces/"+f.WS+"/alerts/"+id+"/acknowledge", nil)
	}

	rpRun(t, s, "raise updates summary and type, keeps the higher severity", func(t *testing.T) {
		job := s.NewJob(f.WS, f.Client, "Raise", testserver.Daily())
		s.Advance(time.Minute)
		created := rpNow(s)
		id := rpSend(s, job, f.ReportKey, "warn")
		a := rpAlert(s, f.WS, id)
		rpFields(t, "opened", a, map[string]any{"type": "warning", "severity": "warning", "status": "open", "createdAt": testserver.TS(created)})
		warnSummary, _ := a["summary"].(string)
		if warnSummary == "" {
			t.Errorf("warning alert has no summary")
		}
		s.Advance(time.Minute)
		if got := rpSend(s, job, f.ReportKey, "failed"); got != id {
			t.Fatalf("failed on an open alert: alert_id %s, want %s", got, id)
		}
		a = rpAlert(s, f.WS, id)
		rpFields(t, "raised by failed", a, map[string]any{"type": "failed", "severity": "critical", "status": "open", "createdAt": testserver.TS(created)})
		if a["summary"] == warnSummary || a["summary"] == "" {
			t.Errorf("summary not updated by the failed report: %q", a["summary"])
		}
		failedSummary := a["summary"]
		s.Advance(time.Minute)
		if got := rpSend(s, job, f.ReportKey, "warn"); got != id {
			t.Fatalf("warn on an open alert: alert_id %s, want %s", got, id)
		}
		a = rpAlert(s, f.WS, id)
		rpFields(t, "raised by warn", a, map[string]any{"type": "warning", "severity": "critical", "summary": warnSummary})
		if a["summary"] == failedSummary {
			t.Errorf("summary not updated by the warn report")
		}
		if n := len(rpAlerts(s, f.WS)); n != 1 {
			t.Errorf("%d alerts, want one raised alert", n)
		}
	})

	rpRun(t, s, "acknowledged goes back to open only when severity rises", func(t *testing.T) {
		job := s.NewJob(f.WS, f.Client, "Ack", testserver.Daily())
		s.Advance(time.Minute)
		id := rpSend(s, job, f.ReportKey, "warn")
		s.Advance(time.Minute)
		ackAt := rpNow(s)
		ack(id)
		rpFields(t, "acknowledged", rpAlert(s, f.WS, id), map[string]any{"status": "acknowledged", "acknowledgedAt": testserver.TS(ackAt)})
		s.Advance(time.Minute)
		rpSend(s, job, f.ReportKey, "warn") // same severity
		rpFields(t, "after warn", rpAlert(s, f.WS, id), map[string]any{"status": "acknowledged", "acknowledgedAt": testserver.TS(ackAt), "severity": "warning"})
		s.Advance(time.Minute)
		rpSend(s, job, f.ReportKey, "failed") // severity rises
		rpFields(t, "after failed", rpAlert(s, f.WS, id), map[string]any{"status": "open", "acknowledgedAt": nil, "severity": "critical", "type": "failed"})
		// Acknowledged critical, then warn: severity does not rise.
		ack(id)
		s.Advance(time.Minute)
		rpSend(s, job, f.ReportKey, "warn")
		rpFields(t, "acknowledged critical after warn", rpAlert(s, f.WS, id), map[string]any{"status": "acknowledged", "severity": "critical", "type": "warning"})
		s.Advance(time.Minute)
		rpSend(s, job, f.ReportKey, "failed")
		rpFields(t, "acknowledged critical after failed", rpAlert(s, f.WS, id), map[string]any{"status": "acknowledged", "severity": "critical", "type": "failed"})
		// ok resolves an acknowledged alert.
		s.Advance(time.Minute)
		now := rpNow(s)
		rpSend(s, job, f.ReportKey, "ok")
		rpFields(t, "after ok", rpAlert(s, f.WS, id), map[string]any{"status": "resolved", "resolvedAt": testserver.TS(now)})
	})

	rpRun(t, s, "snoozed stays snoozed", func(t *testing.T) {
		job := s.NewJob(f.WS, f.Client, "Snooze", testserver.Daily())
		s.Advance(time.Minute)
		id := rpSend(s, job, f.ReportKey, "warn")
		until := rpNow(s).Add(2 * time.Hour)
		s.MustAdmin(200, "POST", "/workspaces/"+f.WS+"/alerts/"+id+"/snooze", map[string]any{"until": until.Format(time.RFC3339)})
		s.Advance(time.Minute)
		rpSend(s, job, f.ReportKey, "failed") // severity rises: still snoozed
		rpFields(t, "after failed", rpAlert(s, f.WS, id), map[string]any{"status": "snoozed", "snoozedUntil": testserver.TS(until), "severity": "critical", "type": "failed"})
		s.Advance(time.Minute)
		rpSend(s, job, f.ReportKey, "warn")
		rpFields(t, "after warn", rpAlert(s, f.WS, id), map[string]any{"status": "snoozed", "snoozedUntil": testserver.TS(until), "severity": "critical"})
		// ok resolves a snoozed alert.
		s.Advance(time.Minute)
		now := rpNow(s)
		rpSend(s, job, f.ReportKey, "ok")
		rpFields(t, "after ok", rpAlert(s, f.WS, id), map[string]any{"status": "resolved", "resolvedAt": testserver.TS(now), "snoozedUntil": nil})
	})

	rpRun(t, s, "an ended snooze is open again when raised", func(t *testing.T) {
		job := s.NewJob(f.WS, f.Client, "SnoozeEnds", testserver.Daily())
		s.Advance(time.Minute)
		id := rpSend(s, job, f.ReportKey, "warn")
		until := rpNow(s).Add(time.Hour)
		s.MustAdmin(200, "POST", "/workspaces/"+f.WS+"/alerts/"+id+"/snooze", map[string]any{"until": until.Format(time.RFC3339)})
		s.SetClock(until)
		if got := rpSend(s, job, f.ReportKey, "warn"); got != id {
			t.Fatalf("alert_id %s, want %s", got, id)
		}
		rpFields(t, "after the snooze ended", rpAlert(s, f.WS, id), map[string]any{"status": "open", "snoozedUntil": nil, "severity": "warning"})
	})

	rpRun(t, s, "resolved then a new problem opens a new alert", func(t *testing.T) {
		job := s.NewJob(f.WS, f.Client, "Again", testserver.Daily())
		s.Advance(time.Minute)
		first := rpSend(s, job, f.ReportKey, "failed")
		s.Advance(time.Minute)
		rpSend(s, job, f.ReportKey, "ok")
		s.Advance(time.Minute)
		created := rpNow(s)
		second := rpSend(s, job, f.ReportKey, "warn")
		if second == first {
			t.Fatalf("a new problem after resolution reused alert %s", first)
		}
		rpFields(t, "new alert", rpAlert(s, f.WS, second), map[string]any{"status": "open", "type": "warning", "severity": "warning", "createdAt": testserver.TS(created)})
		rpFields(t, "old alert", rpAlert(s, f.WS, first), map[string]any{"status": "resolved"})
		ua := admList(t, rpJob(s, f.WS, job), "unresolvedAlerts")
		if len(ua) != 1 || ua[0]["id"] != second {
			t.Errorf("unresolvedAlerts: %v", ua)
		}
		// The admin list is newest first.
		var order []string
		for _, a := range rpAlerts(s, f.WS) {
			if a["jobId"] == job {
				order = append(order, a["id"].(string))
			}
		}
		if len(order) != 2 || order[0] != second || order[1] != first {
			t.Errorf("alerts of the job, newest first: %v", order)
		}
	})

	rpRun(t, s, "recovery seconds", func(t *testing.T) {
		job := s.NewJob(f.WS, f.Client, "Recovery", testserver.Daily())
		s.Advance(time.Minute)
		id := rpSend(s, job, f.ReportKey, "failed")
		s.Advance(90*time.Minute + 30*time.Second)
		s.SetClock(rpNow(s).Add(999 * time.Millisecond))
		now := rpNow(s)
		rpSend(s, job, f.ReportKey, "ok")
		// 5430.999 seconds: whole seconds, so 5430.
		rpFields(t, "resolved", rpAlert(s, f.WS, id), map[string]any{"status": "resolved", "resolvedAt": testserver.TS(now), "recoverySeconds": 5430})
	})
}

// decisions.md 4.4: nextExpectedAt = receipt + interval, moved to the next
// expected weekday in the workspace's zone, same local time, DST-correct.
func TestReportNextExpectedAt(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	weekdays := map[string]any{"intervalMinutes": 1440, "expectedDays": []string{"mon", "tue", "wed", "thu", "fri"}}
	for _, c := range []struct {
		name, zone string
		receipt    time.Time
		wantNext   time.Time
	}{
		// Wednesday 10:00Z + 1 day = Thursday: expected.
		{"weekday stays", "UTC", time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC), time.Date(2026, 3, 5, 10, 0, 0, 0, time.UTC)},
		// Thursday 12:00Z is Friday 01:00 in Auckland; + 1 day is Friday
		// 12:00Z, which is Saturday 01:00 local: moved to Monday 01:00
		// local = Sunday 12:00Z. Read in UTC it would have stayed Friday.
		{"weekday of the zone, not of UTC", "Pacific/Auckland", time.Date(2026, 3, 5, 12, 0, 0, 0, time.UTC), time.Date(2026, 3, 8, 12, 0, 0, 0, time.UTC)},
		// Friday + 1 day = Saturday: moved to Monday, same time.
		{"weekend skipped", "UTC", time.Date(2026, 3, 6, 10, 0, 0, 0, time.UTC), time.Date(2026, 3, 9, 10, 0, 0, 0, time.UTC)},
		// Friday 05:00 EST + 1 day = Saturday 05:00 EST → Monday 05:00
		// local, which is EDT (from 2026-03-08): 09:00Z, not 10:00Z.
		{"weekend skipped across DST", "America/New_York", time.Date(2026, 3, 6, 10, 0, 0, 0, time.UTC), time.Date(2026, 3, 9, 9, 0, 0, 0, time.UTC)},
	} {
		rpRun(t, s, c.name, func(t *testing.T) {
			f := s.Fixture(testserver.FixtureOptions{TimeZone: c.zone, Schedule: weekdays})
			s.SetClock(c.receipt)
			rpSend(s, f.Job, f.ReportKey, "ok")
			rpFields(t, "schedule", rpJob(s, f.WS, f.Job)["schedule"].(map[string]any), map[string]any{
				"nextExpectedAt": testserver.TS(c.wantNext), "intervalMinutes": 1440, "graceMinutes": 60,
			})
		})
	}
	rpRun(t, s, "a timestamp does not move the due time; the receipt does", func(t *testing.T) {
		f := s.Fixture(testserver.FixtureOptions{Schedule: map[string]any{"intervalMinutes": 120}})
		s.SetClock(time.Date(2026, 3, 7, 12, 0, 0, 0, time.UTC))
		rpAccepted(t, "report", s.Report(f.Job, f.ReportKey, "", `{"status":"ok","timestamp":"2026-03-07T11:00:00Z"}`), "ok")
		rpFields(t, "job", rpJob(s, f.WS, f.Job), map[string]any{"lastReportAt": "2026-03-07T11:00:00.000Z"})
		rpFields(t, "schedule", rpJob(s, f.WS, f.Job)["schedule"].(map[string]any), map[string]any{"nextExpectedAt": "2026-03-07T14:00:00.000Z"})
	})
}

// decisions.md 4.4: late from the instant nextExpectedAt passes, missing
// once now > nextExpectedAt + grace; lastResult stays known.
func TestReportLateAndMissing(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	f := s.Fixture(testserver.FixtureOptions{Schedule: map[string]any{"intervalMinutes": 60, "graceMinutes": 30}})
	s.Advance(time.Minute)
	r := rpNow(s)
	rpSend(s, f.Job, f.ReportKey, "warn")
	due := r.Add(time.Hour)
	check := func(at time.Time, status string, late any) {
		t.Helper()
		s.SetClock(at)
		rpFields(t, "at "+testserver.TS(at), rpJob(s, f.WS, f.Job), map[string]any{"status": status, "late": late, "lastResult": "warning"})
	}
	lateBy := func(min int) map[string]any {
		return map[string]any{"dueAt": testserver.TS(due), "minutes": float64(min)}
	}
	check(due.Add(-time.Millisecond), "warning", nil)
	check(due, "warning", nil)
	check(due.Add(time.Millisecond), "warning", lateBy(0))
	check(due.Add(59*time.Second), "warning", lateBy(0))
	check(due.Add(time.Minute), "warning", lateBy(1))
	check(due.Add(30*time.Minute), "warning", lateBy(30))
	check(due.Add(30*time.Minute+time.Millisecond), "missing", lateBy(30))
	check(due.Add(3*time.Hour), "missing", lateBy(180))

	// A report ends it: status from the report, due time from receipt.
	now := rpNow(s)
	rpSend(s, f.Job, f.ReportKey, "ok")
	j := rpJob(s, f.WS, f.Job)
	rpFields(t, "after report", j, map[string]any{"status": "healthy", "late": nil, "lastResult": "ok"})
	rpFields(t, "schedule", j["schedule"].(map[string]any), map[string]any{"nextExpectedAt": testserver.TS(now.Add(time.Hour))})
}

// decisions.md 4.4: sla figures over results completed in the last 30 days.
func TestReportSLA(t *testing.T) {
	s, f := startFixture(t)
	sla := func(what string, want map[string]any) {
		t.Helper()
		rpFields(t, what, rpJob(s, f.WS, f.Job)["sla"].(map[string]any), want)
	}
	sla("no results", map[string]any{"target": 95, "successRate": nil, "met": false, "reports": 0, "periodDays": 30})
	for _, st := range []string{"ok", "ok", "ok", "warn"} {
		s.Advance(time.Minute)
		rpSend(s, f.Job, f.ReportKey, st)
	}
	// Warnings do not count as successes.
	sla("3 ok, 1 warn", map[string]any{"successRate": 75.0, "met": false, "reports": 4})
	s.MustAdmin(200, "PATCH", "/workspaces/"+f.WS+"/jobs/"+f.Job, map[string]any{"slaTarget": 75})
	sla("target 75", map[string]any{"target": 75, "met": true})
	s.Advance(time.Minute)
	rpSend(s, f.Job, f.ReportKey, "failed")
	s.Advance(time.Minute)
	rpSend(s, f.Job, f.ReportKey, "ok")
	sla("4 ok of 6", map[string]any{"successRate": 66.7, "met": false, "reports": 6})
	// An old timestamp counts by completedAt: 20 days ago is in the period.
	s.Advance(time.Minute)
	old := rpNow(s).Add(-20 * 24 * time.Hour)
	rpWant(t, "old ok", s.Report(f.Job, f.ReportKey, "", `{"status":"ok","timestamp":"`+testserver.TS(old)+`"}`), 200, rpOK("ok", "", false, true))
	sla("5 ok of 7", map[string]any{"successRate": 71.4, "reports": 7})
	// 11 days later the old result has left the 30-day period.
	s.Advance(11 * 24 * time.Hour)
	sla("old result out", map[string]any{"successRate": 66.7, "reports": 6})
	// 30 days after the rest, nothing is left.
	s.Advance(20 * 24 * time.Hour)
	sla("all out", map[string]any{"successRate": nil, "met": false, "reports": 0})
}

// A report in the same millisecond as a pause (the development clock does
// not move between requests): the log's order decides, not the times. A
// report recorded after the pause shows its status (decisions.md 3); a pause
// recorded after the report shows paused. Both survive a restart (replay)
// and a restart from a snapshot.
func TestReportSameMillisecondAsPause(t *testing.T) {
	rpEachOffWay(t, "Same ms ", "Report after the pause", "Report before the pause", func(t *testing.T, s *testserver.Server, f testserver.Fixture, how, client, after, before string) {
		off := func(jobs ...string) { rpSwitchOff(s, f.WS, how, client, jobs...) }
		// The report, then the pause, in one millisecond.
		rpSend(s, before, f.ReportKey, "failed")
		now := rpNow(s)
		if how == "paused job" {
			off(before)
		}
		// The pause, then the report, in the same millisecond.
		if how == "paused job" {
			off(after)
		} else {
			off()
		}
		rpWant(t, "report after the pause", s.Report(after, f.ReportKey, "", `{"status":"warn"}`), 200, rpOK("warn", "", false, false))
		if n := rpNow(s); !n.Equal(now) {
			t.Fatalf("the clock moved from %v to %v", now, n)
		}
		check := func(when string) {
			t.Helper()
			rpFields(t, when+": report after the pause", rpJob(s, f.WS, after), map[string]any{
				"status": "warning", "lastResult": "warning", "paused": true, "lastReportAt": testserver.TS(now)})
			rpFields(t, when+": report before the pause", rpJob(s, f.WS, before), map[string]any{
				"status": "paused", "lastResult": "failed", "paused": true, "lastReportAt": testserver.TS(now)})
			// The REST API shows the same statuses and counts them.
			auth := map[string]string{"Authorization": "Bearer " + f.RestKey}
			r := s.Do("GET", s.PublicURL+"/api/v1/jobs/"+after, auth, nil)
			if got := r.Data()["status"]; r.Status != 200 || got != "warning" {
				t.Errorf("%s: REST job after the pause: %d status %v, want 200 warning", when, r.Status, got)
			}
			r = s.Do("GET", s.PublicURL+"/api/v1/jobs?status=paused&clientId="+client, auth, nil)
			var names []string
			for _, j := range r.List() {
				names = append(names, j["name"].(string))
			}
			if len(names) != 1 || names[0] != "Report before the pause" {
				t.Errorf("%s: REST paused jobs of the client: %v, want only the one reported before the pause", when, names)
			}
		}
		check("live")
		s.Restart()
		check("after replay")
	})
}
