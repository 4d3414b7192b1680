package engine

import (
	"testing"
	"time"
)

// TestEscalationAfterADeletedRule: when the rule an alert's escalation
// timer was set for is deleted, the alert still escalates at the next
// rule's instant, live as after a restart: the timer that finds no rule
// due sets the next one.
func TestEscalationAfterADeletedRule(t *testing.T) {
	dir := t.TempDir()
	e := dtOpen(t, dir, dtStart)
	ws, job := monitoredJob(t, e, 1440, 60)
	ch, err := e.CreateChannel(ws, ChannelInput{Type: Some("webhook"), Name: Some("hook"), URL: Some("https://hooks.example.com/x")})
	check(t, "channel", err)
	var first string
	for _, minutes := range []int64{60, 180} {
		r, err := e.CreateEscalation(ws, EscalationInput{ChannelID: Some(ch.ID), AfterMinutes: Some(minutes)})
		check(t, "escalation", err)
		if first == "" {
			first = r.ID
		}
	}
	check(t, "import", e.ImportReports(ws, job, []ImportInput{{ReceivedAt: dtStart, Status: ReportFailed, DurationSeconds: 61, SizeBytes: 2048}}))
	check(t, "delete the first rule", e.DeleteEscalation(ws, first, ""))
	for _, minutes := range []int{70, 190} { // past the deleted rule's instant, then the other's
		_, err := e.SetClock(dtStart.Add(time.Duration(minutes)*time.Minute), 0)
		check(t, "clock", err)
	}
	escalated := func(e *Engine) int {
		list, err := e.Deliveries(ws)
		check(t, "deliveries", err)
		n := 0
		for _, d := range list {
			if d.Event == "alert.escalated" {
				n++
			}
		}
		return n
	}
	if n := escalated(e); n != 1 {
		t.Fatalf("%d escalation notices after the second rule's instant, want 1", n)
	}
	want := takeState(t, e, false)
	crash := copyDir(t, dir)
	check(t, "close", e.Close())
	e = dtOpen(t, crash, dtStart.Add(190*time.Minute))
	closeAtEnd(t, e)
	sameState(t, "after a restart", takeState(t, e, false), want)
}
