package engine

import (
	"encoding/binary"
	"fmt"
	"sort"

	"backupmon/wal"
)

// channel is a workspace's notification channel (decisions.md 7).
type channel struct {
	id          ID
	typ         string
	name        string
	url         string
	to          string
	secret      string
	minSeverity uint8
	createdAt   int64
}

// escalation is a rule: an alert still open afterMinutes after it opened
// notifies the channel. It looks forward only: it applies to the instants
// (an alert's creation plus its minutes) that come after the rule was made.
type escalation struct {
	id           ID
	channelID    ID
	afterMinutes int64
	createdAt    int64
}

// Delivery states as stored.
const (
	deliveryPending   uint8 = 0
	deliveryDelivered       = wal.DeliveryDelivered
	deliveryFailed          = wal.DeliveryFailed
	deliveryCancelled       = wal.DeliveryCancelled
)

// delivery is one notification on its way to one channel: the outbox entry.
type delivery struct {
	id            ID
	channelID     ID
	alertID       ID
	jobID         ID
	event         string
	createdAt     int64
	state         uint8
	attempts      int
	nextAt        int64 // pending: when the next attempt is due
	firstOutcome  int64 // when the first attempt's outcome was recorded; 0: none yet
	lastAttemptAt int64
	deliveredAt   int64
	lastError     string
	notice        *Notice // what it says; dropped once it is finished

	inFlight      bool  // handed to the deliverer, outcome not in yet (not saved)
	inFlightUntil int64 // when an attempt without an outcome counts as failed
}

const (
	// deliveryFirstRetryMs is the wait after a first failed attempt; it
	// doubles after each failure up to deliveryMaxRetryMs.
	deliveryFirstRetryMs = 30 * msPerSecond
	deliveryMaxRetryMs   = msPerHour
	// deliveryGiveUpMs: a delivery not made within this of its first
	// attempt fails for good (not of its createdAt, the alert's date, which
	// may lie far back: a due time missed during a long downtime).
	deliveryGiveUpMs = msPerDay
	// deliveryAttemptMs: an attempt whose outcome has not come back within
	// this counts as failed (the deliverer lost it, or its queue was full).
	deliveryAttemptMs = 2 * msPerMinute
	// deliveryKeepMs: finished deliveries are kept this long.
	deliveryKeepMs = 30 * msPerDay
)

// alertEvent is an event of the record being applied, to be turned into
// deliveries once the record's changes are all made.
type alertEvent struct {
	al    *alert
	event string
	at    int64
	view  int64    // the time the notice shows the alert and job at
	rules []wal.ID // escalated: the rules whose channels it goes to
}

// emit queues an alert event of the record being applied.
func (w *workspace) emit(a *alert, event string, at int64, rules []wal.ID) {
	w.events = append(w.events, alertEvent{al: a, event: event, at: at, view: at, rules: rules})
}

// flushEvents turns the events of the record just applied into deliveries,
// one per channel each goes to. Their ids derive from the record's sequence
// number, so replay makes the same ones. Opened, raised and resolved go to
// every channel whose minSeverity the alert reaches; escalated to the
// channels its rules name.
func (w *workspace) flushEvents(seq uint64) {
	n := 0
	for _, ev := range w.events {
		var targets []*channel
		if ev.event == EventEscalated {
			for _, rid := range ev.rules {
				if r := w.escalation(ID(rid)); r != nil {
					if c := w.channel(r.channelID); c != nil && !containsChannel(targets, c) {
						targets = append(targets, c)
					}
				}
			}
		} else {
			for _, c := range w.channels {
				if ev.al.severity >= c.minSeverity {
					targets = append(targets, c)
				}
			}
		}
		if len(targets) == 0 {
			continue
		}
		j := ev.al.job
		notice := &Notice{
			Workspace:     w.id,
			Event:         ev.event,
			Alert:         appendAlert(nil, ev.al, ev.view),
			Job:           w.appendJob(make([]byte, 0, len(j.json)+64), j, ev.view),
			WorkspaceName: w.name,
			ClientName:    j.client.name,
			JobName:       j.name,
			AlertType:     alertTypeName(ev.al.typ),
			Severity:      severityName(ev.al.severity),
			Summary:       ev.al.summary,
		}
		for _, c := range targets {
			d := &delivery{
				id: derivedID(ev.at, seq, n), channelID: c.id, alertID: ev.al.id, jobID: j.id,
				event: ev.event, createdAt: ev.at, state: deliveryPending, nextAt: ev.at, notice: notice,
			}
			n++
			w.deliveries = append(w.deliveries, d)
			w.deliveryIx[d.id] = d
			w.fresh = append(w.fresh, d)
			w.pending.Add(1)
		}
	}
	clear(w.events)
	w.events = w.events[:0]
}

