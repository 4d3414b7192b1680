package engine

import (
	"errors"
	"testing"
	"time"

	"github.com/pquerna/otp/hotp"

	"backupmon/state"
)

// tfCode is the TOTP code of secret at t.
func tfCode(t *testing.T, secret string, at time.Time) string {
	t.Helper()
	c, err := hotp.GenerateCodeCustom(secret, uint64(at.UnixMilli()/TOTPStepMs), totpOpts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestTwoFactorAndInvitesKeptAcrossRestarts: the codes and recovery codes
// used, the requirement and an open invitation survive a restart from the
// log alone and from a snapshot (layout 10); a used code stays refused.
func TestTwoFactorAndInvitesKeptAcrossRestarts(t *testing.T) {
	const secret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"
	dir := t.TempDir()
	e := pplOpen(t, dir, pplT0)
	ws := pplWorkspace(t, e, "Acme", "")
	u := pplUser(t, e, ws, "ann@acme.test", state.RoleOwner)
	recovery := [][32]byte{RecoveryHash("aaaa-bbbb"), RecoveryHash("cccc-dddd")}
	wrong := "000000"
	if tfCode(t, secret, pplT0) == wrong {
		wrong = "111111"
	}
	if err := e.EnableTwoFactor(ws, u.ID, secret, wrong, recovery, ""); !errors.Is(err, ErrCodeWrong) {
		t.Fatalf("enable with a wrong code: %v, want %v", err, ErrCodeWrong)
	}
	check(t, "enable", e.EnableTwoFactor(ws, u.ID, secret, tfCode(t, secret, pplT0), recovery, ""))
	if err := e.EnableTwoFactor(ws, u.ID, secret, tfCode(t, secret, pplT0), recovery, ""); !errors.Is(err, ErrTwoFactorOn) {
		t.Fatalf("enable twice: %v, want %v", err, ErrTwoFactorOn)
	}
	if err := e.StartSession(ws, u.ID, "hash:"+u.Email, secretHash("a")); !errors.Is(err, ErrSecondFactor) {
		t.Fatalf("a session on the password alone: %v, want %v", err, ErrSecondFactor)
	}
	if err := e.StartSessionTwoFactor(ws, u.ID, "hash:"+u.Email, tfCode(t, secret, pplT0), secretHash("b")); !errors.Is(err, ErrCodeUsed) {
		t.Fatalf("the enrolment's code: %v, want %v", err, ErrCodeUsed)
	}
	later := pplT0.Add(30 * time.Second)
	pplClock(t, e, later)
	code := tfCode(t, secret, later)
	check(t, "the next step's code", e.StartSessionTwoFactor(ws, u.ID, "hash:"+u.Email, code, secretHash("c")))
	check(t, "a recovery code", e.StartSessionTwoFactor(ws, u.ID, "hash:"+u.Email, "CCCC DDDD", secretHash("d")))
	check(t, "require", e.RequireTwoFactor(ws, true, "user:ann@acme.test"))
	inv, err := e.CreateInvite(ws, InviteInput{Email: Some("Bob@Acme.test"), Role: Some(state.RoleViewer)}, secretHash("invite"))
	check(t, "invite", err)

	check(t, "barrier", e.barrier())
	crash := copyDir(t, dir)
	check(t, "snapshot", e.Snapshot())
	snap := copyDir(t, dir)
	probe := func(what string, e *Engine) {
		t.Helper()
		if err := e.StartSessionTwoFactor(ws, u.ID, "hash:"+u.Email, code, secretHash("e")); !errors.Is(err, ErrCodeUsed) {
			t.Errorf("%s: a used code: %v, want %v", what, err, ErrCodeUsed)
		}
		if err := e.StartSessionTwoFactor(ws, u.ID, "hash:"+u.Email, "cccc-dddd", secretHash("f")); !errors.Is(err, ErrCodeWrong) {
			t.Errorf("%s: a used recovery code: %v, want %v", what, err, ErrCodeWrong)
		}
		if err := e.DisableTwoFactor(ws, u.ID, false, "", ""); !errors.Is(err, ErrTwoFactorRequired) {
			t.Errorf("%s: turning off while required: %v, want %v", what, err, ErrTwoFactorRequired)
		}
		if got, err := e.Invite(ws, secretHash("invite")); err != nil || got.ID != inv.ID || got.Email != "bob@acme.test" || got.Role != state.RoleViewer {
			t.Errorf("%s: the invitation: %+v, %v; want %+v", what, got, err, inv)
		}
		check(t, what+": the other recovery code", e.StartSessionTwoFactor(ws, u.ID, "hash:"+u.Email, "aaaabbbb", secretHash("g")))
		v, err := e.AcceptInvite(ws, secretHash("invite"), Some("Bob"), "hash:bob")
		check(t, what+": accept", err)
		if _, err := e.AcceptInvite(ws, secretHash("invite"), Some("Bob"), "hash:bob"); !isKind(err, KindNotFound) {
			t.Errorf("%s: accept twice: %v, want not found", what, err)
		}
		if l := e.Logins("bob@acme.test"); len(l) != 1 || l[0].UserID != v.ID || l[0].Hash != "hash:bob" {
			t.Errorf("%s: bob's login %+v", what, l)
		}
	}
	probe("without a restart", e)
	check(t, "close", e.Close())
	probe("from the log alone", pplOpen(t, crash, later))
	probe("from a snapshot", pplOpen(t, snap, later))
}

// TestInviteExpiryAndWorkspace: a link works until its seventh day ends
// and only with its own workspace's id.
func TestInviteExpiryAndWorkspace(t *testing.T) {
	e := pplOpen(t, t.TempDir(), pplT0)
	ws := pplWorkspace(t, e, "Acme", "")
	other := pplWorkspace(t, e, "Other", "")
	_, err := e.CreateInvite(ws, InviteInput{Email: Some("bob@acme.test"), Role: Some(state.RoleMember)}, secretHash("x"))
	check(t, "invite", err)
	if _, err := e.Invite(other, secretHash("x")); !isKind(err, KindNotFound) {
		t.Errorf("the link with another workspace's id: %v, want not found", err)
	}
	if _, err := e.AcceptInvite(other, secretHash("x"), Some("Bob"), "h"); !isKind(err, KindNotFound) {
		t.Errorf("accept with another workspace's id: %v, want not found", err)
	}
	end := pplT0.Add(time.Duration(state.InviteTTLMs) * time.Millisecond)
	pplClock(t, e, end.Add(-time.Millisecond))
	if _, err := e.Invite(ws, secretHash("x")); err != nil {
		t.Errorf("1 ms before 7 days: %v", err)
	}
	pplClock(t, e, end)
	if _, err := e.AcceptInvite(ws, secretHash("x"), Some("Bob"), "h"); !errors.Is(err, ErrInviteExpired) {
		t.Errorf("at 7 days: %v, want %v", err, ErrInviteExpired)
	}
}

func isKind(err error, k ErrorKind) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == k
}
