package state

import "sort"

// orderOffAndReports fills, for a workspace read from a version 5 snapshot,
// the sequence numbers that order pauses against reports (job.pausedSeq,
// client.offSeq, job.lastReportSeq). Version 5 kept only their times and
// compared those, a report in the same millisecond as a pause counting as
// before it. The numbers given here rank the kept times in that same order,
// so every job shows the status it showed before the upgrade; they are all
// at most the workspace's sequence number, since each time was a record's.
func (w *Workspace) OrderOffAndReports() {
	type mark struct {
		at     int64
		report bool // a report ranks before a pause of the same millisecond
		set    func(uint64)
	}
	var marks []mark
	for _, c := range w.Clients {
		if c.Status != "active" && c.OffAt != 0 {
			marks = append(marks, mark{at: c.OffAt, set: func(s uint64) { c.OffSeq = s }})
		}
	}
	for _, j := range w.Jobs {
		if j.Paused {
			marks = append(marks, mark{at: j.PausedAt, set: func(s uint64) { j.PausedSeq = s }})
		}
		if j.LastResult != ResultNone {
			marks = append(marks, mark{at: j.LastReceivedAt, report: true, set: func(s uint64) { j.LastReportSeq = s }})
		}
	}
	sort.SliceStable(marks, func(a, b int) bool {
		if marks[a].at != marks[b].at {
			return marks[a].at < marks[b].at
		}
		return marks[a].report && !marks[b].report
	})
	for i, m := range marks {
		m.set(uint64(i + 1))
	}
}