func containsChannel(list []*channel, c *channel) bool {
	for _, x := range list {
		if x == c {
			return true
		}
	}
	return false
}

// derivedID makes the id of the n-th delivery of record seq: the layout of
// idGen's ids (time first), the rest mixed from seq and n, so that replay
// makes the same id.
func derivedID(at int64, seq uint64, n int) ID {
	var id ID
	ms := uint64(at)
	id[0], id[1], id[2], id[3], id[4], id[5] = byte(ms>>40), byte(ms>>32), byte(ms>>24), byte(ms>>16), byte(ms>>8), byte(ms)
	x := seq<<8 | uint64(n&0xff)
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	x ^= x >> 31
	id[6] = 0x70 | byte(n>>8)&0x0f
	id[7] = byte(x >> 56)
	binary.LittleEndian.PutUint64(id[8:], x)
	id[8] = 0x80 | id[8]&0x3f
	return id
}

// takeFresh hands out the deliveries the last record made: each becomes an
// attempt in flight, and its notice is returned to be given to the
// deliverer once the record is durable. Replay drops them instead (their
// timers are rebuilt after recovery).
func (a *actor) takeFresh(now int64) []Notice {
	w := a.ws
	if len(w.fresh) == 0 {
		return nil
	}
	var out []Notice
	for _, d := range w.fresh {
		if n, ok := a.startAttempt(d, now); ok {
			out = append(out, n)
		}
	}
	clear(w.fresh)
	w.fresh = w.fresh[:0]
	return out
}

// startAttempt marks the next attempt of d in flight and returns its
// notice; without a deliverer it leaves d waiting (SetDeliverer starts it).
func (a *actor) startAttempt(d *delivery, now int64) (Notice, bool) {
	if a.eng.deliverer() == nil {
		return Notice{}, false
	}
	d.inFlight = true
	d.inFlightUntil = now + deliveryAttemptMs
	a.ws.timers.push(timer{at: d.inFlightUntil, kind: timerDelivery, del: d})
	n := *d.notice
	n.Delivery = d.id
	n.Attempt = d.attempts + 1
	n.Channel = a.ws.noticeChannel(d.channelID)
	return n, true
}

func (w *workspace) noticeChannel(id ID) NoticeChannel {
	c := w.channel(id)
	if c == nil {
		return NoticeChannel{ID: id}
	}
	return NoticeChannel{ID: c.id, Type: c.typ, Name: c.name, URL: c.url, To: c.to, Secret: c.secret}
}

// deliveryDue runs when a delivery's timer comes: an attempt without an
// outcome has timed out, or the next attempt is due. It returns the record
// of a timeout or a cancellation, or hands the attempt to the deliverer.
func (a *actor) deliveryDue(d *delivery, now int64) wal.Entry {
	w := a.ws
	if w.deliveryIx[d.id] != d || d.state != deliveryPending {
		return nil
	}
	if d.inFlight {
		if now < d.inFlightUntil {
			return nil
		}
		return w.decideAttempt(d, d.attempts+1, "no outcome within 2 minutes", now)
	}
	if now < d.nextAt {
		return nil
	}
	if why := w.cancelReason(d, now); why != "" {
		return &wal.DeliveryAttempted{DeliveryID: d.id, Attempt: int64(d.attempts), State: wal.DeliveryCancelled, Failure: why, At: now}
	}
	if n, ok := a.startAttempt(d, now); ok {
		a.eng.deliverAll([]Notice{n})
	}
	return nil
}

// cancelReason says why d must not be sent at now (decisions.md 7: nothing
// is sent for paused or archived jobs and clients), or "".
func (w *workspace) cancelReason(d *delivery, now int64) string {
	j := w.jobs[d.jobID]
	switch {
	case j == nil:
		return "job deleted"
	case w.channel(d.channelID) == nil:
		return "channel deleted"
	case !w.active(now):
		return "workspace inactive"
	case j.client.status != "active":
		return "client " + j.client.status
	case j.ownPaused(now):
		return "job paused"
	}
	return ""
}

