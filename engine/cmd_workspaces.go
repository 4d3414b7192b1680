package engine

import (
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"strings"
	"time"
	"unicode/utf8"

	"backupmon/state"
)

// Commands of the admin API on workspaces, clients, jobs and keys.

// WorkspaceInput is the body of a workspace create or update.
type WorkspaceInput struct {
	Name, TimeZone, Plan, Status Opt[string]
	TrialEndsAt                  Opt[time.Time]
}

// ClientInput is the body of a client create or update.
type ClientInput struct {
	Name, Status Opt[string]
	// Actor is who makes the change, for the activity log ("" is the
	// admin API).
	Actor string
}

// DeviceInput describes the device a job runs on.
type DeviceInput struct {
	Name, Type, Hostname Opt[string]
}

// ScheduleInput is a job's schedule as sent.
type ScheduleInput struct {
	IntervalMinutes Opt[int64]
	ExpectedDays    Opt[[]string]
	GraceMinutes    Opt[int64]
}

// JobInput is the body of a job create or update.
type JobInput struct {
	ClientID, Name, Vendor Opt[string]
	Device                 Opt[DeviceInput]
	Schedule               Opt[ScheduleInput]
	SLATarget              Opt[float64]
	Paused                 Opt[bool]
	PausedUntil            Opt[time.Time]
	// Actor and Note say who changes the job and why, for the activity
	// log ("" is the admin API).
	Actor, Note string
}

// KeyInput is the body of a key create.
type KeyInput struct {
	Name, Type, Access Opt[string]
	Scopes             Opt[[]string]
	ExpiresAt          Opt[time.Time]
	// Actor is who creates it, for the activity log ("" is the admin API).
	Actor string
}

func (e *Engine) workspaceActor(id string) (*actor, error) {
	wid, ok := state.ParseID(id)
	if !ok {
		return nil, notFound("workspace")
	}
	a := e.actor(wid)
	if a == nil {
		return nil, notFound("workspace")
	}
	return a, nil
}

// CreateWorkspace makes a workspace and starts its actor. It returns a
// KindInvalid *Error for a bad field, or ErrFailed.
func (e *Engine) CreateWorkspace(in WorkspaceInput) (WorkspaceView, error) {
	if err := checkName("name", in.Name, true); err != nil {
		return WorkspaceView{}, err
	}
	tz := "UTC"
	if in.TimeZone.Set {
		if in.TimeZone.Null || !validZone(in.TimeZone.V) {
			return WorkspaceView{}, invalid("timeZone", "timeZone must be an IANA time zone name")
		}
		tz = in.TimeZone.V
	}
	if err := checkEnum("plan", in.Plan, state.Plans, "starter, growth, pro, trial", true); err != nil {
		return WorkspaceView{}, err
	}
	status := "active"
	if in.Status.Set {
		if err := checkEnum("status", in.Status, state.WorkspaceStatuses, "active, suspended, cancelled", false); err != nil {
			return WorkspaceView{}, err
		}
		status = in.Status.V
	}
	var trial int64
	if in.TrialEndsAt.Set && !in.TrialEndsAt.Null {
		trial = in.TrialEndsAt.V.UnixMilli()
	}
	e.globalMu.Lock()
	now := e.nowMs()
	rec := &state.WorkspaceCreated{Name: in.Name.V, TimeZone: tz, Plan: in.Plan.V, Status: status, TrialEndsAt: trial, CreatedAt: now}
	rec.Workspace = e.globalIDs.Next(now)
	for e.opts.WorkspaceID != nil && !e.opts.WorkspaceID(rec.Workspace) {
		rec.Workspace = e.globalIDs.Next(now) // a cluster's shard takes its own ids
	}
	rec.Seq = 1
	w, err := state.NewWorkspace(rec)
	if err != nil {
		e.globalMu.Unlock()
		return WorkspaceView{}, err
	}
	a := e.addActor(w)
	go a.run()
	view := a.ws.view()
	ch := make(chan error, 1)
	e.submit(rec, func(_ uint64, err error) { ch <- err })
	e.globalMu.Unlock()
	if err := <-ch; err != nil {
		return WorkspaceView{}, ErrFailed
	}
	a.send(func(*workspace) {}) // its first message arms its timers (a trial's end)
	return view, nil
}

