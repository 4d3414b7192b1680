package engine

import (
	"encoding/base32"
	"fmt"
	"slices"
	"time"

	"backupmon/state"
)

// The workload's steps of people: users, sessions, invitations and
// two-factor sign-in, as the dashboard's pages and its sign-in make them.

// wlUser is a user the workload made: the password hash it signs in with,
// and its TOTP secret and unused recovery codes while two-factor sign-in is
// on.
type wlUser struct {
	id, email, hash string
	secret          string
	recovery        []string
}

type wlInvite struct {
	id   string
	hash [32]byte
}

// wlSession is a session the workload started, and when its last use was
// logged.
type wlSession struct {
	hash   [32]byte
	logged time.Time
}

// userChange makes, changes or deletes a user.
func (l *workload) userChange(s *wsState) {
	r, x := s.rng, &s.extra
	x.made++
	if len(x.users) == 0 {
		l.addUser(s, state.RoleOwner)
		return
	}
	u := x.users[r.IntN(len(x.users))]
	switch r.IntN(4) {
	case 0:
		if len(x.users) < 8 {
			l.addUser(s, []string{state.RoleAdmin, state.RoleMember, state.RoleViewer, state.RoleOwner}[r.IntN(4)])
		}
	case 1, 2:
		in := UserInput{Name: Some(fmt.Sprintf("Person %d", x.made)), Actor: "user:" + x.users[0].email}
		switch r.IntN(3) {
		case 0:
			in.Role = Some([]string{state.RoleAdmin, state.RoleMember, state.RoleViewer}[r.IntN(3)])
		case 1:
			in.Hash = Some(fmt.Sprintf("hash:%d", x.made)) // ends the user's sessions
		}
		if _, err := l.e.UpdateUser(s.id, u.id, in); l.allow("update user", err) && in.Hash.Set {
			u.hash = in.Hash.V
		}
	default:
		if len(x.users) < 2 {
			return
		}
		i := 1 + r.IntN(len(x.users)-1) // the first owner stays
		if l.allow("delete user", l.e.DeleteUser(s.id, x.users[i].id, "")) {
			x.users = slices.Delete(x.users, i, i+1)
		}
	}
}

// sessionChange starts, uses or ends a session of a user. A use is made
// only once the session's last logged use is SessionSeenLogMs old (when it
// is logged): a use in between is kept in memory and snapshots only, and a
// crash may lose it by design (like a key's lastUsedAt), which the
// determinism tests cannot tell from a fault.
func (l *workload) sessionChange(s *wsState) {
	if len(s.extra.users) == 0 {
		return // a user first
	}
	r, x, now := s.rng, &s.extra, l.e.Now()
	x.made++
	switch n := r.IntN(6); {
	case n < 2 || len(x.sessions) == 0:
		u := x.users[r.IntN(len(x.users))]
		h := secretHash(fmt.Sprintf("session %s %d", s.id, x.made))
		var err error
		if u.secret == "" {
			err = l.e.StartSession(s.id, u.id, u.hash, h)
		} else {
			err = l.e.StartSessionTwoFactor(s.id, u.id, u.hash, l.secondFactor(s, u), h)
		}
		if l.allow("start session", err) {
			x.sessions = append(x.sessions, wlSession{h, now})
		}
	case n < 5:
		for i := len(x.sessions) - 1; i >= 0; i-- { // the newest first: the likeliest alive
			ss := &x.sessions[i]
			if now.Sub(ss.logged).Milliseconds() >= state.SessionSeenLogMs {
				l.e.Session(ss.hash) // seen now, and logged; or ended, idle too long
				ss.logged = now
				break
			}
		}
	default:
		i := r.IntN(len(x.sessions))
		check(l.t, "end session", l.e.EndSession(x.sessions[i].hash))
		x.sessions = slices.Delete(x.sessions, i, i+1)
	}
}

