package engine

import (
	"encoding/json"
	"testing"
	"time"

	"backupmon/state"
)

// TestBlockedDeliveryWaitsAcrossARestart: a delivery waiting for an earlier
// one of its alert to a PSA channel (Blocked) is left as it is at its due
// time, live and after a restart alike: a restart at the same time shows
// the same deliveries and state, not the waiting one cancelled for a job
// paused meanwhile (it is decided when the earlier one ends).
func TestBlockedDeliveryWaitsAcrossARestart(t *testing.T) {
	dir := t.TempDir()
	e, ws, job, hold, opened := psOpenedAlert(t, dir)
	// The opening's attempt fails: it waits 30 s for its retry.
	check(t, "outcome", e.DeliveryOutcome(opened.Workspace, opened.Delivery, opened.Attempt, Outcome{Failure: "HTTP 503"}))
	dtWaitDeliveries(t, e, ws, "the opening retried", func(l []DeliveryView) bool { return len(l) == 1 && l[0].Attempts == 1 })
	// The acknowledgement's delivery waits for the opening's.
	_, err := e.ChangeAlert(ws, opened.AlertID.String(), Acknowledge, time.Time{}, "user:ann@example.test", "on it")
	check(t, "acknowledge", err)
	_, err = e.PauseJob(ws, job, time.Time{}, "user:ann@example.test", "maintenance")
	check(t, "pause", err)
	hold.none(t, "the acknowledgement while the opening waits")
	check(t, "barrier", e.barrier())
	want, err := e.Deliveries(ws)
	check(t, "deliveries", err)
	wantState := takeState(t, e, false)
	crash := copyDir(t, dir)
	check(t, "close", e.Close())

	e = dtOpen(t, crash, dtStart)
	closeAtEnd(t, e)
	got, err := e.Deliveries(ws)
	check(t, "deliveries", err)
	sameJSON(t, "the deliveries after a restart", mustJSON(t, got), mustJSON(t, want))
	sameState(t, "after a restart", takeState(t, e, false), wantState)
}

// psOpenedAlert opens an engine in dir at dtStart with a job, a
// ConnectWise channel mapping its client and a deliverer that holds the
// notices, and has a failed report open an alert: it returns the engine,
// the workspace, the job, the deliverer and the opening's notice.
func psOpenedAlert(t *testing.T, dir string) (*Engine, string, string, psHold, state.Notice) {
	t.Helper()
	e := dtOpen(t, dir, dtStart)
	ws, job := monitoredJob(t, e, 60, 30)
	psChannel(t, e, ws)
	hold := make(psHold, 16)
	e.SetDeliverer(hold)
	check(t, "import", e.ImportReports(ws, job, []ImportInput{{ReceivedAt: dtStart, Status: ReportFailed, DurationSeconds: 61, SizeBytes: 2048}}))
	return e, ws, job, hold, hold.next(t, "the opening")
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", " ")
	check(t, "encode", err)
	return b
}
