package engine

import (
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"backupmon/wal"
)

// damagedLog is a log whose replay finds damage after its first keep
// records (as a cluster's stream with a gap would), and that counts what
// is written to it.
type damagedLog struct {
	*wal.Log
	keep             int
	started, written atomic.Int32
}

var errDamage = errors.New("damaged history")

func (l *damagedLog) Replay(from uint64, fn func(lsn uint64, typ byte, payload []byte) error) error {
	n := 0
	err := l.Log.Replay(from, func(lsn uint64, typ byte, payload []byte) error {
		if n == l.keep {
			return errDamage
		}
		n++
		return fn(lsn, typ, payload)
	})
	return err
}

func (l *damagedLog) Start() { l.started.Add(1); l.Log.Start() }

func (l *damagedLog) Submit(rec wal.Record, done func(uint64, error)) {
	l.written.Add(1)
	l.Log.Submit(rec, done)
}

// TestReadOnlyOnADamagedLog: an engine whose log replay fails with an error
// Options.Broken names opens read-only on what it read before: reads
// answer; a command is refused with ErrReadOnly, a report with
// ReportUnavailable, a snapshot with ErrReadOnly; nothing is written to the
// log (not even at Close), and no snapshot file appears. Without Broken,
// the same log fails the open, as before.
func TestReadOnlyOnADamagedLog(t *testing.T) {
	dir := t.TempDir()
	clock := NewDevClock(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	e, err := Open(quietOptions(dir, clock))
	check(t, "open", err)
	ws, job := monitoredJob(t, e, 1440, 60) // records 1-3
	key, err := e.CreateKey(ws, KeyInput{Name: Some("r"), Type: Some("report")})
	check(t, "key", err) // record 4
	_, err = e.CreateClient(ws, ClientInput{Name: Some("after the damage")})
	check(t, "client", err) // record 5: lost to the damage
	check(t, "close", e.Abandon())

	open := func(broken func(error) bool) (*Engine, *damagedLog, error) {
		wl, err := wal.Open(filepath.Join(dir, "wal"), wal.Options{NoSync: true, Logger: quietLogger()})
		check(t, "wal", err)
		l := &damagedLog{Log: wl, keep: 4}
		opts := quietOptions(dir, clock)
		opts.Log, opts.Broken = l, broken
		e, err := Open(opts)
		return e, l, err
	}
	if _, _, err := open(nil); !errors.Is(err, errDamage) {
		t.Fatalf("open without Broken: %v, want the damage", err)
	}
	e, l, err := open(func(err error) bool { return errors.Is(err, errDamage) })
	check(t, "open read-only", err)
	if !errors.Is(e.ReadOnly(), errDamage) {
		t.Fatalf("ReadOnly() = %v, want the damage", e.ReadOnly())
	}
	if _, err := e.JobDetail(ws, job, 10); err != nil {
		t.Fatalf("a read on a read-only engine: %v", err)
	}
	if clients, _ := e.Clients(ws); len(clients) != 1 {
		t.Fatalf("%d clients, want the one before the damage", len(clients))
	}
	if _, err := e.CreateClient(ws, ClientInput{Name: Some("new")}); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("a command: %v, want ErrReadOnly", err)
	}
	in := &ReportInput{JobID: job, Status: ReportOK, SizeBytes: -1, DurationSeconds: -1}
	if r := e.Report(HashKey([]byte(key.Key)), in); r.Outcome != ReportUnavailable {
		t.Fatalf("a report: outcome %d, want ReportUnavailable", r.Outcome)
	}
	if err := e.Snapshot(); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("a snapshot: %v, want ErrReadOnly", err)
	}
	clock.Set(clock.Now().Add(72 * time.Hour)) // the job is overdue: no timer may log it
	e.JobDetail(ws, job, 10)
	check(t, "close", e.Close())
	if s, w := l.started.Load(), l.written.Load(); s != 0 || w != 0 {
		t.Fatalf("the damaged log was started %d times and given %d records", s, w)
	}
	if snaps, _ := os.ReadDir(filepath.Join(dir, "snapshots")); len(snaps) != 0 {
		t.Fatalf("%d snapshot files on a read-only engine", len(snaps))
	}
}
