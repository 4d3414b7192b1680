package engine

import (
	"errors"
	"testing"

	"backupmon/state"
)

// TestImportGivesTheSameState: every workspace of a random workload,
// exported from one engine and imported into another (its encoding cut in
// parts), holds the same state and shows the same views there; the other
// engine replays the parts from its log alone, and from a snapshot taken
// after, to the same state; a second import of a workspace, one that does
// not decode (one the state's decoder panicked on too), and one whose id the
// engine does not take are refused,
// changing nothing.
func TestImportGivesTheSameState(t *testing.T) {
	// Parts of 4 KiB, so that every workspace goes in many.
	defer func(n int) { importPartBytes = n }(importPartBytes)
	importPartBytes = 4 << 10
	src := openTestEngine(t, t.TempDir())
	l := newWorkload(t, src, 7)
	l.run(400)
	want, wantViews, wantTime := takeState(t, src, false), maskLastUsed(takeViews(t, src)), src.Now()

	dir := t.TempDir()
	dst := openTestEngine(t, dir)
	_, err := dst.SetClock(src.Now(), 0)
	check(t, "set clock", err)
	var first []byte
	for _, w := range src.Workspaces() {
		blob, err := src.ExportWorkspace(w.ID)
		check(t, "export", err)
		if first == nil {
			first = blob
		}
		if len(blob) < 2*importPartBytes {
			t.Fatalf("workspace %s encodes in %d bytes: too few for several parts", w.ID, len(blob))
		}
		check(t, "import", dst.ImportWorkspace(blob, state.SnapshotVersion))
		var ee *Error
		if err := dst.ImportWorkspace(blob, state.SnapshotVersion); !errors.As(err, &ee) || ee.Kind != KindConflict {
			t.Fatalf("a second import of %s: %v, want a conflict", w.ID, err)
		}
	}
	check(t, "close source", src.Close())
	sameState(t, "imported", takeState(t, dst, false), want)
	sameViews(t, "imported", maskLastUsed(takeViews(t, dst)), wantViews)

	var ee *Error
	if err := dst.ImportWorkspace([]byte("not a workspace"), state.SnapshotVersion); !errors.As(err, &ee) || ee.Kind != KindInvalid {
		t.Fatalf("an import that does not decode: %v, want invalid", err)
	}
	// One the state's decoder panicked on (cluster import's blobs come from
	// another process): refused, the process still up.
	if err := dst.ImportWorkspace(panickyBlob(t, first), state.SnapshotVersion); !errors.As(err, &ee) || ee.Kind != KindInvalid {
		t.Fatalf("an import the decoder panicked on: %v, want invalid", err)
	}

	// From the log alone: the parts are replayed.
	check(t, "close", dst.Abandon())
	dst = openTestEngine(t, dir)
	sameState(t, "replayed", takeState(t, dst, false), want)
	// From a snapshot taken after.
	check(t, "close", dst.Close())
	dst = openTestEngine(t, dir)
	sameState(t, "from a snapshot", takeState(t, dst, false), want)
	check(t, "close", dst.Close())

	// An engine that takes only some ids refuses the others.
	opts := quietOptions(t.TempDir(), NewDevClock(wantTime))
	opts.WorkspaceID = func(ID) bool { return false }
	other, err := Open(opts)
	check(t, "open", err)
	closeAtEnd(t, other)
	if err := other.ImportWorkspace(first, state.SnapshotVersion); !errors.As(err, &ee) || ee.Kind != KindConflict {
		t.Fatalf("an import of a workspace of another shard: %v, want a conflict", err)
	}
	if n := len(other.Workspaces()); n != 0 {
		t.Fatalf("%d workspaces after refused imports", n)
	}
}
