package state

import (
	"sort"

	"backupmon/timeheap"
)

// jobIndex keeps a workspace's jobs by name (without case, then id) in one
// list per status, per vendor and per last result, so that a /jobs page
// filtered by any of them walks only the jobs that can match. Each job is in
// one list of each kind.
//
// Vendor and last result change only with records, and apply moves the job
// then. Status also moves with the clock (a due time passing, a pause
// ending), so the status lists are brought up to date when they are read
// (advance): jobs a record touched are looked at again, and so are those
// whose status-change instant, kept in a min-heap, has come. No job is
// looked at on a read otherwise.
//
// The heap itself is kept up to date after every message (advanceTimers,
// timers.go), since the actor wakes for its earliest instant and a missed
// due time opens an alert; that costs a report one heap update. Moving a job
// between status lists waits for a read, which, after many changes,
// rebuilds the lists in one pass instead of moving jobs one by one.
type jobIndex struct {
	ByStatus [len(StatusOrder)][]*Job
	ByVendor [numVendors][]*Job
	ByLast   [4][]*Job // by lastResult: none, ok, warning, failed

	dirty   []*Job       // jobs whose status list must be worked out again
	Retime  []*Job       // jobs whose status-change instant must be worked out again
	Timers  StatusTimers // when a job's status next changes by itself
	at      int64        // the time the status lists were last right for
	timesAt int64        // the time the heap was last right for
}

// statusOrder lists the job statuses; a job keeps its status list's index
// plus one in idxStatus (0: in none yet).
var StatusOrder = [...]string{StatusHealthy, StatusWarning, StatusFailed, StatusMissing, StatusWaiting, StatusPaused}

// statusIndex returns the index of a status in statusOrder, or -1.
func StatusIndex(s string) int {
	for i, v := range StatusOrder {
		if v == s {
			return i
		}
	}
	return -1
}

// add puts j in its vendor and last-result lists, and in its status list
// when it has one, and marks its status to be worked out again.
func (x *jobIndex) add(j *Job) {
	x.inLists(j, insertOrdered[*Job])
	x.Touch(j)
}

// remove takes j out of every list (j.key must be the key it was added
// with); its status list is remembered for add.
func (x *jobIndex) remove(j *Job) { x.inLists(j, removeOrdered[*Job]) }

// inLists applies op (insertOrdered or removeOrdered) to each list j
// belongs in: its vendor's, its last result's and its status's, if any.
func (x *jobIndex) inLists(j *Job, op func([]*Job, *Job, func(a, b *Job) bool) []*Job) {
	x.ByVendor[j.Vx] = op(x.ByVendor[j.Vx], j, JobBefore)
	x.ByLast[j.LastResult] = op(x.ByLast[j.LastResult], j, JobBefore)
	if j.idxStatus > 0 {
		s := j.idxStatus - 1
		x.ByStatus[s] = op(x.ByStatus[s], j, JobBefore)
	}
}

// setLast moves j to the list of last result r and sets it.
func (x *jobIndex) setLast(j *Job, r uint8) {
	if r == j.LastResult {
		return
	}
	x.ByLast[j.LastResult] = removeOrdered(x.ByLast[j.LastResult], j, JobBefore)
	j.LastResult = r
	x.ByLast[r] = insertOrdered(x.ByLast[r], j, JobBefore)
}

// setVendor moves j to the list of vendor and sets it.
func (x *jobIndex) setVendor(j *Job, vendor string) {
	x.ByVendor[j.Vx] = removeOrdered(x.ByVendor[j.Vx], j, JobBefore)
	j.setVendor(vendor)
	x.ByVendor[j.Vx] = insertOrdered(x.ByVendor[j.Vx], j, JobBefore)
}

// touch marks j's status to be worked out again (a record changed
// something it depends on): its instant after the message, its list at the
// next read.
func (x *jobIndex) Touch(j *Job) {
	x.touchList(j)
	if !j.Retime {
		j.Retime = true
		x.Retime = append(x.Retime, j)
	}
}

// touchList marks j's status list to be worked out again at the next read.
func (x *jobIndex) touchList(j *Job) {
	if !j.dirty {
		j.dirty = true
		x.dirty = append(x.dirty, j)
	}
}

// advanceTimers brings the heap to now, after a message: the jobs touched
// since get their next status-change instant, and those whose instant has
// come get the next one and are marked for their list. A job missing at now
// is queued for its missing alert. A clock set back (the development clock)
// works out every job again.
func (w *Workspace) AdvanceTimers(now int64) {
	x := &w.JobIdx
	if now < x.timesAt {
		x.touchAll(w.JobList)
	}
	x.timesAt = now
	w.drain(&x.Retime, func(j *Job) { j.Retime = false }, func(j *Job) { w.retimeJob(j, now) })
	for len(x.Timers) > 0 && x.Timers[0].At <= now {
		j := x.Timers[0].V
		x.Timers.Remove(j)
		x.touchList(j)
		w.retimeJob(j, now)
	}
}

// retimeJob gives j its next status-change instant after now, and queues
// it for a missing alert when it is missing at now.
func (w *Workspace) retimeJob(j *Job, now int64) {
	w.JobIdx.Timers.Set(j, w.StatusChangeAt(j, now))
	if w.JobStatus(j, now) == StatusMissing {
		w.queueMissed(j, now)
	}
}

// drain empties the queue *q, keeping its memory: each job's queued flag
// is cleared (unmark), and do runs for those still in the workspace (not
// deleted since they were queued), in order.
func (w *Workspace) drain(q *[]*Job, unmark, do func(*Job)) {
	for _, j := range *q {
		unmark(j)
		if w.Jobs[j.ID] == j {
			do(j)
		}
	}
	clear(*q)
	*q = (*q)[:0]
}

