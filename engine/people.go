package engine

import (
	"fmt"
	"net/mail"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"backupmon/codec"
	"backupmon/wal"
)

// Dashboard users and their sessions (decisions.md 11). The engine keeps the
// users' password hashes and the SHA-256 of each session's secret; it never
// sees a password or a session secret.

// Roles of dashboard users, from most to least powerful.
const (
	RoleOwner  = "owner"
	RoleAdmin  = "admin"
	RoleMember = "member"
	RoleViewer = "viewer"
)

var roles = map[string]bool{RoleOwner: true, RoleAdmin: true, RoleMember: true, RoleViewer: true}

// Session lifetimes (decisions.md 11), and how often a session's use is
// logged so that its idle expiry survives a restart.
const (
	SessionIdleMs     = 12 * 60 * msPerMinute
	SessionAbsoluteMs = 30 * msPerDay
	sessionSeenLogMs  = 5 * msPerMinute
	maxEmailChars     = 254
)

type user struct {
	id                      ID
	email, name, role, hash string
	createdAt               int64
}

type session struct {
	id        ID
	user      *user
	hash      [32]byte
	createdAt int64
	seenAt    int64 // last use, in memory (saved in snapshots)
	loggedAt  int64 // the last use a record holds
}

// people indexes users by e-mail address and sessions by the SHA-256 of
// their secret, across workspaces: a login names no workspace.
type people struct {
	mu       sync.Mutex // serialises the changes that must keep e-mail addresses unique
	emails   sync.Map   // lower-case e-mail → *personRef
	sessions sync.Map   // [32]byte → *personRef (id: the session's)
}

type personRef struct {
	act *actor
	id  ID
}

// UserInput is the body of a user create or update; Hash is the new
// password's encoded argon2id hash (the caller hashes, the engine never
// sees a password).
type UserInput struct {
	Email, Name, Role, Hash Opt[string]
	// Actor is who makes the change, for the activity log ("" is the
	// admin API).
	Actor string
}

// UserView is a user record: never a password or its hash.
type UserView struct {
	ID        string `json:"id"`
	Email     string `json:"email"`
	Name      string `json:"name"`
	Role      string `json:"role"`
	CreatedAt Time   `json:"createdAt"`
}

func userView(u *user) UserView {
	return UserView{ID: u.id.String(), Email: u.email, Name: u.name, Role: u.role, CreatedAt: Time(u.createdAt)}
}

// checkEmail returns the address in lower case, or a KindInvalid error.
func checkEmail(v Opt[string]) (string, *Error) {
	if !v.Set || v.Null || v.V == "" {
		return "", invalid("email", "email is required")
	}
	if utf8.RuneCountInString(v.V) > maxEmailChars {
		return "", invalid("email", "email must be at most %d characters", maxEmailChars)
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
		if err := checkEnum("role", in.Role, roles, "owner, admin, member, viewer", true); err != nil {
			return err
		}
	}
	if creating {
		if _, taken := e.people.emails.Load(email); taken {
			return conflict("a user with this email already exists")
		}
	}
	return nil
}

