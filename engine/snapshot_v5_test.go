package engine

import (
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
		w := &workspace{loc: time.UTC, clients: map[ID]*client{}, jobs: map[ID]*job{}}
		var seq uint64 = 1000
		var clients []*client
		for i := range 1 + rng.IntN(4) {
			c := &client{id: ID{byte(round), byte(i), 1}, status: statuses[rng.IntN(3)], jobs: map[ID]*job{}}
			if c.status != "active" {
				c.offAt = 1 + rng.Int64N(5)
			}
			w.clients[c.id] = c
			clients = append(clients, c)
		}
		for i := range 1 + rng.IntN(8) {
			j := &job{id: ID{byte(round), byte(i), 2}, client: clients[rng.IntN(len(clients))], intervalMinutes: 1440, expectedDays: allDays}
			if rng.IntN(2) == 0 {
				j.paused, j.pausedAt = true, 1+rng.Int64N(5)
				if rng.IntN(3) == 0 {
					j.pausedUntil = j.pausedAt + rng.Int64N(4)
				}
			}
			if rng.IntN(4) > 0 {
				j.lastResult = uint8(1 + rng.IntN(3))
				j.lastReceivedAt = 1 + rng.Int64N(5)
			}
			w.jobs[j.id] = j
			j.client.jobs[j.id] = j
		}
		const now = 6
		want := map[ID]string{}
		for id, j := range w.jobs {
			// Version 5's rule, by times.
			s := StatusPaused
			if j.monitored(now) {
				s = "monitored"
			} else if j.lastResult != resultNone && j.lastReceivedAt > j.offAt(now) {
				s = statusOf(j.lastResult)
			}
			want[id] = s
		}
		w.seq = seq
		w.orderOffAndReports()
		for id, j := range w.jobs {
			got := w.jobStatus(j, now)
			if want[id] == "monitored" {
				continue
			}
			if got != want[id] {
				t.Fatalf("round %d job %v: status %s after the upgrade, %s before", round, id, got, want[id])
			}
			for _, s := range []uint64{j.pausedSeq, j.lastReportSeq, j.client.offSeq} {
				if s > w.seq {
					t.Fatalf("round %d: sequence number %d past the workspace's %d", round, s, w.seq)
				}
			}
		}
	}
}
