package engine

import (
	"fmt"
	"testing"
	"time"
)

// TestSnapshotDue: a snapshot is due once SnapshotEvery records are logged
// and the log has grown by half the last snapshot's size, or once the
// interval has passed with anything logged; never with nothing logged.
func TestSnapshotDue(t *testing.T) {
	e := openTestEngine(t, t.TempDir())
	closeAtEnd(t, e)
	e.opts.SnapshotEvery = 5
	e.opts.SnapshotInterval = time.Hour
	if e.snapshotDue(2 * time.Hour) {
		t.Fatal("due with nothing logged")
	}
	ws, err := e.CreateWorkspace(WorkspaceInput{Name: Some("Big"), Plan: Some("pro")})
	check(t, "create workspace", err)
	// A state whose snapshot is much larger than a few records.
	for i := range 200 {
		_, err := e.CreateClient(ws.ID, ClientInput{Name: Some(fmt.Sprintf("client with a long name %03d", i))})
		check(t, "create client", err)
	}
	if !e.snapshotDue(0) {
		t.Fatal("not due after 201 records and no snapshot yet")
	}
	check(t, "snapshot", e.Snapshot())
	size := e.lastSnap.size
	if size < 5000 {
		t.Fatalf("snapshot of %d bytes; the test needs a larger state", size)
	}
	if e.snapshotDue(2 * time.Hour) {
		t.Fatal("due right after a snapshot")
	}
	start := e.log.Written()
	n := 0
	for e.log.Written()-start < uint64(size/2) {
		_, err := e.UpdateWorkspace(ws.ID, WorkspaceInput{Name: Some(fmt.Sprintf("Big %d", n))})
		check(t, "update workspace", err)
		n++
		if e.log.Written()-start < uint64(size/2) && e.snapshotDue(0) {
			t.Fatalf("due after %d records and %d of %d bytes", n, e.log.Written()-start, size/2)
		}
	}
	if n < 5 {
		t.Fatalf("only %d records to grow the log by half the snapshot", n)
	}
	if !e.snapshotDue(0) {
		t.Fatalf("not due after %d records and %d bytes", n, e.log.Written()-start)
	}
	check(t, "snapshot", e.Snapshot())
	_, err = e.UpdateWorkspace(ws.ID, WorkspaceInput{Name: Some("Big again")})
	check(t, "update workspace", err)
	if e.snapshotDue(59 * time.Minute) {
		t.Fatal("due after one record within the interval")
	}
	if !e.snapshotDue(time.Hour) {
		t.Fatal("not due after the interval with a record logged")
	}
}

// TestSnapshotPacedByTiming: the snapshot interval runs on Options.Timing,
// the real time, not on the engine's clock: a development clock moved a
// day on makes no snapshot due, ten minutes of Timing do.
func TestSnapshotPacedByTiming(t *testing.T) {
	dev := NewDevClock(time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC))
	timing := NewDevClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	opts := quietOptions(t.TempDir(), dev)
	opts.Timing, opts.SnapshotInterval = timing, 10*time.Minute
	e, err := Open(opts)
	check(t, "open", err)
	closeAtEnd(t, e)
	_, err = e.CreateWorkspace(WorkspaceInput{Name: Some("Acme"), Plan: Some("pro")})
	check(t, "create workspace", err)
	_, err = e.SetClock(time.Time{}, 24*time.Hour)
	check(t, "advance the clock", err)
	check(t, "snapshot if due", e.snapshotIfDue())
	if e.lastSnap.lsn != 0 {
		t.Fatalf("a snapshot at LSN %d after a day of the engine's clock and no Timing", e.lastSnap.lsn)
	}
	timing.Set(timing.Now().Add(9 * time.Minute))
	check(t, "snapshot if due", e.snapshotIfDue())
	if e.lastSnap.lsn != 0 {
		t.Fatalf("a snapshot at LSN %d after 9 minutes of Timing", e.lastSnap.lsn)
	}
	timing.Set(timing.Now().Add(time.Minute))
	check(t, "snapshot if due", e.snapshotIfDue())
	if e.lastSnap.lsn == 0 || !e.lastSnap.at.Equal(timing.Now()) {
		t.Fatalf("after 10 minutes of Timing: last snapshot %+v, want one taken at %v", e.lastSnap, timing.Now())
	}
}
