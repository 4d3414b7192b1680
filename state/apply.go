package state

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// newWorkspace builds the state a WorkspaceCreated record describes.
func NewWorkspace(r *WorkspaceCreated) (*Workspace, error) {
	Bind(r)
	loc, err := time.LoadLocation(r.TimeZone)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: time zone %q: %w", ID(r.Workspace), r.TimeZone, err)
	}
	w := &Workspace{
		ID:          r.Workspace,
		Name:        r.Name,
		TimeZone:    r.TimeZone,
		Loc:         loc,
		Plan:        r.Plan,
		Status:      r.Status,
		TrialEndsAt: r.TrialEndsAt,
		createdAt:   r.CreatedAt,
		Seq:         r.Seq,
		IDs:         NewIDGen(),
		Clients:     map[ID]*Client{},
		Jobs:        map[ID]*Job{},
		devices:     map[ID]*device{},
		Keys:        map[ID]*Key{},
		Alerts:      map[ID]*Alert{},
		sourceIx:    map[string]int{},
		DeliveryIx:  map[ID]*Delivery{},
		Users:       map[ID]*User{},
		Sessions:    map[ID]*Session{},
	}
	w.IDs.Observe(w.ID)
	return w, nil
}

// apply changes the workspace as rec says. It is the one function that
// changes a workspace, used live (after the actor decided the record) and on
// replay, so recovery cannot drift from what was acknowledged. hooks receive
// changes that other parts of the engine index (keys).
func (w *Workspace) Apply(rec Record, hooks Hooks) error {
	Bind(rec)
	w.hooks = hooks
	defer func() { w.hooks = nil }()
	if err := rec.apply(w); err != nil {
		return fmt.Errorf("apply record %d (type %d) of workspace %s: %w", rec.Head().Seq, rec.Type(), w.ID, err)
	}
	if !registry[rec.Type()].keepsFigures {
		w.figVersion++
	}
	if len(w.events) > 0 {
		w.flushEvents(rec.Head().Seq)
	}
	w.Seq = rec.Head().Seq
	return nil
}

// Hooks is how Apply tells its caller what the caller keeps outside the
// workspace: the indexes across workspaces (keys, ingest tokens, users,
// sessions) and the instants of time-driven work (escalations, delivery
// attempts, a trial's end). Every method is called during Apply, on its
// goroutine.
type Hooks interface {
	KeyAdded(w *Workspace, k *Key)
	KeyRemoved(w *Workspace, k *Key)
	IngestAdded(w *Workspace, j *Job)
	IngestRemoved(token string)
	UserAdded(w *Workspace, u *User)
	UserRemoved(email string)
	SessionAdded(w *Workspace, s *Session)
	SessionRemoved(hash [32]byte)
	// Schedule asks for a look at the workspace at instant at: kind says
	// what for (an alert's escalation, a delivery's attempt, the trial's
	// end), with the alert or delivery it concerns.
	Schedule(at int64, kind uint8, a *Alert, d *Delivery)
}

// Timer kinds of Hooks.Schedule.
const (
	TimerEscalation uint8 = iota + 1
	TimerDelivery
	TimerTrial
	TimerAI // the model's queued questions (rec_ai.go)
)

// scheduleAlert asks for the instant of an unresolved alert's next
// escalation. A snooze's end needs none: the alert reads open from its end
// on (AlertStatus), escalations look at the status each instant had, and a
// later change settles the alert at its own time (SettleAlert).
func (w *Workspace) scheduleAlert(a *Alert) {
	if at := w.NextEscalation(a); at > 0 {
		w.hooks.Schedule(at, TimerEscalation, a, nil)
	}
}

// ScheduleTrial asks for the instant of a trial's end that is not noted
// yet.
func (w *Workspace) ScheduleTrial(hooks Hooks) {
	if w.Plan == "trial" && w.TrialEndsAt != 0 && w.TrialNoted != w.TrialEndsAt {
		hooks.Schedule(w.TrialEndsAt, TimerTrial, nil, nil)
	}
}

// added notes a new thing of the workspace: its id (so that ids made
// later sort after it) and the activity entry that says who added it.
func (w *Workspace) added(id ID, a Activity) {
	w.IDs.Observe(id)
	w.addActivity(a)
}

// actorOr returns the actor a record names, or "admin" (the admin API's
// changes name nobody).
func actorOr(actor string) string {
	if actor == "" {
		return "admin"
	}
	return actor
}

func offAtFor(status string, at int64) int64 {
	if status == "active" {
		return 0
	}
	return at
}

// useDevice returns the device id names, creating it, and sets its name,
// type and hostname (the latest job to name a device describes it).
func (w *Workspace) useDevice(id, clientID ID, name, typ, hostname string) *device {
	d := w.devices[id]
	if d == nil {
		d = &device{id: id, clientID: clientID}
		w.devices[id] = d
		w.IDs.Observe(id)
	}
	d.Name, d.Type, d.Hostname = name, typ, hostname
	d.jobs++
	return d
}

func (w *Workspace) releaseDevice(d *device) {
	d.jobs--
	if d.jobs <= 0 {
		delete(w.devices, d.id)
	}
}

// deviceFor returns the id of the client's device with this hostname
// (compared without case), or a zero id when there is none.
func (w *Workspace) DeviceFor(clientID ID, hostname string) ID {
	for _, d := range w.devices {
		if d.clientID == clientID && strings.EqualFold(d.Hostname, hostname) {
			return d.id
		}
	}
	return ID{}
}

