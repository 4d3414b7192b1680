package engine

import "sort"

// orderOffAndReports fills, for a workspace read from a version 5 snapshot,
// the sequence numbers that order pauses against reports (job.pausedSeq,
// client.offSeq, job.lastReportSeq). Version 5 kept only their times and
// compared those, a report in the same millisecond as a pause counting as
// before it. The numbers given here rank the kept times in that same order,
// so every job shows the status it showed before the upgrade; they are all
// at most the workspace's sequence number, since each time was a record's.
func (w *workspace) orderOffAndReports() {
	type mark struct {
		at     int64
		report bool // a report ranks before a pause of the same millisecond
		set    func(uint64)
	}
	var marks []mark
	for _, c := range w.clients {
		if c.status != "active" && c.offAt != 0 {
			marks = append(marks, mark{at: c.offAt, set: func(s uint64) { c.offSeq = s }})
		}
	}
	for _, j := range w.jobs {
		if j.paused {
			marks = append(marks, mark{at: j.pausedAt, set: func(s uint64) { j.pausedSeq = s }})
		}
		if j.lastResult != resultNone {
			marks = append(marks, mark{at: j.lastReceivedAt, report: true, set: func(s uint64) { j.lastReportSeq = s }})
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
