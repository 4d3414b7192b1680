package wal

import "backupmon/codec"

// Record types of the dashboard's people: users and their sessions.
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

// UserDeleted records that a user is gone, with every session of theirs.
type UserDeleted struct {
	Header
	ID, ActivityID ID
	At             int64
	Actor          string
}

// SessionStarted records a login: the session's id, its user and the
// SHA-256 of its secret cookie value.
type SessionStarted struct {
	Header
	ID, UserID ID
	Hash       [32]byte
	At         int64
}

// SessionSeen records that a session was used at At, so that its idle
// expiry survives a restart; it is logged at most every few minutes.
type SessionSeen struct {
	Header
	ID ID
	At int64
}

// SessionEnded records a logout.
type SessionEnded struct {
	Header
	ID ID
	At int64
}

// Type returns TypeUserCreated.
func (*UserCreated) Type() byte { return TypeUserCreated }

// Type returns TypeUserUpdated.
func (*UserUpdated) Type() byte { return TypeUserUpdated }

// Type returns TypeUserDeleted.
func (*UserDeleted) Type() byte { return TypeUserDeleted }

// Type returns TypeSessionStarted.
func (*SessionStarted) Type() byte { return TypeSessionStarted }

// Type returns TypeSessionSeen.
func (*SessionSeen) Type() byte { return TypeSessionSeen }

// Type returns TypeSessionEnded.
func (*SessionEnded) Type() byte { return TypeSessionEnded }

// AppendPayload appends the record's encoding.
func (r *UserCreated) AppendPayload(b []byte) []byte {
	b = r.Header.append(b)
	b = append(b, r.ID[:]...)
	b = append(b, r.ActivityID[:]...)
	b = codec.AppendString(b, r.Email)
	b = codec.AppendString(b, r.Name)
	b = codec.AppendString(b, r.Role)
	b = codec.AppendString(b, r.Hash)
	b = codec.AppendVarint(b, r.CreatedAt)
	return codec.AppendString(b, r.Actor)
}

// AppendPayload appends the record's encoding.
func (r *UserUpdated) AppendPayload(b []byte) []byte {
	b = r.Header.append(b)
	b = append(b, r.ID[:]...)
	b = append(b, r.ActivityID[:]...)
	b = append(b, r.Fields)
	b = codec.AppendString(b, r.Email)
	b = codec.AppendString(b, r.Name)
	b = codec.AppendString(b, r.Role)
	b = codec.AppendString(b, r.Hash)
	b = codec.AppendVarint(b, r.At)
	return codec.AppendString(b, r.Actor)
}

// AppendPayload appends the record's encoding.
func (r *UserDeleted) AppendPayload(b []byte) []byte {
	b = r.Header.append(b)
	b = append(b, r.ID[:]...)
	b = append(b, r.ActivityID[:]...)
	b = codec.AppendVarint(b, r.At)
	return codec.AppendString(b, r.Actor)
}

// AppendPayload appends the record's encoding.
func (r *SessionStarted) AppendPayload(b []byte) []byte {
	b = r.Header.append(b)
	b = append(b, r.ID[:]...)
	b = append(b, r.UserID[:]...)
	b = append(b, r.Hash[:]...)
	return codec.AppendVarint(b, r.At)
}

// AppendPayload appends the record's encoding.
func (r *SessionSeen) AppendPayload(b []byte) []byte {
	b = r.Header.append(b)
	b = append(b, r.ID[:]...)
	return codec.AppendVarint(b, r.At)
}

// AppendPayload appends the record's encoding.
func (r *SessionEnded) AppendPayload(b []byte) []byte {
	b = r.Header.append(b)
	b = append(b, r.ID[:]...)
	return codec.AppendVarint(b, r.At)
}

// decodePeople decodes the record types of this file; ok is false for any
// other type.
func decodePeople(typ byte, r *codec.Reader) (e Entry, ok bool) {
	switch typ {
	case TypeUserCreated:
		x := &UserCreated{}
		x.Header.read(r)
		r.Fixed(x.ID[:])
		r.Fixed(x.ActivityID[:])
		x.Email, x.Name, x.Role, x.Hash = r.String(), r.String(), r.String(), r.String()
		x.CreatedAt = r.Varint()
		x.Actor = r.String()
		return x, true
	case TypeUserUpdated:
		x := &UserUpdated{}
		x.Header.read(r)
		r.Fixed(x.ID[:])
		r.Fixed(x.ActivityID[:])
		x.Fields = r.Byte()
		x.Email, x.Name, x.Role, x.Hash = r.String(), r.String(), r.String(), r.String()
		x.At = r.Varint()
		x.Actor = r.String()
		return x, true
	case TypeUserDeleted:
		x := &UserDeleted{}
		x.Header.read(r)
		r.Fixed(x.ID[:])
		r.Fixed(x.ActivityID[:])
		x.At = r.Varint()
		x.Actor = r.String()
		return x, true
	case TypeSessionStarted:
		x := &SessionStarted{}
		x.Header.read(r)
		r.Fixed(x.ID[:])
		r.Fixed(x.UserID[:])
		r.Fixed(x.Hash[:])
		x.At = r.Varint()
		return x, true
	case TypeSessionSeen:
		x := &SessionSeen{}
		x.Header.read(r)
		r.Fixed(x.ID[:])
		x.At = r.Varint()
		return x, true
	case TypeSessionEnded:
		x := &SessionEnded{}
		x.Header.read(r)
		r.Fixed(x.ID[:])
		x.At = r.Varint()
		return x, true
	}
	return nil, false
}
