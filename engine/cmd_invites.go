package engine

import (
	"slices"
	"strings"

	"backupmon/state"
)

// Commands of invitations: an owner or admin invites an e-mail address with
// a role; the invitation's one-time link (the workspace's id and a secret
// whose SHA-256 the engine keeps) lets the person set their name and
// password, once, before it expires.

// InviteInput is the body of an invitation.
type InviteInput struct {
	Email, Role Opt[string]
	// Actor is who invites, for the activity log.
	Actor string
}

// InviteView is an open invitation, without its secret.
type InviteView struct {
	ID, Email, Role, By  string
	CreatedAt, ExpiresAt int64
	Expired              bool
	// Workspace is the name of the invitation's workspace.
	Workspace string
}

func inviteView(w *workspace, i *state.Invite, now int64) InviteView {
	return InviteView{ID: i.ID.String(), Email: i.Email, Role: i.Role, By: i.By, CreatedAt: i.CreatedAt, ExpiresAt: i.ExpiresAt,
		Expired: i.Expired(now), Workspace: w.Name}
}

// Errors of an invitation's link.
var (
	// ErrInviteExpired answers a link whose invitation has expired.
	ErrInviteExpired = conflict("the invitation has expired")
	// ErrInviteOpen answers a second invitation of an address whose first
	// is still open.
	ErrInviteOpen = conflict("an invitation for this email is already open")
)

// CreateInvite records an invitation of an e-mail address with a role,
// whose link's secret hashes to hash; it expires after state.InviteTTLMs.
// It returns KindInvalid errors naming the field at fault, and KindConflict
// when the address is already a user of the workspace or has an open
// invitation there.
func (e *Engine) CreateInvite(wsID string, in InviteInput, hash [32]byte) (InviteView, error) {
	email, verr := checkEmail(in.Email)
	if verr != nil {
		return InviteView{}, verr
	}
	if err := checkEnum("role", in.Role, state.Roles, "owner, admin, member, viewer", true); err != nil {
		return InviteView{}, err
	}
	return command(e, wsID, func(w *workspace, now int64) (decision[InviteView], error) {
		if w.UserByEmail(email) != nil {
			return decision[InviteView]{}, errEmailTaken()
		}
		for _, i := range w.Invites {
			if i.Email == email && !i.Expired(now) {
				return decision[InviteView]{}, ErrInviteOpen
			}
		}
		rec := &state.InviteCreated{ID: w.IDs.Next(now), ActivityID: w.IDs.Next(now), Email: email, Role: in.Role.V, Hash: hash,
			CreatedAt: now, ExpiresAt: now + state.InviteTTLMs, Actor: in.Actor}
		return decision[InviteView]{rec: rec, answer: func(w *workspace) InviteView { return inviteView(w, w.Invites[rec.ID], now) }}, nil
	})
}

// Invites returns the workspace's open invitations (expired ones marked),
// newest first.
func (e *Engine) Invites(wsID string) ([]InviteView, error) {
	a, err := e.workspaceActor(wsID)
	if err != nil {
		return nil, err
	}
	return ask(a, func(w *workspace) []InviteView {
		now := e.nowMs()
		out := make([]InviteView, 0, len(w.Invites))
		for _, i := range w.Invites {
			out = append(out, inviteView(w, i, now))
		}
		slices.SortFunc(out, func(a, b InviteView) int { return strings.Compare(b.ID, a.ID) })
		return out
	}), nil
}

// RevokeInvite ends an invitation: its link stops working. An unknown one
// is a KindNotFound error.
func (e *Engine) RevokeInvite(wsID, inviteID, actor string) error {
	return e.remove(wsID, actor, func(w *workspace) (state.ID, error) {
		id, ok := state.ParseID(inviteID)
		if !ok || w.Invites[id] == nil {
			return state.ID{}, notFound("invitation")
		}
		return id, nil
	}, func(r state.Removal) state.Record {
		return &state.InviteEnded{ID: r.ID, ActivityID: r.ActivityID, At: r.At, Actor: r.Actor}
	})
}

// inviteByHash returns the workspace's invitation whose link's secret
// hashes to hash: KindNotFound when there is none (used, revoked, or
// another workspace's), ErrInviteExpired when it has expired.
func inviteByHash(w *workspace, hash [32]byte, now int64) (*state.Invite, error) {
	for _, i := range w.Invites {
		if i.Hash == hash {
			if i.Expired(now) {
				return nil, ErrInviteExpired
			}
			return i, nil
		}
	}
	return nil, notFound("invitation")
}

// Invite returns the invitation of a link: the workspace it names and the
// SHA-256 of its secret. It fails as inviteByHash does, and with
// KindNotFound for an unknown workspace.
func (e *Engine) Invite(wsID string, hash [32]byte) (InviteView, error) {
	a, err := e.workspaceActor(wsID)
	if err != nil {
		return InviteView{}, notFound("invitation")
	}
	type found struct {
		v   InviteView
		err error
	}
	f := ask(a, func(w *workspace) found {
		now := e.nowMs()
		i, err := inviteByHash(w, hash, now)
		if err != nil {
			return found{err: err}
		}
		return found{v: inviteView(w, i, now)}
	})
	if f.err == nil && f.v.ID == "" {
		return InviteView{}, ErrClosed
	}
	return f.v, f.err
}

// AcceptInvite makes the holder of an invitation's link a user of its
// workspace, with a name and a password hash (the caller hashes), and ends
// the invitation. It fails as Invite does, with a KindInvalid error for the
// name or the hash, and KindConflict when the address became a user of the
// workspace meanwhile.
func (e *Engine) AcceptInvite(wsID string, hash [32]byte, name Opt[string], pwHash string) (UserView, error) {
	if err := checkName("name", name, true); err != nil {
		return UserView{}, err
	}
	if err := checkHash(Some(pwHash)); err != nil {
		return UserView{}, err
	}
	a, err := e.workspaceActor(wsID)
	if err != nil {
		return UserView{}, notFound("invitation")
	}
	return change(a, func(w *workspace, now int64) (decision[UserView], error) {
		i, err := inviteByHash(w, hash, now)
		if err != nil {
			return decision[UserView]{}, err
		}
		if w.UserByEmail(i.Email) != nil {
			return decision[UserView]{}, errEmailTaken()
		}
		rec := &state.InviteEnded{ID: i.ID, ActivityID: w.IDs.Next(now), UserID: w.IDs.Next(now), Name: name.V, Hash: pwHash, At: now}
		return decision[UserView]{rec: rec, answer: func(w *workspace) UserView { return userView(w.Users[rec.UserID]) }}, nil
	})
}