// inviteChange makes, revokes or accepts an invitation.
func (l *workload) inviteChange(s *wsState) {
	x := &s.extra
	if len(x.users) == 0 {
		return // an owner invites
	}
	r := s.rng
	x.made++
	if r.IntN(2) == 0 || len(x.invites) == 0 {
		h := secretHash(fmt.Sprintf("invite %s %d", s.id, x.made))
		v, err := l.e.CreateInvite(s.id, InviteInput{Email: Some(fmt.Sprintf("invited%d@example.com", r.IntN(20))),
			Role: Some(state.RoleMember), Actor: "user:" + x.users[0].email}, h)
		if l.allow("invite", err) {
			x.invites = append(x.invites, wlInvite{v.ID, h})
		}
		return
	}
	i := r.IntN(len(x.invites))
	inv := x.invites[i]
	x.invites = slices.Delete(x.invites, i, i+1)
	if r.IntN(3) == 0 {
		l.allow("revoke invite", l.e.RevokeInvite(s.id, inv.id, ""))
		return
	}
	hash := fmt.Sprintf("hash:invited %d", x.made)
	v, err := l.e.AcceptInvite(s.id, inv.hash, Some("Invited"), hash)
	if l.allow("accept invite", err) {
		x.users = append(x.users, &wlUser{id: v.ID, email: v.Email, hash: hash})
	}
}

func (l *workload) addUser(s *wsState, role string) {
	x := &s.extra
	email := fmt.Sprintf("person%d@example.com", x.made)
	u := &wlUser{email: email, hash: "hash:" + email}
	v, err := l.e.CreateUser(s.id, UserInput{Email: Some(email), Name: Some("Person"), Role: Some(role), Hash: Some(u.hash)})
	if l.allow("create user", err) {
		u.id = v.ID
		x.users = append(x.users, u)
	}
}

// secondFactor returns a code of u: a recovery code (used up) or the TOTP
// code of now (refused when its step was used).
func (l *workload) secondFactor(s *wsState, u *wlUser) string {
	if len(u.recovery) > 0 && s.rng.IntN(2) == 0 {
		c := u.recovery[0]
		u.recovery = u.recovery[1:]
		return c
	}
	return tfCode(l.t, u.secret, l.e.Now())
}

// newRecovery returns n recovery codes and their hashes.
func (l *workload) newRecovery(s *wsState, n int) ([]string, [][32]byte) {
	var codes []string
	var hashes [][32]byte
	for range n {
		c := fmt.Sprintf("%04x-%04x", s.rng.IntN(1<<16), s.rng.IntN(1<<16))
		codes, hashes = append(codes, c), append(hashes, RecoveryHash(c))
	}
	return codes, hashes
}

// twoFactorChange turns a user's two-factor sign-in on or off, renews
// their recovery codes, or sets whether the workspace requires it.
func (l *workload) twoFactorChange(s *wsState) {
	r, x := s.rng, &s.extra
	if len(x.users) == 0 {
		return
	}
	u := x.users[r.IntN(len(x.users))]
	switch r.IntN(5) {
	case 0, 1:
		if u.secret != "" {
			return
		}
		raw := make([]byte, 10)
		for i := range raw {
			raw[i] = byte(r.IntN(256))
		}
		secret := base32.StdEncoding.EncodeToString(raw)
		codes, hashes := l.newRecovery(s, 4)
		if l.allow("enable two-factor", l.e.EnableTwoFactor(s.id, u.id, secret, tfCode(l.t, secret, l.e.Now()), hashes, "")) {
			u.secret, u.recovery = secret, codes
		}
	case 2:
		if u.secret == "" {
			return
		}
		reset := r.IntN(2) == 0
		code := ""
		if !reset {
			code = l.secondFactor(s, u)
		}
		if l.allow("disable two-factor", l.e.DisableTwoFactor(s.id, u.id, reset, code, "user:"+x.users[0].email)) {
			u.secret, u.recovery = "", nil
		}
	case 3:
		if u.secret == "" {
			return
		}
		codes, hashes := l.newRecovery(s, 3)
		if l.allow("renew recovery codes", l.e.RenewRecovery(s.id, u.id, l.secondFactor(s, u), hashes, "")) {
			u.recovery = codes
		}
	default:
		x.required = !x.required
		check(l.t, "require two-factor", l.e.RequireTwoFactor(s.id, x.required, "user:"+x.users[0].email))
	}
}
