package wal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"backupmon/vfs"
)

// A failed segment write is fail-stop: OnFatal once with the cause, nothing
// of the batch or after it acknowledged, nothing of it on disk after a
// restart.
func TestFailedWriteIsFatal(t *testing.T) {
	dir := t.TempDir()
	faulty := vfs.NewFaulty(vfs.OS)
	var fatals atomic.Int32
	var fatalErr atomic.Value
	opts := tOpts(t)
	opts.FS = faulty
	opts.OnFatal = func(err error) { fatals.Add(1); fatalErr.Store(err) }
	l := tOpen(t, dir, opts)
	l.Start()
	for i := range 3 {
		if lsn, err := tSubmit(l, &Raw{Typ: 1, Payload: tPayload(i, 16)}); err != nil || lsn != uint64(i+1) {
			t.Fatalf("record %d before the fault: lsn %d, %v", i, lsn, err)
		}
	}
	faulty.Fail(func(s vfs.Step) bool { return s.Op == vfs.OpWrite }, syscall.EIO)
	for i := range 3 {
		lsn, err := tSubmit(l, &Raw{Typ: 1, Payload: tPayload(10+i, 16)})
		if lsn != 0 || !errors.Is(err, ErrFailed) || (i == 0 && !errors.Is(err, syscall.EIO)) {
			t.Fatalf("record %d after the fault: lsn %d, %v; want ErrFailed wrapping EIO", i, lsn, err)
		}
	}
	faulty.Heal() // too late: the log stays failed
	if _, err := tSubmit(l, &Raw{Typ: 1, Payload: []byte("later")}); !errors.Is(err, ErrFailed) {
		t.Fatalf("a record once the fault is gone: %v, want ErrFailed", err)
	}
	if n := fatals.Load(); n != 1 {
		t.Fatalf("OnFatal called %d times, want once", n)
	}
	if err, _ := fatalErr.Load().(error); !errors.Is(err, syscall.EIO) || !strings.Contains(err.Error(), "write lsn 4..4") {
		t.Fatalf("OnFatal got %v, want the cause with the LSNs", err)
	}
	l.Close()

	l = tOpen(t, dir, tOpts(t))
	defer l.Close()
	got := tReplay(t, l, 1)
	if len(got) != 3 {
		t.Fatalf("%d records after the restart, want the 3 acknowledged", len(got))
	}
	for i, g := range got {
		if !bytes.Equal(g.payload, tPayload(i, 16)) {
			t.Fatalf("record %d after the restart: %x", i, g.payload)
		}
	}
}

// faultRun is what one run of faultScenario saw.
type faultRun struct {
	openErr  error   // Open failed (nothing was submitted)
	acked    []int   // records acknowledged, in order
	refused  int     // records given an error
	fatals   []error // OnFatal's calls
	truncErr []error // TruncateFront's errors
	steps    []vfs.Step
}

// faultScenario opens a log in dir through fsys with 200-byte segments (so
// batches start new segments), writes 40 records one batch at a time,
// truncates the front twice along the way, and closes it. Record i's
// payload starts with i.
func faultScenario(t *testing.T, dir string, fsys *vfs.Faulty) faultRun {
	var run faultRun
	opts := Options{Logger: quietLogger, FS: fsys, SegmentSize: 200,
		OnFatal: func(err error) { run.fatals = append(run.fatals, err) }}
	l, err := Open(dir, opts)
	if err != nil {
		run.openErr = err
		run.steps = fsys.Trace()
		return run
	}
	l.Start()
	for i := range 40 {
		if _, err := tSubmit(l, &Raw{Typ: 1, Payload: tPayload(i, 24)}); err != nil {
			run.refused++
		} else {
			run.acked = append(run.acked, i)
		}
		if i == 15 || i == 30 {
			if err := l.TruncateFront(uint64(i - 3)); err != nil {
				run.truncErr = append(run.truncErr, err)
			}
		}
	}
	l.Close()
	run.steps = fsys.Trace()
	return run
}

