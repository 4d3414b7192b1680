package state

import (
	"fmt"

	"backupmon/codec"
)

// Records of invitations: an owner or admin invites an e-mail address with
// a role, and the person who holds the invitation's one-time link sets their
// name and password, which makes them a user of the workspace.

// Record type numbers of this file.
const (
	TypeInviteCreated byte = 65
	TypeInviteEnded   byte = 66
)

// InviteTTLMs is how long an invitation's link works.
const InviteTTLMs = 7 * MsPerDay

// Invite is an invitation not yet accepted or revoked. Hash is the SHA-256
// of the link's secret, never the secret.
type Invite struct {
	ID                   ID
	Email, Role          string
	Hash                 [32]byte
	CreatedAt, ExpiresAt int64
	By                   string // who invited, as activity entries name actors
}

// Expired reports whether the invitation's link no longer works at now.
func (i *Invite) Expired(now int64) bool { return now >= i.ExpiresAt }

func (i *Invite) key() ID { return i.ID }

func (i *Invite) walk(s *snap, _ *Workspace) error {
	s.f.Walk(i.ID[:], &i.Email, &i.Role, i.Hash[:], &i.CreatedAt, &i.ExpiresAt, &i.By)
	return s.observe(i.ID)
}

// invites returns the workspace's invitations, made on first use.
func (w *Workspace) invites() map[ID]*Invite {
	if w.Invites == nil {
		w.Invites = map[ID]*Invite{}
	}
	return w.Invites
}

// InviteCreated records an invitation of Email as Role whose link's secret
// hashes to Hash.
type InviteCreated struct {
	Header
	ID, ActivityID       ID
	Email, Role          string
	Hash                 [32]byte
	CreatedAt, ExpiresAt int64
	Actor                string
}

func (r *InviteCreated) fields(f *codec.Fields) {
	f.Walk(r.ID[:], r.ActivityID[:], &r.Email, &r.Role, r.Hash[:], &r.CreatedAt, &r.ExpiresAt, &r.Actor)
}

func (r *InviteCreated) apply(w *Workspace) error {
	i := &Invite{ID: r.ID, Email: r.Email, Role: r.Role, Hash: r.Hash, CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt, By: actorOr(r.Actor)}
	w.invites()[i.ID] = i
	w.added(i.ID, Activity{ID: r.ActivityID, At: r.CreatedAt, Type: "invite.created", Actor: i.By, SubjectID: i.ID, SubjectName: i.Email})
	return nil
}

// InviteEnded records the end of an invitation: accepted when UserID is
// set (the invitee becomes that user, with Name and the password hash
// Hash), else revoked by Actor.
type InviteEnded struct {
	Header
	ID, ActivityID, UserID ID
	Name, Hash             string
	At                     int64
	Actor                  string
}

func (r *InviteEnded) fields(f *codec.Fields) {
	f.Walk(r.ID[:], r.ActivityID[:], r.UserID[:], &r.Name, &r.Hash, &r.At, &r.Actor)
}

func (r *InviteEnded) apply(w *Workspace) error {
	i := w.Invites[r.ID]
	if i == nil {
		return fmt.Errorf("end unknown invitation %s", r.ID)
	}
	delete(w.Invites, i.ID)
	if r.UserID.IsZero() {
		w.addActivity(Activity{ID: r.ActivityID, At: r.At, Type: "invite.revoked", Actor: actorOr(r.Actor), SubjectID: i.ID, SubjectName: i.Email})
		return nil
	}
	u := &User{ID: r.UserID, Email: i.Email, Name: r.Name, Role: i.Role, Hash: r.Hash, CreatedAt: r.At}
	w.Users[u.ID] = u
	w.added(u.ID, Activity{ID: r.ActivityID, At: r.At, Type: "invite.accepted", Actor: "user:" + u.Email, SubjectID: u.ID, SubjectName: u.Email})
	w.hooks.UserAdded(w, u)
	return nil
}
