package engine

import (
	"testing"
	"time"
)

// With the real clock each actor wakes at its earliest timer by itself: a
// deadline passes, nothing is sent to the workspace, and the missing alert
// and a trial's end are recorded all the same. Each is read once, well after
// its instant (a read runs due timers only after it answers, so polling
// would pass without the wake-up).
func TestRealClockWakesActors(t *testing.T) {
	e, err := Open(quietOptions(t.TempDir(), nil))
	check(t, "open", err)
	closeAtEnd(t, e)

	now := e.Now()
	trialEnd := now.Add(400 * time.Millisecond).UTC().Truncate(time.Millisecond)
	trial, err := e.CreateWorkspace(WorkspaceInput{Name: Some("Trial Co"), Plan: Some("trial"), TrialEndsAt: Some(trialEnd)})
	check(t, "create trial workspace", err)
	ws, job := monitoredJob(t, e, 5, 0)
	// A report received 5 minutes less 300 ms ago: due (grace 0) 300 ms
	// from now.
	received := e.Now().Add(-5*time.Minute + 300*time.Millisecond)
	check(t, "import", e.ImportReports(ws, job, []ImportInput{{ReceivedAt: received, Status: ReportOK, DurationSeconds: -1, SizeBytes: -1}}))
	if a := dtAlerts(t, e, ws); len(a) != 0 {
		t.Fatalf("alerts before the deadline: %+v", a)
	}

	time.Sleep(1500 * time.Millisecond)
	alerts := dtAlerts(t, e, ws)
	if len(alerts) != 1 || alerts[0].Type != "missing" || alerts[0].JobID != job ||
		int64(alerts[0].Created) != received.Add(5*time.Minute).UnixMilli() {
		t.Errorf("alerts 1.2 s after the deadline: %+v, want one missing alert created at %s", alerts, received.Add(5*time.Minute))
	}
	acts, err := e.Activity(trial.ID)
	check(t, "activity", err)
	var ended []ActivityView
	for _, a := range acts {
		if a.Type == "workspace.trial_ended" {
			ended = append(ended, a)
		}
	}
	if len(ended) != 1 || int64(ended[0].At) != trialEnd.UnixMilli() {
		t.Errorf("trial end entries %+v, want one at %s", ended, trialEnd)
	}
}
