package engine

import (
	"crypto/sha256"
	"crypto/subtle"
	"strings"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/hotp"

	"backupmon/state"
)

// Commands of two-factor sign-in: TOTP (RFC 6238: HMAC-SHA1, 6 digits, 30
// second steps) with the codes of the step before and after the current
// one accepted for clocks that drift, each step's code once (a code of a
// step at or before the last one accepted is refused), and recovery codes
// (their SHA-256 kept), each once.

// TOTPStepMs is the length of a TOTP time step.
const TOTPStepMs = 30_000

// Errors of a second factor.
var (
	// ErrCodeWrong answers a code that is neither the TOTP code of a
	// step around now nor an unused recovery code.
	ErrCodeWrong = invalid("code", "the code is not right")
	// ErrCodeUsed answers a TOTP code of a step already used: a code
	// seen by someone else cannot be used again.
	ErrCodeUsed = invalid("code", "this code was already used; wait for the next one")
	// ErrSecondFactor answers a session started without the second
	// factor of a user who has one.
	ErrSecondFactor = conflict("a second factor is required")
	// ErrTwoFactorRequired answers turning two-factor sign-in off where
	// the workspace requires it.
	ErrTwoFactorRequired = conflict("the workspace requires two-factor sign-in")
	// ErrTwoFactorOn answers turning on two-factor sign-in twice.
	ErrTwoFactorOn = conflict("two-factor sign-in is already on")
)

var totpOpts = hotp.ValidateOpts{Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}

// totpStep returns the time step around now (-1, 0 or +1) whose code is
// code for secret, and whether there is one.
func totpStep(secret, code string, now int64) (int64, bool) {
	if len(code) != 6 {
		return 0, false
	}
	cur := now / TOTPStepMs
	for _, step := range []int64{cur - 1, cur, cur + 1} {
		if step < 0 {
			continue
		}
		want, err := hotp.GenerateCodeCustom(secret, uint64(step), totpOpts)
		if err == nil && subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 {
			return step, true
		}
	}
	return 0, false
}

// normalCode returns a code as typed without spaces and dashes, in lower
// case.
func normalCode(code string) string {
	return strings.ToLower(strings.NewReplacer(" ", "", "-", "", "\t", "").Replace(code))
}

// RecoveryHash returns the SHA-256 a recovery code is kept as (spaces,
// dashes and case ignored).
func RecoveryHash(code string) [32]byte { return sha256.Sum256([]byte(normalCode(code))) }

// secondFactor checks code for user u at now: the record that notes its
// use, or ErrCodeWrong or ErrCodeUsed.
func secondFactor(u *state.User, code string, now int64) (*state.TwoFactorUsed, error) {
	t := u.TwoFactor
	code = normalCode(code)
	if step, ok := totpStep(t.Secret, code, now); ok {
		if step <= t.Step {
			return nil, ErrCodeUsed
		}
		return &state.TwoFactorUsed{UserID: u.ID, Step: step, At: now}, nil
	}
	if len(code) == 6 {
		return nil, ErrCodeWrong
	}
	h := sha256.Sum256([]byte(code))
	for i, r := range t.Recovery {
		if t.Used&(1<<i) == 0 && subtle.ConstantTimeCompare(h[:], r[:]) == 1 {
			return &state.TwoFactorUsed{UserID: u.ID, Step: t.Step, Recovery: byte(i + 1), At: now}, nil
		}
	}
	return nil, ErrCodeWrong
}

// checkSecondFactor checks code for the user userID names at now: the
// user and the record that notes the code's use; KindNotFound for an
// unknown user or one without two-factor sign-in, ErrCodeWrong or
// ErrCodeUsed for the code.
func checkSecondFactor(w *workspace, userID, code string, now int64) (*state.User, *state.TwoFactorUsed, error) {
	u := w.User(userID)
	switch {
	case u == nil:
		return nil, nil, notFound("user")
	case u.TwoFactor == nil:
		return nil, nil, notFound("second factor")
	}
	used, err := secondFactor(u, code, now)
	return u, used, err
}

// StartSessionTwoFactor records a login of a user who signs in with a
// second factor, once the password was checked against checkedHash: code
// is the TOTP code of now or an unused recovery code, and its use is noted
// before the session starts. It fails as StartSession does, with
// ErrCodeWrong or ErrCodeUsed for the code.
func (e *Engine) StartSessionTwoFactor(wsID, userID, checkedHash, code string, hash [32]byte) error {
	a, err := e.workspaceActor(wsID)
	if err != nil {
		return err
	}
	_, err = change(a, func(w *workspace, now int64) (decision[struct{}], error) {
		u, used, err := checkSecondFactor(w, userID, code, now)
		switch {
		case err != nil:
			return decision[struct{}]{}, err
		case u.Hash != checkedHash:
			return decision[struct{}]{}, conflict("the password changed")
		}
		// Noted first, in the log's order: the session's record is
		// durable only after it.
		a.logAsync(used)
		return decision[struct{}]{rec: &state.SessionStarted{ID: w.IDs.Next(now), UserID: u.ID, Hash: hash, At: now}}, nil
	})
	return err
}

