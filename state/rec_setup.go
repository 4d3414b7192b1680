package state

import "backupmon/codec"

// Records of the changes to clients and jobs made in the dashboard: each is
// the admin API's record with the person who made it, for the activity
// log (docs/decisions.md "Set-up in the dashboard"). The admin API's
// records stay as they were, so logs written before read the same.

// Record type numbers of this file.
const (
	TypeClientCreatedBy byte = 61
	TypeClientUpdatedBy byte = 62
	TypeJobCreatedBy    byte = 63
	TypeJobDeletedBy    byte = 64
)

// ClientCreatedBy is ClientCreated made by Actor.
type ClientCreatedBy struct {
	ClientCreated
	Actor string
}

func (r *ClientCreatedBy) fields(f *codec.Fields) { r.ClientCreated.fields(f); f.Walk(&r.Actor) }

func (r *ClientCreatedBy) apply(w *Workspace) error { return r.applyBy(w, r.Actor) }

// ClientUpdatedBy is ClientUpdated made by Actor.
type ClientUpdatedBy struct {
	ClientUpdated
	Actor string
}

func (r *ClientUpdatedBy) fields(f *codec.Fields) { r.ClientUpdated.fields(f); f.Walk(&r.Actor) }

func (r *ClientUpdatedBy) apply(w *Workspace) error { return r.applyBy(w, r.Actor) }

// JobCreatedBy is JobCreated made by Actor.
type JobCreatedBy struct {
	JobCreated
	Actor string
}

func (r *JobCreatedBy) fields(f *codec.Fields) { r.JobCreated.fields(f); f.Walk(&r.Actor) }

func (r *JobCreatedBy) apply(w *Workspace) error { return r.applyBy(w, r.Actor) }

// JobDeletedBy is JobDeleted made by Actor.
type JobDeletedBy struct {
	JobDeleted
	Actor string
}

func (r *JobDeletedBy) fields(f *codec.Fields) { r.JobDeleted.fields(f); f.Walk(&r.Actor) }

func (r *JobDeletedBy) apply(w *Workspace) error { return r.applyBy(w, r.Actor) }
