package engine

import "sort"

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
	byStatus [len(statusOrder)][]*job
	byVendor [numVendors][]*job
	byLast   [4][]*job // by lastResult: none, ok, warning, failed

	dirty   []*job       // jobs whose status list must be worked out again
	retime  []*job       // jobs whose status-change instant must be worked out again
	timers  statusTimers // when a job's status next changes by itself
	at      int64        // the time the status lists were last right for
	timesAt int64        // the time the heap was last right for
}

// statusOrder lists the job statuses; a job keeps its status list's index
// plus one in idxStatus (0: in none yet).
var statusOrder = [...]string{StatusHealthy, StatusWarning, StatusFailed, StatusMissing, StatusWaiting, StatusPaused}

// statusIndex returns the index of a status in statusOrder, or -1.
func statusIndex(s string) int {
	for i, v := range statusOrder {
		if v == s {
			return i
		}
	}
	return -1
}

// add puts j in its vendor and last-result lists, and in its status list
// when it has one, and marks its status to be worked out again.
func (x *jobIndex) add(j *job) {
	x.byVendor[j.vx] = insertOrdered(x.byVendor[j.vx], j, jobBefore)
	x.byLast[j.lastResult] = insertOrdered(x.byLast[j.lastResult], j, jobBefore)
	if j.idxStatus > 0 {
		s := j.idxStatus - 1
		x.byStatus[s] = insertOrdered(x.byStatus[s], j, jobBefore)
	}
	x.touch(j)
}

// remove takes j out of every list (j.key must be the key it was added
// with); its status list is remembered for add.
func (x *jobIndex) remove(j *job) {
	x.byVendor[j.vx] = removeOrdered(x.byVendor[j.vx], j, jobBefore)
	x.byLast[j.lastResult] = removeOrdered(x.byLast[j.lastResult], j, jobBefore)
	if j.idxStatus > 0 {
		s := j.idxStatus - 1
		x.byStatus[s] = removeOrdered(x.byStatus[s], j, jobBefore)
	}
}

// setLast moves j to the list of last result r and sets it.
func (x *jobIndex) setLast(j *job, r uint8) {
	if r == j.lastResult {
		return
	}
	x.byLast[j.lastResult] = removeOrdered(x.byLast[j.lastResult], j, jobBefore)
	j.lastResult = r
	x.byLast[r] = insertOrdered(x.byLast[r], j, jobBefore)
}

// setVendor moves j to the list of vendor and sets it.
func (x *jobIndex) setVendor(j *job, vendor string) {
	x.byVendor[j.vx] = removeOrdered(x.byVendor[j.vx], j, jobBefore)
	j.setVendor(vendor)
	x.byVendor[j.vx] = insertOrdered(x.byVendor[j.vx], j, jobBefore)
}

// touch marks j's status to be worked out again (a record changed
// something it depends on): its instant after the message, its list at the
// next read.
func (x *jobIndex) touch(j *job) {
	x.touchList(j)
	if !j.retime {
		j.retime = true
		x.retime = append(x.retime, j)
	}
}

