package engine

import (
	"net/mail"
	"strings"
	"unicode/utf8"

	"backupmon/state"
)

// Commands of the dashboard's people: users, logins and sessions.

// Dashboard users and their sessions (decisions.md 11). The engine keeps the
// users' password hashes and the SHA-256 of each session's secret; it never
// sees a password or a session secret.

// UserInput is the body of a user create or update; Hash is the new
// password's encoded argon2id hash (the caller hashes, the engine never
// sees a password).
type UserInput struct {
	Email, Name, Role, Hash Opt[string]
	// Actor is who makes the change, for the activity log ("" is the
	// admin API).
	Actor string
	// CheckedHash, when set, is the password hash the user's current
	// password was checked against (a user changing their own): the
	// change applies only while it is still the user's, else a
	// KindConflict error.
	CheckedHash string
}

// checkEmail returns the address in lower case, or a KindInvalid error.
func checkEmail(v Opt[string]) (string, *Error) {
	if !v.Set || v.Null || v.V == "" {
		return "", invalid("email", "email is required")
	}
	if utf8.RuneCountInString(v.V) > state.MaxEmailChars {
		return "", invalid("email", "email must be at most %d characters", state.MaxEmailChars)
	}
	a, err := mail.ParseAddress(v.V)
	if err != nil || a.Address != v.V || a.Name != "" {
		return "", invalid("email", "email must be an e-mail address")
	}
	return strings.ToLower(v.V), nil
}

func checkHash(v Opt[string]) *Error {
	if !v.Set || v.Null || v.V == "" {
		return invalid("password", "password is required")
	}
	return nil
}

// CheckUser answers as CreateUser (userID "") or UpdateUser would, for
// everything but the password's hash, and changes nothing: the workspace
// and the user exist (KindNotFound), the fields are valid (KindInvalid)
// and a new e-mail address is not taken (KindConflict). The admin API calls
// it before it spends a hash on the password; the command checks again.
func (e *Engine) CheckUser(wsID, userID string, in UserInput) error {
	if _, err := e.workspaceActor(wsID); err != nil {
		return err
	}
	creating := userID == ""
	if !creating {
		if _, err := e.User(wsID, userID); err != nil {
			return err
		}
	}
	var email string
	if creating || in.Email.Set {
		var verr *Error
		if email, verr = checkEmail(in.Email); verr != nil {
			return verr
		}
	}
	if creating || in.Name.Set {
		if err := checkName("name", in.Name, true); err != nil {
			return err
		}
	}
	if creating || in.Role.Set {
		if err := checkEnum("role", in.Role, state.Roles, "owner, admin, member, viewer", true); err != nil {
			return err
		}
	}
	if creating {
		a, err := e.workspaceActor(wsID)
		if err != nil {
			return err
		}
		if ask(a, func(w *workspace) bool { return w.UserByEmail(email) != nil }) {
			return errEmailTaken()
		}
	}
	return nil
}

// errEmailTaken is the answer to a second user of one e-mail address in a
// workspace.
func errEmailTaken() *Error { return conflict("a user with this email already exists") }

// CreateUser adds a dashboard user. An e-mail address is one user's in a
// workspace (it may be another workspace's user too): a taken one is a
// KindConflict error. It returns KindInvalid errors naming the field at fault.
func (e *Engine) CreateUser(wsID string, in UserInput) (UserView, error) {
	a, err := e.workspaceActor(wsID)
	if err != nil {
		return UserView{}, err
	}
	email, verr := checkEmail(in.Email)
	if verr != nil {
		return UserView{}, verr
	}
	if err := checkName("name", in.Name, true); err != nil {
		return UserView{}, err
	}
	if err := checkEnum("role", in.Role, state.Roles, "owner, admin, member, viewer", true); err != nil {
		return UserView{}, err
	}
	if err := checkHash(in.Hash); err != nil {
		return UserView{}, err
	}
	return change(a, func(w *workspace, now int64) (decision[UserView], error) {
		if w.UserByEmail(email) != nil {
			return decision[UserView]{}, errEmailTaken()
		}
		rec := &state.UserCreated{ID: w.IDs.Next(now), ActivityID: w.IDs.Next(now), Email: email, Name: in.Name.V,
			Role: in.Role.V, Hash: in.Hash.V, CreatedAt: now, Actor: in.Actor}
		return decision[UserView]{rec: rec, answer: func(w *workspace) UserView { return userView(w.Users[rec.ID]) }}, nil
	})
}