// intern returns the index of a result source, adding it if new.
func (w *Workspace) intern(source string) uint16 {
	if i, ok := w.sourceIx[source]; ok {
		return uint16(i)
	}
	if len(w.sources) >= 0xffff {
		return 0xffff // the table is full: the source reads as unknown
	}
	w.sourceIx[source] = len(w.sources)
	w.sources = append(w.sources, source)
	return uint16(len(w.sources) - 1)
}

// reportSource returns the index of r's source: from the key r was sent
// with when its index is known there, else interned (and kept on the key).
func (w *Workspace) reportSource(r *Report) uint16 {
	k := r.key
	if k == nil || k.Source != r.Source {
		return w.intern(r.Source)
	}
	if i := k.sourceIx - 1; i >= 0 && i < len(w.sources) && w.sources[i] == r.Source {
		return uint16(i)
	}
	i := w.intern(r.Source)
	if i != 0xffff {
		k.sourceIx = int(i) + 1
	}
	return i
}

func (w *Workspace) Source(i uint16) string {
	if int(i) < len(w.sources) {
		return w.sources[i]
	}
	return ""
}

func severityOf(typ uint8) uint8 {
	if typ == AlertWarning {
		return SeverityWarning
	}
	return SeverityCritical
}

// insertResult adds res in (receivedAt, id) order and returns its place;
// results almost always arrive in order, so this is an append (appended
// true). Otherwise the results after it moved up one place.
func (j *Job) insertResult(res Result) (at int, appended bool) {
	n := len(j.Results)
	if n == 0 || !resultBefore(&res, &j.Results[n-1]) {
		j.Results = growByQuarter(j.Results, res, 8)
		return n, true
	}
	i := sort.Search(n, func(i int) bool { return resultBefore(&res, &j.Results[i]) })
	j.Results = growByQuarter(j.Results, Result{}, 8)
	copy(j.Results[i+1:], j.Results[i:])
	j.Results[i] = res
	return i, false
}

func resultBefore(a, b *Result) bool {
	if a.ReceivedAt != b.ReceivedAt {
		return a.ReceivedAt < b.ReceivedAt
	}
	return string(a.ID[:]) < string(b.ID[:])
}

// raiseAlert opens an alert on the job, or raises its unresolved one
// (decisions.md 4.6): new summary and type, the higher severity, and an
// acknowledged alert whose severity rises goes back to open.
// ai is the suggestion for summary (nil: none); it replaces the alert's.
func (w *Workspace) raiseAlert(j *Job, id ID, typ uint8, summary string, ai *aiNote, at int64) {
	sev := severityOf(typ)
	if a := j.Alert; a != nil {
		settleAlert(a, at)
		a.Summary, a.Type, a.AI = summary, typ, ai
		if sev > a.Severity {
			a.Severity = sev
			if a.Status == AlertAcknowledged {
				a.Status = AlertOpen
				a.AcknowledgedAt = 0
			}
		}
		if a.Status != AlertSnoozed { // a snoozed alert stays quiet
			w.emit(a, EventRaised, at, nil)
		}
		return
	}
	a := &Alert{ID: id, Job: j, Type: typ, Severity: sev, Status: AlertOpen, Summary: summary, AI: ai, CreatedAt: at, EscChecked: at}
	w.Alerts[id] = a
	w.AlertLog = insertOrdered(w.AlertLog, a, AlertBefore)
	w.Unresolved = insertOrdered(w.Unresolved, a, AlertBefore)
	j.Alerts = insertOrdered(j.Alerts, a, AlertBefore)
	j.Alert = a
	w.IDs.Observe(id)
	w.emit(a, EventOpened, at, nil)
	w.scheduleAlert(a)
}

func (w *Workspace) resolveAlert(a *Alert, at int64) {
	a.Status = AlertResolved
	a.SnoozedUntil = 0
	// An imported report dated before the alert opened resolves it when it
	// opened: never a negative recovery.
	a.ResolvedAt = max(at, a.CreatedAt)
	if a.Job.Alert == a {
		a.Job.Alert = nil
	}
	w.Unresolved = removeItem(w.Unresolved, a)
}

func (w *Workspace) addActivity(a Activity) {
	w.Activity = append(w.Activity, a)
	w.IDs.Observe(a.ID)
}

// NopHooks are Hooks that do nothing: for a workspace applied without an
// engine around it (tests, tools reading a data directory).
type NopHooks struct{}

// KeyAdded does nothing.
func (NopHooks) KeyAdded(*Workspace, *Key) {}

// KeyRemoved does nothing.
func (NopHooks) KeyRemoved(*Workspace, *Key) {}

// IngestAdded does nothing.
func (NopHooks) IngestAdded(*Workspace, *Job) {}

// IngestRemoved does nothing.
func (NopHooks) IngestRemoved(string) {}

// UserAdded does nothing.
func (NopHooks) UserAdded(*Workspace, *User) {}

// UserRemoved does nothing.
func (NopHooks) UserRemoved(string) {}

// SessionAdded does nothing.
func (NopHooks) SessionAdded(*Workspace, *Session) {}

// SessionRemoved does nothing.
func (NopHooks) SessionRemoved([32]byte) {}

// Schedule does nothing.
func (NopHooks) Schedule(int64, uint8, *Alert, *Delivery) {}