// CreateUser adds a dashboard user. E-mail addresses are unique across the
// whole server (a login names no workspace): a taken one is a KindConflict
// error. It returns KindInvalid errors naming the field at fault.
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
	if err := checkEnum("role", in.Role, roles, "owner, admin, member, viewer", true); err != nil {
		return UserView{}, err
	}
	if err := checkHash(in.Hash); err != nil {
		return UserView{}, err
	}
	e.people.mu.Lock()
	defer e.people.mu.Unlock()
	if _, taken := e.people.emails.Load(email); taken {
		return UserView{}, conflict("a user with this email already exists")
	}
	return change(a, func(w *workspace, now int64) (decision[UserView], error) {
		rec := &wal.UserCreated{ID: w.ids.next(now), ActivityID: w.ids.next(now), Email: email, Name: in.Name.V,
			Role: in.Role.V, Hash: in.Hash.V, CreatedAt: now, Actor: in.Actor}
		return decision[UserView]{rec: rec, answer: func(w *workspace) UserView { return userView(w.users[rec.ID]) }}, nil
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
		if err := checkEnum("role", in.Role, roles, "owner, admin, member, viewer", true); err != nil {
			return UserView{}, err
		}
	}
	if in.Hash.Set {
		if err := checkHash(in.Hash); err != nil {
			return UserView{}, err
		}
	}
	e.people.mu.Lock()
	defer e.people.mu.Unlock()
	return change(a, func(w *workspace, now int64) (decision[UserView], error) {
		u := w.user(userID)
		if u == nil {
			return decision[UserView]{}, notFound("user")
		}
		rec := &wal.UserUpdated{ID: u.id, At: now, Actor: in.Actor}
		if in.Email.Set && email != u.email {
			if _, taken := e.people.emails.Load(email); taken {
				return decision[UserView]{}, conflict("a user with this email already exists")
			}
			rec.Fields |= wal.UserEmail
			rec.Email = email
		}
		if in.Name.Set && in.Name.V != u.name {
			rec.Fields |= wal.UserName
			rec.Name = in.Name.V
		}
		if in.Role.Set && in.Role.V != u.role {
			if u.role == RoleOwner && w.owners() == 1 {
				return decision[UserView]{}, conflict("the workspace must keep at least one owner")
			}
			rec.Fields |= wal.UserRole
			rec.Role = in.Role.V
		}
		if in.Hash.Set {
			rec.Fields |= wal.UserPassword
			rec.Hash = in.Hash.V
		}
		answer := func(w *workspace) UserView { return userView(u) }
		if rec.Fields == 0 {
			return decision[UserView]{answer: answer}, nil
		}
		rec.ActivityID = w.ids.next(now)
		return decision[UserView]{rec: rec, answer: answer}, nil
	})
}

// DeleteUser removes a user and ends every session of theirs. The last
// owner of a workspace cannot be deleted: a KindConflict error.
func (e *Engine) DeleteUser(wsID, userID, actor string) error {
	a, err := e.workspaceActor(wsID)
	if err != nil {
		return err
	}
	_, err = change(a, func(w *workspace, now int64) (decision[struct{}], error) {
		u := w.user(userID)
		if u == nil {
			return decision[struct{}]{}, notFound("user")
		}
		if u.role == RoleOwner && w.owners() == 1 {
			return decision[struct{}]{}, conflict("the workspace must keep at least one owner")
		}
		return decision[struct{}]{rec: &wal.UserDeleted{ID: u.id, ActivityID: w.ids.next(now), At: now, Actor: actor}}, nil
	})
	return err
}

// Users returns the workspace's users by e-mail address.
func (e *Engine) Users(wsID string) ([]UserView, error) {
	a, err := e.workspaceActor(wsID)
	if err != nil {
		return nil, err
	}
	return ask(a, func(w *workspace) []UserView {
		views := make([]UserView, 0, len(w.users))
		for _, u := range w.users {
			views = append(views, userView(u))
		}
		sort.Slice(views, func(i, j int) bool { return views[i].Email < views[j].Email })
		return views
	}), nil
}

// User returns one user of a workspace, or a KindNotFound error.
func (e *Engine) User(wsID, userID string) (UserView, error) {
	a, err := e.workspaceActor(wsID)
	if err != nil {
		return UserView{}, err
	}
	v, ok := ask2(a, func(w *workspace) (UserView, bool) {
		u := w.user(userID)
		if u == nil {
			return UserView{}, false
		}
		return userView(u), true
	})
	if !ok {
		return UserView{}, notFound("user")
	}
	return v, nil
}

// Login is what a login needs to know of the user an e-mail address names.
type Login struct {
	WorkspaceID, UserID string
	// Hash is the user's encoded password hash.
	Hash string
}

// LoginFor returns the user whose e-mail address is email (without regard
// to case); ok is false when there is none.
func (e *Engine) LoginFor(email string) (l Login, ok bool) {
	v, found := e.people.emails.Load(strings.ToLower(email))
	if !found {
		return Login{}, false
	}
	ref := v.(*personRef)
	return ask2(ref.act, func(w *workspace) (Login, bool) {
		u := w.users[ref.id]
		if u == nil {
			return Login{}, false
		}
		return Login{WorkspaceID: w.id.String(), UserID: u.id.String(), Hash: u.hash}, true
	})
}