func validZone(name string) bool {
	if name == "" || name == "Local" {
		return false
	}
	_, err := time.LoadLocation(name)
	return err == nil
}

// UpdateWorkspace changes the fields set in in.
func (e *Engine) UpdateWorkspace(id string, in WorkspaceInput) (WorkspaceView, error) {
	a, err := e.workspaceActor(id)
	if err != nil {
		return WorkspaceView{}, err
	}
	rec := &state.WorkspaceUpdated{}
	if in.Name.Set {
		if err := checkName("name", in.Name, false); err != nil {
			return WorkspaceView{}, err
		}
		rec.Fields |= state.WorkspaceName
		rec.Name = in.Name.V
	}
	if in.TimeZone.Set {
		if in.TimeZone.Null || !validZone(in.TimeZone.V) {
			return WorkspaceView{}, invalid("timeZone", "timeZone must be an IANA time zone name")
		}
		rec.Fields |= state.WorkspaceTimeZone
		rec.TimeZone = in.TimeZone.V
	}
	if in.Plan.Set {
		if err := checkEnum("plan", in.Plan, state.Plans, "starter, growth, pro, trial", false); err != nil {
			return WorkspaceView{}, err
		}
		rec.Fields |= state.WorkspacePlan
		rec.Plan = in.Plan.V
	}
	if in.Status.Set {
		if err := checkEnum("status", in.Status, state.WorkspaceStatuses, "active, suspended, cancelled", false); err != nil {
			return WorkspaceView{}, err
		}
		rec.Fields |= state.WorkspaceStatus
		rec.Status = in.Status.V
	}
	if in.TrialEndsAt.Set {
		rec.Fields |= state.WorkspaceTrialEndsAt
		if !in.TrialEndsAt.Null {
			rec.TrialEndsAt = in.TrialEndsAt.V.UnixMilli()
		}
	}
	return change(a, func(w *workspace, now int64) (decision[WorkspaceView], error) {
		rec.At = now
		if rec.Fields == 0 {
			return decision[WorkspaceView]{value: w.view()}, nil
		}
		return decision[WorkspaceView]{rec: rec, answer: (*workspace).view}, nil
	})
}

// CreateClient adds a client to a workspace.
func (e *Engine) CreateClient(wsID string, in ClientInput) (ClientView, error) {
	a, err := e.workspaceActor(wsID)
	if err != nil {
		return ClientView{}, err
	}
	if err := checkName("name", in.Name, true); err != nil {
		return ClientView{}, err
	}
	status := "active"
	if in.Status.Set {
		if err := checkEnum("status", in.Status, state.ClientStatuses, "active, paused, archived", false); err != nil {
			return ClientView{}, err
		}
		status = in.Status.V
	}
	return change(a, func(w *workspace, now int64) (decision[ClientView], error) {
		rec := &state.ClientCreated{ID: w.IDs.Next(now), Name: in.Name.V, Status: status, CreatedAt: now}
		rec.ActivityID = w.IDs.Next(now)
		return decision[ClientView]{rec: byActor(rec, in.Actor), answer: func(w *workspace) ClientView { return w.clientView(w.Clients[rec.ID], now) }}, nil
	})
}

// UpdateClient changes a client's name or status; pausing or archiving turns
// monitoring off for its jobs, making it active again turns it back on.
func (e *Engine) UpdateClient(wsID, clientID string, in ClientInput) (ClientView, error) {
	a, err := e.workspaceActor(wsID)
	if err != nil {
		return ClientView{}, err
	}
	rec := &state.ClientUpdated{}
	if in.Name.Set {
		if err := checkName("name", in.Name, false); err != nil {
			return ClientView{}, err
		}
		rec.Fields |= state.ClientName
		rec.Name = in.Name.V
	}
	if in.Status.Set {
		if err := checkEnum("status", in.Status, state.ClientStatuses, "active, paused, archived", false); err != nil {
			return ClientView{}, err
		}
		rec.Fields |= state.ClientStatus
		rec.Status = in.Status.V
	}
	return change(a, func(w *workspace, now int64) (decision[ClientView], error) {
		c := w.Client(clientID)
		if c == nil {
			return decision[ClientView]{}, notFound("client")
		}
		rec.ID, rec.At = c.ID, now
		answer := func(w *workspace) ClientView { return w.clientView(c, now) }
		if rec.Fields == 0 {
			return decision[ClientView]{answer: answer}, nil
		}
		rec.ActivityID = w.IDs.Next(now)
		return decision[ClientView]{rec: byActor(rec, in.Actor), answer: answer}, nil
	})
}

