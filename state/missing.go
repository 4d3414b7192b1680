package state

// queueMissed queues j for a missing alert when it is missing at now and no
// alert was recorded for its current due time. A job is missing only while
// it is monitored; an inactive workspace (suspended, cancelled, an ended
// trial) is not monitored either, and records its missing alerts when it is
// active again.
func (w *Workspace) queueMissed(j *Job, now int64) {
	if j.MissedQ || !w.Active(now) || !j.Monitored(now) {
		return
	}
	if j.MissedDue == j.NextExpectedAt(now, w.Loc) {
		return
	}
	j.MissedQ = true
	w.MissedQ = append(w.MissedQ, j)
}
