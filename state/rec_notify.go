package state

import (
	"fmt"
	"slices"

	"backupmon/codec"
)

// Records of notifications: channels, escalation rules and the outbox's
// delivery attempts.

// Record type numbers of this file.
const (
	TypeDeliveryAttempted byte = 17
	TypeChannelCreated    byte = 18
	TypeChannelDeleted    byte = 19
	TypeEscalationCreated byte = 20
	TypeEscalationDeleted byte = 21
)

// Delivery states for DeliveryAttempted.State.
const (
	DeliveryDelivered uint8 = 1 // the channel took it
	DeliveryRetry     uint8 = 2 // failed; the next attempt is at NextAt
	DeliveryFailed    uint8 = 3 // failed for 24 hours: given up
	DeliveryCancelled uint8 = 4 // not sent: job or client paused, archived or gone
)

// DeliveryAttempted records the outcome of one attempt to deliver a
// notification (or that it was cancelled before an attempt).
type DeliveryAttempted struct {
	Header
	DeliveryID ID
	Attempt    int64
	State      uint8
	Failure    string
	At, NextAt int64
}

func (r *DeliveryAttempted) fields(f *codec.Fields) {
	f.Walk(r.DeliveryID[:], &r.Attempt, &r.State, &r.Failure, &r.At, &r.NextAt)
}

func (r *DeliveryAttempted) apply(w *Workspace) error {
	d := w.DeliveryIx[r.DeliveryID]
	if d == nil {
		return fmt.Errorf("attempt of unknown delivery %s", r.DeliveryID)
	}
	d.Attempts = int(r.Attempt)
	d.InFlight = false
	if r.State != DeliveryCancelled {
		d.LastAttemptAt = r.At
		if d.FirstOutcome == 0 {
			d.FirstOutcome = r.At
		}
	}
	switch r.State {
	case DeliveryDelivered:
		d.State, d.DeliveredAt, d.LastError = DeliveryDelivered, r.At, ""
	case DeliveryRetry:
		d.LastError, d.NextAt = r.Failure, r.NextAt
		w.hooks.Schedule(d.NextAt, TimerDelivery, nil, d)
		return nil
	case DeliveryFailed, DeliveryCancelled:
		d.State, d.LastError = r.State, r.Failure
	default:
		return fmt.Errorf("delivery %s: unknown state %d", d.ID, r.State)
	}
	d.Notice = nil
	d.NextAt = 0
	w.Pending.Add(-1)
	w.releaseNext(d, r.At)
	return nil
}

// ChannelCreated records a new notification channel.
type ChannelCreated struct {
	Header
	ID, ActivityID             ID
	ChannelType, Name, URL, To string
	Secret                     string
	MinSeverity                uint8 // 1 warning, 2 critical
	CreatedAt                  int64
	Actor                      string // who created it
}

func (r *ChannelCreated) fields(f *codec.Fields) {
	f.Walk(r.ID[:], r.ActivityID[:], &r.ChannelType, &r.Name, &r.URL, &r.To, &r.Secret, &r.MinSeverity, &r.CreatedAt, &r.Actor)
}

func (r *ChannelCreated) apply(w *Workspace) error {
	c := &Channel{ID: r.ID, Type: r.ChannelType, Name: r.Name, URL: r.URL, To: r.To, Secret: r.Secret, MinSeverity: r.MinSeverity, CreatedAt: r.CreatedAt}
	w.Channels = append(w.Channels, c)
	w.added(r.ID, Activity{ID: r.ActivityID, At: r.CreatedAt, Type: "channel.created", Actor: actorOr(r.Actor), SubjectID: r.ID, SubjectName: r.Name})
	return nil
}

// ChannelDeleted records that a channel, its escalation rules and its
// pending deliveries are gone.
type ChannelDeleted struct{ Removal }

// apply drops the channel, the escalation rules that name it and its
// pending deliveries (cancelled).
func (r *ChannelDeleted) apply(w *Workspace) error {
	return remove(w, &r.Removal, "delete unknown channel", w.Channel(r.ID), func(c *Channel) Activity {
		w.Channels = removeItem(w.Channels, c)
		w.Escalations = slices.DeleteFunc(w.Escalations, func(e *Escalation) bool { return e.ChannelID == c.ID })
		for _, d := range w.Deliveries {
			if d.ChannelID == c.ID && d.State == DeliveryPending {
				w.cancelDelivery(d, "channel deleted")
			}
		}
		return Activity{Type: "channel.deleted", SubjectID: c.ID, SubjectName: c.Name}
	})
}

// EscalationCreated records a new escalation rule: an alert still open
// AfterMinutes after it opened notifies ChannelID.
type EscalationCreated struct {
	Header
	ID, ActivityID, ChannelID ID
	AfterMinutes              int64
	CreatedAt                 int64
	Actor                     string // who created it
}

func (r *EscalationCreated) fields(f *codec.Fields) {
	f.Walk(r.ID[:], r.ActivityID[:], r.ChannelID[:], &r.AfterMinutes, &r.CreatedAt, &r.Actor)
}

func (r *EscalationCreated) apply(w *Workspace) error {
	c := w.Channel(r.ChannelID)
	if c == nil {
		return fmt.Errorf("escalation to unknown channel %s", r.ChannelID)
	}
	e := &Escalation{ID: r.ID, ChannelID: r.ChannelID, AfterMinutes: r.AfterMinutes, CreatedAt: r.CreatedAt}
	w.Escalations = append(w.Escalations, e)
	sortEscalations(w.Escalations)
	w.IDs.Observe(r.ID)
	for _, a := range w.Unresolved {
		if t := a.CreatedAt + e.AfterMinutes*MsPerMinute; t > a.EscChecked && t >= e.CreatedAt {
			w.hooks.Schedule(t, TimerEscalation, a, nil)
		}
	}
	w.addActivity(Activity{ID: r.ActivityID, At: r.CreatedAt, Type: "escalation.created", Actor: actorOr(r.Actor), SubjectID: r.ID, SubjectName: c.Name})
	return nil
}

// EscalationDeleted records that an escalation rule is gone.
type EscalationDeleted struct{ Removal }

func (r *EscalationDeleted) apply(w *Workspace) error {
	return remove(w, &r.Removal, "delete unknown escalation", w.Escalation(r.ID), func(e *Escalation) Activity {
		w.Escalations = removeItem(w.Escalations, e)
		a := Activity{Type: "escalation.deleted", SubjectID: e.ID}
		if c := w.Channel(e.ChannelID); c != nil {
			a.SubjectName = c.Name
		}
		return a
	})
}
