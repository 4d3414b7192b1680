package engine

import (
	"backupmon/state"
	"math/rand/v2"
	"testing"
	"time"
)

// TestSnapshotV5Order: a workspace read from a version 5 snapshot (times
// only) gets sequence numbers that give every job the status version 5's
// rule gave it: a report shows while monitoring is off when it was received
// after the pause, a report in the same millisecond counting as before.
func TestSnapshotV5Order(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	statuses := []string{"active", "paused", "archived"}
	for round := range 200 {
		w := &state.Workspace{Loc: time.UTC, Clients: map[state.ID]*state.Client{}, Jobs: map[state.ID]*state.Job{}}
		var seq uint64 = 1000
		var clients []*state.Client
		for i := range 1 + rng.IntN(4) {
			c := &state.Client{ID: state.ID{byte(round), byte(i), 1}, Status: statuses[rng.IntN(3)], Jobs: map[state.ID]*state.Job{}}
			if c.Status != "active" {
				c.OffAt = 1 + rng.Int64N(5)
			}
			w.Clients[c.ID] = c
			clients = append(clients, c)
		}
		for i := range 1 + rng.IntN(8) {
			j := &state.Job{ID: state.ID{byte(round), byte(i), 2}, Client: clients[rng.IntN(len(clients))], IntervalMinutes: 1440, ExpectedDays: state.AllDays}
			if rng.IntN(2) == 0 {
				j.Paused, j.PausedAt = true, 1+rng.Int64N(5)
				if rng.IntN(3) == 0 {
					j.PausedUntil = j.PausedAt + rng.Int64N(4)
				}
			}
			if rng.IntN(4) > 0 {
				j.LastResult = uint8(1 + rng.IntN(3))
				j.LastReceivedAt = 1 + rng.Int64N(5)
			}
			w.Jobs[j.ID] = j
			j.Client.Jobs[j.ID] = j
		}
		const now = 6
		want := map[state.ID]string{}
		for id, j := range w.Jobs {
			// Version 5's rule, by times.
			s := state.StatusPaused
			if j.Monitored(now) {
				s = "monitored"
			} else if j.LastResult != state.ResultNone && j.LastReceivedAt > v5OffAt(j, now) {
				s = state.StatusOf(j.LastResult)
			}
			want[id] = s
		}
		w.Seq = seq
		w.OrderOffAndReports()
		for id, j := range w.Jobs {
			got := w.JobStatus(j, now)
			if want[id] == "monitored" {
				continue
			}
			if got != want[id] {
				t.Fatalf("round %d job %v: status %s after the upgrade, %s before", round, id, got, want[id])
			}
			for _, s := range []uint64{j.PausedSeq, j.LastReportSeq, j.Client.OffSeq} {
				if s > w.Seq {
					t.Fatalf("round %d: sequence number %d past the workspace's %d", round, s, w.Seq)
				}
			}
		}
	}
}

// v5OffAt is version 5's off time: the later of the job's own pause and
// its client's, by time.
func v5OffAt(j *state.Job, now int64) int64 {
	var t int64
	if j.OwnPaused(now) {
		t = j.PausedAt
	}
	if j.Client.Status != "active" && j.Client.OffAt > t {
		t = j.Client.OffAt
	}
	return t
}
