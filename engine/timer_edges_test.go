package engine

import (
	"sync/atomic"
	"testing"
	"time"

	"backupmon/state"
)

// skewClock is the system clock plus an offset that a test can step (an
// NTP step, a manual date change). It is not a *DevClock, so actors arm
// real wake-ups.
type skewClock struct{ off atomic.Int64 }

func (c *skewClock) Now() time.Time { return time.Now().Add(time.Duration(c.off.Load())) }

// The wall clock steps back 2 s while a wake-up is armed: the wake-up fires
// (the runtime's timers run on the monotonic clock) before the instant is
// due on the engine's clock; the actor must arm it again, so the missing
// alert opens by itself. (Found in review: it was not re-armed.)
func TestWakeUpAfterWallClockStepsBack(t *testing.T) {
	clk := &skewClock{}
	e, err := Open(quietOptions(t.TempDir(), clk))
	check(t, "open", err)
	closeAtEnd(t, e)
	ws, job := monitoredJob(t, e, 5, 0)
	received := e.Now().Add(-5*time.Minute + 500*time.Millisecond)
	check(t, "import", e.ImportReports(ws, job, []ImportInput{{ReceivedAt: received, Status: ReportOK, DurationSeconds: -1, SizeBytes: -1}}))
	clk.off.Store(int64(-2 * time.Second)) // NTP steps the clock back
	time.Sleep(4 * time.Second)            // the clock is now ~1.5 s past the deadline
	a := dtAlerts(t, e, ws)                // one read: no polling, so no help from reads
	if len(a) != 1 {
		t.Errorf("no wake-up after the clock stepped back: %d alerts 1.5 s past the deadline", len(a))
	}
}

// failDeliverer fails every attempt.
type failDeliverer struct{ e *Engine }

func (d *failDeliverer) Deliver(n state.Notice) {
	go d.e.DeliveryDone(n.Workspace, n.Delivery, n.Attempt, "HTTP 500")
}

// edgeSettled waits (at most 10 s) until the workspace's one delivery has
// no attempt in flight, and returns it.
func edgeSettled(t *testing.T, e *Engine, ws string) DeliveryView {
	t.Helper()
	return dtWaitDeliveries(t, e, ws, "settled", func(l []DeliveryView) bool {
		return len(l) == 1 && (l[0].State != "pending" || l[0].NextAttemptAt != 0)
	})[0]
}

// A development-clock move of 3 days (or a 3-day downtime): the missing
// alert, and its delivery's createdAt, are dated 2.5 days back. The 24
// hours of retries count from the first attempt, so the first failure is
// retried 30 s later. (Found in review: it was given up at once.)
func TestDeliveryRetriesAfterLateMissedDueTime(t *testing.T) {
	e := dtOpen(t, t.TempDir(), dtStart)
	closeAtEnd(t, e)
	ws, job := monitoredJob(t, e, 60, 30)
	_, err := e.CreateChannel(ws, ChannelInput{Type: Some(state.ChannelWebhook), Name: Some("hook"), URL: Some("https://hooks.example.com/x")})
	check(t, "channel", err)
	d := &failDeliverer{e: e}
	e.SetDeliverer(d)
	check(t, "import", e.ImportReports(ws, job, []ImportInput{{ReceivedAt: dtStart, Status: ReportOK, DurationSeconds: -1, SizeBytes: -1}}))
	_, err = e.SetClock(time.Time{}, 72*time.Hour)
	check(t, "clock", err)
	list := []DeliveryView{edgeSettled(t, e, ws)}
	if len(list) != 1 || list[0].State != "pending" || list[0].Attempts != 1 ||
		int64(list[0].NextAttemptAt) != int64(list[0].LastAttemptAt)+30_000 || list[0].LastError == nil || *list[0].LastError != "HTTP 500" {
		t.Fatalf("deliveries %+v, want one pending, 1 attempt, the next 30 s after it", list)
	}
	// It gives up 24 hours after the first attempt, not after createdAt.
	first := int64(list[0].LastAttemptAt)
	for i := 0; i < 60; i++ {
		_, err = e.SetClock(time.Time{}, time.Hour)
		check(t, "clock", err)
		if l := edgeSettled(t, e, ws); l.State != "pending" {
			if l.State != "failed" || int64(l.LastAttemptAt) < first+24*3600_000-3600_000 || int64(l.LastAttemptAt) > first+24*3600_000+3600_000 {
				t.Errorf("delivery %+v: want failed about 24 h after the first attempt at %s", l, state.FormatTime(first))
			}
			return
		}
	}
	t.Error("delivery still pending 60 hours after its first attempt")
}

// The first message an actor handles after a deadline is the job's own
// report (the wake-up is still on its way): the due timers run before the
// report is decided, so the missed due time gets its alert, which the ok
// report then resolves. (Found in review: the alert was never recorded.)
func TestReportAfterDeadlineFindsMissingAlert(t *testing.T) {
	e := dtOpen(t, t.TempDir(), dtStart)
	closeAtEnd(t, e)
	ws, job := monitoredJob(t, e, 60, 30)
	kv, err := e.CreateKey(ws, KeyInput{Name: Some("agent"), Type: Some("report")})
	check(t, "key", err)
	check(t, "import", e.ImportReports(ws, job, []ImportInput{{ReceivedAt: dtStart, Status: ReportOK, DurationSeconds: -1, SizeBytes: -1}}))
	e.dev.Set(dtStart.Add(3 * time.Hour)) // time passes; no message reached the actor yet
	if r := e.Report(HashKey([]byte(kv.Key)), &ReportInput{JobID: job, Status: ReportOK, SizeBytes: -1, DurationSeconds: -1}); r.Outcome != ReportRecorded {
		t.Fatalf("report %d", r.Outcome)
	}
	a := dtAlerts(t, e, ws)
	if len(a) != 1 || a[0].Type != "missing" || a[0].Status != "resolved" || int64(a[0].Created) != dtStart.Add(90*time.Minute).UnixMilli() {
		t.Errorf("job was missing from %s to %s, but no missing alert was recorded", dtStart.Add(90*time.Minute), dtStart.Add(3*time.Hour))
	}
}