// touchList marks j's status list to be worked out again at the next read.
func (x *jobIndex) touchList(j *job) {
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
func (w *workspace) advanceTimers(now int64) {
	x := &w.jobIdx
	if now < x.timesAt {
		x.touchAll(w.jobList)
	}
	x.timesAt = now
	for _, j := range x.retime {
		j.retime = false
		if w.jobs[j.id] == j { // not deleted since
			w.retimeJob(j, now)
		}
	}
	clear(x.retime)
	x.retime = x.retime[:0]
	for len(x.timers) > 0 && x.timers[0].at <= now {
		j := x.timers[0].job
		x.timers.remove(j)
		x.touchList(j)
		w.retimeJob(j, now)
	}
}

// retimeJob gives j its next status-change instant after now, and queues
// it for a missing alert when it is missing at now.
func (w *workspace) retimeJob(j *job, now int64) {
	w.jobIdx.timers.set(j, w.statusChangeAt(j, now))
	if w.jobStatus(j, now) == StatusMissing {
		w.queueMissed(j, now)
	}
}

// touchAll marks every job of list.
func (x *jobIndex) touchAll(list []*job) {
	for _, j := range list {
		x.touch(j)
	}
}

// advance brings the status lists to now: the heap first (advanceTimers,
// which marks the jobs whose status-change instant has come), then the jobs
// marked since go to the list of their status at now. A clock set back (the
// development clock) makes every job's status be worked out again.
func (w *workspace) advanceJobIndex(now int64) {
	w.advanceTimers(now)
	x := &w.jobIdx
	if now < x.at {
		for _, j := range w.jobList {
			x.touchList(j)
		}
	}
	x.at = now
	if len(x.dirty) > len(w.jobList)/8 {
		w.rebuildStatusLists(now)
		return
	}
	for _, j := range x.dirty {
		j.dirty = false
		if w.jobs[j.id] == j { // not deleted since
			w.reindexStatus(j, now)
		}
	}
	clear(x.dirty)
	x.dirty = x.dirty[:0]
}

// reindexStatus moves j to the list of its status at now.
func (w *workspace) reindexStatus(j *job, now int64) {
	x := &w.jobIdx
	s := uint8(statusIndex(w.jobStatus(j, now))) + 1
	if s != j.idxStatus {
		if j.idxStatus > 0 {
			x.byStatus[j.idxStatus-1] = removeOrdered(x.byStatus[j.idxStatus-1], j, jobBefore)
		}
		x.byStatus[s-1] = insertOrdered(x.byStatus[s-1], j, jobBefore)
		j.idxStatus = s
	}
}

// rebuildStatusLists works out every job's status at now and builds the
// status lists afresh, walking the jobs in name order: cheaper than moving
// many jobs one by one (after a load, or many changes). The heap is already
// up to date (advanceTimers).
func (w *workspace) rebuildStatusLists(now int64) {
	x := &w.jobIdx
	for _, j := range x.dirty {
		j.dirty = false
	}
	clear(x.dirty)
	x.dirty = x.dirty[:0]
	for s := range x.byStatus {
		clear(x.byStatus[s])
		x.byStatus[s] = x.byStatus[s][:0]
	}
	for _, j := range w.jobList {
		s := uint8(statusIndex(w.jobStatus(j, now)))
		x.byStatus[s] = append(x.byStatus[s], j)
		j.idxStatus = s + 1
	}
}

// statusChangeAt returns the first instant after now at which jobStatus
// can answer differently for j without a record, or 0 when it cannot: the
// end of the job's own pause, or the instant the job turns missing (its
// next due time plus grace, passed). It follows jobStatus and the times it
// reads (ownPaused, offAt, dueFrom).
func (w *workspace) statusChangeAt(j *job, now int64) int64 {
	if j.ownPaused(now) {
		if j.pausedUntil != 0 {
			return j.pausedUntil // the pause ends: monitoring and the due time change
		}
		return 0
	}
	if !j.monitored(now) || j.lastResult == resultNone {
		return 0 // a paused or archived client, or a job never reported: records only
	}
	if t := j.nextExpectedAt(now, w.loc) + j.graceMinutes*msPerMinute; now <= t {
		return t + 1 // missing once now is past it
	}
	return 0 // missing already, until a report
}

// rebuild fills the vendor and last-result lists from the name-ordered jobs
// and leaves every job's status to be worked out at the next read (after a
// snapshot load).
func (x *jobIndex) rebuild(jobs []*job) {
	for v := range x.byVendor {
		x.byVendor[v] = x.byVendor[v][:0]
	}
	for r := range x.byLast {
		x.byLast[r] = x.byLast[r][:0]
	}
	for s := range x.byStatus {
		x.byStatus[s] = x.byStatus[s][:0]
	}
	x.dirty = x.dirty[:0]
	for _, j := range x.retime {
		j.retime = false
	}
	x.retime = x.retime[:0]
	x.timers.clear()
	for _, j := range jobs {
		x.byVendor[j.vx] = append(x.byVendor[j.vx], j)
		x.byLast[j.lastResult] = append(x.byLast[j.lastResult], j)
		j.idxStatus, j.dirty, j.retime = 0, false, false
		x.touch(j)
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

// statusTimer is when a job's status may next change by itself.
type statusTimer struct {
	at  int64
	job *job
}

// statusTimers is a min-heap of statusTimer by at, holding each job at most
// once: a job knows its place (timerIx, 1-based; 0 when not in the heap), so
// a new instant replaces the old one in place and the heap never holds more
// entries than jobs.
type statusTimers []statusTimer

// set gives j the instant at, or takes it out of the heap when at is 0.
func (h *statusTimers) set(j *job, at int64) {
	if at == 0 {
		h.remove(j)
		return
	}
	if j.timerIx == 0 {
		*h = append(*h, statusTimer{at: at, job: j})
		j.timerIx = int32(len(*h))
		h.up(len(*h) - 1)
		return
	}
	i := int(j.timerIx) - 1
	old := (*h)[i].at
	(*h)[i].at = at
	if at < old {
		h.up(i)
	} else {
		h.down(i)
	}
}

// remove takes j out of the heap, if it is in it.
func (h *statusTimers) remove(j *job) {
	if j.timerIx == 0 {
		return
	}
	s := *h
	i, last := int(j.timerIx)-1, len(s)-1
	j.timerIx = 0
	if i != last {
		s[i] = s[last]
		s[i].job.timerIx = int32(i + 1)
	}
	s[last] = statusTimer{}
	*h = s[:last]
	if i != last {
		h.down(i)
		h.up(i)
	}
}

// clear empties the heap.
func (h *statusTimers) clear() {
	for _, t := range *h {
		t.job.timerIx = 0
	}
	clear(*h)
	*h = (*h)[:0]
}

func (h statusTimers) swap(a, b int) {
	h[a], h[b] = h[b], h[a]
	h[a].job.timerIx = int32(a + 1)
	h[b].job.timerIx = int32(b + 1)
}

func (h statusTimers) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if h[p].at <= h[i].at {
			return
		}
		h.swap(p, i)
		i = p
	}
}

func (h statusTimers) down(i int) {
	for {
		l, c := 2*i+1, i
		if l < len(h) && h[l].at < h[c].at {
			c = l
		}
		if r := l + 1; r < len(h) && h[r].at < h[c].at {
			c = r
		}
		if c == i {
			return
		}
		h.swap(i, c)
		i = c
	}
}
