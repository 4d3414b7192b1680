package engine

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"backupmon/wal"
)

// newWorkspace builds the state a WorkspaceCreated record describes.
func newWorkspace(r *wal.WorkspaceCreated) (*workspace, error) {
	loc, err := time.LoadLocation(r.TimeZone)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: time zone %q: %w", ID(r.Workspace), r.TimeZone, err)
	}
	w := &workspace{
		id:          r.Workspace,
		name:        r.Name,
		timeZone:    r.TimeZone,
		loc:         loc,
		plan:        r.Plan,
		status:      r.Status,
		trialEndsAt: r.TrialEndsAt,
		createdAt:   r.CreatedAt,
		seq:         r.Seq,
		ids:         newIDGen(),
		clients:     map[ID]*client{},
		jobs:        map[ID]*job{},
		devices:     map[ID]*device{},
		keys:        map[ID]*apiKey{},
		alerts:      map[ID]*alert{},
		sourceIx:    map[string]int{},
		deliveryIx:  map[ID]*delivery{},
		users:       map[ID]*user{},
		sessions:    map[ID]*session{},
	}
	w.ids.observe(w.id)
	w.scheduleTrial()
	return w, nil
}

// apply changes the workspace as rec says. It is the one function that
// changes a workspace, used live (after the actor decided the record) and on
// replay, so recovery cannot drift from what was acknowledged. hooks receive
// changes that other parts of the engine index (keys).
func (w *workspace) apply(rec wal.Entry, hooks applyHooks) error {
	var err error
	switch r := rec.(type) {
	case *wal.WorkspaceUpdated:
		err = w.applyWorkspaceUpdated(r)
	case *wal.ClientCreated:
		c := &client{id: r.ID, name: r.Name, status: r.Status, createdAt: r.CreatedAt, offAt: offAtFor(r.Status, r.CreatedAt), jobs: map[ID]*job{}}
		if c.offAt != 0 {
			c.offSeq = r.Seq
		}
		w.clients[r.ID] = c
		w.indexClient(c)
		w.ids.observe(r.ID)
		w.addActivity(activity{id: r.ActivityID, at: r.CreatedAt, typ: "client.created", actor: "admin", subjectID: r.ID, subjectName: r.Name})
	case *wal.ClientUpdated:
		err = w.applyClientUpdated(r)
	case *wal.JobCreated:
		err = w.applyJobCreated(r, hooks)
	case *wal.JobUpdated:
		err = w.applyJobUpdated(r)
	case *wal.JobDeleted:
		err = w.applyJobDeleted(r, hooks)
	case *wal.KeyCreated:
		k := &apiKey{id: r.ID, name: r.Name, typ: r.KeyType, prefix: r.Prefix, source: "api:" + r.Prefix, hash: r.Hash, scopes: r.Scopes, readWrite: r.ReadWrite, createdAt: r.CreatedAt, expiresAt: r.ExpiresAt}
		w.keys[r.ID] = k
		w.ids.observe(r.ID)
		w.addActivity(activity{id: r.ActivityID, at: r.CreatedAt, typ: "key.created", actor: actorOr(r.Actor), keyID: r.ID, keyName: r.Name})
		hooks.keyAdded(w, k)
	case *wal.KeyRevoked:
		k := w.keys[r.ID]
		if k == nil {
			return fmt.Errorf("revoke unknown key %s", ID(r.ID))
		}
		delete(w.keys, r.ID)
		k.revoked = true
		w.addActivity(activity{id: r.ActivityID, at: r.At, typ: "key.revoked", actor: actorOr(r.Actor), keyID: r.ID, keyName: k.name})
		hooks.keyRemoved(w, k)
	case *wal.KeyFirstUsed:
		k := w.keys[r.ID]
		if k == nil {
			return fmt.Errorf("first use of unknown key %s", ID(r.ID))
		}
		k.firstUsed = true
		w.addActivity(activity{id: r.ActivityID, at: r.At, typ: "key.first_used", actor: "key:" + k.prefix, keyID: r.ID, keyName: k.name})
	case *wal.Report:
		err = w.applyReport(r)
	case *wal.AlertChanged:
		err = w.applyAlertChanged(r)
	case *wal.RESTUsage:
		w.restMonth, w.restMonthCount = r.Month, r.Count
	case *wal.Missed:
		err = w.applyMissed(r)
	case *wal.Escalated:
		err = w.applyEscalated(r)
	case *wal.DeliveryAttempted:
		err = w.applyDeliveryAttempted(r)
	case *wal.ChannelCreated:
		w.applyChannelCreated(r)
	case *wal.ChannelDeleted:
		err = w.applyChannelDeleted(r)
	case *wal.EscalationCreated:
		err = w.applyEscalationCreated(r)
	case *wal.EscalationDeleted:
		err = w.applyEscalationDeleted(r)
	case *wal.IngestRotated:
		err = w.applyIngestRotated(r, hooks)
	case *wal.MailUnparsed:
		w.applyMailUnparsed(r)
	case *wal.UnparsedGone:
		w.removeUnparsed(r.ID)
	case *wal.TrialEnded:
		w.trialNoted = r.At
		w.addActivity(activity{id: r.ActivityID, at: r.At, typ: "workspace.trial_ended", actor: "system"})
	default:
		var ok bool
		if ok, err = w.applyPeople(rec, hooks); !ok {
			return fmt.Errorf("workspace %s: unexpected record type %d", w.id, rec.Type())
		}
	}
	if err != nil {
		return fmt.Errorf("apply record %d of workspace %s: %w", rec.Head().Seq, w.id, err)
	}
	w.forgetEncodings(rec)
	switch rec.(type) {
	case *wal.KeyCreated, *wal.KeyRevoked, *wal.KeyFirstUsed, *wal.RESTUsage,
		*wal.DeliveryAttempted, *wal.ChannelCreated, *wal.ChannelDeleted,
		*wal.EscalationCreated, *wal.EscalationDeleted, *wal.TrialEnded,
		*wal.IngestRotated, *wal.MailUnparsed, *wal.UnparsedGone,
		*wal.UserCreated, *wal.UserUpdated, *wal.UserDeleted,
		*wal.SessionStarted, *wal.SessionSeen, *wal.SessionEnded:
	default:
		w.figVersion++
	}
	if len(w.events) > 0 {
		w.flushEvents(rec.Head().Seq)
	}
	w.seq = rec.Head().Seq
	return nil
}

