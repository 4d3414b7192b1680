package state

import (
	"fmt"

	"backupmon/codec"
)

// Records of clients and their jobs.

// Record type numbers of this file.
const (
	TypeClientCreated byte = 3
	TypeClientUpdated byte = 4
	TypeJobCreated    byte = 5
	TypeJobUpdated    byte = 6
	TypeJobDeleted    byte = 7
)

// ClientCreated records a new client.
type ClientCreated struct {
	Header
	ID, ActivityID ID
	Name, Status   string
	CreatedAt      int64
}

func (r *ClientCreated) fields(f *codec.Fields) {
	f.Walk(r.ID[:], &r.Name, &r.Status, &r.CreatedAt, r.ActivityID[:])
}

func (r *ClientCreated) apply(w *Workspace) error { return r.applyBy(w, "") }

// applyBy applies r as made by actor ("": the admin API).
func (r *ClientCreated) applyBy(w *Workspace, actor string) error {
	c := &Client{ID: r.ID, Name: r.Name, Status: r.Status, createdAt: r.CreatedAt, OffAt: offAtFor(r.Status, r.CreatedAt), Jobs: map[ID]*Job{}}
	if c.OffAt != 0 {
		c.OffSeq = r.Seq
	}
	w.Clients[r.ID] = c
	w.indexClient(c)
	w.added(r.ID, Activity{ID: r.ActivityID, At: r.CreatedAt, Type: "client.created", Actor: actorOr(actor), SubjectID: r.ID, SubjectName: r.Name})
	return nil
}

// Client field bits for ClientUpdated.Fields.
const (
	ClientName uint8 = 1 << iota
	ClientStatus
)

// ClientUpdated records changed client fields (those set in Fields).
type ClientUpdated struct {
	Header
	ID, ActivityID ID
	Fields         uint8
	Name, Status   string
	At             int64
}

func (r *ClientUpdated) fields(f *codec.Fields) {
	f.Walk(r.ID[:], &r.Fields, &r.Name, &r.Status, &r.At, r.ActivityID[:])
}

func (r *ClientUpdated) apply(w *Workspace) error { return r.applyBy(w, "") }

// applyBy applies r as made by actor ("": the admin API).
func (r *ClientUpdated) applyBy(w *Workspace, actor string) error {
	c := w.Clients[r.ID]
	if c == nil {
		return fmt.Errorf("update unknown client %s", r.ID)
	}
	if r.Fields&ClientName != 0 {
		w.ClientList = removeItem(w.ClientList, c)
		c.Name = r.Name
		w.indexClient(c)
	}
	typ := "client.updated"
	if r.Fields&ClientStatus != 0 && r.Status != c.Status {
		switch r.Status {
		case "active":
			typ = "client.resumed"
		case "paused":
			typ = "client.paused"
		case "archived":
			typ = "client.archived"
		}
		switch {
		case c.Status == "active":
			// Monitoring goes off: the jobs show paused until a report.
			c.OffAt, c.OffSeq = r.At, r.Seq
		case r.Status == "active":
			// Monitoring resumes: due times count from now.
			c.OffAt, c.OffSeq = 0, 0
			for _, j := range c.Jobs {
				if r.At > j.DueBase {
					j.DueBase = r.At
				}
			}
		}
		c.Status = r.Status
		w.JobIdx.touchAll(c.JobList)
	}
	c.forgetJobJSON() // names, pauses and shared devices show in its jobs
	w.addActivity(Activity{ID: r.ActivityID, At: r.At, Type: typ, Actor: actorOr(actor), SubjectID: c.ID, SubjectName: c.Name})
	return nil
}

// JobCreated records a new job and the device it runs on.
type JobCreated struct {
	Header
	ID, ClientID, DeviceID, ActivityID ID
	Name, Vendor                       string
	DeviceName, DeviceType, Hostname   string
	IntervalMinutes, GraceMinutes      int64
	ExpectedDays                       uint8
	SLATarget                          float64
	CreatedAt                          int64
	IngestToken                        string
}

func (r *JobCreated) fields(f *codec.Fields) {
	f.Walk(r.ID[:], r.ClientID[:], r.DeviceID[:], &r.Name, &r.Vendor, &r.DeviceName, &r.DeviceType, &r.Hostname, &r.IntervalMinutes, &r.GraceMinutes, &r.ExpectedDays, &r.SLATarget, &r.CreatedAt, &r.IngestToken, r.ActivityID[:])
}

func (r *JobCreated) apply(w *Workspace) error { return r.applyBy(w, "") }

// applyBy applies r as made by actor ("": the admin API).
func (r *JobCreated) applyBy(w *Workspace, actor string) error {
	c := w.Clients[r.ClientID]
	if c == nil {
		return fmt.Errorf("job %s for unknown client %s", r.ID, r.ClientID)
	}
	j := &Job{
		ID: r.ID, Client: c, Name: r.Name, CreatedAt: r.CreatedAt,
		IntervalMinutes: r.IntervalMinutes, GraceMinutes: r.GraceMinutes, ExpectedDays: r.ExpectedDays,
		SLATarget: r.SLATarget, DueBase: r.CreatedAt, IngestToken: r.IngestToken,
	}
	j.setVendor(r.Vendor)
	j.Device = w.useDevice(r.DeviceID, r.ClientID, r.DeviceName, r.DeviceType, r.Hostname)
	c.forgetJobJSON() // a shared device shows in its jobs
	w.Jobs[r.ID] = j
	c.Jobs[r.ID] = j
	w.indexJob(j)
	w.added(r.ID, Activity{ID: r.ActivityID, At: r.CreatedAt, Type: "job.created", Actor: actorOr(actor), JobID: r.ID, SubjectName: r.Name})
	w.hooks.IngestAdded(w, j)
	return nil
}

