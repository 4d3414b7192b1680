package engine

import (
	"testing"
	"time"

	"backupmon/state"
)

// TestSetClockAnswersOnceTimersAreDurable: when SetClock answers, every
// timer that came due has run and what it recorded is durable, so its
// notices are with the deliverer already (decisions.md 8): a job that goes
// missing when the clock moves has its notice handed out before the call
// returns, in every one of many tries.
func TestSetClockAnswersOnceTimersAreDurable(t *testing.T) {
	for try := range 20 {
		e := dtOpen(t, t.TempDir(), dtStart)
		ws, job := monitoredJob(t, e, 60, 30)
		_, err := e.CreateChannel(ws, ChannelInput{Type: Some(state.ChannelWebhook), Name: Some("hook"), URL: Some("https://hooks.example.com/x")})
		check(t, "channel", err)
		hold := make(psHold, 16)
		e.SetDeliverer(hold)
		check(t, "import", e.ImportReports(ws, job, []ImportInput{{ReceivedAt: dtStart, Status: ReportOK, DurationSeconds: -1, SizeBytes: -1}}))
		_, err = e.SetClock(time.Time{}, 2*time.Hour) // past the due time and its grace
		check(t, "set clock", err)
		select {
		case n := <-hold:
			if n.Event != state.EventOpened || n.AlertType != "missing" {
				t.Fatalf("try %d: notice %s of a %s alert, want the missing alert's opening", try, n.Event, n.AlertType)
			}
		default:
			t.Fatalf("try %d: SetClock answered before the missing alert's notice reached the deliverer", try)
		}
		check(t, "close", e.Close())
	}
}
