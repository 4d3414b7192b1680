package state

import (
	"fmt"

	"backupmon/codec"
)

// Records of alerts: a person's action, a missed due time, an escalation.

// Record type numbers of this file.
const (
	TypeAlertChanged byte = 12
	TypeMissed       byte = 15
	TypeEscalated    byte = 16
)

// Alert actions for AlertChanged.Action.
const (
	AlertAcknowledge uint8 = 1
	AlertSnooze      uint8 = 2
	AlertResolve     uint8 = 3
)

// AlertChanged records a person's (or the admin API's) action on an alert.
type AlertChanged struct {
	Header
	AlertID, ActivityID ID
	Action              uint8
	Until               int64
	At                  int64
	Actor, Note         string
}

func (r *AlertChanged) fields(f *codec.Fields) {
	f.Walk(r.AlertID[:], r.ActivityID[:], &r.Action, &r.Until, &r.At, &r.Actor, &r.Note)
}

func (r *AlertChanged) apply(w *Workspace) error {
	a := w.Alerts[r.AlertID]
	if a == nil {
		return fmt.Errorf("change unknown alert %s", r.AlertID)
	}
	settleAlert(a, r.At)
	var typ string
	switch r.Action {
	case AlertAcknowledge:
		a.Status, a.AcknowledgedAt, a.SnoozedUntil = AlertAcknowledged, r.At, 0
		typ = "alert.acknowledged"
	case AlertSnooze:
		a.Status, a.SnoozedUntil = AlertSnoozed, r.Until
		typ = "alert.snoozed"
	case AlertResolve:
		w.resolveAlert(a, r.At)
		typ = "alert.resolved"
	default:
		return fmt.Errorf("alert %s: unknown action %d", r.AlertID, r.Action)
	}
	w.emitFollowers(a, typ, r.At, actionNote(r))
	w.addActivity(Activity{ID: r.ActivityID, At: r.At, Type: typ, Actor: r.Actor, AlertID: a.ID, JobID: a.Job.ID, SubjectName: a.Job.Name, Note: r.Note})
	return nil
}

// Missed records that a job passed its due time plus grace without a
// report: the missing alert it opened (or the unresolved alert it raised).
// Due is the due time that passed; At is that due time plus grace, when the
// job turned missing.
type Missed struct {
	Header
	JobID, AlertID ID
	Due, At        int64
	Summary        string
}

func (r *Missed) fields(f *codec.Fields) { f.Walk(r.JobID[:], r.AlertID[:], &r.Due, &r.At, &r.Summary) }

// apply opens the job's missing alert, or raises its unresolved one.
func (r *Missed) apply(w *Workspace) error {
	j := w.Jobs[r.JobID]
	if j == nil {
		return fmt.Errorf("missing report of unknown job %s", r.JobID)
	}
	j.MissedDue = r.Due
	j.jsonUntil = 0
	w.JobIdx.Touch(j)
	n := len(w.events)
	w.raiseAlert(j, r.AlertID, alertMissing, r.Summary, nil, r.At)
	if len(w.events) > n {
		// The alert is dated when the grace ended; the job is missing from
		// the next millisecond, which is what its notice shows.
		w.events[n].view = r.At + 1
	}
	return nil
}

// Escalated records that an alert's escalation rules were looked at up to
// Through (an instant: its creation plus a rule's minutes), and which rules
// found it still open and so notify their channel.
type Escalated struct {
	Header
	AlertID ID
	Through int64
	Rules   []ID
	At      int64
}

func (r *Escalated) fields(f *codec.Fields) {
	f.Fixed(r.AlertID[:])
	f.Varint(&r.Through)
	codec.Slice(f, &r.Rules, len(ID{}), func(f *codec.Fields, id *ID) { f.Fixed(id[:]) })
	f.Varint(&r.At)
}

func (r *Escalated) apply(w *Workspace) error {
	a := w.Alerts[r.AlertID]
	if a == nil {
		return fmt.Errorf("escalation of unknown alert %s", r.AlertID)
	}
	a.EscChecked = r.Through
	if len(r.Rules) > 0 {
		w.emit(a, EventEscalated, r.At, r.Rules)
	}
	if at := w.NextEscalation(a); at > 0 {
		w.hooks.Schedule(at, TimerEscalation, a, nil)
	}
	return nil
}