// Job field bits for JobUpdated.Fields.
const (
	JobName uint16 = 1 << iota
	JobVendor
	JobDevice
	JobSchedule
	JobSLATarget
	JobPaused
)

// JobUpdated records changed job fields (those set in Fields). A device
// change names the device (new or shared) the job runs on after it; a
// schedule change carries the whole schedule; a pause change carries Paused
// and PausedUntil (0: no end).
type JobUpdated struct {
	Header
	ID, ActivityID                   ID
	Fields                           uint16
	Name, Vendor                     string
	DeviceID                         ID
	DeviceName, DeviceType, Hostname string
	IntervalMinutes, GraceMinutes    int64
	ExpectedDays                     uint8
	SLATarget                        float64
	Paused                           bool
	PausedUntil                      int64
	At                               int64
	// Actor and Note say who made the change and why (activity log).
	Actor, Note string
}

func (r *JobUpdated) fields(f *codec.Fields) {
	f.Walk(r.ID[:], &r.Fields, &r.Name, &r.Vendor, r.DeviceID[:], &r.DeviceName, &r.DeviceType, &r.Hostname, &r.IntervalMinutes, &r.GraceMinutes, &r.ExpectedDays, &r.SLATarget, &r.Paused, &r.PausedUntil, &r.At, r.ActivityID[:], &r.Actor, &r.Note)
}

func (r *JobUpdated) apply(w *Workspace) error {
	j := w.Jobs[r.ID]
	if j == nil {
		return fmt.Errorf("update unknown job %s", r.ID)
	}
	if r.Fields&JobName != 0 {
		w.unindexJob(j)
		j.Name = r.Name
		w.indexJob(j)
	}
	if r.Fields&JobVendor != 0 {
		from := j.Vx
		w.JobIdx.setVendor(j, r.Vendor)
		w.Results.moveJob(j, from)
	}
	if r.Fields&JobDevice != 0 {
		old := j.Device
		j.Device = w.useDevice(r.DeviceID, j.Client.ID, r.DeviceName, r.DeviceType, r.Hostname)
		w.releaseDevice(old)
	}
	w.JobIdx.Touch(j) // a pause or a schedule moves its status or due time
	if r.Fields&JobSchedule != 0 {
		j.IntervalMinutes, j.GraceMinutes, j.ExpectedDays = r.IntervalMinutes, r.GraceMinutes, r.ExpectedDays
	}
	if r.Fields&JobSLATarget != 0 {
		j.SLATarget = r.SLATarget
	}
	if r.Fields&JobPaused != 0 {
		was := j.OwnPaused(r.At)
		// A pause whose end passed before this change ended at that end.
		j.DueBase = j.dueFrom(r.At)
		switch {
		case r.Paused && !was:
			j.PausedAt, j.PausedSeq = r.At, r.Seq
		case !r.Paused && was && r.At > j.DueBase:
			j.DueBase = r.At
		}
		j.Paused, j.PausedUntil = r.Paused, r.PausedUntil
	}
	j.Client.forgetJobJSON() // names, pauses and shared devices show in its jobs
	typ := "job.updated"
	if r.Fields == JobPaused {
		typ = "job.resumed"
		if r.Paused {
			typ = "job.paused"
		}
	}
	w.addActivity(Activity{ID: r.ActivityID, At: r.At, Type: typ, Actor: actorOr(r.Actor), JobID: j.ID, SubjectName: j.Name, Note: r.Note})
	return nil
}

// JobDeleted records that a job, its results and its alerts are gone.
type JobDeleted struct {
	Header
	ID, ActivityID ID
	At             int64
}

func (r *JobDeleted) fields(f *codec.Fields) { f.Walk(r.ID[:], &r.At, r.ActivityID[:]) }

func (r *JobDeleted) apply(w *Workspace) error { return r.applyBy(w, "") }

// applyBy applies r as made by actor ("": the admin API).
func (r *JobDeleted) applyBy(w *Workspace, actor string) error {
	j := w.Jobs[r.ID]
	if j == nil {
		return fmt.Errorf("delete unknown job %s", r.ID)
	}
	delete(w.Jobs, r.ID)
	delete(j.Client.Jobs, r.ID)
	w.unindexJob(j)
	w.JobIdx.Timers.Remove(j)
	w.Results.removeJob(j, j.Vx)
	if j.Alert != nil {
		w.Unresolved = removeItem(w.Unresolved, j.Alert)
	}
	w.releaseDevice(j.Device)
	kept := w.AlertLog[:0]
	for _, a := range w.AlertLog {
		if a.Job == j {
			delete(w.Alerts, a.ID)
			continue
		}
		kept = append(kept, a)
	}
	clear(w.AlertLog[len(kept):])
	w.AlertLog = kept
	for _, d := range w.Deliveries {
		if d.JobID == j.ID && d.State == DeliveryPending {
			w.cancelDelivery(d, "job deleted")
		}
	}
	w.addActivity(Activity{ID: r.ActivityID, At: r.At, Type: "job.deleted", Actor: actorOr(actor), JobID: j.ID, SubjectName: j.Name})
	w.hooks.IngestRemoved(j.IngestToken)
	w.removeJobUnparsed(j.ID)
	return nil
}

// forgetJobJSON drops the kept JSON of every job of the client.
func (c *Client) forgetJobJSON() {
	for _, j := range c.Jobs {
		j.jsonUntil = 0
	}
}
