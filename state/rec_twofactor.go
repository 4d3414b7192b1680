package state

import (
	"bytes"
	"fmt"
	"slices"

	"backupmon/codec"
)

// Records of two-factor sign-in (TOTP, RFC 6238): a user turns it on with a
// secret and recovery codes, each code accepted is noted so that it cannot
// be used again, and an owner can require it of everyone in the workspace.

// Record type numbers of this file.
const (
	TypeTwoFactorSet      byte = 67
	TypeTwoFactorUsed     byte = 68
	TypeTwoFactorRequired byte = 69
)

// RecoveryCodes is how many recovery codes a user gets when turning on
// two-factor sign-in.
const RecoveryCodes = 10

// TwoFactor is a user's two-factor sign-in: the TOTP secret (base32), the
// last time step a code was accepted for (a code of that step or an
// earlier one is refused), and the SHA-256 of each recovery code with the
// bit set of those used.
type TwoFactor struct {
	Secret   string
	Step     int64
	Recovery [][32]byte
	Used     uint16
}

// RecoveryLeft returns how many recovery codes are still unused.
func (t *TwoFactor) RecoveryLeft() int {
	n := 0
	for i := range t.Recovery {
		if t.Used&(1<<i) == 0 {
			n++
		}
	}
	return n
}

// TwoFactorSet records that a user turned two-factor sign-in on (Secret
// set, confirmed by a code of time step Step, with Recovery: the recovery
// codes' SHA-256 hashes, 32 bytes each) or off (Secret empty); for a user
// who has it on already, new recovery codes for the same secret.
type TwoFactorSet struct {
	Header
	UserID, ActivityID ID
	Secret             string
	Step               int64 // the time step of the code that confirmed Secret
	Recovery           []byte
	At                 int64
	Actor              string
}

func (r *TwoFactorSet) fields(f *codec.Fields) {
	f.Walk(r.UserID[:], r.ActivityID[:], &r.Secret, &r.Step, &r.Recovery, &r.At, &r.Actor)
}

func (r *TwoFactorSet) apply(w *Workspace) error {
	u, err := w.twoFactorUser(r.UserID, false)
	if err != nil {
		return err
	}
	if len(r.Recovery)%32 != 0 || len(r.Recovery)/32 > 16 {
		return fmt.Errorf("two-factor of user %s: %d bytes of recovery hashes", r.UserID, len(r.Recovery))
	}
	var typ string
	switch {
	case r.Secret == "":
		typ = "user.two_factor_off"
	case u.TwoFactor != nil:
		typ = "user.recovery_codes_renewed" // on already: new recovery codes
	default:
		typ = "user.two_factor_on"
	}
	u.TwoFactor = nil
	if r.Secret != "" {
		t := &TwoFactor{Secret: r.Secret, Step: r.Step}
		for i := 0; i < len(r.Recovery); i += 32 {
			t.Recovery = append(t.Recovery, [32]byte(r.Recovery[i:i+32]))
		}
		u.TwoFactor = t
	}
	w.addActivity(Activity{ID: r.ActivityID, At: r.At, Type: typ, Actor: actorOr(r.Actor), SubjectID: u.ID, SubjectName: u.Email})
	return nil
}

// twoFactorUser returns the user a two-factor record is about, who must
// have two-factor sign-in on when on is set.
func (w *Workspace) twoFactorUser(id ID, on bool) (*User, error) {
	u := w.Users[id]
	switch {
	case u == nil:
		return nil, fmt.Errorf("two-factor of unknown user %s", id)
	case on && u.TwoFactor == nil:
		return nil, fmt.Errorf("second factor of user %s without two-factor sign-in", id)
	}
	return u, nil
}

// TwoFactorUsed records a second factor accepted at a sign-in: the TOTP
// time step of its code, or the recovery code numbered Recovery (1 and up;
// 0: none).
type TwoFactorUsed struct {
	Header
	UserID   ID
	Step, At int64
	Recovery byte
}

func (r *TwoFactorUsed) fields(f *codec.Fields) { f.Walk(r.UserID[:], &r.Step, &r.Recovery, &r.At) }

func (r *TwoFactorUsed) apply(w *Workspace) error {
	u, err := w.twoFactorUser(r.UserID, true)
	if err != nil {
		return err
	}
	t := u.TwoFactor
	t.Step = max(t.Step, r.Step)
	if r.Recovery > 0 {
		if int(r.Recovery) > len(t.Recovery) {
			return fmt.Errorf("recovery code %d of user %s, who has %d", r.Recovery, r.UserID, len(t.Recovery))
		}
		t.Used |= 1 << (r.Recovery - 1)
	}
	return nil
}

// TwoFactorRequired records whether the workspace requires two-factor
// sign-in of its users.
type TwoFactorRequired struct {
	Header
	ActivityID ID
	On         bool
	At         int64
	Actor      string
}

func (r *TwoFactorRequired) fields(f *codec.Fields) { f.Walk(r.ActivityID[:], &r.On, &r.At, &r.Actor) }

func (r *TwoFactorRequired) apply(w *Workspace) error {
	w.TwoFactorRequired = r.On
	typ := "workspace.two_factor_optional"
	if r.On {
		typ = "workspace.two_factor_required"
	}
	w.addActivity(Activity{ID: r.ActivityID, At: r.At, Type: typ, Actor: actorOr(r.Actor), SubjectID: w.ID, SubjectName: w.Name})
	return nil
}

// walkPeople walks what layout 10 added to a workspace's snapshot: the
// workspace's two-factor requirement, each user's two-factor sign-in (in
// the users' id order) and the open invitations.
func (w *Workspace) walkPeople(s *snap) error {
	f := s.f
	f.Bool(&w.TwoFactorRequired)
	var on []*User
	if !s.reading() {
		for _, u := range w.Users {
			if u.TwoFactor != nil {
				on = append(on, u)
			}
		}
		sortUsers(on)
	}
	n := f.Count(len(on), 1)
	for i := 0; i < n && f.Err() == nil; i++ {
		var id ID
		t := &TwoFactor{}
		if !s.reading() {
			id, t = on[i].ID, on[i].TwoFactor
		}
		f.Walk(id[:], &t.Secret, &t.Step, &t.Used)
		codec.Slice(f, &t.Recovery, 32, func(f *codec.Fields, h *[32]byte) { f.Fixed(h[:]) })
		if s.reading() && f.Err() == nil {
			u := w.Users[id]
			if u == nil {
				return fmt.Errorf("two-factor of unknown user %s", id)
			}
			if len(t.Recovery) > 16 {
				// Used has a bit for each of at most 16 codes (as
				// TwoFactorSet allows): a 17th would never be used up.
				return fmt.Errorf("two-factor of user %s: %d recovery codes of at most 16: %w", id, len(t.Recovery), codec.ErrInvalid)
			}
			u.TwoFactor = t
		}
	}
	if err := f.Err(); err != nil {
		return err
	}
	return walkMap(s, "invitation", w.invites(), func() *Invite { return &Invite{} }, (*Invite).walk, nil)
}

// sortUsers orders users by id.
func sortUsers(us []*User) {
	slices.SortFunc(us, func(a, b *User) int { return bytes.Compare(a.ID[:], b.ID[:]) })
}
