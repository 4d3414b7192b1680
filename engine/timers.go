package engine

import (
	"fmt"
	"sync"
	"time"

	"backupmon/state"
	"backupmon/timeheap"
)

// Each workspace keeps its time-driven work in two min-heaps: the jobs'
// status-change instants (jobIndex.timers: a due time plus grace passing, a
// pause ending) and timerHeap below (an escalation falling due, a snooze
// ending, a delivery's next attempt, a trial ending). Timers are derived from
// the state, never logged: they are rebuilt after recovery, so a deadline
// that passed while the server was down fires at start-up, once, because
// what it did is recorded in the state (job.missedDue, alert.escChecked,
// delivery states, workspace.trialNoted).

// timer is the work of one instant of a workspace's time-driven work.
// Entries are not removed when what they wait for changes: firing checks
// the state again.
type timer struct {
	kind uint8
	al   *state.Alert
	del  *state.Delivery
}

// Place is a timer's part of timeheap.Value: a timer is never moved or
// taken out before it comes due, so its place is not kept.
func (timer) Place(int32) {}

// timerHeap is a min-heap of timers by their instant.
type timerHeap = timeheap.Heap[timer]

// nextTimer returns the earliest instant of either heap, or 0 when there is
// none.
func (w *workspace) nextTimer() int64 {
	var next int64
	if len(w.JobIdx.Timers) > 0 {
		next = w.JobIdx.Timers[0].At
	}
	if len(w.timers) > 0 && (next == 0 || w.timers[0].At < next) {
		next = w.timers[0].At
	}
	return next
}

// rebuildTimers fills the workspace's timer heap from its state (after a
// load, or when a deliverer is set): escalations and snooze ends of
// unresolved alerts, pending deliveries, the trial's end. The job heap is
// rebuilt by the job index.
func (w *workspace) rebuildTimers(now int64) {
	clear(w.timers)
	w.timers = w.timers[:0]
	for _, a := range w.Unresolved {
		w.scheduleAlert(a)
	}
	for _, d := range w.Deliveries {
		if d.State != state.DeliveryPending {
			continue
		}
		if d.InFlight {
			// An attempt already handed to a deliverer (SetDeliverer after
			// a record's deliveries went out): its outcome, or its
			// timeout, decides; starting it again would send it twice.
			w.timers.Push(d.InFlightUntil, timer{kind: state.TimerDelivery, del: d})
			continue
		}
		w.timers.Push(d.NextAt, timer{kind: state.TimerDelivery, del: d})
	}
	w.scheduleTrial()
	for _, it := range w.AIQueue {
		w.timers.Push(it.NextAt, timer{kind: state.TimerAI})
	}
}

// scheduleAlert sets the timer of an unresolved alert's next escalation
// instant. A snooze's end needs none: the alert reads open from its end on
// (alertStatus), escalations look at the status each instant had, and a
// later change settles the alert at its own time (settleAlert).
func (w *workspace) scheduleAlert(a *state.Alert) {
	if at := w.NextEscalation(a); at > 0 {
		w.timers.Push(at, timer{kind: state.TimerEscalation, al: a})
	}
}

// scheduleTrial sets the timer of a trial's end that is not yet noted.
func (w *workspace) scheduleTrial() {
	if w.Plan == "trial" && w.TrialEndsAt != 0 && w.TrialNoted != w.TrialEndsAt {
		w.timers.Push(w.TrialEndsAt, timer{kind: state.TimerTrial})
	}
}

// runTimers does, in the actor, everything that has come due at now: jobs'
// status-change instants pass (missing alerts open), escalations fall due,
// deliveries go out or time out, a trial ends. Records it makes are applied and logged
// (Engine.barrier waits until they are durable). Work one record sets
// off that is itself due (an escalation of an alert opened an hour ago, after
// the development clock jumped) runs in the same call.
func (a *actor) runTimers(now int64) {
	w := a.ws
	for {
		w.AdvanceTimers(now)
		progress := false
		for len(w.MissedQ) > 0 {
			j := w.MissedQ[0]
			w.MissedQ[0] = nil
			w.MissedQ = w.MissedQ[1:]
			j.MissedQ = false
			if rec := w.decideMissed(j, now); rec != nil {
				a.commit(rec)
				progress = true
			}
		}
		for len(w.timers) > 0 && w.timers[0].At <= now {
			t := w.timers.Pop()
			if rec := a.fire(t.V, now); rec != nil {
				a.commit(rec)
				progress = true
			}
		}
		if !progress {
			return
		}
	}
}

