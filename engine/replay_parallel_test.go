package engine

import (
	"fmt"
	"strings"
	"testing"

	"backupmon/state"
)

// The log is replayed on several goroutines; the engine it makes must be
// the one a serial replay makes, index changes included (a session secret
// two workspaces share is found in the later one), and a record that
// fails must give the serial replay's error, or with Options.Broken its
// read-only state.

func TestParallelReplayMatchesSerial(t *testing.T) {
	snaps, opts := plBuild(t, 13)
	snaps.last = nil // no snapshot: the whole log is replayed
	plMatchSerial(t, opts, []int32{2, 3, 4})
}

func TestParallelReplayFailsAsSerial(t *testing.T) {
	snaps, opts := plBuild(t, 7)
	snaps.last = nil
	// A record of the fourth workspace after a gap in its numbers, then
	// more records of every workspace.
	e, err := Open(opts)
	check(t, "open", err)
	actors := e.sortedActors()
	bad := actors[3].ws
	rec := state.Bind(&state.ClientCreated{Header: state.Header{Workspace: bad.ID, Seq: bad.Seq + 2}, ID: state.NewIDGen().Next(e.nowMs()), Name: "after a gap", Status: "active", CreatedAt: e.nowMs()})
	done := make(chan error, 1)
	e.submit(rec, func(_ uint64, err error) { done <- err })
	check(t, "log the record after a gap", <-done)
	for round := range 3 {
		for _, a := range actors {
			_, err := e.CreateClient(a.ws.ID.String(), ClientInput{Name: Some(fmt.Sprint("Later ", round))})
			check(t, "create client", err)
		}
	}
	check(t, "close", e.Abandon())

	var serialErr string
	for _, workers := range []int32{1, 2, 4} {
		_, err := plDump(t, opts, workers)
		if err == nil || !strings.Contains(err.Error(), "records are missing") {
			t.Fatalf("%d goroutines: %v, want records are missing", workers, err)
		}
		if serialErr == "" {
			serialErr = err.Error()
		} else if err.Error() != serialErr {
			t.Fatalf("%d goroutines: %q, the serial replay's %q", workers, err, serialErr)
		}
	}

	// Read-only on what was read before the failing record.
	opts.Broken = func(error) bool { return true }
	serial, err := plDump(t, opts, 1)
	check(t, "serial replay, read-only", err)
	if strings.Contains(serial, fmt.Sprintf("%x", "Later 0")) {
		t.Fatal("the read-only state holds records after the failing one")
	}
	for _, workers := range []int32{2, 4} {
		got, err := plDump(t, opts, workers)
		check(t, "parallel replay, read-only", err)
		if got != serial {
			t.Fatalf("%d goroutines: the read-only state differs from the serial one:\n%s", workers, firstDiff(serial, got))
		}
	}
}
