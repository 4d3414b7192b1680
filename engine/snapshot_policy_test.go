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
