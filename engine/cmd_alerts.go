package engine

import (
	"backupmon/state"
	"errors"
	"sync"
	"time"
)

// Commands on alerts and pauses: a person's acknowledge, snooze and resolve
// (admin API, dashboard, assistant), and pausing or resuming a job.

// AlertAction is what a person does to an alert.
type AlertAction uint8

// Alert actions.
const (
	Acknowledge AlertAction = AlertAction(state.AlertAcknowledge)
	Snooze      AlertAction = AlertAction(state.AlertSnooze)
	Resolve     AlertAction = AlertAction(state.AlertResolve)
)

// ChangeAlert acknowledges, snoozes (until a future time) or resolves an
// alert, recording actor and note in the activity log. Acknowledging an
// acknowledged alert changes nothing; any action on a resolved alert is a
// KindConflict error.
func (e *Engine) ChangeAlert(wsID, alertID string, action AlertAction, until time.Time, actor, note string) (AlertView, error) {
	a, err := e.workspaceActor(wsID)
	if err != nil {
		return AlertView{}, err
	}
	if err := checkNote(note); err != nil {
		return AlertView{}, err
	}
	return change(a, func(w *workspace, now int64) (decision[AlertView], error) {
		aid, ok := state.ParseID(alertID)
		al := w.Alerts[aid]
		if !ok || al == nil {
			return decision[AlertView]{}, notFound("alert")
		}
		st := state.AlertStatus(al, now)
		if st == state.AlertResolved {
			return decision[AlertView]{}, conflict("alert is already resolved")
		}
		answer := func(w *workspace) AlertView { return alertView(al, now) }
		rec := &state.AlertChanged{AlertID: aid, Action: uint8(action), At: now, Actor: actor, Note: note}
		switch action {
		case Acknowledge:
			if st == state.AlertAcknowledged {
				return decision[AlertView]{answer: answer}, nil
			}
		case Snooze:
			if until.IsZero() {
				return decision[AlertView]{}, invalid("until", "until is required")
			}
			rec.Until = until.UnixMilli()
			if rec.Until <= now {
				return decision[AlertView]{}, invalid("until", "until must be in the future")
			}
		case Resolve:
		default:
			return decision[AlertView]{}, invalid("action", "unknown action")
		}
		rec.ActivityID = w.IDs.Next(now)
		return decision[AlertView]{rec: rec, answer: answer}, nil
	})
}

// Triage: the commands people use on alerts and jobs, whoever asks (the
// dashboard, the assistant server). Each is one path to the state change,
// with the actor and note the activity log shows.

// Snooze presets (decisions.md 11, issue 6).
const (
	PresetHour     = "1h"       // one hour from now
	PresetFourHour = "4h"       // four hours from now
	PresetTomorrow = "tomorrow" // tomorrow 08:00 in the workspace's zone
	PresetNextRun  = "next"     // the job's next expected run
)

// SnoozeUntil returns the end of snooze preset p for alert a at now in
// loc, or a message saying why there is none.
func SnoozeUntil(p string, a BoardAlert, now time.Time, loc *time.Location) (time.Time, string) {
	switch p {
	case PresetHour:
		return now.Add(time.Hour), ""
	case PresetFourHour:
		return now.Add(4 * time.Hour), ""
	case PresetTomorrow:
		y, m, d := now.In(loc).Date()
		return time.Date(y, m, d+1, 8, 0, 0, 0, loc), ""
	case PresetNextRun:
		if a.NextRunAt == 0 {
			return time.Time{}, "its job is paused: it has no next expected run"
		}
		return time.UnixMilli(a.NextRunAt), ""
	}
	return time.Time{}, "choose how long to snooze"
}

// MaxTriage is how many alerts one triage command may name.
const MaxTriage = 1000

// Triage is one change asked for several alerts.
type Triage struct {
	Action AlertAction
	Preset string    // Snooze: a preset, or
	Until  time.Time // Snooze: an explicit end (used when Preset is "")
	Actor  string
	Note   string
}

