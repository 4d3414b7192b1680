package state

import (
	"fmt"

	"backupmon/codec"
)

// Records of the dashboard's people: users and their sessions.

// Record type numbers of this file.
const (
	TypeUserCreated    byte = 26
	TypeUserUpdated    byte = 27
	TypeUserDeleted    byte = 28
	TypeSessionStarted byte = 29
	TypeSessionSeen    byte = 30
	TypeSessionEnded   byte = 31
)

// User field bits for UserUpdated.Fields.
const (
	UserEmail uint8 = 1 << iota
	UserName
	UserRole
	UserPassword
)

// UserCreated records a new dashboard user; Hash is the password's
// encoded argon2id hash, never the password.
type UserCreated struct {
	Header
	ID, ActivityID          ID
	Email, Name, Role, Hash string
	CreatedAt               int64
	Actor                   string
}

func (r *UserCreated) fields(f *codec.Fields) {
	f.Walk(r.ID[:], r.ActivityID[:], &r.Email, &r.Name, &r.Role, &r.Hash, &r.CreatedAt, &r.Actor)
}

func (r *UserCreated) apply(w *Workspace) error {
	u := &User{ID: r.ID, Email: r.Email, Name: r.Name, Role: r.Role, Hash: r.Hash, CreatedAt: r.CreatedAt}
	w.Users[u.ID] = u
	w.added(u.ID, Activity{ID: r.ActivityID, At: r.CreatedAt, Type: "user.created", Actor: actorOr(r.Actor), SubjectID: u.ID, SubjectName: u.Email})
	w.hooks.UserAdded(w, u)
	return nil
}

// UserUpdated records changed user fields (those set in Fields). A new
// password (UserPassword) ends the user's sessions.
type UserUpdated struct {
	Header
	ID, ActivityID          ID
	Fields                  uint8
	Email, Name, Role, Hash string
	At                      int64
	Actor                   string
}

func (r *UserUpdated) fields(f *codec.Fields) {
	f.Walk(r.ID[:], r.ActivityID[:], &r.Fields, &r.Email, &r.Name, &r.Role, &r.Hash, &r.At, &r.Actor)
}

func (r *UserUpdated) apply(w *Workspace) error {
	u := w.Users[r.ID]
	if u == nil {
		return fmt.Errorf("update unknown user %s", r.ID)
	}
	if r.Fields&UserEmail != 0 {
		w.hooks.UserRemoved(u.Email)
		u.Email = r.Email
		w.hooks.UserAdded(w, u)
	}
	if r.Fields&UserName != 0 {
		u.Name = r.Name
	}
	if r.Fields&UserRole != 0 {
		u.Role = r.Role
	}
	if r.Fields&UserPassword != 0 {
		u.Hash = r.Hash
		w.endSessions(u)
	}
	w.addActivity(Activity{ID: r.ActivityID, At: r.At, Type: "user.updated", Actor: actorOr(r.Actor), SubjectID: u.ID, SubjectName: u.Email})
	return nil
}

// UserDeleted records that a user is gone, with every session of theirs.
type UserDeleted struct{ Removal }

func (r *UserDeleted) apply(w *Workspace) error {
	return remove(w, &r.Removal, "delete unknown user", w.Users[r.ID], func(u *User) Activity {
		w.endSessions(u)
		delete(w.Users, u.ID)
		w.hooks.UserRemoved(u.Email)
		return Activity{Type: "user.deleted", SubjectID: u.ID, SubjectName: u.Email}
	})
}

// SessionStarted records a login: the session's id, its user and the
// SHA-256 of its secret cookie value.
type SessionStarted struct {
	Header
	ID, UserID ID
	Hash       [32]byte
	At         int64
}

func (r *SessionStarted) fields(f *codec.Fields) { f.Walk(r.ID[:], r.UserID[:], r.Hash[:], &r.At) }

func (r *SessionStarted) apply(w *Workspace) error {
	u := w.Users[r.UserID]
	if u == nil {
		return fmt.Errorf("session of unknown user %s", r.UserID)
	}
	s := &Session{ID: r.ID, User: u, Hash: r.Hash, CreatedAt: r.At, SeenAt: r.At, LoggedAt: r.At}
	w.Sessions[s.ID] = s
	w.IDs.Observe(s.ID)
	w.hooks.SessionAdded(w, s)
	return nil
}

// SessionSeen records that a session was used at At, so that its idle
// expiry survives a restart; it is logged at most every few minutes.
type SessionSeen struct{ Mark }

func (r *SessionSeen) apply(w *Workspace) error {
	if s := w.Sessions[r.ID]; s != nil {
		s.SeenAt, s.LoggedAt = max(s.SeenAt, r.At), r.At
	}
	return nil
}

// SessionEnded records a logout.
type SessionEnded struct{ Mark }

func (r *SessionEnded) apply(w *Workspace) error {
	if s := w.Sessions[r.ID]; s != nil {
		delete(w.Sessions, s.ID)
		w.hooks.SessionRemoved(s.Hash)
	}
	return nil
}
