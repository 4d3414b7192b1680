package engine

import (
	"backupmon/state"
)

// The notification outbox at run time: handing the deliveries records made
// to the deliverer once durable, their attempts' timeouts, and retries.

type delivererBox struct{ d Deliverer }

// SetDeliverer sets where notification notices go, and starts the
// deliveries that were waiting for one (after recovery, those due now).
// Deliveries are only handed out once the records that made them are
// durable: the actors first finish what start-up gave them (missed due
// times recorded), and the log is flushed, before any is started.
func (e *Engine) SetDeliverer(d Deliverer) {
	for _, a := range e.sortedActors() {
		ask(a, func(*workspace) struct{} { return struct{}{} })
	}
	if err := e.barrier(); err != nil {
		e.logger.Error("set deliverer: log barrier", "err", err)
	}
	e.deliv.Store(&delivererBox{d: d})
	for _, a := range e.sortedActors() {
		ask(a, func(w *workspace) struct{} {
			w.rebuildTimers(e.nowMs())
			return struct{}{}
		})
	}
}

func (e *Engine) deliverer() Deliverer {
	if b := e.deliv.Load(); b != nil {
		return b.d
	}
	return nil
}

// deliverAll hands notices to the deliverer (after the records that made
// them are durable).
func (e *Engine) deliverAll(notices []state.Notice) {
	d := e.deliverer()
	if d == nil {
		return
	}
	for _, n := range notices {
		d.Deliver(n)
	}
}

// Deliverer sends notices. Deliver must not block: it queues the notice and
// returns; the outcome of each attempt comes back through
// Engine.DeliveryDone, with the notice's Workspace, Delivery and Attempt,
// from another goroutine (never from within Deliver, which may run on the
// log's committer: DeliveryDone waits for the actor, which may be waiting
// for the committer).
type Deliverer interface {
	Deliver(n Notice)
}

// takeFresh hands out the deliveries the last record made: each becomes an
// attempt in flight, and its notice is returned to be given to the
// deliverer once the record is durable. Replay drops them instead (their
// timers are rebuilt after recovery).
func (a *actor) takeFresh(now int64) []state.Notice {
	w := a.ws
	if len(w.Fresh) == 0 {
		return nil
	}
	var out []state.Notice
	for _, d := range w.Fresh {
		if n, ok := a.startAttempt(d, now); ok {
			out = append(out, n)
		}
	}
	clear(w.Fresh)
	w.Fresh = w.Fresh[:0]
	return out
}

// startAttempt marks the next attempt of d in flight and returns its
// notice; without a deliverer it leaves d waiting (SetDeliverer starts it).
func (a *actor) startAttempt(d *state.Delivery, now int64) (state.Notice, bool) {
	if a.eng.deliverer() == nil || a.ws.Blocked(d) {
		return state.Notice{}, false // a blocked one starts when the one before it ends
	}
	d.InFlight = true
	d.InFlightUntil = now + state.DeliveryAttemptMs
	a.ws.timers.Push(d.InFlightUntil, timer{kind: state.TimerDelivery, del: d})
	n := *d.Notice
	n.Delivery = d.ID
	n.Attempt = d.Attempts + 1
	n.Channel = a.ws.noticeChannel(d.ChannelID)
	a.ws.ticketTarget(&n, d)
	return n, true
}

func (w *workspace) noticeChannel(id state.ID) state.NoticeChannel {
	c := w.Channel(id)
	if c == nil {
		return state.NoticeChannel{ID: id}
	}
	return state.NoticeChannel{ID: c.ID, Type: c.Type, Name: c.Name, URL: c.URL, To: c.To, Secret: c.Secret}
}

// deliveryDue runs when a delivery's timer comes: an attempt without an
// outcome has timed out, or the next attempt is due. It returns the record
// of a timeout or a cancellation, or hands the attempt to the deliverer.
func (a *actor) deliveryDue(d *state.Delivery, now int64) state.Record {
	w := a.ws
	if w.DeliveryIx[d.ID] != d || d.State != state.DeliveryPending {
		return nil
	}
	if d.InFlight {
		if now < d.InFlightUntil {
			return nil
		}
		return w.decideAttempt(d, d.Attempts+1, "no outcome within 2 minutes", now)
	}
	if now < d.NextAt {
		return nil
	}
	if w.Blocked(d) {
		// It waits for the one before it, which sets its timer when it
		// ends (state.releaseNext); it is decided then. Deciding it now
		// would make a restart (whose rebuilt timers fire at once) decide
		// what the live engine left waiting.
		return nil
	}
	if why := w.cancelReason(d, now); why != "" {
		return &state.DeliveryAttempted{DeliveryID: d.ID, Attempt: int64(d.Attempts), State: state.DeliveryCancelled, Failure: why, At: now}
	}
	if n, ok := a.startAttempt(d, now); ok {
		a.eng.deliverAll([]state.Notice{n})
	}
	return nil
}

// cancelReason says why d must not be sent at now (decisions.md 7: nothing
// is sent for paused or archived jobs and clients), or "".
func (w *workspace) cancelReason(d *state.Delivery, now int64) string {
	j := w.Jobs[d.JobID]
	switch {
	case j == nil:
		return "job deleted"
	case w.Channel(d.ChannelID) == nil:
		return "channel deleted"
	case !w.Active(now):
		return "workspace inactive"
	case j.Client.Status != "active":
		return "client " + j.Client.Status
	case j.OwnPaused(now):
		return "job paused"
	}
	return ""
}

// decideAttempt returns the record of attempt's outcome: delivered, or the
// next attempt after a backoff that doubles from 30 seconds up to an hour,
// or given up once 24 hours have passed since its first attempt.
func (w *workspace) decideAttempt(d *state.Delivery, attempt int, failure string, now int64) *state.DeliveryAttempted {
	rec := &state.DeliveryAttempted{DeliveryID: d.ID, Attempt: int64(attempt), Failure: failure, At: now}
	if failure == "" {
		rec.State = state.DeliveryDelivered
		return rec
	}
	wait := int64(state.DeliveryFirstRetryMs)
	for i := 1; i < attempt && wait < state.DeliveryMaxRetryMs; i++ {
		wait *= 2
	}
	wait = min(wait, state.DeliveryMaxRetryMs)
	start := d.FirstOutcome
	if start == 0 {
		start = now // this is the first attempt's outcome
	}
	start = max(start, d.CreatedAt)
	if next := now + wait; next < start+state.DeliveryGiveUpMs {
		rec.State, rec.NextAt = state.DeliveryRetry, next
	} else {
		rec.State = state.DeliveryFailed
	}
	return rec
}

// PendingDeliveries returns how many notification deliveries wait in the
// outboxes of all workspaces (not yet delivered, failed or cancelled).
func (e *Engine) PendingDeliveries() int64 {
	var n int64
	e.actors.Range(func(_, v any) bool {
		n += v.(*actor).ws.Pending.Load()
		return true
	})
	return n
}
