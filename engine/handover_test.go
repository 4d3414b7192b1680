package engine

import (
	"testing"
	"time"
)

// TestHandOverKeepsTheMinutesCounts: a shard that hands over (HandOver)
// leaves the rate counts of the minute under way in its log, after its last
// snapshot, and the engine opened next on that log goes on counting them:
// a report key that sent 30 reports this minute has 30 left, the REST API
// of a pro workspace that served 7 requests has 293. An engine closed
// without a hand-over starts them again from zero, as before.
func TestHandOverKeepsTheMinutesCounts(t *testing.T) {
	for _, tc := range []struct {
		name             string
		handOver         bool
		reportsLeft      int
		restRemainingNow int64
	}{
		{"hand-over", true, 30, 300 - 7 - 1},
		{"plain close", false, 60, 300 - 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			clock := NewDevClock(time.Date(2026, 3, 2, 10, 0, 5, 0, time.UTC))
			e, err := Open(quietOptions(dir, clock))
			check(t, "open", err)
			ws, job := monitoredJob(t, e, 1440, 60)
			report, err := e.CreateKey(ws, KeyInput{Name: Some("r"), Type: Some("report")})
			check(t, "report key", err)
			rest, err := e.CreateKey(ws, KeyInput{Name: Some("q"), Type: Some("rest")})
			check(t, "rest key", err)
			in := &ReportInput{JobID: job, Status: ReportOK, SizeBytes: -1, DurationSeconds: -1}
			for i := range 30 {
				if r := e.Report(HashKey([]byte(report.Key)), in); r.Outcome != ReportRecorded {
					t.Fatalf("report %d: outcome %d", i+1, r.Outcome)
				}
			}
			for range 7 {
				e.REST(HashKey([]byte(rest.Key)), &RESTQuery{Endpoint: EndpointWorkspace}, nil)
			}
			if tc.handOver {
				check(t, "hand over", e.HandOver())
			} else {
				check(t, "close", e.Close())
			}

			clock.Set(clock.Now().Add(20 * time.Second)) // the same minute
			e, err = Open(quietOptions(dir, clock))
			check(t, "reopen", err)
			closeAtEnd(t, e)
			a := e.REST(HashKey([]byte(rest.Key)), &RESTQuery{Endpoint: EndpointWorkspace}, nil)
			if a.Limits.Remaining != tc.restRemainingNow {
				t.Errorf("REST remaining after the move: %d, want %d", a.Limits.Remaining, tc.restRemainingNow)
			}
			for i := range tc.reportsLeft {
				if r := e.Report(HashKey([]byte(report.Key)), in); r.Outcome != ReportRecorded {
					t.Fatalf("report %d after the move: outcome %d, want recorded", i+1, r.Outcome)
				}
			}
			if r := e.Report(HashKey([]byte(report.Key)), in); r.Outcome != ReportRateLimited {
				t.Fatalf("report %d of the minute: outcome %d, want rate limited", 31+tc.reportsLeft, r.Outcome)
			}
		})
	}
}