// decideAttempt returns the record of attempt's outcome: delivered, or the
// next attempt after a backoff that doubles from 30 seconds up to an hour,
// or given up once 24 hours have passed since its first attempt.
func (w *workspace) decideAttempt(d *delivery, attempt int, failure string, now int64) *wal.DeliveryAttempted {
	rec := &wal.DeliveryAttempted{DeliveryID: d.id, Attempt: int64(attempt), Failure: failure, At: now}
	if failure == "" {
		rec.State = wal.DeliveryDelivered
		return rec
	}
	wait := int64(deliveryFirstRetryMs)
	for i := 1; i < attempt && wait < deliveryMaxRetryMs; i++ {
		wait *= 2
	}
	wait = min(wait, deliveryMaxRetryMs)
	start := d.firstOutcome
	if start == 0 {
		start = now // this is the first attempt's outcome
	}
	start = max(start, d.createdAt)
	if next := now + wait; next < start+deliveryGiveUpMs {
		rec.State, rec.NextAt = wal.DeliveryRetry, next
	} else {
		rec.State = wal.DeliveryFailed
	}
	return rec
}

func (w *workspace) applyDeliveryAttempted(r *wal.DeliveryAttempted) error {
	d := w.deliveryIx[r.DeliveryID]
	if d == nil {
		return fmt.Errorf("attempt of unknown delivery %s", ID(r.DeliveryID))
	}
	d.attempts = int(r.Attempt)
	d.inFlight = false
	if r.State != wal.DeliveryCancelled {
		d.lastAttemptAt = r.At
		if d.firstOutcome == 0 {
			d.firstOutcome = r.At
		}
	}
	switch r.State {
	case wal.DeliveryDelivered:
		d.state, d.deliveredAt, d.lastError = deliveryDelivered, r.At, ""
	case wal.DeliveryRetry:
		d.lastError, d.nextAt = r.Failure, r.NextAt
		w.timers.push(timer{at: d.nextAt, kind: timerDelivery, del: d})
		return nil
	case wal.DeliveryFailed, wal.DeliveryCancelled:
		d.state, d.lastError = r.State, r.Failure
	default:
		return fmt.Errorf("delivery %s: unknown state %d", d.id, r.State)
	}
	d.notice = nil
	d.nextAt = 0
	w.pending.Add(-1)
	return nil
}

// PendingDeliveries returns how many notification deliveries wait in the
// outboxes of all workspaces (not yet delivered, failed or cancelled).
func (e *Engine) PendingDeliveries() int64 {
	var n int64
	e.actors.Range(func(_, v any) bool {
		n += v.(*actor).ws.pending.Load()
		return true
	})
	return n
}

// DeliveryDone records the outcome of one attempt the deliverer made:
// failure is "" when the channel took the notice, else why it did not. An
// outcome for an attempt that is no longer in flight (it timed out, or the
// delivery was cancelled) changes nothing. It returns an error only for an
// unknown workspace.
func (e *Engine) DeliveryDone(wsID, deliveryID ID, attempt int, failure string) error {
	a := e.actor(wsID)
	if a == nil {
		return notFound("workspace")
	}
	if len(failure) > 500 {
		failure = failure[:500]
	}
	a.send(func(w *workspace) {
		d := w.deliveryIx[deliveryID]
		if d == nil || d.state != deliveryPending || !d.inFlight || attempt != d.attempts+1 {
			return
		}
		a.commit(w.decideAttempt(d, attempt, failure, e.nowMs()), nil)
	})
	return nil
}

// nextEscalation returns the alert's next escalation instant after the ones
// already looked at, or 0 when no rule has one.
func (w *workspace) nextEscalation(a *alert) int64 {
	var next int64
	for _, r := range w.escalations {
		t := a.createdAt + r.afterMinutes*msPerMinute
		if t <= a.escChecked || r.createdAt > t {
			continue
		}
		if next == 0 || t < next {
			next = t
		}
	}
	return next
}

// decideEscalation looks at the alert's escalation instants up to now and
// returns the record of which rules found it still open (none while its
// job or client is paused), or nil when no instant has come.
func (w *workspace) decideEscalation(a *alert, now int64) *wal.Escalated {
	if w.alerts[a.id] != a || a.status == alertResolved {
		return nil
	}
	rec := &wal.Escalated{AlertID: a.id, Through: now, At: now}
	any := false
	for _, r := range w.escalations {
		t := a.createdAt + r.afterMinutes*msPerMinute
		if t <= a.escChecked || t > now || r.createdAt > t {
			continue
		}
		any = true
		if alertStatus(a, t) == alertOpen && a.job.monitored(now) && w.active(now) {
			rec.Rules = append(rec.Rules, r.id)
		}
	}
	if !any {
		return nil
	}
	return rec
}

