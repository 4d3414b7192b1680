package state

import (
	"cmp"
	"slices"
)

// TrendPoint is one value of a job's trend: a run's completion time and its
// duration (seconds) or size (bytes).
type TrendPoint struct {
	At, V int64
}

// Trend is a job's durations and sizes over a period, each oldest first,
// for a chart; Drop is the run SizeDropOf flags, when it is in the period.
type Trend struct {
	From, To             int64
	Durations, Sizes     []TrendPoint
	Drop                 SizeDrop
	DropAt               int64 // the flagged run's completion time; 0: none
	Runs                 int   // runs in the period
	Bucketed             bool  // more runs than points: one point a bucket
	MaxDuration, MaxSize int64
}

// TrendOf is the one function for a job's trend over the days before now:
// every run completed in (now − days, now] with a duration or a size, by
// completion time. With more than maxPoints runs, the period is cut into
// maxPoints equal buckets and each bucket shows its smallest size and its
// longest duration, so that a drop or a slow run stays visible.
func TrendOf(j *Job, now int64, days, maxPoints int) Trend {
	t := Trend{From: now - int64(days)*MsPerDay, To: now, Drop: SizeDropOf(j)}
	stop := t.From - 5*MsPerMinute // completion is at most 5 minutes after receipt
	first := len(j.Results)
	for first > 0 && j.Results[first-1].ReceivedAt >= stop {
		first--
	}
	runs := make([]*Result, 0, len(j.Results)-first)
	for i := first; i < len(j.Results); i++ {
		r := &j.Results[i]
		if r.CompletedAt > t.From && r.CompletedAt <= now {
			runs = append(runs, r)
			if r.ID == t.Drop.ResultID {
				t.DropAt = r.CompletedAt
			}
		}
	}
	slices.SortStableFunc(runs, func(a, b *Result) int { return cmp.Compare(a.CompletedAt, b.CompletedAt) })
	t.Runs = len(runs)
	t.Bucketed = maxPoints > 0 && len(runs) > maxPoints
	span := now - t.From
	bucket := func(at int64) int64 {
		if !t.Bucketed {
			return at
		}
		return (at - t.From - 1) * int64(maxPoints) / span
	}
	for _, r := range runs {
		b := bucket(r.CompletedAt)
		if r.Duration >= 0 {
			d := int64(r.Duration)
			t.MaxDuration = max(t.MaxDuration, d)
			if n := len(t.Durations); t.Bucketed && n > 0 && bucket(t.Durations[n-1].At) == b {
				if d > t.Durations[n-1].V {
					t.Durations[n-1] = TrendPoint{r.CompletedAt, d}
				}
			} else {
				t.Durations = append(t.Durations, TrendPoint{r.CompletedAt, d})
			}
		}
		if r.SizeBytes >= 0 {
			t.MaxSize = max(t.MaxSize, r.SizeBytes)
			if n := len(t.Sizes); t.Bucketed && n > 0 && bucket(t.Sizes[n-1].At) == b {
				if r.SizeBytes < t.Sizes[n-1].V {
					t.Sizes[n-1] = TrendPoint{r.CompletedAt, r.SizeBytes}
				}
			} else {
				t.Sizes = append(t.Sizes, TrendPoint{r.CompletedAt, r.SizeBytes})
			}
		}
	}
	return t
}