// EnableTwoFactor turns on two-factor sign-in for a user with a TOTP secret
// (base32) that code, the TOTP code of a step around now, confirms, and
// the SHA-256 hashes of the user's recovery codes (RecoveryHash). It
// returns ErrCodeWrong for a wrong code, ErrTwoFactorOn when it is on
// already, and KindNotFound for an unknown user.
func (e *Engine) EnableTwoFactor(wsID, userID, secret, code string, recovery [][32]byte, actor string) error {
	if secret == "" || len(recovery) == 0 || len(recovery) > 16 {
		return invalid("secret", "a secret and 1 to 16 recovery codes are required")
	}
	_, err := command(e, wsID, func(w *workspace, now int64) (decision[struct{}], error) {
		u := w.User(userID)
		if u == nil {
			return decision[struct{}]{}, notFound("user")
		}
		if u.TwoFactor != nil {
			return decision[struct{}]{}, ErrTwoFactorOn
		}
		step, ok := totpStep(secret, normalCode(code), now)
		if !ok {
			return decision[struct{}]{}, ErrCodeWrong
		}
		return decision[struct{}]{rec: &state.TwoFactorSet{UserID: u.ID, ActivityID: w.IDs.Next(now), Secret: secret, Step: step,
			Recovery: packHashes(recovery), At: now, Actor: actor}}, nil
	})
	return err
}

// DisableTwoFactor turns off a user's two-factor sign-in; a user without
// it is left as is. Where the workspace requires it, only a reset by
// someone else (reset) may: else ErrTwoFactorRequired. The user's own
// (reset false) takes code, the TOTP code of a step not used yet or an
// unused recovery code, so that a session alone does not remove the
// second factor: else ErrCodeWrong or ErrCodeUsed. An unknown user is a
// KindNotFound error.
func (e *Engine) DisableTwoFactor(wsID, userID string, reset bool, code, actor string) error {
	_, err := command(e, wsID, func(w *workspace, now int64) (decision[struct{}], error) {
		u := w.User(userID)
		switch {
		case u == nil:
			return decision[struct{}]{}, notFound("user")
		case u.TwoFactor == nil:
			return decision[struct{}]{}, nil
		case w.TwoFactorRequired && !reset:
			return decision[struct{}]{}, ErrTwoFactorRequired
		}
		if !reset {
			if _, err := secondFactor(u, code, now); err != nil {
				return decision[struct{}]{}, err
			}
		}
		return decision[struct{}]{rec: &state.TwoFactorSet{UserID: u.ID, ActivityID: w.IDs.Next(now), At: now, Actor: actor}}, nil
	})
	return err
}

// RenewRecovery replaces a user's recovery codes with new ones (their
// SHA-256 hashes, RecoveryHash) once code, the TOTP code of a step not
// used yet or an unused recovery code, is right; the old codes stop
// working. It returns ErrCodeWrong or ErrCodeUsed for the code, and
// KindNotFound for an unknown user or one without two-factor sign-in.
func (e *Engine) RenewRecovery(wsID, userID, code string, recovery [][32]byte, actor string) error {
	if len(recovery) == 0 || len(recovery) > 16 {
		return invalid("recovery", "1 to 16 recovery codes are required")
	}
	_, err := command(e, wsID, func(w *workspace, now int64) (decision[struct{}], error) {
		u, used, err := checkSecondFactor(w, userID, code, now)
		if err != nil {
			return decision[struct{}]{}, err
		}
		// The same secret with new codes; the step of the code used is
		// kept as used.
		return decision[struct{}]{rec: &state.TwoFactorSet{UserID: u.ID, ActivityID: w.IDs.Next(now), Secret: u.TwoFactor.Secret,
			Step: max(u.TwoFactor.Step, used.Step), Recovery: packHashes(recovery), At: now, Actor: actor}}, nil
	})
	return err
}

// packHashes returns recovery codes' hashes end to end, as TwoFactorSet
// keeps them.
func packHashes(hashes [][32]byte) []byte {
	out := make([]byte, 0, 32*len(hashes))
	for _, h := range hashes {
		out = append(out, h[:]...)
	}
	return out
}

// RequireTwoFactor sets whether the workspace requires two-factor sign-in:
// its users without it are taken to turn it on after their password.
// Setting what is already set changes nothing.
func (e *Engine) RequireTwoFactor(wsID string, on bool, actor string) error {
	_, err := command(e, wsID, func(w *workspace, now int64) (decision[struct{}], error) {
		if w.TwoFactorRequired == on {
			return decision[struct{}]{}, nil
		}
		return decision[struct{}]{rec: &state.TwoFactorRequired{ActivityID: w.IDs.Next(now), On: on, At: now, Actor: actor}}, nil
	})
	return err
}
