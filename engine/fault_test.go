package engine

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"backupmon/internal/syncbuf"
	"backupmon/snapshot"
	"backupmon/vfs"
	"backupmon/wal"
)

// openFaultEngine opens an engine in dir on fsys, logging into sink, taking
// snapshots only when asked.
func openFaultEngine(t *testing.T, dir string, fsys vfs.FS, sink *syncbuf.Buffer) *Engine {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(sink, nil))
	e, err := Open(Options{
		Dir:              dir,
		Clock:            NewDevClock(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)),
		Logger:           logger,
		FS:               fsys,
		WAL:              wal.Options{Logger: logger, OnFatal: func(err error) { t.Errorf("the log failed: %v", err) }},
		SnapshotEvery:    1 << 62,
		SnapshotInterval: 1000 * time.Hour,
	})
	if err != nil {
		t.Fatalf("open engine in %s: %v", dir, err)
	}
	return e
}

// A snapshot that cannot be written (every step under the snapshot
// directory fails) is reported with its cause and changes nothing else: the
// engine goes on taking commands, the log is not truncated, and a restart
// on a healthy disk recovers everything.
func TestSnapshotFailureKeepsTheLog(t *testing.T) {
	for _, cause := range []syscall.Errno{syscall.EIO, syscall.ENOSPC} {
		t.Run(cause.Error(), func(t *testing.T) {
			dir := t.TempDir()
			faulty := vfs.NewFaulty(vfs.OS)
			sink := &syncbuf.Buffer{}
			e := openFaultEngine(t, dir, faulty, sink)
			l := newWorkload(t, e, 7)
			l.run(200)
			check(t, "a first snapshot", e.Snapshot())
			first := e.log.FirstLSN()
			l.run(200)
			snapDir := filepath.Join(dir, "snapshots")
			faulty.Fail(func(s vfs.Step) bool { return strings.HasPrefix(s.Name, snapDir) }, cause)
			for range 2 {
				if err := e.Snapshot(); !errors.Is(err, cause) {
					t.Fatalf("a snapshot on a failing disk: %v, want the cause", err)
				}
			}
			if got := e.log.FirstLSN(); got != first {
				t.Fatalf("the log was truncated to %d (from %d) without a new snapshot", got, first)
			}
			l.run(200) // commands go on
			before := takeViews(t, e)
			faulty.Heal()
			check(t, "close", e.Close())
			if lsns, err := snapshot.List(snapDir); err != nil || len(lsns) != 2 {
				t.Fatalf("snapshots after close: %v %v, want the first and the closing one", lsns, err)
			}

			e = openFaultEngine(t, dir, vfs.OS, &syncbuf.Buffer{})
			closeAtEnd(t, e)
			sameViews(t, "after the failed snapshots", takeViews(t, e), before)
		})
	}
}

// A damaged newest snapshot is rejected with a log line naming it, and the
// engine recovers from the one before it, replaying the longer stretch of
// log that the older snapshot needs (the log is only ever truncated behind
// the oldest snapshot kept), to the same state.
func TestCorruptNewestSnapshotFallsBack(t *testing.T) {
	dir := t.TempDir()
	e := openFaultEngine(t, dir, vfs.OS, &syncbuf.Buffer{})
	l := newWorkload(t, e, 11)
	l.run(300)
	check(t, "snapshot", e.Snapshot())
	l.run(300)
	before := takeViews(t, e)
	check(t, "close", e.Close()) // writes the newest snapshot
	snapDir := filepath.Join(dir, "snapshots")
	lsns, err := snapshot.List(snapDir)
	if err != nil || len(lsns) != 2 {
		t.Fatalf("snapshots: %v %v, want two", lsns, err)
	}
	newest := filepath.Join(snapDir, fmt.Sprintf("%020d.snap", lsns[0]))

	// From the newest: nothing to replay.
	sink := &syncbuf.Buffer{}
	e = openFaultEngine(t, copyDir(t, dir), vfs.OS, sink)
	sameViews(t, "from the newest snapshot", takeViews(t, e), before)
	check(t, "close", e.Close())
	if n := replayedCount(t, sink.String()); n != 0 {
		t.Fatalf("the newest snapshot needed %d records replayed, want none", n)
	}

	data, err := os.ReadFile(newest)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0x40
	if err := os.WriteFile(newest, data, 0o640); err != nil {
		t.Fatal(err)
	}
	sink = &syncbuf.Buffer{}
	e = openFaultEngine(t, dir, vfs.OS, sink)
	closeAtEnd(t, e)
	sameViews(t, "from the older snapshot", maskLastUsed(takeViews(t, e)), maskLastUsed(before))
	logs := sink.String()
	for _, want := range []string{"snapshot rejected, trying an older one", filepath.Base(newest), "snapshot loaded"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log lacks %q:\n%s", want, logs)
		}
	}
	if n := replayedCount(t, logs); n < 300 {
		t.Errorf("replayed %d records from the older snapshot, want the 300 commands after it at least", n)
	}
}

// replayedCount returns the number of records the engine's "engine
// recovered" log line says it replayed.
func replayedCount(t *testing.T, logs string) int {
	t.Helper()
	m := regexp.MustCompile(`engine recovered.*replayed=(\d+)`).FindStringSubmatch(logs)
	if m == nil {
		t.Fatalf("no recovery line in the log:\n%s", logs)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}
