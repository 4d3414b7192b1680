package engine

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
func (j *job) ownPaused(now int64) bool {
	return j.paused && (j.pausedUntil == 0 || now < j.pausedUntil)
}

// monitored reports whether monitoring is on for the job at now: neither the
// job nor its client is paused, and the client is not archived.
func (j *job) monitored(now int64) bool {
	return !j.ownPaused(now) && j.client.status == "active"
}

// offAt returns when monitoring last went off for the job (0 when it is on).
func (j *job) offAt(now int64) int64 {
	var t int64
	if j.ownPaused(now) {
		t = j.pausedAt
	}
	if j.client.status != "active" && j.client.offAt > t {
		t = j.client.offAt
	}
	return t
}

// offSeq returns the workspace sequence number of the record that last
// turned monitoring off for the job (0 when it is on). Records, not their
// times, order a pause against a report: both can carry the same
// millisecond.
func (j *job) offSeq(now int64) uint64 {
	var s uint64
	if j.ownPaused(now) {
		s = j.pausedSeq
	}
	if j.client.status != "active" && j.client.offSeq > s {
		s = j.client.offSeq
	}
	return s
}

// dueFrom returns the time the job's next due time counts from at now: the
// latest report's receipt, the creation, or the end of a pause.
func (j *job) dueFrom(now int64) int64 {
	b := j.dueBase
	if j.paused && j.pausedUntil != 0 && now >= j.pausedUntil && j.pausedUntil > b {
		b = j.pausedUntil
	}
	return b
}

// nextExpectedAt returns the job's next due time at now (decisions.md 4.4).
func (j *job) nextExpectedAt(now int64, loc *time.Location) int64 {
	return nextDue(j.dueFrom(now), j.intervalMinutes, j.expectedDays, loc)
}

// nextDue returns base + interval, moved forward by whole local days (same
// local time, so daylight-saving changes keep the wall-clock time) until it
// falls on an expected weekday in loc.
func nextDue(base, intervalMinutes int64, days uint8, loc *time.Location) int64 {
	due := base + intervalMinutes*msPerMinute
	if days&allDays == allDays || days == 0 {
		return due
	}
	t := msTime(due).In(loc)
	if days&(1<<uint(t.Weekday())) != 0 {
		return due
	}
	y, m, d := t.Date()
	hh, mm, ss := t.Clock()
	for i := 1; i <= 7; i++ {
		// The weekday is the calendar's: the day is chosen first, then the
		// time on it.
		if days&(1<<uint(time.Date(y, m, d+i, 12, 0, 0, 0, time.UTC).Weekday())) != 0 {
			return localTime(y, m, d+i, hh, mm, ss, t.Nanosecond(), loc).UnixMilli()
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
func localTime(y int, m time.Month, d, hh, mm, ss, ns int, loc *time.Location) time.Time {
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
func statusOf(r uint8) string {
	switch r {
	case resultOK:
		return StatusHealthy
	case resultWarning:
		return StatusWarning
	case resultFailed:
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
func (w *workspace) jobStatus(j *job, now int64) string {
	if !j.monitored(now) {
		if j.lastResult != resultNone && j.lastReportSeq > j.offSeq(now) {
			return statusOf(j.lastResult)
		}
		return StatusPaused
	}
	s := statusOf(j.lastResult)
	if s != StatusWaiting && now > j.nextExpectedAt(now, w.loc)+j.graceMinutes*msPerMinute {
		return StatusMissing
	}
	return s
}

// lateness returns the due time a monitored job has passed without a report,
// and the whole minutes since; ok is false when the job is not late.
func (w *workspace) lateness(j *job, now int64) (dueAt int64, minutes int64, ok bool) {
	if !j.monitored(now) {
		return 0, 0, false
	}
	due := j.nextExpectedAt(now, w.loc)
	if now <= due {
		return 0, 0, false
	}
	return due, (now - due) / msPerMinute, true
}

// alertStatus is the one function that says what status an alert has at
// now: a snooze that has ended reads as open.
func alertStatus(a *alert, now int64) uint8 {
	if a.status == alertSnoozed && now >= a.snoozedUntil {
		return alertOpen
	}
	return a.status
}

// settleAlert writes an ended snooze back into the alert before a change is
// applied to it, so the change starts from the status the alert shows.
func settleAlert(a *alert, now int64) {
	if a.status == alertSnoozed && now >= a.snoozedUntil {
		a.status = alertOpen
		a.snoozedUntil = 0
	}
}

// workspaceActive reports whether the workspace may use the APIs at now:
// not suspended or cancelled, and not a trial that has ended.
func (w *workspace) active(now int64) bool {
	if w.status != "active" {
		return false
	}
	if w.plan == "trial" && w.trialEndsAt != 0 && now >= w.trialEndsAt {
		return false
	}
	return true
}
