package engine

import (
	"testing"
	"time"
)

// Retention drops activity entries older than the retention period at the
// next snapshot, as it drops results and resolved alerts, and keeps the
// newer ones; a restart reads the same log.
func TestRetentionDropsOldActivity(t *testing.T) {
	dir := t.TempDir()
	open := func(now time.Time) *Engine {
		opts := quietOptions(dir, NewDevClock(now))
		opts.RetentionDays = 30
		e, err := Open(opts)
		check(t, "open", err)
		return e
	}
	e := open(dtStart)
	ws, err := e.CreateWorkspace(WorkspaceInput{Name: Some("Acme"), Plan: Some("pro")})
	check(t, "create workspace", err)
	_, err = e.CreateClient(ws.ID, ClientInput{Name: Some("Old")})
	check(t, "create client", err)
	_, err = e.SetClock(dtStart.Add(20*24*time.Hour), 0)
	check(t, "clock", err)
	_, err = e.CreateClient(ws.ID, ClientInput{Name: Some("Newer")})
	check(t, "create client", err)
	_, err = e.SetClock(dtStart.Add(31*24*time.Hour), 0)
	check(t, "clock", err)
	names := func() []string {
		acts, err := e.Activity(ws.ID)
		check(t, "activity", err)
		var out []string
		for _, a := range acts {
			out = append(out, a.Type+" "+a.Name)
		}
		return out
	}
	if got := names(); len(got) != 2 {
		t.Fatalf("before the snapshot: %v, want both entries", got)
	}
	check(t, "snapshot", e.Snapshot())
	if got := names(); len(got) != 1 || got[0] != "client.created Newer" {
		t.Errorf("after the snapshot: %v, want only the entry of 11 days ago", got)
	}
	check(t, "close", e.Close())
	e = open(dtStart)
	closeAtEnd(t, e)
	if got := names(); len(got) != 1 || got[0] != "client.created Newer" {
		t.Errorf("after a restart: %v, want only the entry of 11 days ago", got)
	}
}
