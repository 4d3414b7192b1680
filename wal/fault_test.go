package wal

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The FailWrite hook fails a batch exactly as a failed write does:
// fail-stop, OnFatal once with the cause, nothing of the batch or after it
// acknowledged, nothing of it on disk after a restart.
func TestFailWriteIsAFailedWrite(t *testing.T) {
	dir := t.TempDir()
	cause := errors.New("injected write failure")
	var failing atomic.Bool
	var fatals atomic.Int32
	var fatalErr atomic.Value
	opts := tOpts(t)
	opts.FailWrite = func(first, last uint64) error {
		if failing.Load() {
			return cause
		}
		return nil
	}
	opts.OnFatal = func(err error) { fatals.Add(1); fatalErr.Store(err) }
	l := tOpen(t, dir, opts)
	l.Start()
	for i := range 3 {
		if lsn, err := tSubmit(l, &tRec{typ: 1, payload: tPayload(i, 16)}); err != nil || lsn != uint64(i+1) {
			t.Fatalf("record %d before the fault: lsn %d, %v", i, lsn, err)
		}
	}
	failing.Store(true)
	for i := range 3 {
		lsn, err := tSubmit(l, &tRec{typ: 1, payload: tPayload(10+i, 16)})
		if lsn != 0 || !errors.Is(err, ErrFailed) || (i == 0 && !errors.Is(err, cause)) {
			t.Fatalf("record %d after the fault: lsn %d, %v; want ErrFailed wrapping the cause", i, lsn, err)
		}
	}
	failing.Store(false) // too late: the log stays failed
	if _, err := tSubmit(l, &tRec{typ: 1, payload: []byte("later")}); !errors.Is(err, ErrFailed) {
		t.Fatalf("a record once the fault is gone: %v, want ErrFailed", err)
	}
	if n := fatals.Load(); n != 1 {
		t.Fatalf("OnFatal called %d times, want once", n)
	}
	if err, _ := fatalErr.Load().(error); !errors.Is(err, cause) {
		t.Fatalf("OnFatal got %v, want the cause", err)
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

// childEnv names the data directory of the child process that
// TestDefaultOnFatalExits starts.
const childEnv = "WAL_TEST_FATAL_CHILD_DIR"

// Without an OnFatal, a failed write logs its cause and exits the process
// with status 1: nothing more is written or acknowledged. The test runs
// itself as a child process that meets a failed write.
func TestDefaultOnFatalExits(t *testing.T) {
	if dir := os.Getenv(childEnv); dir != "" {
		l, err := Open(dir, Options{FailWrite: func(first, last uint64) error {
			return errors.New("disk on fire")
		}})
		if err != nil {
			os.Exit(3)
		}
		l.Start()
		l.Submit(&tRec{typ: 1, payload: []byte("x")}, nil)
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
	for _, want := range []string{"wal: write failed; stopping the process", "disk on fire", "write lsn 1..1"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("the child's log lacks %q:\n%s", want, stderr.String())
		}
	}
}
