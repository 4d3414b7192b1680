package state

import (
	"encoding/binary"
	"sort"
)

// channel is a workspace's notification channel (decisions.md 7).
type Channel struct {
	ID          ID
	Type        string
	Name        string
	URL         string
	To          string
	Secret      string
	MinSeverity uint8
	CreatedAt   int64

	Settings, Secrets []Setting   // the types of psa.go; secrets are never shown
	Maps              []ClientMap // PSA channels: clients' companies
}

// escalation is a rule: an alert still open afterMinutes after it opened
// notifies the channel. It looks forward only: it applies to the instants
// (an alert's creation plus its minutes) that come after the rule was made.
type Escalation struct {
	ID           ID
	ChannelID    ID
	AfterMinutes int64
	CreatedAt    int64
}

// DeliveryPending is the state of a delivery not yet finished; the others
// are those of DeliveryAttempted.State.
const DeliveryPending uint8 = 0

// delivery is one notification on its way to one channel: the outbox entry.
type Delivery struct {
	ID            ID
	ChannelID     ID
	AlertID       ID
	JobID         ID
	Event         string
	CreatedAt     int64
	State         uint8
	Attempts      int
	NextAt        int64 // pending: when the next attempt is due
	FirstOutcome  int64 // when the first attempt's outcome was recorded; 0: none yet
	LastAttemptAt int64
	DeliveredAt   int64
	LastError     string
	Notice        *Notice // what it says; dropped once it is finished

	InFlight      bool  // handed to the deliverer, outcome not in yet (not saved)
	InFlightUntil int64 // when an attempt without an outcome counts as failed
}

const (
	// deliveryFirstRetryMs is the wait after a first failed attempt; it
	// doubles after each failure up to deliveryMaxRetryMs.
	DeliveryFirstRetryMs = 30 * MsPerSecond
	DeliveryMaxRetryMs   = MsPerHour
	// deliveryGiveUpMs: a delivery not made within this of its first
	// attempt fails for good (not of its createdAt, the alert's date, which
	// may lie far back: a due time missed during a long downtime).
	DeliveryGiveUpMs = MsPerDay
	// deliveryAttemptMs: an attempt whose outcome has not come back within
	// this counts as failed (the deliverer lost it, or its queue was full).
	DeliveryAttemptMs = 2 * MsPerMinute
	// deliveryKeepMs: finished deliveries are kept this long.
	deliveryKeepMs = 30 * MsPerDay
)

// alertEvent is an event of the record being applied, to be turned into
// deliveries once the record's changes are all made.
type alertEvent struct {
	al    *Alert
	event string
	at    int64
	view  int64 // the time the notice shows the alert and job at
	rules []ID  // escalated: the rules whose channels it goes to
	// A job's notice without an alert (al nil: a size drop, sizedrop.go):
	// the job and what the notice says, at warning severity.
	job     *Job
	summary string
	// followers: only to the channels that follow the alert's life
	// (FollowsAlert), with note (who did it and what they wrote)
	followers bool
	note      string
}

// emit queues an alert event of the record being applied.
func (w *Workspace) emit(a *Alert, event string, at int64, rules []ID) {
	w.events = append(w.events, alertEvent{al: a, event: event, at: at, view: at, rules: rules})
}

// emitFollowers queues an event that goes only to the channels that
// follow the alert's life, with a person's note.
func (w *Workspace) emitFollowers(a *Alert, event string, at int64, note string) {
	w.events = append(w.events, alertEvent{al: a, event: event, at: at, view: at, followers: true, note: note})
}

