package engine

import (
	"os"
	"testing"
	"time"
)

// TestIdempotencyKeysOfVersion10: a workspace written in layout 10 (each
// job's keys as strings; testdata/workspace-v10-idem.bin, exported at
// 2026-11-20 12:00 UTC after reports with keys run-1 and run-2 on one job
// and run-3 on another) keeps its keys in the table: each answers
// duplicate on its own job only, through a snapshot in the new layout too,
// until 30 days after its report.
func TestIdempotencyKeysOfVersion10(t *testing.T) {
	const (
		job1   = "01a1f8d3-ea00-7003-b8cf-1acc3081f7d0"
		job2   = "01a1f8d3-ea00-7008-9867-bd366e14d001"
		secret = "svc_live_4ac7453f6e6bced6101fab8a08c219e1896f18b1b31c1721"
	)
	blob, err := os.ReadFile("testdata/workspace-v10-idem.bin")
	check(t, "read", err)
	dir := t.TempDir()
	clock := NewDevClock(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	e, err := Open(quietOptions(dir, clock))
	check(t, "open", err)
	check(t, "import", e.ImportWorkspace(blob, 10))
	hash := HashKey([]byte(secret))
	report := func(what, job, key string, want ReportOutcome) {
		t.Helper()
		if got := e.Report(hash, &ReportInput{JobID: job, Status: ReportOK, IdempotencyKey: key}); got.Outcome != want {
			t.Fatalf("%s: %s on %s: outcome %d, want %d", what, key, job, got.Outcome, want)
		}
	}
	report("imported", job1, "run-1", ReportDuplicate)
	report("imported", job1, "run-2", ReportDuplicate)
	report("imported", job2, "run-3", ReportDuplicate)
	report("imported", job1, "run-3", ReportRecorded) // another job's key
	report("imported", job2, "run-1", ReportRecorded)

	// Through a snapshot in the new layout and a restart.
	check(t, "close", e.Close())
	e, err = Open(quietOptions(dir, clock))
	check(t, "reopen", err)
	closeAtEnd(t, e)
	for _, c := range []struct{ job, key string }{{job1, "run-1"}, {job1, "run-2"}, {job2, "run-3"}, {job1, "run-3"}, {job2, "run-1"}} {
		report("restarted", c.job, c.key, ReportDuplicate)
	}

	// 30 days after 2026-11-20 12:00 the imported keys are forgotten; the
	// two recorded a day later are not.
	_, err = e.SetClock(time.Date(2026, 12, 20, 12, 0, 0, 0, time.UTC), 0)
	check(t, "set clock", err)
	report("30 days on", job1, "run-3", ReportDuplicate)
	report("30 days on", job1, "run-1", ReportRecorded)
	report("30 days on", job2, "run-3", ReportRecorded)
}
