package state

import (
	"errors"
	"fmt"
	"time"

	"backupmon/codec"
)

// Records of workspaces and their API keys, and the engine's own clock.

// Record type numbers of this file.
const (
	TypeWorkspaceCreated byte = 1
	TypeWorkspaceUpdated byte = 2
	TypeKeyCreated       byte = 8
	TypeKeyRevoked       byte = 9
	TypeKeyFirstUsed     byte = 10
	TypeClockSet         byte = 13
	TypeRESTUsage        byte = 14
	TypeTrialEnded       byte = 22
	TypeRateLevels       byte = 32
	TypeImportPart       byte = 33
)

// errNotApplied is what apply says of records that make a workspace or
// belong to the whole engine: NewWorkspace and the engine handle those.
var errNotApplied = errors.New("not a change to an existing workspace")

// WorkspaceCreated records a new workspace (NewWorkspace builds it).
type WorkspaceCreated struct {
	Header
	Name, TimeZone, Plan, Status string
	TrialEndsAt, CreatedAt       int64
}

func (r *WorkspaceCreated) fields(f *codec.Fields) {
	f.Walk(&r.Name, &r.TimeZone, &r.Plan, &r.Status, &r.TrialEndsAt, &r.CreatedAt)
}

func (r *WorkspaceCreated) apply(*Workspace) error { return errNotApplied }

// Workspace field bits for WorkspaceUpdated.Fields.
const (
	WorkspaceName uint8 = 1 << iota
	WorkspaceTimeZone
	WorkspacePlan
	WorkspaceStatus
	WorkspaceTrialEndsAt
)

// WorkspaceUpdated records changed workspace fields (those set in Fields).
type WorkspaceUpdated struct {
	Header
	Fields                       uint8
	Name, TimeZone, Plan, Status string
	TrialEndsAt, At              int64
}

func (r *WorkspaceUpdated) fields(f *codec.Fields) {
	f.Walk(&r.Fields, &r.Name, &r.TimeZone, &r.Plan, &r.Status, &r.TrialEndsAt, &r.At)
}

func (r *WorkspaceUpdated) apply(w *Workspace) error {
	if r.Fields&WorkspaceTimeZone != 0 {
		loc, err := time.LoadLocation(r.TimeZone)
		if err != nil {
			return fmt.Errorf("time zone %q: %w", r.TimeZone, err)
		}
		w.TimeZone, w.Loc = r.TimeZone, loc
		w.JobIdx.touchAll(w.JobList) // due times move
	}
	if r.Fields&WorkspaceName != 0 {
		w.Name = r.Name
	}
	if r.Fields&WorkspacePlan != 0 {
		w.Plan = r.Plan
	}
	if r.Fields&WorkspaceStatus != 0 {
		w.Status = r.Status
	}
	if r.Fields&WorkspaceTrialEndsAt != 0 {
		w.TrialEndsAt = r.TrialEndsAt
	}
	if r.Fields&(WorkspacePlan|WorkspaceStatus|WorkspaceTrialEndsAt) != 0 {
		// Active again: jobs that turned missing meanwhile get their alerts.
		w.JobIdx.touchAll(w.JobList)
		w.ScheduleTrial(w.hooks)
	}
	for _, j := range w.Jobs {
		j.jsonUntil = 0 // the time zone moves due times
	}
	return nil
}

// TrialEnded records that a trial workspace's trial ended (at its
// trialEndsAt), for the activity log: its Mark's ID is the activity's.
type TrialEnded struct{ Mark }

func (r *TrialEnded) apply(w *Workspace) error {
	w.TrialNoted = r.At
	w.addActivity(Activity{ID: r.ID, At: r.At, Type: "workspace.trial_ended", Actor: "system"})
	return nil
}

// RESTUsage records a workspace's REST API request count for a calendar
// month (year*100 + month), so that the monthly quota survives a restart.
type RESTUsage struct {
	Header
	Month, Count int64
}

func (r *RESTUsage) fields(f *codec.Fields) { f.Walk(&r.Month, &r.Count) }

func (r *RESTUsage) apply(w *Workspace) error {
	w.RESTMonth, w.RESTMonthCount = r.Month, r.Count
	return nil
}

// RateLevels records the rate counts of one UTC minute, which are never
// logged otherwise: a shard handing over to another node writes it after
// its last snapshot, so that the next owner goes on counting the minute
// under way instead of from zero (a client cannot get twice the limit by a
// hand-over).
type RateLevels struct {
	Header
	Minute          int64 // ms / 60,000
	REST, Assistant int64
	Keys            []KeyCount // the report keys that counted requests
}

// KeyCount is a report key's count in a RateLevels minute.
type KeyCount struct {
	Key   ID
	Count int64
}