var dayByName = map[string]time.Weekday{
	"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday, "wed": time.Wednesday,
	"thu": time.Thursday, "fri": time.Friday, "sat": time.Saturday,
}

// schedule checks a schedule input against the current values (for an
// update) and returns the resulting interval, grace and days.
func checkSchedule(in ScheduleInput, interval, grace int64, days uint8, creating bool) (int64, int64, uint8, *Error) {
	if in.IntervalMinutes.Set || creating {
		v := in.IntervalMinutes
		if !v.Set || v.Null || v.V < minIntervalMinutes || v.V > maxIntervalMinutes {
			return 0, 0, 0, invalid("schedule.intervalMinutes", "schedule.intervalMinutes must be an integer from %d to %d", minIntervalMinutes, maxIntervalMinutes)
		}
		interval = v.V
	}
	if in.GraceMinutes.Set {
		v := in.GraceMinutes
		if v.Null || v.V < 0 || v.V > maxGraceMinutes {
			return 0, 0, 0, invalid("schedule.graceMinutes", "schedule.graceMinutes must be an integer from 0 to %d", maxGraceMinutes)
		}
		grace = v.V
	}
	if in.ExpectedDays.Set {
		if in.ExpectedDays.Null || len(in.ExpectedDays.V) == 0 {
			return 0, 0, 0, invalid("schedule.expectedDays", "schedule.expectedDays must list at least one of: mon, tue, wed, thu, fri, sat, sun")
		}
		days = 0
		for _, name := range in.ExpectedDays.V {
			d, ok := dayByName[name]
			if !ok {
				return 0, 0, 0, invalid("schedule.expectedDays", "schedule.expectedDays must list at least one of: mon, tue, wed, thu, fri, sat, sun")
			}
			days |= 1 << uint(d)
		}
	}
	return interval, grace, days, nil
}

func checkDevice(in DeviceInput, cur DeviceInput) (DeviceInput, *Error) {
	if in.Name.Set {
		if err := checkName("device.name", in.Name, false); err != nil {
			return in, err
		}
		cur.Name = in.Name
	} else if !cur.Name.Set {
		return in, invalid("device.name", "device.name is required")
	}
	if in.Type.Set {
		if err := checkEnum("device.type", in.Type, state.DeviceTypes, "server, workstation, vm, nas, cloud, database, other", false); err != nil {
			return in, err
		}
		cur.Type = in.Type
	} else if !cur.Type.Set {
		return in, invalid("device.type", "device.type must be one of: server, workstation, vm, nas, cloud, database, other")
	}
	if in.Hostname.Set {
		h := in.Hostname.V
		if in.Hostname.Null || strings.TrimSpace(h) == "" || utf8.RuneCountInString(h) > maxHostnameChars {
			return in, invalid("device.hostname", "device.hostname must be 1 to %d characters", maxHostnameChars)
		}
		cur.Hostname = in.Hostname
	} else if !cur.Hostname.Set {
		return in, invalid("device.hostname", "device.hostname is required")
	}
	return cur, nil
}

var vendorList = strings.Join(state.VendorOrder[:], ", ")

func checkSLA(v Opt[float64]) *Error {
	if v.Null || v.V < 0 || v.V > 100 {
		return invalid("slaTarget", "slaTarget must be a number from 0 to 100")
	}
	return nil
}

