package state

import "time"

// Job statuses as shown.
const (
	StatusHealthy = "healthy"
	StatusWarning = "warning"
	StatusFailed  = "failed"
	StatusMissing = "missing"
	StatusWaiting = "waiting"
	StatusPaused  = "paused"
)

// ownPaused reports whether the job's own pause is in force at now (a pause
// with an end stops being in force when the end passes).
func (j *Job) OwnPaused(now int64) bool {
	return j.Paused && (j.PausedUntil == 0 || now < j.PausedUntil)
}

// monitored reports whether monitoring is on for the job at now: neither the
// job nor its client is paused, and the client is not archived.
func (j *Job) Monitored(now int64) bool {
	return !j.OwnPaused(now) && j.Client.Status == "active"
}

// OffSince returns when monitoring last went off for the job and the
// workspace sequence number of the record that turned it off (0, 0 while it
// is on): the later of the job's own pause and its client's pause or
// archiving. Records, not their times, order a pause against a report, as
// both can carry the same millisecond.
func (j *Job) OffSince(now int64) (at int64, seq uint64) {
	if j.OwnPaused(now) {
		at, seq = j.PausedAt, j.PausedSeq
	}
	if c := j.Client; c.Status != "active" && c.OffSeq >= seq {
		at, seq = c.OffAt, c.OffSeq
	}
	return at, seq
}

// dueFrom returns the time the job's next due time counts from at now: the
// latest report's receipt, the creation, or the end of a pause.
func (j *Job) dueFrom(now int64) int64 {
	b := j.DueBase
	if j.Paused && j.PausedUntil != 0 && now >= j.PausedUntil && j.PausedUntil > b {
		b = j.PausedUntil
	}
	return b
}

// nextExpectedAt returns the job's next due time at now (decisions.md 4.4).
func (j *Job) NextExpectedAt(now int64, loc *time.Location) int64 {
	return NextDue(j.dueFrom(now), j.IntervalMinutes, j.ExpectedDays, loc)
}

// nextDue returns base + interval, moved forward by whole local days (same
// local time, so daylight-saving changes keep the wall-clock time) until it
// falls on an expected weekday in loc.
func NextDue(base, intervalMinutes int64, days uint8, loc *time.Location) int64 {
	due := base + intervalMinutes*MsPerMinute
	if days&AllDays == AllDays || days == 0 {
		return due
	}
	t := MsTime(due).In(loc)
	if days&(1<<uint(t.Weekday())) != 0 {
		return due
	}
	y, m, d := t.Date()
	hh, mm, ss := t.Clock()
	for i := 1; i <= 7; i++ {
		// The weekday is the calendar's: the day is chosen first, then the
		// time on it.
		if days&(1<<uint(time.Date(y, m, d+i, 12, 0, 0, 0, time.UTC).Weekday())) != 0 {
			return LocalTime(y, m, d+i, hh, mm, ss, t.Nanosecond(), loc).UnixMilli()
		}
	}
	return due
}

// localTime is time.Date in loc, except for a wall time that does not exist
// (a spring-forward gap): time.Date may then answer a time before the gap,
// an hour early or even on the day before (zones that change at midnight).
// localTime answers the time as far after the gap as the wall time was into
// it (02:30 in a 02:00→03:00 gap is 03:30), the wall time read with the
// offset in force before the change, as java.time and most calendars do.
func LocalTime(y int, m time.Month, d, hh, mm, ss, ns int, loc *time.Location) time.Time {
	t := time.Date(y, m, d, hh, mm, ss, ns, loc)
	if h, mi, s := t.Clock(); h == hh && mi == mm && s == ss {
		return t
	}
	wall := time.Date(y, m, d, hh, mm, ss, ns, time.UTC)
	_, before := wall.Add(-36 * time.Hour).In(loc).Zone()
	_, after := wall.Add(36 * time.Hour).In(loc).Zone()
	return wall.Add(-time.Duration(min(before, after)) * time.Second)
}

// statusOf maps a result to the job status it gives.
func StatusOf(r uint8) string {
	switch r {
	case ResultOK:
		return StatusHealthy
	case ResultWarning:
		return StatusWarning
	case ResultFailed:
		return StatusFailed
	}
	return StatusWaiting
}

// jobStatus is the one function that says what status a job has at now.
//
// While monitoring is off the job shows paused, unless a report was
// recorded after monitoring went off (decisions.md 3: reports still update
// the status); "after" is the log's order, so a report in the same
// millisecond as the pause, but after it, shows. A monitored job that has reported turns missing once now is past
// its next due time plus grace.
func (w *Workspace) JobStatus(j *Job, now int64) string {
	if !j.Monitored(now) {
		if _, off := j.OffSince(now); j.LastResult != ResultNone && j.LastReportSeq > off {
			return StatusOf(j.LastResult)
		}
		return StatusPaused
	}
	s := StatusOf(j.LastResult)
	if s != StatusWaiting && now > j.NextExpectedAt(now, w.Loc)+j.GraceMinutes*MsPerMinute {
		return StatusMissing
	}
	return s
}

// lateness returns the due time a monitored job has passed without a report,
// and the whole minutes since; ok is false when the job is not late.
func (w *Workspace) Lateness(j *Job, now int64) (dueAt int64, minutes int64, ok bool) {
	if !j.Monitored(now) {
		return 0, 0, false
	}
	due := j.NextExpectedAt(now, w.Loc)
	if now <= due {
		return 0, 0, false
	}
	return due, (now - due) / MsPerMinute, true
}

// alertStatus is the one function that says what status an alert has at
// now: a snooze that has ended reads as open.
func AlertStatus(a *Alert, now int64) uint8 {
	if a.Status == AlertSnoozed && now >= a.SnoozedUntil {
		return AlertOpen
	}
	return a.Status
}

// settleAlert writes an ended snooze back into the alert before a change is
// applied to it, so the change starts from the status the alert shows.
func settleAlert(a *Alert, now int64) {
	if a.Status == AlertSnoozed && now >= a.SnoozedUntil {
		a.Status = AlertOpen
		a.SnoozedUntil = 0
	}
}

// workspaceActive reports whether the workspace may use the APIs at now:
// not suspended or cancelled, and not a trial that has ended.
func (w *Workspace) Active(now int64) bool {
	if w.Status != "active" {
		return false
	}
	if w.Plan == "trial" && w.TrialEndsAt != 0 && now >= w.TrialEndsAt {
		return false
	}
	return true
}