func (r *RateLevels) fields(f *codec.Fields) {
	f.Walk(&r.Minute, &r.REST, &r.Assistant)
	codec.Slice(f, &r.Keys, len(ID{})+1, func(f *codec.Fields, k *KeyCount) {
		f.Fixed(k.Key[:])
		f.Walk(&k.Count)
	})
}

// apply sets the minute's counts where the workspace counts no later
// minute (a key that is gone is skipped).
func (r *RateLevels) apply(w *Workspace) error {
	w.RESTMinute, w.RESTMinuteCount = laterCount(w.RESTMinute, w.RESTMinuteCount, r.Minute, r.REST)
	w.AsstMinute, w.AsstMinuteCount = laterCount(w.AsstMinute, w.AsstMinuteCount, r.Minute, r.Assistant)
	for _, kc := range r.Keys {
		if k := w.Keys[kc.Key]; k != nil {
			var n int64
			k.Minute, n = laterCount(k.Minute, int64(k.MinuteCount), r.Minute, kc.Count)
			k.MinuteCount = int(n)
		}
	}
	return nil
}

// laterCount returns the later of two (minute, count) pairs, and the larger
// count of one minute.
func laterCount(m1, c1, m2, c2 int64) (int64, int64) {
	switch {
	case m1 > m2:
		return m1, c1
	case m2 > m1:
		return m2, c2
	}
	return m1, max(c1, c2)
}

// ImportPart is one part of a whole workspace moved in from another data
// directory (`backupmon cluster import`): the workspace as a snapshot
// holds it (Encode, in layout Version), cut into parts that each fit one
// log message. The engine installs the workspace once its last part is
// applied; Header.Seq is the workspace's own sequence number then.
type ImportPart struct {
	Header
	Part, Of uint32
	Version  uint64
	Data     []byte
}

func (r *ImportPart) fields(f *codec.Fields) {
	f.Walk(&r.Part, &r.Of, &r.Version)
	f.Blob(&r.Data)
}

func (r *ImportPart) apply(*Workspace) error { return errNotApplied }

// ClockSet records a move of the development clock, so a restart resumes at
// the same development time. It belongs to the whole engine (no workspace).
type ClockSet struct {
	Header
	Now int64
}

func (r *ClockSet) fields(f *codec.Fields) { f.Varint(&r.Now) }

func (r *ClockSet) apply(*Workspace) error { return errNotApplied }

// KeyCreated records a new API key (its SHA-256, never the secret).
type KeyCreated struct {
	Header
	ID, ActivityID       ID
	Name, KeyType        string
	Prefix               string
	Hash                 [32]byte
	Scopes               uint8
	ReadWrite            bool
	CreatedAt, ExpiresAt int64
	Actor                string // who created it
}

func (r *KeyCreated) fields(f *codec.Fields) {
	f.Walk(r.ID[:], r.ActivityID[:], &r.Name, &r.KeyType, &r.Prefix, r.Hash[:], &r.Scopes, &r.ReadWrite, &r.CreatedAt, &r.ExpiresAt, &r.Actor)
}

func (r *KeyCreated) apply(w *Workspace) error {
	k := &Key{ID: r.ID, Name: r.Name, Type: r.KeyType, Prefix: r.Prefix, Source: "api:" + r.Prefix, Hash: r.Hash, Scopes: r.Scopes, ReadWrite: r.ReadWrite, CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt}
	w.Keys[r.ID] = k
	w.added(r.ID, Activity{ID: r.ActivityID, At: r.CreatedAt, Type: "key.created", Actor: actorOr(r.Actor), KeyID: r.ID, KeyName: r.Name})
	w.hooks.KeyAdded(w, k)
	return nil
}

// KeyRevoked records that a key was deleted.
type KeyRevoked struct{ Removal }

func (r *KeyRevoked) apply(w *Workspace) error {
	return remove(w, &r.Removal, "revoke unknown key", w.Keys[r.ID], func(k *Key) Activity {
		delete(w.Keys, k.ID)
		k.Revoked = true
		w.hooks.KeyRemoved(w, k)
		return Activity{Type: "key.revoked", KeyID: k.ID, KeyName: k.Name}
	})
}

// KeyFirstUsed records the first use of a REST key.
type KeyFirstUsed struct {
	Header
	ID, ActivityID ID
	At             int64
}

func (r *KeyFirstUsed) fields(f *codec.Fields) { f.Walk(r.ID[:], r.ActivityID[:], &r.At) }

func (r *KeyFirstUsed) apply(w *Workspace) error {
	k := w.Keys[r.ID]
	if k == nil {
		return fmt.Errorf("first use of unknown key %s", r.ID)
	}
	k.FirstUsed = true
	w.addActivity(Activity{ID: r.ActivityID, At: r.At, Type: "key.first_used", Actor: "key:" + k.Prefix, KeyID: r.ID, KeyName: k.Name})
	return nil
}