// CreateJob adds a job (and its device) to a client of the workspace.
func (e *Engine) CreateJob(wsID string, in JobInput) (JobView, error) {
	a, err := e.workspaceActor(wsID)
	if err != nil {
		return JobView{}, err
	}
	if !in.ClientID.Set || in.ClientID.Null {
		return JobView{}, invalid("clientId", "clientId is required")
	}
	if err := checkName("name", in.Name, true); err != nil {
		return JobView{}, err
	}
	if err := checkEnum("vendor", in.Vendor, vendorSet, vendorList, true); err != nil {
		return JobView{}, err
	}
	if !in.Device.Set || in.Device.Null {
		return JobView{}, invalid("device", "device is required: {name, type, hostname}")
	}
	dev, derr := checkDevice(in.Device.V, DeviceInput{})
	if derr != nil {
		return JobView{}, derr
	}
	if !in.Schedule.Set || in.Schedule.Null {
		return JobView{}, invalid("schedule", "schedule is required: {intervalMinutes, expectedDays?, graceMinutes?}")
	}
	interval, grace, days, serr := checkSchedule(in.Schedule.V, 0, defaultGrace, state.AllDays, true)
	if serr != nil {
		return JobView{}, serr
	}
	sla := defaultSLATarget
	if in.SLATarget.Set {
		if err := checkSLA(in.SLATarget); err != nil {
			return JobView{}, err
		}
		sla = in.SLATarget.V
	}
	// A job is created monitored; it is paused with an update. The message
	// names the field sent (decisions.md 2).
	if in.Paused.Set {
		return JobView{}, invalid("paused", "paused cannot be set when a job is created; pause it with an update")
	}
	if in.PausedUntil.Set {
		return JobView{}, invalid("pausedUntil", "pausedUntil cannot be set when a job is created; pause it with an update")
	}
	return change(a, func(w *workspace, now int64) (decision[JobView], error) {
		c := w.Client(in.ClientID.V)
		if c == nil {
			return decision[JobView]{}, invalid("clientId", "clientId does not name a client of this workspace")
		}
		rec := &state.JobCreated{
			ID: w.IDs.Next(now), ClientID: c.ID, Name: in.Name.V, Vendor: in.Vendor.V,
			DeviceName: dev.Name.V, DeviceType: dev.Type.V, Hostname: dev.Hostname.V,
			IntervalMinutes: interval, GraceMinutes: grace, ExpectedDays: days, SLATarget: sla,
			CreatedAt: now, IngestToken: e.newIngestToken(),
		}
		rec.DeviceID = w.DeviceFor(c.ID, dev.Hostname.V)
		if state.ID(rec.DeviceID).IsZero() {
			rec.DeviceID = w.IDs.Next(now)
		}
		rec.ActivityID = w.IDs.Next(now)
		return decision[JobView]{rec: byActor(rec, in.Actor), answer: func(w *workspace) JobView { return e.adminJobView(w, w.Jobs[rec.ID], now) }}, nil
	})
}

var vendorSet = func() map[string]bool {
	m := map[string]bool{}
	for v := range state.VendorNames {
		m[v] = true
	}
	return m
}()

var ingestEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// newIngestToken returns 20 random lowercase base32 characters.
func (e *Engine) newIngestToken() string {
	var b [13]byte
	state.RandomBytes(b[:])
	t := []byte(ingestEncoding.EncodeToString(b[:])[:20])
	e.stampShard(t)
	return string(t)
}