// fire does one timer's work at now and returns the record it calls for, if
// any.
func (a *actor) fire(t timer, now int64) state.Record {
	w := a.ws
	switch t.kind {
	case state.TimerEscalation:
		// A nil *state.Escalated must not become a non-nil state.Record.
		if rec := w.decideEscalation(t.al, now); rec != nil {
			return rec
		}
		// No rule's instant has come (the rule this timer was for was
		// deleted): the alert's next instant needs its timer all the
		// same, as a restart (rebuildTimers) would give it.
		if w.Alerts[t.al.ID] == t.al && t.al.Status != state.AlertResolved {
			w.scheduleAlert(t.al)
		}
	case state.TimerDelivery:
		return a.deliveryDue(t.del, now)
	case state.TimerAI:
		a.dispatchAI(now)
	case state.TimerTrial:
		if w.Plan == "trial" && w.TrialEndsAt != 0 && w.TrialEndsAt <= now && w.TrialNoted != w.TrialEndsAt {
			return &state.TrialEnded{Mark: state.Mark{ID: w.IDs.Next(now), At: w.TrialEndsAt}}
		}
	}
	return nil
}

// commit applies a record the actor decided on its own (a timer's) and
// logs it; the deliveries it made go out once it is durable.
func (a *actor) commit(rec state.Record) {
	if err := a.applyNew(rec); err != nil {
		a.eng.logger.Error("apply timer record", "workspace", a.ws.ID, "type", rec.Type(), "err", err)
		return
	}
	notices := a.takeFresh(a.eng.nowMs())
	a.eng.submit(rec, func(_ uint64, err error) {
		if err == nil {
			a.eng.deliverAll(notices)
		}
	})
}

// beforeMessage runs the timers that came due before a message is handled,
// so that the message sees their work: a job's report that comes after its
// deadline passed, before the actor woke for it, finds its missing alert
// recorded (dated when the grace ended) and resolves it.
func (a *actor) beforeMessage() {
	if a.eng.readOnly != nil {
		return // timers change state: none runs on a read-only engine
	}
	if next := a.ws.nextTimer(); next != 0 {
		if now := a.eng.nowMs(); next <= now {
			a.runTimers(now)
		}
	}
}

// afterMessage runs after each message the actor handles: the timers that
// came due, then (with the real clock) a wake-up armed for the next one.
// With the development clock, timers run when a message arrives and when
// the clock moves (Engine.SetClock).
func (a *actor) afterMessage() {
	if a.eng.readOnly != nil {
		return
	}
	now := a.eng.nowMs()
	a.runTimers(now)
	if a.eng.dev != nil {
		return
	}
	next := a.ws.nextTimer()
	if next == 0 || (a.wakeAt != 0 && a.wakeAt > now && a.wakeAt <= next) {
		return // nothing to wait for, or woken early enough already
	}
	a.wakeAt = min(next, now+maxWakeMs)
	d := time.Duration(a.wakeAt-now) * time.Millisecond
	if a.wake == nil {
		a.wake = time.AfterFunc(d, a.tick)
	} else {
		a.wake.Reset(d)
	}
}

// tick wakes the actor (from its wake-up timer's goroutine); afterMessage
// does the work and arms the next wake-up, whatever the wall clock did
// meanwhile (the runtime timer runs on the monotonic clock).
func (a *actor) tick() { a.send(func(*workspace) { a.wakeAt = 0 }) }

// maxWakeMs caps a wake-up's wait, so that a wall clock stepped forward
// (a suspended VM) delays a due timer by at most this.
const maxWakeMs = state.MsPerMinute

// fireDue runs every actor's due timers at the current time and waits until
// the records they made are durable (the development clock's move), or
// returns the log's error. The actors work at once: each is sent its
// message before any is waited for. An actor may run them before the
// message does (its beforeMessage), so the wait is a barrier on the log
// after every message has run, not a count of what the messages made.
func (e *Engine) fireDue() error {
	var ran sync.WaitGroup
	for _, a := range e.sortedActors() {
		ran.Add(1)
		if !a.send(func(*workspace) {
			a.runTimers(e.nowMs())
			ran.Done()
		}) {
			ran.Done() // closing: nothing runs
		}
	}
	ran.Wait()
	return e.barrier()
}

// decideEscalation looks at the alert's escalation instants up to now and
// returns the record of which rules found it still open (none while its
// job or client is paused), or nil when no instant has come.
func (w *workspace) decideEscalation(a *state.Alert, now int64) *state.Escalated {
	if w.Alerts[a.ID] != a || a.Status == state.AlertResolved {
		return nil
	}
	rec := &state.Escalated{AlertID: a.ID, Through: now, At: now}
	any := false
	for _, r := range w.Escalations {
		t := a.CreatedAt + r.AfterMinutes*state.MsPerMinute
		if t <= a.EscChecked || t > now || r.CreatedAt > t {
			continue
		}
		any = true
		if state.AlertStatus(a, t) == state.AlertOpen && a.Job.Monitored(now) && w.Active(now) {
			rec.Rules = append(rec.Rules, r.ID)
		}
	}
	if !any {
		return nil
	}
	return rec
}

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