// touchAll marks every job of list.
func (x *jobIndex) touchAll(list []*Job) {
	for _, j := range list {
		x.Touch(j)
	}
}

// advance brings the status lists to now: the heap first (advanceTimers,
// which marks the jobs whose status-change instant has come), then the jobs
// marked since go to the list of their status at now. A clock set back (the
// development clock) makes every job's status be worked out again.
func (w *Workspace) AdvanceJobIndex(now int64) {
	w.AdvanceTimers(now)
	x := &w.JobIdx
	if now < x.at {
		for _, j := range w.JobList {
			x.touchList(j)
		}
	}
	x.at = now
	if len(x.dirty) > len(w.JobList)/8 {
		w.rebuildStatusLists(now)
		return
	}
	w.drain(&x.dirty, func(j *Job) { j.dirty = false }, func(j *Job) { w.reindexStatus(j, now) })
}

// reindexStatus moves j to the list of its status at now.
func (w *Workspace) reindexStatus(j *Job, now int64) {
	x := &w.JobIdx
	s := uint8(StatusIndex(w.JobStatus(j, now))) + 1
	if s != j.idxStatus {
		if j.idxStatus > 0 {
			x.ByStatus[j.idxStatus-1] = removeOrdered(x.ByStatus[j.idxStatus-1], j, JobBefore)
		}
		x.ByStatus[s-1] = insertOrdered(x.ByStatus[s-1], j, JobBefore)
		j.idxStatus = s
	}
}

// rebuildStatusLists works out every job's status at now and builds the
// status lists afresh, walking the jobs in name order: cheaper than moving
// many jobs one by one (after a load, or many changes). The heap is already
// up to date (advanceTimers).
func (w *Workspace) rebuildStatusLists(now int64) {
	x := &w.JobIdx
	for _, j := range x.dirty {
		j.dirty = false
	}
	clear(x.dirty)
	x.dirty = x.dirty[:0]
	for s := range x.ByStatus {
		clear(x.ByStatus[s])
		x.ByStatus[s] = x.ByStatus[s][:0]
	}
	for _, j := range w.JobList {
		s := uint8(StatusIndex(w.JobStatus(j, now)))
		x.ByStatus[s] = append(x.ByStatus[s], j)
		j.idxStatus = s + 1
	}
}

// statusChangeAt returns the first instant after now at which jobStatus
// can answer differently for j without a record, or 0 when it cannot: the
// end of the job's own pause, or the instant the job turns missing (its
// next due time plus grace, passed). It follows jobStatus and the times it
// reads (ownPaused, offAt, dueFrom).
func (w *Workspace) StatusChangeAt(j *Job, now int64) int64 {
	if j.OwnPaused(now) {
		if j.PausedUntil != 0 {
			return j.PausedUntil // the pause ends: monitoring and the due time change
		}
		return 0
	}
	if !j.Monitored(now) || j.LastResult == ResultNone {
		return 0 // a paused or archived client, or a job never reported: records only
	}
	if t := j.NextExpectedAt(now, w.Loc) + j.GraceMinutes*MsPerMinute; now <= t {
		return t + 1 // missing once now is past it
	}
	return 0 // missing already, until a report
}

// rebuild fills the vendor and last-result lists from the name-ordered jobs
// and leaves every job's status to be worked out at the next read (after a
// snapshot load).
func (x *jobIndex) rebuild(jobs []*Job) {
	for v := range x.ByVendor {
		x.ByVendor[v] = x.ByVendor[v][:0]
	}
	for r := range x.ByLast {
		x.ByLast[r] = x.ByLast[r][:0]
	}
	for s := range x.ByStatus {
		x.ByStatus[s] = x.ByStatus[s][:0]
	}
	x.dirty = x.dirty[:0]
	for _, j := range x.Retime {
		j.Retime = false
	}
	x.Retime = x.Retime[:0]
	x.Timers.Clear()
	for _, j := range jobs {
		x.ByVendor[j.Vx] = append(x.ByVendor[j.Vx], j)
		x.ByLast[j.LastResult] = append(x.ByLast[j.LastResult], j)
		j.idxStatus, j.dirty, j.Retime = 0, false, false
		x.Touch(j)
	}
}

// removeOrdered drops v from s, which is ordered by before and holds v once.
func removeOrdered[T comparable](s []T, v T, before func(a, b T) bool) []T {
	i := sort.Search(len(s), func(i int) bool { return !before(s[i], v) })
	if i < len(s) && s[i] == v {
		copy(s[i:], s[i+1:])
		var zero T
		s[len(s)-1] = zero
		return s[:len(s)-1]
	}
	return removeItem(s, v) // not where the order says: look everywhere
}

// StatusTimers is the min-heap of when each job's status may next change
// by itself, holding each job at most once: a job knows its place
// (Job.TimerIx), so a new instant replaces the old one in place and the
// heap never holds more entries than jobs.
type StatusTimers timeheap.Heap[*Job]

func (h *StatusTimers) heap() *timeheap.Heap[*Job] { return (*timeheap.Heap[*Job])(h) }

// Set gives j the instant at, or takes it out of the heap when at is 0.
func (h *StatusTimers) Set(j *Job, at int64) { h.heap().Set(j.TimerIx, at, j) }

// Remove takes j out of the heap, if it is in it.
func (h *StatusTimers) Remove(j *Job) { h.heap().Remove(j.TimerIx) }

// Place keeps j's place in the status timers' heap (timeheap.Value).
func (j *Job) Place(ix int32) { j.TimerIx = ix }

// Clear empties the heap.
func (h *StatusTimers) Clear() { h.heap().Clear() }