// UpdateJob changes the fields set in in. Setting paused false resumes
// monitoring (the next due time counts from now); pausedUntil pauses until
// that time.
func (e *Engine) UpdateJob(wsID, jobID string, in JobInput) (JobView, error) {
	a, err := e.workspaceActor(wsID)
	if err != nil {
		return JobView{}, err
	}
	if in.ClientID.Set {
		return JobView{}, invalid("clientId", "clientId cannot be changed")
	}
	if in.Name.Set {
		if err := checkName("name", in.Name, false); err != nil {
			return JobView{}, err
		}
	}
	if in.Vendor.Set {
		if err := checkEnum("vendor", in.Vendor, vendorSet, vendorList, false); err != nil {
			return JobView{}, err
		}
	}
	if in.SLATarget.Set {
		if err := checkSLA(in.SLATarget); err != nil {
			return JobView{}, err
		}
	}
	if in.Device.Set && in.Device.Null {
		return JobView{}, invalid("device", "device cannot be null")
	}
	if in.Schedule.Set && in.Schedule.Null {
		return JobView{}, invalid("schedule", "schedule cannot be null")
	}
	if in.Paused.Set && in.Paused.Null {
		return JobView{}, invalid("paused", "paused must be true or false")
	}
	if err := checkNote(in.Note); err != nil {
		return JobView{}, err
	}
	return change(a, func(w *workspace, now int64) (decision[JobView], error) {
		j := w.Job(jobID)
		if j == nil {
			return decision[JobView]{}, notFound("job")
		}
		rec := &state.JobUpdated{ID: j.ID, At: now}
		if in.Name.Set {
			rec.Fields |= state.JobName
			rec.Name = in.Name.V
		}
		if in.Vendor.Set {
			rec.Fields |= state.JobVendor
			rec.Vendor = in.Vendor.V
		}
		if in.Device.Set {
			cur := DeviceInput{Name: Some(j.Device.Name), Type: Some(j.Device.Type), Hostname: Some(j.Device.Hostname)}
			dev, err := checkDevice(in.Device.V, cur)
			if err != nil {
				return decision[JobView]{}, err
			}
			rec.Fields |= state.JobDevice
			rec.DeviceName, rec.DeviceType, rec.Hostname = dev.Name.V, dev.Type.V, dev.Hostname.V
			rec.DeviceID = w.DeviceFor(j.Client.ID, dev.Hostname.V)
			if state.ID(rec.DeviceID).IsZero() {
				rec.DeviceID = w.IDs.Next(now)
			}
		}
		if in.Schedule.Set {
			interval, grace, days, err := checkSchedule(in.Schedule.V, j.IntervalMinutes, j.GraceMinutes, j.ExpectedDays, false)
			if err != nil {
				return decision[JobView]{}, err
			}
			rec.Fields |= state.JobSchedule
			rec.IntervalMinutes, rec.GraceMinutes, rec.ExpectedDays = interval, grace, days
		}
		if in.SLATarget.Set {
			rec.Fields |= state.JobSLATarget
			rec.SLATarget = in.SLATarget.V
		}
		if in.Paused.Set || in.PausedUntil.Set {
			paused := j.OwnPaused(now)
			if in.Paused.Set {
				paused = in.Paused.V
			}
			var until int64
			if in.PausedUntil.Set && !in.PausedUntil.Null {
				until = in.PausedUntil.V.UnixMilli()
				if in.Paused.Set && !in.Paused.V {
					return decision[JobView]{}, invalid("pausedUntil", "pausedUntil cannot be set on a job being resumed")
				}
				if until <= now {
					return decision[JobView]{}, invalid("pausedUntil", "pausedUntil must be in the future")
				}
				paused = true
			} else if !in.PausedUntil.Set && paused && j.OwnPaused(now) {
				until = j.PausedUntil // keep the current end
			}
			rec.Fields |= state.JobPaused
			rec.Paused, rec.PausedUntil = paused, until
		}
		answer := func(w *workspace) JobView { return e.adminJobView(w, j, now) }
		if rec.Fields == 0 {
			return decision[JobView]{answer: answer}, nil
		}
		rec.ActivityID, rec.Actor, rec.Note = w.IDs.Next(now), in.Actor, in.Note
		return decision[JobView]{rec: rec, answer: answer}, nil
	})
}

// DeleteJob removes a job with its results and alerts.
func (e *Engine) DeleteJob(wsID, jobID string) error { return e.DeleteJobBy(wsID, jobID, "") }

// DeleteJobBy is DeleteJob made by actor, for the activity log ("": the
// admin API).
func (e *Engine) DeleteJobBy(wsID, jobID, actor string) error {
	return e.remove(wsID, actor, func(w *workspace) (state.ID, error) {
		return lookup(jobID, "job", func(id state.ID) bool { return w.Jobs[id] != nil })
	}, func(r state.Removal) state.Record {
		return byActor(&state.JobDeleted{ID: r.ID, ActivityID: r.ActivityID, At: r.At}, r.Actor)
	})
}