// UpdateUser changes a user's e-mail, name, role or password (a new Hash
// ends every session of the user). The last owner of a workspace cannot be
// given another role: a KindConflict error.
func (e *Engine) UpdateUser(wsID, userID string, in UserInput) (UserView, error) {
	a, err := e.workspaceActor(wsID)
	if err != nil {
		return UserView{}, err
	}
	var email string
	if in.Email.Set {
		var verr *Error
		if email, verr = checkEmail(in.Email); verr != nil {
			return UserView{}, verr
		}
	}
	if in.Name.Set {
		if err := checkName("name", in.Name, true); err != nil {
			return UserView{}, err
		}
	}
	if in.Role.Set {
		if err := checkEnum("role", in.Role, state.Roles, "owner, admin, member, viewer", true); err != nil {
			return UserView{}, err
		}
	}
	if err := checkHash(in.Hash); in.Hash.Set && err != nil {
		return UserView{}, err
	}
	return change(a, func(w *workspace, now int64) (decision[UserView], error) {
		u := w.User(userID)
		switch {
		case u == nil:
			return decision[UserView]{}, notFound("user")
		case in.CheckedHash != "" && u.Hash != in.CheckedHash:
			return decision[UserView]{}, conflict("the password changed meanwhile")
		}
		rec := &state.UserUpdated{ID: u.ID, At: now, Actor: in.Actor}
		if in.Email.Set && email != u.Email {
			if w.UserByEmail(email) != nil {
				return decision[UserView]{}, errEmailTaken()
			}
			rec.Fields |= state.UserEmail
			rec.Email = email
		}
		if in.Name.Set && in.Name.V != u.Name {
			rec.Fields |= state.UserName
			rec.Name = in.Name.V
		}
		if in.Role.Set && in.Role.V != u.Role {
			if u.Role == state.RoleOwner && w.Owners() == 1 {
				return decision[UserView]{}, conflict("the workspace must keep at least one owner")
			}
			rec.Fields |= state.UserRole
			rec.Role = in.Role.V
		}
		if in.Hash.Set {
			rec.Fields |= state.UserPassword
			rec.Hash = in.Hash.V
		}
		answer := func(w *workspace) UserView { return userView(u) }
		if rec.Fields == 0 {
			return decision[UserView]{answer: answer}, nil
		}
		rec.ActivityID = w.IDs.Next(now)
		return decision[UserView]{rec: rec, answer: answer}, nil
	})
}

// DeleteUser removes a user and ends every session of theirs. The last
// owner of a workspace cannot be deleted: a KindConflict error.
func (e *Engine) DeleteUser(wsID, userID, actor string) error {
	return e.remove(wsID, actor, func(w *workspace) (state.ID, error) {
		u := w.User(userID)
		switch {
		case u == nil:
			return state.ID{}, notFound("user")
		case u.Role == state.RoleOwner && w.Owners() == 1:
			return state.ID{}, conflict("the workspace must keep at least one owner")
		}
		return u.ID, nil
	}, func(r state.Removal) state.Record { return &state.UserDeleted{Removal: r} })
}

// Login is what a login needs to know of one user an e-mail address names.
type Login struct {
	WorkspaceID, UserID string
	// Hash is the user's encoded password hash.
	Hash string
	// TwoFactor is whether the user signs in with a second factor.
	TwoFactor bool
}

// LoginFor returns the first user (by workspace id) whose e-mail address is
// email (without regard to case); ok is false when there is none.
func (e *Engine) LoginFor(email string) (l Login, ok bool) {
	ls := e.Logins(email)
	if len(ls) == 0 {
		return Login{}, false
	}
	return ls[0], true
}

