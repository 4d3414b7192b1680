package transport_test

import (
	"testing"
	"time"

	"backupmon/internal/testserver"
)

// TestMonitorDeadlinePassedDuringDowntime: a job's due time plus grace
// passes while the server is down. The restart opens its missing alert at
// once (dated when the grace ended), and a second restart, later still,
// opens no other: the alert is recorded, not derived again.
func TestMonitorDeadlinePassedDuringDowntime(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	f := s.Fixture(testserver.FixtureOptions{Schedule: monHourly()})
	T := testserver.T0.Add(3 * time.Minute)
	s.SetClock(T)
	rpSend(s, f.Job, f.ReportKey, "ok")
	due := T.Add(time.Hour)
	monWantAlerts(t, s, "before the downtime", f.WS, 0)

	// Down from due-1m to due+2h: the deadline (due+30m) passes meanwhile.
	s.SetClock(due.Add(-time.Minute))
	s.RestartAt(due.Add(2 * time.Hour))
	list := monWantAlerts(t, s, "after the first restart", f.WS, 1)
	id := list[0]["id"].(string)
	monWantAlert(t, "missing alert", list[0], monMissingAlert(id, f.Client, f.Job, "Nightly backup", due, 30))
	j := monJob(s, f.RestKey, f.Job)
	rpFields(t, "job", j, map[string]any{"status": "missing", "lastResult": "ok"})
	if ua := admList(t, j, "unresolvedAlerts"); len(ua) != 1 || ua[0]["id"] != id {
		t.Errorf("unresolvedAlerts %v, want the one missing alert", ua)
	}

	// Down again; the restart finds the alert recorded and opens none.
	s.RestartAt(due.Add(5 * time.Hour))
	list = monWantAlerts(t, s, "after the second restart", f.WS, 1)
	monWantAlert(t, "missing alert after the second restart", list[0], monMissingAlert(id, f.Client, f.Job, "Nightly backup", due, 30))
	// A plain restart (the clock where the log left it) changes nothing.
	s.Restart()
	monWantAlerts(t, s, "after a plain restart", f.WS, 1)
}