// keyPrefix is the fixed start of every key secret (api.md 5.1).
const keyPrefix = "svc_live_"

// HashKey returns the SHA-256 of a key secret, the only form in which keys
// are stored and looked up.
func HashKey(secret []byte) [32]byte { return sha256.Sum256(secret) }

// CreateKey makes an API key and returns its record with the secret, which
// is never shown again.
func (e *Engine) CreateKey(wsID string, in KeyInput) (KeyView, error) {
	a, err := e.workspaceActor(wsID)
	if err != nil {
		return KeyView{}, err
	}
	if err := checkName("name", in.Name, true); err != nil {
		return KeyView{}, err
	}
	if err := checkEnum("type", in.Type, map[string]bool{"rest": true, "report": true, "assistant": true}, "rest, report, assistant", true); err != nil {
		return KeyView{}, err
	}
	scopes := uint8(0)
	if in.Type.V == "rest" {
		scopes = state.ScopeAll
		if in.Scopes.Set {
			if in.Scopes.Null {
				return KeyView{}, invalid("scopes", "scopes must be a list of: %s", scopeListText)
			}
			scopes = state.ScopeWorkspace
			for _, s := range in.Scopes.V {
				bit := scopeBit(s)
				if bit == 0 {
					return KeyView{}, invalid("scopes", "scopes must be a list of: %s", scopeListText)
				}
				scopes |= bit
			}
		}
	} else if in.Scopes.Set {
		return KeyView{}, invalid("scopes", "scopes are only for rest keys")
	}
	readWrite := false
	if in.Access.Set {
		if in.Type.V != "assistant" {
			return KeyView{}, invalid("access", "access is only for assistant keys")
		}
		if err := checkEnum("access", in.Access, map[string]bool{"read-only": true, "read-write": true}, "read-only, read-write", false); err != nil {
			return KeyView{}, err
		}
		readWrite = in.Access.V == "read-write"
	}
	var raw [24]byte
	state.RandomBytes(raw[:])
	secret := make([]byte, 0, len(keyPrefix)+48)
	secret = append(secret, keyPrefix...)
	secret = hex.AppendEncode(secret, raw[:])
	e.stampShard(secret[len(keyPrefix):])
	return change(a, func(w *workspace, now int64) (decision[KeyView], error) {
		var expires int64
		if in.ExpiresAt.Set && !in.ExpiresAt.Null {
			expires = in.ExpiresAt.V.UnixMilli()
			if expires <= now {
				return decision[KeyView]{}, invalid("expiresAt", "expiresAt must be in the future")
			}
		}
		rec := &state.KeyCreated{
			ID: w.IDs.Next(now), ActivityID: w.IDs.Next(now), Name: in.Name.V, KeyType: in.Type.V,
			Prefix: string(secret[:16]), Hash: HashKey(secret), Scopes: scopes, ReadWrite: readWrite,
			CreatedAt: now, ExpiresAt: expires, Actor: in.Actor,
		}
		return decision[KeyView]{rec: rec, answer: func(w *workspace) KeyView {
			v := keyView(w.Keys[rec.ID])
			v.Key = string(secret)
			return v
		}}, nil
	})
}

const scopeListText = "workspace:read, clients:read, jobs:read, reports:read, alerts:read, health:read"

func scopeBit(name string) uint8 {
	for _, s := range state.ScopeNames {
		if s.Name == name {
			return s.Bit
		}
	}
	return 0
}

// RevokeKey deletes a key; requests with it answer 401 from then on.
func (e *Engine) RevokeKey(wsID, keyID, actor string) error {
	return e.remove(wsID, actor, func(w *workspace) (state.ID, error) {
		return lookup(keyID, "key", func(id state.ID) bool { return w.Keys[id] != nil })
	}, func(r state.Removal) state.Record { return &state.KeyRevoked{Removal: r} })
}

// stampShard writes the engine's shard into the start of a secret or token
// it makes (Options.Stamp); nothing on a single node.
func (e *Engine) stampShard(text []byte) {
	if e.opts.Stamp != nil {
		e.opts.Stamp(text)
	}
}
