package state

var Roles = map[string]bool{RoleOwner: true, RoleAdmin: true, RoleMember: true, RoleViewer: true}

type User struct {
	ID                      ID
	Email, Name, Role, Hash string
	CreatedAt               int64
	TwoFactor               *TwoFactor // nil: off (rec_twofactor.go)
}

type Session struct {
	ID        ID
	User      *User
	Hash      [32]byte
	CreatedAt int64
	SeenAt    int64 // last use, in memory (saved in snapshots)
	LoggedAt  int64 // the last use a record holds
}

func (w *Workspace) User(id string) *User {
	uid, ok := ParseID(id)
	if !ok {
		return nil
	}
	return w.Users[uid]
}

// owners counts the workspace's owners.
func (w *Workspace) Owners() int {
	n := 0
	for _, u := range w.Users {
		if u.Role == RoleOwner {
			n++
		}
	}
	return n
}

// endSessions ends every session of u.
func (w *Workspace) endSessions(u *User) {
	for id, s := range w.Sessions {
		if s.User == u {
			delete(w.Sessions, id)
			w.hooks.SessionRemoved(s.Hash)
		}
	}
}

func (s *Session) alive(now int64) bool {
	return now-s.SeenAt < SessionIdleMs && now-s.CreatedAt < SessionAbsoluteMs
}

// Roles of dashboard users, from most to least powerful.
const (
	RoleOwner  = "owner"
	RoleAdmin  = "admin"
	RoleMember = "member"
	RoleViewer = "viewer"
)

// Session lifetimes (decisions.md 11), and how often a session's use is
// logged so that its idle expiry survives a restart.
const (
	SessionIdleMs     = 12 * 60 * MsPerMinute
	SessionAbsoluteMs = 30 * MsPerDay
	SessionSeenLogMs  = 5 * MsPerMinute
	MaxEmailChars     = 254
)

// UserByEmail returns the workspace's user whose e-mail address is email
// (lower case), or nil.
func (w *Workspace) UserByEmail(email string) *User {
	for _, u := range w.Users {
		if u.Email == email {
			return u
		}
	}
	return nil
}