// StartSession records a login of userID whose session secret hashes to
// hash, once the password was checked against hash. It fails with a
// KindNotFound error when the user is gone, and a KindConflict error when
// the password hash the login checked is no longer the user's.
func (e *Engine) StartSession(wsID, userID, checkedHash string, hash [32]byte) error {
	a, err := e.workspaceActor(wsID)
	if err != nil {
		return err
	}
	_, err = change(a, func(w *workspace, now int64) (decision[struct{}], error) {
		u := w.user(userID)
		if u == nil {
			return decision[struct{}]{}, notFound("user")
		}
		if u.hash != checkedHash {
			return decision[struct{}]{}, conflict("the password changed")
		}
		return decision[struct{}]{rec: &wal.SessionStarted{ID: w.ids.next(now), UserID: u.id, Hash: hash, At: now}}, nil
	})
	return err
}

// SessionUser is the user behind a live session, with their workspace.
type SessionUser struct {
	SessionID, UserID, Email, Name, Role string
	Workspace                            BoardWorkspace
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
		s := w.sessions[ref.id]
		if s == nil || s.hash != hash {
			return SessionUser{}, false
		}
		if now-s.seenAt >= SessionIdleMs || now-s.createdAt >= SessionAbsoluteMs {
			ref.act.logAsync(&wal.SessionEnded{ID: s.id, At: now})
			return SessionUser{}, false
		}
		s.seenAt = max(s.seenAt, now)
		if now-s.loggedAt >= sessionSeenLogMs {
			ref.act.logAsync(&wal.SessionSeen{ID: s.id, At: now})
		}
		u := s.user
		return SessionUser{SessionID: s.id.String(), UserID: u.id.String(), Email: u.email, Name: u.name, Role: u.role,
			Workspace: w.boardWorkspace(now)}, true
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
		s := w.sessions[ref.id]
		if s == nil || s.hash != hash {
			return decision[struct{}]{}, nil
		}
		return decision[struct{}]{rec: &wal.SessionEnded{ID: s.id, At: now}}, nil
	})
	return err
}

func (w *workspace) user(id string) *user {
	uid, ok := ParseID(id)
	if !ok {
		return nil
	}
	return w.users[uid]
}

// owners counts the workspace's owners.
func (w *workspace) owners() int {
	n := 0
	for _, u := range w.users {
		if u.role == RoleOwner {
			n++
		}
	}
	return n
}

// applyPeople applies the records of users and sessions; ok is false for
// any other record.
func (w *workspace) applyPeople(rec wal.Entry, hooks applyHooks) (ok bool, err error) {
	switch r := rec.(type) {
	case *wal.UserCreated:
		u := &user{id: r.ID, email: r.Email, name: r.Name, role: r.Role, hash: r.Hash, createdAt: r.CreatedAt}
		w.users[u.id] = u
		w.ids.observe(u.id)
		w.addActivity(activity{id: r.ActivityID, at: r.CreatedAt, typ: "user.created", actor: actorOr(r.Actor), subjectID: u.id, subjectName: u.email})
		hooks.userAdded(w, u)
	case *wal.UserUpdated:
		u := w.users[r.ID]
		if u == nil {
			return true, fmt.Errorf("update unknown user %s", ID(r.ID))
		}
		if r.Fields&wal.UserEmail != 0 {
			hooks.userRemoved(u.email)
			u.email = r.Email
			hooks.userAdded(w, u)
		}
		if r.Fields&wal.UserName != 0 {
			u.name = r.Name
		}
		if r.Fields&wal.UserRole != 0 {
			u.role = r.Role
		}
		if r.Fields&wal.UserPassword != 0 {
			u.hash = r.Hash
			w.endSessions(u, hooks)
		}
		w.addActivity(activity{id: r.ActivityID, at: r.At, typ: "user.updated", actor: actorOr(r.Actor), subjectID: u.id, subjectName: u.email})
	case *wal.UserDeleted:
		u := w.users[r.ID]
		if u == nil {
			return true, fmt.Errorf("delete unknown user %s", ID(r.ID))
		}
		w.endSessions(u, hooks)
		delete(w.users, u.id)
		hooks.userRemoved(u.email)
		w.addActivity(activity{id: r.ActivityID, at: r.At, typ: "user.deleted", actor: actorOr(r.Actor), subjectID: u.id, subjectName: u.email})
	case *wal.SessionStarted:
		u := w.users[r.UserID]
		if u == nil {
			return true, fmt.Errorf("session of unknown user %s", ID(r.UserID))
		}
		s := &session{id: r.ID, user: u, hash: r.Hash, createdAt: r.At, seenAt: r.At, loggedAt: r.At}
		w.sessions[s.id] = s
		w.ids.observe(s.id)
		hooks.sessionAdded(w, s)
	case *wal.SessionSeen:
		if s := w.sessions[r.ID]; s != nil {
			s.seenAt, s.loggedAt = max(s.seenAt, r.At), r.At
		}
	case *wal.SessionEnded:
		if s := w.sessions[r.ID]; s != nil {
			delete(w.sessions, s.id)
			hooks.sessionRemoved(s.hash)
		}
	default:
		return false, nil
	}
	return true, nil
}

