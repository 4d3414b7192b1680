package engine

import (
	"fmt"

	"backupmon/wal"
)

// queueMissed queues j for a missing alert when it is missing at now and no
// alert was recorded for its current due time. A job is missing only while
// it is monitored; an inactive workspace (suspended, cancelled, an ended
// trial) is not monitored either, and records its missing alerts when it is
// active again.
func (w *workspace) queueMissed(j *job, now int64) {
	if j.missedQ || !w.active(now) || !j.monitored(now) {
		return
	}
	if j.missedDue == j.nextExpectedAt(now, w.loc) {
		return
	}
	j.missedQ = true
	w.missedQ = append(w.missedQ, j)
}

// decideMissed returns the record of j turning missing, or nil when it is
// no longer due (deleted, reported, paused since it was queued).
func (w *workspace) decideMissed(j *job, now int64) *wal.Missed {
	if w.jobs[j.id] != j || !w.active(now) || w.jobStatus(j, now) != StatusMissing {
		return nil
	}
	due := j.nextExpectedAt(now, w.loc)
	if j.missedDue == due {
		return nil
	}
	rec := &wal.Missed{JobID: j.id, Due: due, At: due + j.graceMinutes*msPerMinute}
	rec.AlertID = w.alertIDFor(j, now)
	rec.Summary = fmt.Sprintf("No backup report received: one was due at %s and %d minutes of grace have passed", FormatTime(due), j.graceMinutes)
	return rec
}

// applyMissed opens the job's missing alert, or raises its unresolved one.
func (w *workspace) applyMissed(r *wal.Missed) error {
	j := w.jobs[r.JobID]
	if j == nil {
		return fmt.Errorf("missing report of unknown job %s", ID(r.JobID))
	}
	j.missedDue = r.Due
	w.jobIdx.touch(j)
	n := len(w.events)
	w.raiseAlert(j, r.AlertID, alertMissing, r.Summary, nil, r.At)
	if len(w.events) > n {
		// The alert is dated when the grace ended; the job is missing from
		// the next millisecond, which is what its notice shows.
		w.events[n].view = r.At + 1
	}
	return nil
}
