package engine

import (
	"fmt"
	"path/filepath"
	"testing"

	"backupmon/state"
	"backupmon/wal"
)

// notFromWorkload lists the record types the workload does not write
// while it runs, and why.
var notFromWorkload = map[byte]string{
	state.TypeRateLevels: "written only by HandOver, when a shard's engine stops for another node to take it over: " +
		"the coverage test ends with one, and handover_test.go checks its replay",
}

// onlyEarlierBuilds lists the record types this build no longer writes:
// logs of earlier builds hold them, and replay still applies them.
var onlyEarlierBuilds = map[byte]string{
	state.TypeRuleSaved:    "RuleSavedBy, with its activity entry, replaced it (its apply is RuleSaved's)",
	state.TypeRulesOrdered: "RulesOrderedBy, with its activity entry, replaced it (its apply is RulesOrdered's)",
}

// onlyAtStart lists the record types the workload writes only before its
// first steps, so that a log after a snapshot taken in the middle (the
// golden directory's) does not hold them.
var onlyAtStart = map[byte]string{
	state.TypeWorkspaceCreated: "the workload's workspaces are made before its steps (moved-in ones come as ImportPart)",
}

// recordTypesOf returns how many records of each type the log of data
// directory dir holds.
func recordTypesOf(t *testing.T, dir string) map[byte]int {
	t.Helper()
	lg, err := wal.Open(filepath.Join(dir, "wal"), wal.Options{NoSync: true, Logger: quietLogger()})
	check(t, "open log", err)
	defer lg.Close()
	out := map[byte]int{}
	check(t, "replay", lg.Replay(0, func(_ uint64, typ byte, _ []byte) error {
		out[typ]++
		return nil
	}))
	return out
}

// runGoldenWorkload runs the workload the golden data directories are
// written with: seed 7, 300 steps, a snapshot, and 600 steps more (enough
// for every record type to come after the snapshot). It calls before (if
// not nil) just before the snapshot.
func runGoldenWorkload(t *testing.T, e *Engine, before func()) *workload {
	l := newWorkload(t, e, 7)
	l.run(300)
	if before != nil {
		before()
	}
	check(t, "snapshot", e.Snapshot())
	l.run(600)
	return l
}

// TestWorkloadWritesEveryRecordType: the workload of the determinism tests
// and of the golden data directories writes every record type of the
// registry, but those notFromWorkload lists (which a hand-over at its end
// writes); and the log after its snapshot, which a golden directory keeps,
// holds every one but those onlyAtStart lists too.
func TestWorkloadWritesEveryRecordType(t *testing.T) {
	dir := t.TempDir()
	e := openTestEngine(t, dir)
	closeAtEnd(t, e)
	var before map[byte]int
	l := runGoldenWorkload(t, e, func() {
		check(t, "barrier", e.barrier())
		before = recordTypesOf(t, copyDir(t, dir))
	})
	check(t, "barrier", e.barrier())
	after := recordTypesOf(t, copyDir(t, dir))
	// A hand-over in a minute with REST requests counted.
	l.restRead(l.ws[1])
	check(t, "hand over", e.HandOver())
	handedOver := recordTypesOf(t, dir)
	t.Logf("record types before the snapshot %v, after it %v, at the hand-over %v", before, after, handedOver)
	for _, typ := range state.Types() {
		name := fmt.Sprintf("%T (type %d)", state.New(typ), typ)
		inWorkload := before[typ]+after[typ] > 0
		if _, old := onlyEarlierBuilds[typ]; old {
			if inWorkload || handedOver[typ] > 0 {
				t.Errorf("%s is listed as written only by earlier builds, yet this one wrote it", name)
			}
			continue
		}
		switch _, excepted := notFromWorkload[typ]; {
		case excepted && inWorkload:
			t.Errorf("%s is listed as not from the workload, yet it wrote one: take it off the list", name)
		case excepted && handedOver[typ] == 0:
			t.Errorf("%s: the hand-over wrote none", name)
		case !excepted && !inWorkload:
			t.Errorf("the workload never wrote %s", name)
		case !excepted && after[typ] == 0:
			if _, ok := onlyAtStart[typ]; !ok {
				t.Errorf("the workload wrote no %s after its snapshot: the golden directory's log would lack it", name)
			}
		}
	}
}