// Logins returns every user whose e-mail address is email (without regard
// to case), one per workspace, by workspace id; none when there is none.
func (e *Engine) Logins(email string) []Login {
	var out []Login
	for _, ref := range e.people.emails.get(email) {
		l, ok := ask2(ref.act, func(w *workspace) (Login, bool) {
			u := w.Users[ref.id]
			if u == nil {
				return Login{}, false
			}
			return Login{WorkspaceID: w.ID.String(), UserID: u.ID.String(), Hash: u.Hash, TwoFactor: u.TwoFactor != nil}, true
		})
		if ok {
			out = append(out, l)
		}
	}
	return out
}

// StartSession records a login of userID whose session secret hashes to
// hash, once the password was checked against hash. It fails with a
// KindNotFound error when the user is gone, a KindConflict error when the
// password hash the login checked is no longer the user's, and
// ErrSecondFactor for a user who signs in with a second factor
// (StartSessionTwoFactor).
func (e *Engine) StartSession(wsID, userID, checkedHash string, hash [32]byte) error {
	_, err := command(e, wsID, func(w *workspace, now int64) (decision[struct{}], error) {
		u := w.User(userID)
		if u == nil {
			return decision[struct{}]{}, notFound("user")
		}
		if u.Hash != checkedHash {
			return decision[struct{}]{}, conflict("the password changed")
		}
		if u.TwoFactor != nil {
			return decision[struct{}]{}, ErrSecondFactor
		}
		return decision[struct{}]{rec: &state.SessionStarted{ID: w.IDs.Next(now), UserID: u.ID, Hash: hash, At: now}}, nil
	})
	return err
}

// SessionUser is the user behind a live session, with their workspace.
type SessionUser struct {
	SessionID, UserID, Email, Name, Role string
	Workspace                            BoardWorkspace
	// TwoFactor is whether the user signs in with a second factor, with
	// RecoveryLeft unused recovery codes; TwoFactorRequired whether the
	// workspace requires it, and MustSetUpTwoFactor is set when it does
	// and the user has not turned it on.
	TwoFactor, TwoFactorRequired, MustSetUpTwoFactor bool
	RecoveryLeft                                     int
}

// Session returns the user of the session whose secret hashes to hash, and
// counts this as a use; ok is false when there is no such session or it has
// expired (12 hours idle, 30 days in all), and the expired session ends.
func (e *Engine) Session(hash [32]byte) (su SessionUser, ok bool) {
	v, found := e.people.sessions.Load(hash)
	if !found {
		return SessionUser{}, false
	}
	ref := v.(*personRef)
	return ask2(ref.act, func(w *workspace) (SessionUser, bool) {
		now := e.nowMs()
		s := w.Sessions[ref.id]
		if s == nil || s.Hash != hash {
			return SessionUser{}, false
		}
		if now-s.SeenAt >= state.SessionIdleMs || now-s.CreatedAt >= state.SessionAbsoluteMs {
			ref.act.logAsync(&state.SessionEnded{Mark: state.Mark{ID: s.ID, At: now}})
			return SessionUser{}, false
		}
		s.SeenAt = max(s.SeenAt, now)
		if now-s.LoggedAt >= state.SessionSeenLogMs {
			ref.act.logAsync(&state.SessionSeen{Mark: state.Mark{ID: s.ID, At: now}})
		}
		u := s.User
		su := SessionUser{SessionID: s.ID.String(), UserID: u.ID.String(), Email: u.Email, Name: u.Name, Role: u.Role,
			Workspace: w.boardWorkspace(now), TwoFactor: u.TwoFactor != nil, TwoFactorRequired: w.TwoFactorRequired, MustSetUpTwoFactor: w.TwoFactorRequired && u.TwoFactor == nil}
		if u.TwoFactor != nil {
			su.RecoveryLeft = u.TwoFactor.RecoveryLeft()
		}
		return su, true
	})
}

// EndSession records a logout of the session whose secret hashes to hash;
// an unknown session is not an error.
func (e *Engine) EndSession(hash [32]byte) error {
	v, found := e.people.sessions.Load(hash)
	if !found {
		return nil
	}
	ref := v.(*personRef)
	_, err := change(ref.act, func(w *workspace, now int64) (decision[struct{}], error) {
		s := w.Sessions[ref.id]
		if s == nil || s.Hash != hash {
			return decision[struct{}]{}, nil
		}
		return decision[struct{}]{rec: &state.SessionEnded{Mark: state.Mark{ID: s.ID, At: now}}}, nil
	})
	return err
}
