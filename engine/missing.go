package engine

import (
	"fmt"

	"backupmon/state"
)

// decideMissed returns the record of j turning missing, or nil when it is
// no longer due (deleted, reported, paused since it was queued).
func (w *workspace) decideMissed(j *state.Job, now int64) *state.Missed {
	if w.Jobs[j.ID] != j || !w.Active(now) || w.JobStatus(j, now) != state.StatusMissing {
		return nil
	}
	due := j.NextExpectedAt(now, w.Loc)
	if j.MissedDue == due {
		return nil
	}
	rec := &state.Missed{JobID: j.ID, Due: due, At: due + j.GraceMinutes*state.MsPerMinute}
	rec.AlertID = w.alertIDFor(j, now)
	rec.Summary = fmt.Sprintf("No backup report received: one was due at %s and %d minutes of grace have passed", state.FormatTime(due), j.GraceMinutes)
	return rec
}
