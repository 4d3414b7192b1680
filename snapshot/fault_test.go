package snapshot

import (
	"bytes"
	"errors"
	"io"
	"syscall"
	"testing"

	"backupmon/vfs"
)

// faultWrite writes a snapshot of body for lsn in dir through fsys, then
// prunes to the newest one, as the engine does after each snapshot. It
// returns Write's error and Prune's result.
func faultWrite(dir string, fsys vfs.FS, lsn uint64, body []byte) (writeErr error, oldest uint64, pruneErr error) {
	o := Options{Logger: quiet.Logger, FS: fsys}
	_, writeErr = o.Write(dir, lsn, func(w io.Writer) error {
		for i := 0; i < len(body); i += 1000 { // several writes, so that a middle one can fail
			if _, err := w.Write(body[i:min(i+1000, len(body))]); err != nil {
				return err
			}
		}
		return nil
	})
	if writeErr != nil {
		return writeErr, 0, nil
	}
	oldest, pruneErr = o.Prune(dir, 1)
	return nil, oldest, pruneErr
}

// A create, write, fsync, rename or removal that fails (EIO or ENOSPC) at
// any step of writing a snapshot and pruning the older one: Write or Prune
// reports the cause, Prune then allows no truncation of the log, and Load
// still finds a whole snapshot, even after a power cut drops every byte not
// fsynced: the new one if Write succeeded, else the one before. No
// half-written file ever carries a snapshot's name.
func TestFaultAtEveryStep(t *testing.T) {
	oldBody, newBody := randBody(5000, 1), randBody(300_000, 2)
	setup := func(t *testing.T) string {
		dir := t.TempDir()
		writeSnap(t, dir, 10, oldBody)
		return dir
	}
	clean := vfs.NewFaulty(vfs.OS)
	dir := setup(t)
	if err, oldest, perr := faultWrite(dir, clean, 20, newBody); err != nil || oldest != 20 || perr != nil {
		t.Fatalf("without a fault: Write %v, Prune %d %v", err, oldest, perr)
	}
	steps := clean.Trace()
	kinds := map[vfs.Op]bool{}
	for _, s := range steps {
		kinds[s.Op] = true
	}
	for _, op := range []vfs.Op{vfs.OpCreate, vfs.OpWrite, vfs.OpSync, vfs.OpRename, vfs.OpRemove} {
		if !kinds[op] {
			t.Fatalf("the scenario makes no %s: %v", op, steps)
		}
	}
	for _, cause := range []syscall.Errno{syscall.EIO, syscall.ENOSPC} {
		for _, step := range steps {
			t.Run(cause.Error()+"/"+step.String(), func(t *testing.T) {
				dir := setup(t)
				faulty := vfs.NewFaulty(vfs.OS)
				faulty.FailStep(step.N, cause)
				werr, oldest, perr := faultWrite(dir, faulty, 20, newBody)
				if f := faulty.Failed(); len(f) != 1 {
					t.Fatalf("failed steps %v, want %v", f, step)
				}
				switch {
				case werr != nil:
					if !errors.Is(werr, cause) {
						t.Fatalf("Write: %v, want the cause", werr)
					}
				case perr != nil:
					if !errors.Is(perr, cause) || oldest != 0 {
						t.Fatalf("Prune: %d, %v; want 0 and the cause", oldest, perr)
					}
				default:
					t.Fatalf("step %v failed and neither Write nor Prune said so", step)
				}
				// Then the power goes: what was not fsynced is lost.
				if _, err := faulty.LoseUnsynced(); err != nil {
					t.Fatal(err)
				}
				lsn, calls, err := loadAll(quiet, dir)
				if err != nil {
					t.Fatalf("Load after the fault: %v", err)
				}
				want := oldBody
				if werr == nil {
					want = newBody
				}
				if last := calls[len(calls)-1]; lsn != last.lsn || !bytes.Equal(last.body, want) {
					t.Fatalf("Load gave snapshot %d (%d bytes); want the whole %s one", lsn, len(last.body), map[bool]string{true: "new", false: "old"}[werr == nil])
				}
				if len(calls) != 1 {
					t.Fatalf("Load tried %d snapshots; a damaged file carries a snapshot's name", len(calls))
				}
				// A later prune on a healthy disk removes what was left.
				if _, err := (Options{Logger: quiet.Logger}).Prune(dir, 1); err != nil {
					t.Fatal(err)
				}
				if names := dirNames(t, dir); len(names) != 1 {
					t.Fatalf("after a healthy prune: %v, want one snapshot", names)
				}
			})
		}
	}
}