// flushEvents turns the events of the record just applied into deliveries,
// one per channel each goes to. Their ids derive from the record's sequence
// number, so replay makes the same ones. Opened, raised and resolved go to
// every channel whose minSeverity the alert reaches; escalated to the
// channels its rules name.
func (w *Workspace) flushEvents(seq uint64) {
	n := 0
	for _, ev := range w.events {
		var targets []*Channel
		if ev.event == EventEscalated {
			for _, rid := range ev.rules {
				if r := w.Escalation(ID(rid)); r != nil {
					if c := w.Channel(r.ChannelID); c != nil && !containsChannel(targets, c) {
						targets = append(targets, c)
					}
				}
			}
		} else {
			sev := SeverityWarning
			if ev.al != nil {
				sev = ev.al.Severity
			}
			for _, c := range w.Channels {
				if sev >= c.MinSeverity && (!ev.followers || FollowsAlert(c.Type)) {
					targets = append(targets, c)
				}
			}
		}
		if len(targets) == 0 {
			continue
		}
		notice, alertID := w.eventNotice(&ev)
		j := ev.job
		for _, c := range targets {
			d := &Delivery{
				ID: derivedID(ev.at, seq, n), ChannelID: c.ID, AlertID: alertID, JobID: j.ID,
				Event: ev.event, CreatedAt: ev.at, State: DeliveryPending, NextAt: ev.at, Notice: notice,
			}
			n++
			w.Deliveries = append(w.Deliveries, d)
			w.DeliveryIx[d.ID] = d
			w.Fresh = append(w.Fresh, d)
			w.Pending.Add(1)
		}
	}
	clear(w.events)
	w.events = w.events[:0]
}

// eventNotice returns what an event's deliveries say, and the id of its
// alert (zero for a job's notice without one).
func (w *Workspace) eventNotice(ev *alertEvent) (*Notice, ID) {
	if ev.al != nil {
		ev.job, ev.summary = ev.al.Job, ev.al.Summary
	}
	j := ev.job
	n := &Notice{
		Workspace:     w.ID,
		Event:         ev.event,
		Job:           w.AppendJob(make([]byte, 0, len(j.json)+64), j, ev.view),
		WorkspaceName: w.Name,
		ClientName:    j.Client.Name,
		JobName:       j.Name,
		AlertType:     SizeDropType,
		Severity:      SeverityName(SeverityWarning),
		Summary:       ev.summary,
	}
	n.SizeBytes, n.DurationSeconds = lastRunFacts(j)
	if ev.al == nil {
		return n, ID{}
	}
	n.Alert = AppendAlert(nil, ev.al, ev.view)
	n.AlertType, n.Severity = AlertTypeName(ev.al.Type), SeverityName(ev.al.Severity)
	n.AlertID, n.Note = ev.al.ID, ev.note
	return n, ev.al.ID
}

func containsChannel(list []*Channel, c *Channel) bool {
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

// nextEscalation returns the alert's next escalation instant after the ones
// already looked at, or 0 when no rule has one.
func (w *Workspace) NextEscalation(a *Alert) int64 {
	var next int64
	for _, r := range w.Escalations {
		t := a.CreatedAt + r.AfterMinutes*MsPerMinute
		if t <= a.EscChecked || r.CreatedAt > t {
			continue
		}
		if next == 0 || t < next {
			next = t
		}
	}
	return next
}

func (w *Workspace) Channel(id ID) *Channel {
	for _, c := range w.Channels {
		if c.ID == id {
			return c
		}
	}
	return nil
}

func (w *Workspace) Escalation(id ID) *Escalation {
	for _, r := range w.Escalations {
		if r.ID == id {
			return r
		}
	}
	return nil
}

func sortEscalations(list []*Escalation) {
	sort.Slice(list, func(i, j int) bool {
		if list[i].AfterMinutes != list[j].AfterMinutes {
			return list[i].AfterMinutes < list[j].AfterMinutes
		}
		return string(list[i].ID[:]) < string(list[j].ID[:])
	})
}

// pruneDeliveries drops finished deliveries made before cut.
func (w *Workspace) pruneDeliveries(cut int64) {
	kept := w.Deliveries[:0]
	for _, d := range w.Deliveries {
		if d.State != DeliveryPending && d.CreatedAt < cut {
			delete(w.DeliveryIx, d.ID)
			continue
		}
		kept = append(kept, d)
	}
	clear(w.Deliveries[len(kept):])
	w.Deliveries = kept
}

// cancelDelivery ends the pending delivery d unsent, keeping why as its
// last error (its job or channel is gone).
func (w *Workspace) cancelDelivery(d *Delivery, why string) {
	d.State, d.LastError, d.Notice, d.NextAt, d.InFlight = DeliveryCancelled, why, nil, 0, false
	w.Pending.Add(-1)
}
