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

// The records of this file: the admin API's record, made by someone.
type (
	ClientCreatedBy struct {
		By[ClientCreated, *ClientCreated]
	}
	ClientUpdatedBy struct {
		By[ClientUpdated, *ClientUpdated]
	}
	JobCreatedBy struct{ By[JobCreated, *JobCreated] }
	JobDeletedBy struct{ By[JobDeleted, *JobDeleted] }
)

// byRecord is a record that can be applied as made by someone.
type byRecord interface {
	Head() *Header
	fields(f *codec.Fields)
	applyBy(w *Workspace, actor string) error
}

// By is the record R made by Actor: R's layout, then the actor; applied as
// R is, with Actor in its activity entry.
type By[R any, P interface {
	*R
	byRecord
}] struct {
	Inner R
	Actor string
}

// Head returns the record's header (R's).
func (r *By[R, P]) Head() *Header { return P(&r.Inner).Head() }

// Type returns the record's type number.
func (r *By[R, P]) Type() byte { return r.Head().Type() }

// AppendPayload appends the record's encoding.
func (r *By[R, P]) AppendPayload(b []byte) []byte { return r.Head().AppendPayload(b) }

func (r *By[R, P]) fields(f *codec.Fields) { P(&r.Inner).fields(f); f.Walk(&r.Actor) }

func (r *By[R, P]) apply(w *Workspace) error { return P(&r.Inner).applyBy(w, r.Actor) }

// MadeBy returns the part of a By record that holds rec and actor.
func MadeBy[R any, P interface {
	*R
	byRecord
}](rec P, actor string) By[R, P] {
	return By[R, P]{Inner: *rec, Actor: actor}
}