func (w *workspace) applyEscalated(r *wal.Escalated) error {
	a := w.alerts[r.AlertID]
	if a == nil {
		return fmt.Errorf("escalation of unknown alert %s", ID(r.AlertID))
	}
	a.escChecked = r.Through
	if len(r.Rules) > 0 {
		w.emit(a, EventEscalated, r.At, r.Rules)
	}
	if at := w.nextEscalation(a); at > 0 {
		w.timers.push(timer{at: at, kind: timerEscalation, al: a})
	}
	return nil
}

func (w *workspace) channel(id ID) *channel {
	for _, c := range w.channels {
		if c.id == id {
			return c
		}
	}
	return nil
}

func (w *workspace) escalation(id ID) *escalation {
	for _, r := range w.escalations {
		if r.id == id {
			return r
		}
	}
	return nil
}

func (w *workspace) applyChannelCreated(r *wal.ChannelCreated) {
	c := &channel{id: r.ID, typ: r.ChannelType, name: r.Name, url: r.URL, to: r.To, secret: r.Secret, minSeverity: r.MinSeverity, createdAt: r.CreatedAt}
	w.channels = append(w.channels, c)
	w.ids.observe(r.ID)
	w.addActivity(activity{id: r.ActivityID, at: r.CreatedAt, typ: "channel.created", actor: actorOr(r.Actor), subjectID: r.ID, subjectName: r.Name})
}

// applyChannelDeleted drops the channel, the escalation rules that name it
// and its pending deliveries (cancelled).
func (w *workspace) applyChannelDeleted(r *wal.ChannelDeleted) error {
	c := w.channel(r.ID)
	if c == nil {
		return fmt.Errorf("delete unknown channel %s", ID(r.ID))
	}
	w.channels = removeItem(w.channels, c)
	kept := w.escalations[:0]
	for _, e := range w.escalations {
		if e.channelID != c.id {
			kept = append(kept, e)
		}
	}
	clear(w.escalations[len(kept):])
	w.escalations = kept
	for _, d := range w.deliveries {
		if d.channelID == c.id && d.state == deliveryPending {
			d.state, d.lastError, d.notice, d.nextAt, d.inFlight = deliveryCancelled, "channel deleted", nil, 0, false
			w.pending.Add(-1)
		}
	}
	w.addActivity(activity{id: r.ActivityID, at: r.At, typ: "channel.deleted", actor: actorOr(r.Actor), subjectID: c.id, subjectName: c.name})
	return nil
}

func (w *workspace) applyEscalationCreated(r *wal.EscalationCreated) error {
	c := w.channel(r.ChannelID)
	if c == nil {
		return fmt.Errorf("escalation to unknown channel %s", ID(r.ChannelID))
	}
	e := &escalation{id: r.ID, channelID: r.ChannelID, afterMinutes: r.AfterMinutes, createdAt: r.CreatedAt}
	w.escalations = append(w.escalations, e)
	sortEscalations(w.escalations)
	w.ids.observe(r.ID)
	for _, a := range w.unresolved {
		if t := a.createdAt + e.afterMinutes*msPerMinute; t > a.escChecked && t >= e.createdAt {
			w.timers.push(timer{at: t, kind: timerEscalation, al: a})
		}
	}
	w.addActivity(activity{id: r.ActivityID, at: r.CreatedAt, typ: "escalation.created", actor: actorOr(r.Actor), subjectID: r.ID, subjectName: c.name})
	return nil
}

func (w *workspace) applyEscalationDeleted(r *wal.EscalationDeleted) error {
	e := w.escalation(r.ID)
	if e == nil {
		return fmt.Errorf("delete unknown escalation %s", ID(r.ID))
	}
	w.escalations = removeItem(w.escalations, e)
	name := ""
	if c := w.channel(e.channelID); c != nil {
		name = c.name
	}
	w.addActivity(activity{id: r.ActivityID, at: r.At, typ: "escalation.deleted", actor: actorOr(r.Actor), subjectID: e.id, subjectName: name})
	return nil
}

func sortEscalations(list []*escalation) {
	sort.Slice(list, func(i, j int) bool {
		if list[i].afterMinutes != list[j].afterMinutes {
			return list[i].afterMinutes < list[j].afterMinutes
		}
		return string(list[i].id[:]) < string(list[j].id[:])
	})
}

// pruneDeliveries drops finished deliveries made before cut.
func (w *workspace) pruneDeliveries(cut int64) {
	kept := w.deliveries[:0]
	for _, d := range w.deliveries {
		if d.state != deliveryPending && d.createdAt < cut {
			delete(w.deliveryIx, d.id)
			continue
		}
		kept = append(kept, d)
	}
	clear(w.deliveries[len(kept):])
	w.deliveries = kept
}