// TriageOutcome is what became of one alert named in a triage command.
type TriageOutcome struct {
	AlertID string
	Found   bool       // the alert exists in the workspace
	Alert   BoardAlert // the alert after the command (as found, when not changed)
	Problem string     // why it was not changed; "" when it was
	Changed bool
}

// TriageAlerts applies t to each alert of ids (duplicates counted once) and
// returns what became of each, in the order given. Alerts of another
// workspace are not found. The changes go to the actor at once, so their log
// records share group commits. It fails only for an unknown workspace or a
// request the command refuses as a whole (KindInvalid: no alerts, too many,
// a note too long).
func (e *Engine) TriageAlerts(wsID string, ids []string, t Triage) ([]TriageOutcome, error) {
	seen := make(map[string]bool, len(ids))
	uniq := ids[:0:0]
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			uniq = append(uniq, id)
		}
	}
	switch {
	case len(uniq) == 0:
		return nil, invalid("alertIds", "name at least one alert")
	case len(uniq) > MaxTriage:
		return nil, invalid("alertIds", "name at most %d alerts at once", MaxTriage)
	}
	if err := checkNote(t.Note); err != nil {
		return nil, err
	}
	ws, err := e.boardWorkspaceOf(wsID)
	if err != nil {
		return nil, err
	}
	found, err := e.BoardAlertsByID(wsID, uniq)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]BoardAlert, len(found))
	for _, a := range found {
		byID[a.ID] = a
	}
	now := e.Now()
	out := make([]TriageOutcome, len(uniq))
	var wg sync.WaitGroup
	for i, id := range uniq {
		o := &out[i]
		o.AlertID = id
		a, ok := byID[id]
		if !ok {
			o.Problem = "alert not found"
			continue
		}
		o.Found, o.Alert = true, a
		if t.Action == Acknowledge && a.Status == "acknowledged" {
			o.Problem = "already acknowledged"
			continue
		}
		until := t.Until
		if t.Action == Snooze && t.Preset != "" {
			var msg string
			if until, msg = SnoozeUntil(t.Preset, a, now, ws.Loc); msg != "" {
				o.Problem = msg
				continue
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := e.ChangeAlert(wsID, id, t.Action, until, t.Actor, t.Note); err != nil {
				o.Problem = ErrorText(err)
				return
			}
			o.Changed = true
		}()
	}
	wg.Wait()
	var changed []string
	for _, o := range out {
		if o.Changed {
			changed = append(changed, o.AlertID)
		}
	}
	if len(changed) > 0 {
		after, err := e.BoardAlertsByID(wsID, changed)
		if err != nil {
			return nil, err
		}
		for _, a := range after {
			byID[a.ID] = a
		}
		for i := range out {
			if out[i].Changed {
				out[i].Alert = byID[out[i].AlertID]
			}
		}
	}
	return out, nil
}

// ErrorText returns what a person is told of a failed command: the
// message of a refused one, a short line for anything else.
func ErrorText(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "the change was not recorded; try again"
}

// PauseJob stops monitoring a job until the given time (zero: until
// resumed), recording actor and note.
func (e *Engine) PauseJob(wsID, jobID string, until time.Time, actor, note string) (JobView, error) {
	in := JobInput{Paused: Some(true), PausedUntil: Opt[time.Time]{Set: true, Null: true}, Actor: actor, Note: note}
	if !until.IsZero() {
		in.PausedUntil = Some(until)
	}
	return e.UpdateJob(wsID, jobID, in)
}

// ResumeJob monitors a paused job again, recording actor and note.
func (e *Engine) ResumeJob(wsID, jobID, actor, note string) (JobView, error) {
	return e.UpdateJob(wsID, jobID, JobInput{Paused: Some(false), Actor: actor, Note: note})
}
