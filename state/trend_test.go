package state

import "testing"

// TestTrendOf: the runs of the period by completion time; with more runs
// than points, one point a bucket: its smallest size and its longest
// duration, so a drop and a slow run stay on the chart.
func TestTrendOf(t *testing.T) {
	x := newSDWorld(t)
	const n = 900 // ten a day for 90 days
	var slowAt, dropAt int64
	for i := range n {
		x.at += MsPerDay / 10
		size, dur := int64(10_000_000_000+i), int64(600)
		if i == 500 {
			dur, slowAt = 5000, x.at
		}
		if i == n-1 {
			size, dropAt = 1_000_000, x.at
		}
		x.apply(&Report{JobID: x.j.ID, ResultID: x.ids.Next(x.at), Status: ResultOK, ReceivedAt: x.at, CompletedAt: x.at, DurationSeconds: dur, SizeBytes: size})
	}
	all := TrendOf(x.j, x.at, 90, 0)
	if all.Runs != n || len(all.Sizes) != n || len(all.Durations) != n || all.Bucketed {
		t.Fatalf("unbucketed: %d runs, %d sizes, %d durations, bucketed %v; want %d each", all.Runs, len(all.Sizes), len(all.Durations), all.Bucketed, n)
	}
	if all.DropAt != dropAt || !all.Drop.Flagged() || all.MaxDuration != 5000 {
		t.Errorf("drop at %d (flagged %v), longest %d; want %d, true, 5000", all.DropAt, all.Drop.Flagged(), all.MaxDuration, dropAt)
	}
	b := TrendOf(x.j, x.at, 90, 100)
	if !b.Bucketed || len(b.Sizes) > 100 || len(b.Durations) > 100 || len(b.Sizes) < 90 {
		t.Fatalf("bucketed: %d sizes, %d durations, bucketed %v; want at most 100", len(b.Sizes), len(b.Durations), b.Bucketed)
	}
	last := b.Sizes[len(b.Sizes)-1]
	if last.At != dropAt || last.V != 1_000_000 {
		t.Errorf("the last size point is %+v, want the drop (%d, 1000000)", last, dropAt)
	}
	found := false
	for i, p := range b.Durations {
		found = found || p.At == slowAt && p.V == 5000
		if i > 0 && p.At <= b.Durations[i-1].At {
			t.Fatalf("durations out of order at %d", i)
		}
	}
	if !found {
		t.Errorf("the slow run is not among the bucketed durations")
	}
	// A 30-day period holds the last 300 runs.
	if m := TrendOf(x.j, x.at, 30, 0); m.Runs != 300 {
		t.Errorf("30 days: %d runs, want 300", m.Runs)
	}
}