// A write, an fsync, a rename (or any other change to the disk) that fails
// at any step of a log's life, with EIO or ENOSPC: nothing is acknowledged
// that did not become durable, a failed batch stops the log (OnFatal once,
// every later record refused), and after a power cut (every byte not
// fsynced lost), reopening the directory on a healthy disk finds every
// acknowledged record, in order, and nothing that was never submitted.
func TestFaultAtEveryStep(t *testing.T) {
	clean := faultScenario(t, t.TempDir(), vfs.NewFaulty(vfs.OS))
	if clean.openErr != nil || len(clean.acked) != 40 || len(clean.fatals) != 0 || len(clean.truncErr) != 0 {
		t.Fatalf("the scenario without a fault: open %v, %d acked, fatals %v, truncations %v",
			clean.openErr, len(clean.acked), clean.fatals, clean.truncErr)
	}
	kinds := map[vfs.Op]int{}
	for _, s := range clean.steps {
		kinds[s.Op]++
	}
	for _, op := range []vfs.Op{vfs.OpMkdir, vfs.OpWrite, vfs.OpSync} {
		if kinds[op] == 0 {
			t.Fatalf("the scenario makes no %s; steps: %v", op, clean.steps)
		}
	}
	for _, cause := range []syscall.Errno{syscall.EIO, syscall.ENOSPC} {
		for _, step := range clean.steps {
			t.Run(cause.Error()+"/"+step.String(), func(t *testing.T) {
				dir := t.TempDir()
				faulty := vfs.NewFaulty(vfs.OS)
				faulty.FailStep(step.N, cause)
				run := faultScenario(t, dir, faulty)
				if failed := faulty.Failed(); len(failed) != 1 || failed[0].Op != step.Op {
					t.Fatalf("failed steps %v, want %v (the scenario is not deterministic?)", failed, step)
				}
				checkFaultRun(t, step, cause, run)
				// Then the power goes: what was not fsynced is lost.
				if _, err := faulty.LoseUnsynced(); err != nil {
					t.Fatal(err)
				}

				l, err := Open(dir, tOpts(t))
				if err != nil {
					t.Fatalf("reopening on a healthy disk: %v", err)
				}
				defer l.Close()
				got := tReplay(t, l, l.FirstLSN())
				var ids []int
				for _, g := range got {
					ids = append(ids, int(binary.LittleEndian.Uint64(g.payload)))
				}
				// What is kept is a run of consecutive records (the front
				// may be truncated) that holds every acknowledged one not
				// truncated away and none that was never submitted.
				for i := 1; i < len(ids); i++ {
					if ids[i] != ids[i-1]+1 {
						t.Fatalf("records after the restart are not consecutive: %v", ids)
					}
				}
				if len(ids) > 0 && ids[len(ids)-1] >= len(run.acked)+run.refused {
					t.Fatalf("record %d after the restart was never submitted", ids[len(ids)-1])
				}
				if len(run.acked) > 0 {
					last := run.acked[len(run.acked)-1]
					if len(ids) == 0 || ids[len(ids)-1] < last {
						t.Fatalf("acknowledged records up to %d, found %v after the restart", last, ids)
					}
				}
			})
		}
	}
}

// checkFaultRun checks what the scenario's run saw with step failing.
func checkFaultRun(t *testing.T, step vfs.Step, cause error, run faultRun) {
	t.Helper()
	if run.openErr != nil {
		if !errors.Is(run.openErr, cause) {
			t.Fatalf("Open failed with %v, want the cause", run.openErr)
		}
		return
	}
	// Acknowledged records come first, refused ones after: nothing is
	// acknowledged once a batch has failed.
	for i, id := range run.acked {
		if id != i {
			t.Fatalf("acknowledged %v: a record after a refused one", run.acked)
		}
	}
	switch {
	case len(run.fatals) == 1:
		if run.refused == 0 {
			t.Fatalf("OnFatal(%v) but no record refused", run.fatals[0])
		}
		if !errors.Is(run.fatals[0], cause) || !strings.Contains(run.fatals[0].Error(), "write lsn") {
			t.Fatalf("OnFatal got %v, want the cause and the LSNs", run.fatals[0])
		}
	case len(run.fatals) > 1:
		t.Fatalf("OnFatal called %d times", len(run.fatals))
	case run.refused > 0:
		t.Fatalf("%d records refused without OnFatal", run.refused)
	case len(run.truncErr) == 0:
		t.Fatalf("step %v failed but nobody was told", step)
	}
	for _, err := range run.truncErr {
		if !errors.Is(err, cause) {
			t.Fatalf("TruncateFront: %v, want the cause", err)
		}
	}
}

// childEnv names the data directory of the child process that
// TestDefaultOnFatalExits starts.
const childEnv = "WAL_TEST_FATAL_CHILD_DIR"

// Without an OnFatal, a failed fsync logs its cause and exits the process
// with status 1: nothing more is written or acknowledged. The test runs
// itself as a child process that meets a failed fsync.
func TestDefaultOnFatalExits(t *testing.T) {
	if dir := os.Getenv(childEnv); dir != "" {
		faulty := vfs.NewFaulty(vfs.OS)
		l, err := Open(dir, Options{FS: faulty})
		if err != nil {
			os.Exit(3)
		}
		faulty.Fail(func(s vfs.Step) bool { return s.Op == vfs.OpSync }, syscall.ENOSPC)
		l.Start()
		l.Submit(&Raw{Typ: 1, Payload: []byte("x")}, nil)
		time.Sleep(10 * time.Second) // the exit comes first
		os.Exit(4)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestDefaultOnFatalExits$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("child: %v, want exit status 1; stderr:\n%s", err, stderr.String())
	}
	for _, want := range []string{"wal: write failed; stopping the process", "no space left on device", "write lsn 1..1", "fsync "} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("the child's log lacks %q:\n%s", want, stderr.String())
		}
	}
}