// endSessions ends every session of u.
func (w *workspace) endSessions(u *user, hooks applyHooks) {
	for id, s := range w.sessions {
		if s.user == u {
			delete(w.sessions, id)
			hooks.sessionRemoved(s.hash)
		}
	}
}

func (e *Engine) userAdded(w *workspace, u *user) {
	e.people.emails.Store(u.email, &personRef{act: e.actor(w.id), id: u.id})
}

func (e *Engine) userRemoved(email string) { e.people.emails.Delete(email) }

func (e *Engine) sessionAdded(w *workspace, s *session) {
	e.people.sessions.Store(s.hash, &personRef{act: e.actor(w.id), id: s.id})
}

func (e *Engine) sessionRemoved(hash [32]byte) { e.people.sessions.Delete(hash) }

// addPeople indexes a workspace's users and sessions (a new actor).
func (e *Engine) addPeople(w *workspace) {
	for _, u := range w.users {
		e.userAdded(w, u)
	}
	for _, s := range w.sessions {
		e.sessionAdded(w, s)
	}
}

// encodePeople appends the users and the sessions alive at now.
func (w *workspace) encodePeople(b []byte, now int64) []byte {
	b = codec.AppendUvarint(b, uint64(len(w.users)))
	for _, u := range w.users {
		b = append(b, u.id[:]...)
		b = codec.AppendString(b, u.email)
		b = codec.AppendString(b, u.name)
		b = codec.AppendString(b, u.role)
		b = codec.AppendString(b, u.hash)
		b = codec.AppendVarint(b, u.createdAt)
	}
	n := 0
	for _, s := range w.sessions {
		if s.alive(now) {
			n++
		}
	}
	b = codec.AppendUvarint(b, uint64(n))
	for _, s := range w.sessions {
		if !s.alive(now) {
			continue
		}
		b = append(b, s.id[:]...)
		b = append(b, s.user.id[:]...)
		b = append(b, s.hash[:]...)
		b = codec.AppendVarint(b, s.createdAt)
		b = codec.AppendVarint(b, s.seenAt)
	}
	return b
}

func (s *session) alive(now int64) bool {
	return now-s.seenAt < SessionIdleMs && now-s.createdAt < SessionAbsoluteMs
}

// decodePeople reads what encodePeople wrote.
func (w *workspace) decodePeople(r *codec.Reader) error {
	n := count(r)
	for i := 0; i < n && r.Err() == nil; i++ {
		u := &user{}
		r.Fixed(u.id[:])
		u.email, u.name, u.role, u.hash = r.String(), r.String(), r.String(), r.String()
		u.createdAt = r.Varint()
		w.users[u.id] = u
		w.ids.observe(u.id)
	}
	n = count(r)
	for i := 0; i < n && r.Err() == nil; i++ {
		s := &session{}
		var uid ID
		r.Fixed(s.id[:])
		r.Fixed(uid[:])
		r.Fixed(s.hash[:])
		s.createdAt, s.seenAt = r.Varint(), r.Varint()
		s.loggedAt = s.seenAt
		if r.Err() != nil {
			break
		}
		if s.user = w.users[uid]; s.user == nil {
			return fmt.Errorf("session %s of unknown user %s", s.id, uid)
		}
		w.sessions[s.id] = s
		w.ids.observe(s.id)
	}
	return r.Err()
}
