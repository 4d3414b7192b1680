package state

import (
	"fmt"
	"strconv"
)

// Overdue is how far behind its schedule a monitored job is at a moment:
// the due time it passed without a report and the expected runs it has
// missed since. The dashboard shows it beside the contract's figures (a
// job's SLA counts the reports received, not the runs that never
// reported), which it leaves as they are.
type Overdue struct {
	// Since is the due time passed without a report; 0 when the job is not
	// overdue (not monitored, or its next due time is still ahead).
	Since int64
	// Minutes is the whole minutes since Since, as the REST API's late.minutes.
	Minutes int64
	// Missed counts the expected runs whose due time and grace have both
	// passed without a report, from Since on; More is set when the count
	// stopped at MaxMissedRuns.
	Missed int
	More   bool
}

// MaxMissedRuns bounds the count of missed runs: a five-minute job silent
// for a month would otherwise be counted run by run.
const MaxMissedRuns = 999

// OverdueOf is the one function that says how overdue a job is at now: the
// due time of Lateness, and the due times since that the schedule expected
// (NextDue from each to the next) whose grace has passed by now.
func (w *Workspace) OverdueOf(j *Job, now int64) Overdue {
	due, minutes, ok := w.Lateness(j, now)
	if !ok {
		return Overdue{}
	}
	o := Overdue{Since: due, Minutes: minutes}
	grace := j.GraceMinutes * MsPerMinute
	if j.ExpectedDays&AllDays == AllDays || j.ExpectedDays == 0 {
		// Every day expected: the due times are due + k·interval.
		if now > due+grace {
			iv := j.IntervalMinutes * MsPerMinute
			n := (now-due-grace-1)/iv + 1
			o.Missed, o.More = int(min(n, MaxMissedRuns)), n > MaxMissedRuns
		}
		return o
	}
	for d := due; now > d+grace; d = NextDue(d, j.IntervalMinutes, j.ExpectedDays, w.Loc) {
		if o.Missed == MaxMissedRuns {
			o.More = true
			break
		}
		o.Missed++
	}
	return o
}

// The texts of how overdue a job is, shared by the dashboard and the
// assistant.

// SpanText says a span of whole minutes with its two largest units, as a
// person reads it: "45 min", "3 h 5 min", "2 d 8 h" (3,366 minutes); a
// unit that is zero is left out ("2 d", "3 h").
func SpanText(m int64) string {
	if m < 0 {
		m = 0
	}
	d, h, mi := m/1440, m%1440/60, m%60
	switch {
	case d > 0 && h > 0:
		return fmt.Sprintf("%d d %d h", d, h)
	case d > 0:
		return fmt.Sprintf("%d d", d)
	case h > 0 && mi > 0:
		return fmt.Sprintf("%d h %d min", h, mi)
	case h > 0:
		return fmt.Sprintf("%d h", h)
	}
	return fmt.Sprintf("%d min", mi)
}

// MissedText says how many expected runs o counts: "1 expected run
// missed", "3 expected runs missed", "999+ expected runs missed".
func (o Overdue) MissedText() string {
	more := ""
	if o.More {
		more = "+"
	}
	if o.Missed == 1 {
		return "1 expected run missed"
	}
	return strconv.Itoa(o.Missed) + more + " expected runs missed"
}