// forgetEncodings drops the kept JSON of the jobs a record may have changed:
// the job itself, or every job of a client (names, pauses and shared devices
// show in its jobs), or every job (the time zone moves due times).
func (w *workspace) forgetEncodings(rec wal.Entry) {
	var c *client
	switch r := rec.(type) {
	case *wal.Report:
		if j := w.jobs[r.JobID]; j != nil {
			j.jsonUntil = 0
		}
		return
	case *wal.WorkspaceUpdated:
		for _, j := range w.jobs {
			j.jsonUntil = 0
		}
		return
	case *wal.ClientUpdated:
		c = w.clients[r.ID]
	case *wal.Missed:
		if j := w.jobs[r.JobID]; j != nil {
			j.jsonUntil = 0
		}
		return
	case *wal.JobCreated:
		c = w.clients[r.ClientID]
	case *wal.JobUpdated:
		if j := w.jobs[r.ID]; j != nil {
			c = j.client
		}
	}
	if c != nil {
		for _, j := range c.jobs {
			j.jsonUntil = 0
		}
	}
}

// applyHooks lets apply tell the engine about keys and ingest tokens, which
// the engine indexes across workspaces.
type applyHooks interface {
	keyAdded(w *workspace, k *apiKey)
	keyRemoved(w *workspace, k *apiKey)
	ingestAdded(w *workspace, j *job)
	ingestRemoved(token string)
	userAdded(w *workspace, u *user)
	userRemoved(email string)
	sessionAdded(w *workspace, s *session)
	sessionRemoved(hash [32]byte)
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

func (w *workspace) applyWorkspaceUpdated(r *wal.WorkspaceUpdated) error {
	if r.Fields&wal.WorkspaceTimeZone != 0 {
		loc, err := time.LoadLocation(r.TimeZone)
		if err != nil {
			return fmt.Errorf("time zone %q: %w", r.TimeZone, err)
		}
		w.timeZone, w.loc = r.TimeZone, loc
		w.jobIdx.touchAll(w.jobList) // due times move
	}
	if r.Fields&wal.WorkspaceName != 0 {
		w.name = r.Name
	}
	if r.Fields&wal.WorkspacePlan != 0 {
		w.plan = r.Plan
	}
	if r.Fields&wal.WorkspaceStatus != 0 {
		w.status = r.Status
	}
	if r.Fields&wal.WorkspaceTrialEndsAt != 0 {
		w.trialEndsAt = r.TrialEndsAt
	}
	if r.Fields&(wal.WorkspacePlan|wal.WorkspaceStatus|wal.WorkspaceTrialEndsAt) != 0 {
		// Active again: jobs that turned missing meanwhile get their alerts.
		w.jobIdx.touchAll(w.jobList)
		w.scheduleTrial()
	}
	return nil
}

func (w *workspace) applyClientUpdated(r *wal.ClientUpdated) error {
	c := w.clients[r.ID]
	if c == nil {
		return fmt.Errorf("update unknown client %s", ID(r.ID))
	}
	if r.Fields&wal.ClientName != 0 {
		w.clientList = removeItem(w.clientList, c)
		c.name = r.Name
		w.indexClient(c)
	}
	typ := "client.updated"
	if r.Fields&wal.ClientStatus != 0 && r.Status != c.status {
		switch r.Status {
		case "active":
			typ = "client.resumed"
		case "paused":
			typ = "client.paused"
		case "archived":
			typ = "client.archived"
		}
		switch {
		case c.status == "active":
			// Monitoring goes off: the jobs show paused until a report.
			c.offAt, c.offSeq = r.At, r.Seq
		case r.Status == "active":
			// Monitoring resumes: due times count from now.
			c.offAt, c.offSeq = 0, 0
			for _, j := range c.jobs {
				if r.At > j.dueBase {
					j.dueBase = r.At
				}
			}
		}
		c.status = r.Status
		w.jobIdx.touchAll(c.jobList)
	}
	w.addActivity(activity{id: r.ActivityID, at: r.At, typ: typ, actor: "admin", subjectID: c.id, subjectName: c.name})
	return nil
}

// useDevice returns the device id names, creating it, and sets its name,
// type and hostname (the latest job to name a device describes it).
func (w *workspace) useDevice(id, clientID ID, name, typ, hostname string) *device {
	d := w.devices[id]
	if d == nil {
		d = &device{id: id, clientID: clientID}
		w.devices[id] = d
		w.ids.observe(id)
	}
	d.name, d.typ, d.hostname = name, typ, hostname
	d.jobs++
	return d
}

func (w *workspace) releaseDevice(d *device) {
	d.jobs--
	if d.jobs <= 0 {
		delete(w.devices, d.id)
	}
}

// deviceFor returns the id of the client's device with this hostname
// (compared without case), or a zero id when there is none.
func (w *workspace) deviceFor(clientID ID, hostname string) ID {
	for _, d := range w.devices {
		if d.clientID == clientID && strings.EqualFold(d.hostname, hostname) {
			return d.id
		}
	}
	return ID{}
}

func (w *workspace) applyJobCreated(r *wal.JobCreated, hooks applyHooks) error {
	c := w.clients[r.ClientID]
	if c == nil {
		return fmt.Errorf("job %s for unknown client %s", ID(r.ID), ID(r.ClientID))
	}
	j := &job{
		id: r.ID, client: c, name: r.Name, createdAt: r.CreatedAt,
		intervalMinutes: r.IntervalMinutes, graceMinutes: r.GraceMinutes, expectedDays: r.ExpectedDays,
		slaTarget: r.SLATarget, dueBase: r.CreatedAt, ingestToken: r.IngestToken,
	}
	j.setVendor(r.Vendor)
	j.device = w.useDevice(r.DeviceID, r.ClientID, r.DeviceName, r.DeviceType, r.Hostname)
	w.jobs[r.ID] = j
	c.jobs[r.ID] = j
	w.indexJob(j)
	w.ids.observe(r.ID)
	w.addActivity(activity{id: r.ActivityID, at: r.CreatedAt, typ: "job.created", actor: "admin", jobID: r.ID, subjectName: r.Name})
	hooks.ingestAdded(w, j)
	return nil
}

func (w *workspace) applyJobUpdated(r *wal.JobUpdated) error {
	j := w.jobs[r.ID]
	if j == nil {
		return fmt.Errorf("update unknown job %s", ID(r.ID))
	}
	if r.Fields&wal.JobName != 0 {
		w.unindexJob(j)
		j.name = r.Name
		w.indexJob(j)
	}
	if r.Fields&wal.JobVendor != 0 {
		from := j.vx
		w.jobIdx.setVendor(j, r.Vendor)
		w.results.moveJob(j, from)
	}
	if r.Fields&wal.JobDevice != 0 {
		old := j.device
		j.device = w.useDevice(r.DeviceID, j.client.id, r.DeviceName, r.DeviceType, r.Hostname)
		w.releaseDevice(old)
	}
	w.jobIdx.touch(j) // a pause or a schedule moves its status or due time
	if r.Fields&wal.JobSchedule != 0 {
		j.intervalMinutes, j.graceMinutes, j.expectedDays = r.IntervalMinutes, r.GraceMinutes, r.ExpectedDays
	}
	if r.Fields&wal.JobSLATarget != 0 {
		j.slaTarget = r.SLATarget
	}
	if r.Fields&wal.JobPaused != 0 {
		was := j.ownPaused(r.At)
		// A pause whose end passed before this change ended at that end.
		j.dueBase = j.dueFrom(r.At)
		switch {
		case r.Paused && !was:
			j.pausedAt, j.pausedSeq = r.At, r.Seq
		case !r.Paused && was && r.At > j.dueBase:
			j.dueBase = r.At
		}
		j.paused, j.pausedUntil = r.Paused, r.PausedUntil
	}
	typ := "job.updated"
	if r.Fields == wal.JobPaused {
		typ = "job.resumed"
		if r.Paused {
			typ = "job.paused"
		}
	}
	w.addActivity(activity{id: r.ActivityID, at: r.At, typ: typ, actor: actorOr(r.Actor), jobID: j.id, subjectName: j.name, note: r.Note})
	return nil
}

func (w *workspace) applyJobDeleted(r *wal.JobDeleted, hooks applyHooks) error {
	j := w.jobs[r.ID]
	if j == nil {
		return fmt.Errorf("delete unknown job %s", ID(r.ID))
	}
	delete(w.jobs, r.ID)
	delete(j.client.jobs, r.ID)
	w.unindexJob(j)
	w.jobIdx.timers.remove(j)
	w.results.removeJob(j, j.vx)
	if j.alert != nil {
		w.unresolved = removeItem(w.unresolved, j.alert)
	}
	w.releaseDevice(j.device)
	kept := w.alertLog[:0]
	for _, a := range w.alertLog {
		if a.job == j {
			delete(w.alerts, a.id)
			continue
		}
		kept = append(kept, a)
	}
	clear(w.alertLog[len(kept):])
	w.alertLog = kept
	for _, d := range w.deliveries {
		if d.jobID == j.id && d.state == deliveryPending {
			d.state, d.lastError, d.notice, d.nextAt, d.inFlight = deliveryCancelled, "job deleted", nil, 0, false
			w.pending.Add(-1)
		}
	}
	w.addActivity(activity{id: r.ActivityID, at: r.At, typ: "job.deleted", actor: "admin", jobID: j.id, subjectName: j.name})
	hooks.ingestRemoved(j.ingestToken)
	w.removeJobUnparsed(j.id)
	return nil
}

// intern returns the index of a result source, adding it if new.
func (w *workspace) intern(source string) uint16 {
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

func (w *workspace) source(i uint16) string {
	if int(i) < len(w.sources) {
		return w.sources[i]
	}
	return ""
}

func severityOf(typ uint8) uint8 {
	if typ == alertWarning {
		return severityWarning
	}
	return severityCritical
}

func (w *workspace) applyReport(r *wal.Report) error {
	j := w.jobs[r.JobID]
	if j == nil {
		return fmt.Errorf("report for unknown job %s", ID(r.JobID))
	}
	res := result{
		id: r.ResultID, receivedAt: r.ReceivedAt, completedAt: r.CompletedAt,
		sizeBytes: r.SizeBytes, duration: int32(r.DurationSeconds), status: r.Status,
		source: w.intern(r.Source),
	}
	if i, appended := j.insertResult(res); appended {
		w.results.insert(j, j.resultBase+uint32(i))
	} else {
		w.results.insertShifted(j, j.resultBase+uint32(i))
	}
	w.ids.observe(r.ResultID)
	if r.IdempotencyKey != "" {
		if j.idem == nil {
			j.idem = map[string]*idemEntry{} // made on first use: most jobs' reports carry no key
		}
		j.idem[r.IdempotencyKey] = &idemEntry{at: r.ReceivedAt}
	}
	if !ID(r.UnparsedID).IsZero() {
		w.removeUnparsed(r.UnparsedID) // a re-read e-mail leaves the unparsed list
	}
	if r.Superseded {
		return nil
	}
	w.jobIdx.setLast(j, r.Status)
	w.jobIdx.touch(j)
	j.lastReportAt = r.CompletedAt
	j.lastReceivedAt = r.ReceivedAt
	j.lastReportSeq = r.Seq
	j.dueBase = r.ReceivedAt // a report sets the due time (decisions.md 4.4)
	switch r.Status {
	case resultOK:
		j.lastSuccessAt = r.CompletedAt
		j.failureStreak = 0
		// An ok report resolves the unresolved alert, unless it comes with
		// an alert of its own (a failed verification: decisions.md 10).
		if a := j.alert; a != nil && ID(r.AlertID).IsZero() {
			w.resolveAlert(a, r.ReceivedAt)
			if j.monitored(r.ReceivedAt) {
				w.emit(a, EventResolved, r.ReceivedAt, nil) // the recovery notice
			}
		}
	case resultWarning:
		j.failureStreak = 0
	case resultFailed:
		j.lastFailureAt = r.CompletedAt
		j.failureStreak++
	}
	if !ID(r.AlertID).IsZero() {
		w.raiseAlert(j, r.AlertID, r.AlertType, r.Summary, aiOf(r), r.ReceivedAt)
	}
	return nil
}

// insertResult adds res in (receivedAt, id) order and returns its place;
// results almost always arrive in order, so this is an append (appended
// true). Otherwise the results after it moved up one place.
func (j *job) insertResult(res result) (at int, appended bool) {
	n := len(j.results)
	if n == 0 || !resultBefore(&res, &j.results[n-1]) {
		j.results = growByQuarter(j.results, res, 8)
		return n, true
	}
	i := sort.Search(n, func(i int) bool { return resultBefore(&res, &j.results[i]) })
	j.results = growByQuarter(j.results, result{}, 8)
	copy(j.results[i+1:], j.results[i:])
	j.results[i] = res
	return i, false
}

func resultBefore(a, b *result) bool {
	if a.receivedAt != b.receivedAt {
		return a.receivedAt < b.receivedAt
	}
	return string(a.id[:]) < string(b.id[:])
}

// raiseAlert opens an alert on the job, or raises its unresolved one
// (decisions.md 4.6): new summary and type, the higher severity, and an
// acknowledged alert whose severity rises goes back to open.
// ai is the suggestion for summary (nil: none); it replaces the alert's.
func (w *workspace) raiseAlert(j *job, id ID, typ uint8, summary string, ai *aiNote, at int64) {
	sev := severityOf(typ)
	if a := j.alert; a != nil {
		settleAlert(a, at)
		a.summary, a.typ, a.ai = summary, typ, ai
		if sev > a.severity {
			a.severity = sev
			if a.status == alertAcknowledged {
				a.status = alertOpen
				a.acknowledgedAt = 0
			}
		}
		if a.status != alertSnoozed { // a snoozed alert stays quiet
			w.emit(a, EventRaised, at, nil)
		}
		return
	}
	a := &alert{id: id, job: j, typ: typ, severity: sev, status: alertOpen, summary: summary, ai: ai, createdAt: at, escChecked: at}
	w.alerts[id] = a
	w.alertLog = insertOrdered(w.alertLog, a, alertBefore)
	w.unresolved = insertOrdered(w.unresolved, a, alertBefore)
	j.alerts = insertOrdered(j.alerts, a, alertBefore)
	j.alert = a
	w.ids.observe(id)
	w.emit(a, EventOpened, at, nil)
	w.scheduleAlert(a)
}

func (w *workspace) resolveAlert(a *alert, at int64) {
	a.status = alertResolved
	a.snoozedUntil = 0
	// An imported report dated before the alert opened resolves it when it
	// opened: never a negative recovery.
	a.resolvedAt = max(at, a.createdAt)
	if a.job.alert == a {
		a.job.alert = nil
	}
	w.unresolved = removeItem(w.unresolved, a)
}

func (w *workspace) applyAlertChanged(r *wal.AlertChanged) error {
	a := w.alerts[r.AlertID]
	if a == nil {
		return fmt.Errorf("change unknown alert %s", ID(r.AlertID))
	}
	settleAlert(a, r.At)
	var typ string
	switch r.Action {
	case wal.AlertAcknowledge:
		a.status, a.acknowledgedAt, a.snoozedUntil = alertAcknowledged, r.At, 0
		typ = "alert.acknowledged"
	case wal.AlertSnooze:
		a.status, a.snoozedUntil = alertSnoozed, r.Until
		typ = "alert.snoozed"
	case wal.AlertResolve:
		w.resolveAlert(a, r.At)
		typ = "alert.resolved"
	default:
		return fmt.Errorf("alert %s: unknown action %d", ID(r.AlertID), r.Action)
	}
	w.addActivity(activity{id: r.ActivityID, at: r.At, typ: typ, actor: r.Actor, alertID: a.id, jobID: a.job.id, note: r.Note})
	return nil
}

func (w *workspace) addActivity(a activity) {
	w.activity = append(w.activity, a)
	w.ids.observe(a.id)
}
