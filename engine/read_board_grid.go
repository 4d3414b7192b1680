package engine

import (
	"backupmon/state"
	"sort"
)

// A job's day grid for the dashboard.

// gridDays is how many days a job's day grid shows.
const gridDays = 30

// Day states of a job's day grid.
const (
	DayOK      = "ok"
	DayWarning = "warning"
	DayFailed  = "failed"
	DayMissing = "missing"
	DayNone    = "none" // not expected: no run was due, or the job did not exist yet
)

// GridDay is one local calendar day of a job's day grid: [Start, End) in
// Unix milliseconds (23 or 25 hours long across a daylight-saving change),
// its date, its state and how many results completed in it.
type GridDay struct {
	Date       string // YYYY-MM-DD in the workspace's zone
	Day        int    // day of the month
	Start, End int64
	State      string
	Results    int
}

// dayGrid is the one function for a job's day grid: the days local to the
// workspace's zone up to today, each with the worst result that completed
// in it; a day without one is missing when the job was overdue (past a due
// time plus grace, with no report yet) at some point in it, and not
// expected otherwise. Overdue spans are counted from the results' receipt
// times as the missing rule counts them, never before the first report;
// past pauses are not kept, so only the current one is left out.
func (w *workspace) dayGrid(j *state.Job, now int64, days int) []GridDay {
	t := state.MsTime(now).In(w.Loc)
	y, m, d := t.Date()
	grid := make([]GridDay, days)
	for i := range grid {
		dd := d - (days - 1 - i)
		start := state.LocalTime(y, m, dd, 0, 0, 0, 0, w.Loc)
		end := state.LocalTime(y, m, dd+1, 0, 0, 0, 0, w.Loc)
		grid[i] = GridDay{Date: start.Format("2006-01-02"), Day: start.Day(), Start: start.UnixMilli(), End: end.UnixMilli(), State: DayNone}
	}
	from := grid[0].Start
	dayOf := func(at int64) int {
		i := sort.Search(len(grid), func(k int) bool { return grid[k].End > at })
		if i == len(grid) || at < grid[i].Start {
			return -1
		}
		return i
	}
	worst := make([]uint8, days)
	// A result completes at most 5 minutes after its receipt.
	first := sort.Search(len(j.Results), func(k int) bool { return j.Results[k].ReceivedAt >= from-5*state.MsPerMinute })
	for k := first; k < len(j.Results); k++ {
		r := &j.Results[k]
		if i := dayOf(r.CompletedAt); i >= 0 {
			grid[i].Results++
			if r.Status > worst[i] { // ok < warning < failed, as stored
				worst[i] = r.Status
			}
		}
	}
	// Overdue spans: from each due time plus grace to the next receipt. A
	// job that has not reported yet is waiting, never overdue; while
	// monitoring is off now, nothing after it went off is overdue.
	base, reported := int64(0), first > 0
	if reported {
		base = j.Results[first-1].ReceivedAt
	}
	grace := j.GraceMinutes * state.MsPerMinute
	monitored := j.Monitored(now)
	off, _ := j.OffSince(now)
	overdue := func(since, until int64) {
		if !monitored {
			until = min(until, off)
		}
		if since >= until {
			return
		}
		for i := range grid {
			if grid[i].Start < until && since < grid[i].End {
				if grid[i].State == DayNone {
					grid[i].State = DayMissing
				}
			}
		}
	}
	for k := first; k < len(j.Results); k++ {
		r := &j.Results[k]
		if !reported {
			base, reported = r.ReceivedAt, true
			continue
		}
		if late := state.NextDue(base, j.IntervalMinutes, j.ExpectedDays, w.Loc) + grace; late < r.ReceivedAt {
			overdue(late, r.ReceivedAt)
		}
		base = r.ReceivedAt
	}
	switch {
	case !reported:
	case monitored:
		overdue(j.NextExpectedAt(now, w.Loc)+grace, now)
	default:
		overdue(state.NextDue(base, j.IntervalMinutes, j.ExpectedDays, w.Loc)+grace, off)
	}
	for i := range grid {
		switch {
		case worst[i] != state.ResultNone:
			grid[i].State = state.ResultName(worst[i]) // DayOK, DayWarning, DayFailed
		case grid[i].End <= j.CreatedAt:
			grid[i].State = DayNone
		}
	}
	return grid
}
