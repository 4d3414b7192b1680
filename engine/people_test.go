package engine

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"backupmon/state"
)

// Tests of dashboard users and sessions (people.go) through the engine's
// public commands, with the development clock and restarts from the log
// alone and from a snapshot.

// pplT0 is Monday 5 January 2026, 09:00 UTC.
var pplT0 = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

// pplOpen opens the engine in dir with the development clock kept at now
// (not restored from the log), so a restart can happen at any time.
func pplOpen(t *testing.T, dir string, now time.Time) *Engine {
	t.Helper()
	e := dtOpen(t, dir, now)
	t.Cleanup(func() { e.Close() })
	return e
}

func pplWorkspace(t *testing.T, e *Engine, name, zone string) string {
	t.Helper()
	in := WorkspaceInput{Name: Some(name), Plan: Some("pro")}
	if zone != "" {
		in.TimeZone = Some(zone)
	}
	v, err := e.CreateWorkspace(in)
	check(t, "create workspace", err)
	return v.ID
}

// pplClock sets the development clock (logged, timers run).
func pplClock(t *testing.T, e *Engine, at time.Time) {
	t.Helper()
	if _, err := e.SetClock(at, 0); err != nil {
		t.Fatalf("set clock to %s: %v", at, err)
	}
}

func pplUser(t *testing.T, e *Engine, ws, email, role string) UserView {
	t.Helper()
	v, err := e.CreateUser(ws, UserInput{Email: Some(email), Name: Some("Name of " + email), Role: Some(role), Hash: Some("hash:" + email)})
	check(t, "create user "+email, err)
	return v
}

func secretHash(s string) [32]byte { return sha256.Sum256([]byte(s)) }

// pplOwner opens the engine in dir at pplT0 with a workspace, Acme, whose
// owner has the address email; it returns the engine, the workspace and
// the owner.
func pplOwner(t *testing.T, dir, email string) (*Engine, string, UserView) {
	t.Helper()
	e := pplOpen(t, dir, pplT0)
	ws := pplWorkspace(t, e, "Acme", "")
	return e, ws, pplUser(t, e, ws, email, state.RoleOwner)
}

// pplLogin starts a session of u in ws, with the password hash the user
// was made with (pplUser), for the cookie secret; it returns the secret's
// hash.
func pplLogin(t *testing.T, e *Engine, ws string, u UserView, secret string) [32]byte {
	t.Helper()
	h := secretHash(secret)
	check(t, "start session "+secret, e.StartSession(ws, u.ID, "hash:"+u.Email, h))
	return h
}

// wantError checks that err is an *Error of the given kind, field and
// message.
func wantError(t *testing.T, what string, err error, kind ErrorKind, field, msg string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Errorf("%s: error %v (%T), want *Error kind %d field %q %q", what, err, err, kind, field, msg)
		return
	}
	if e.Kind != kind || e.Field != field || e.Message != msg {
		t.Errorf("%s: error {kind %d field %q %q}, want {kind %d field %q %q}", what, e.Kind, e.Field, e.Message, kind, field, msg)
	}
}

func userEmails(t *testing.T, e *Engine, ws string) []string {
	t.Helper()
	list, err := e.Users(ws)
	check(t, "users", err)
	return viewsOf(list, func(u UserView) string { return u.Email })
}

// userActivity returns the workspace's user.* activity entries, newest
// first, as "type actor name".
func userActivity(t *testing.T, e *Engine, ws string) []string {
	t.Helper()
	acts, err := e.Activity(ws)
	check(t, "activity", err)
	var out []string
	for _, a := range acts {
		if strings.HasPrefix(a.Type, "user.") {
			out = append(out, a.Type+" "+a.Actor+" "+a.Name)
		}
	}
	return out
}

func TestUserCreateValidation(t *testing.T) {
	e := pplOpen(t, t.TempDir(), pplT0)
	ws := pplWorkspace(t, e, "Acme", "")
	ok := UserInput{Email: Some("alice@example.com"), Name: Some("Alice"), Role: Some(state.RoleOwner), Hash: Some("$argon2id$x")}
	with := func(f func(*UserInput)) UserInput {
		in := ok
		f(&in)
		return in
	}
	null := Opt[string]{Set: true, Null: true}
	const roleMsg = "role must be one of: owner, admin, member, viewer"
	long := strings.Repeat("a", state.MaxEmailChars-len("@example.com")+1) + "@example.com"
	for _, c := range []struct {
		name         string
		in           UserInput
		field, msg   string
		kind         ErrorKind
		wantNoChange bool
	}{
		{"email missing", with(func(in *UserInput) { in.Email = Opt[string]{} }), "email", "email is required", KindInvalid, true},
		{"email null", with(func(in *UserInput) { in.Email = null }), "email", "email is required", KindInvalid, true},
		{"email empty", with(func(in *UserInput) { in.Email = Some("") }), "email", "email is required", KindInvalid, true},
		{"email without @", with(func(in *UserInput) { in.Email = Some("alice.example.com") }), "email", "email must be an e-mail address", KindInvalid, true},
		{"email with a display name", with(func(in *UserInput) { in.Email = Some("Alice <alice@example.com>") }), "email", "email must be an e-mail address", KindInvalid, true},
		{"email with spaces", with(func(in *UserInput) { in.Email = Some(" alice@example.com") }), "email", "email must be an e-mail address", KindInvalid, true},
		{"email two addresses", with(func(in *UserInput) { in.Email = Some("a@example.com, b@example.com") }), "email", "email must be an e-mail address", KindInvalid, true},
		{"email too long", with(func(in *UserInput) { in.Email = Some(long) }), "email", "email must be at most 254 characters", KindInvalid, true},
		{"name missing", with(func(in *UserInput) { in.Name = Opt[string]{} }), "name", "name is required", KindInvalid, true},
		{"name null", with(func(in *UserInput) { in.Name = null }), "name", "name is required", KindInvalid, true},
		{"name empty", with(func(in *UserInput) { in.Name = Some("") }), "name", "name must be 1 to 200 characters", KindInvalid, true},
		{"name blank", with(func(in *UserInput) { in.Name = Some("   ") }), "name", "name must be 1 to 200 characters", KindInvalid, true},
		{"name too long", with(func(in *UserInput) { in.Name = Some(strings.Repeat("é", 201)) }), "name", "name must be 1 to 200 characters", KindInvalid, true},
		{"role missing", with(func(in *UserInput) { in.Role = Opt[string]{} }), "role", roleMsg, KindInvalid, true},
		{"role unknown", with(func(in *UserInput) { in.Role = Some("superuser") }), "role", roleMsg, KindInvalid, true},
		{"role in capitals", with(func(in *UserInput) { in.Role = Some("Owner") }), "role", roleMsg, KindInvalid, true},
		{"hash missing", with(func(in *UserInput) { in.Hash = Opt[string]{} }), "password", "password is required", KindInvalid, true},
		{"hash null", with(func(in *UserInput) { in.Hash = null }), "password", "password is required", KindInvalid, true},
		{"hash empty", with(func(in *UserInput) { in.Hash = Some("") }), "password", "password is required", KindInvalid, true},
		// The email is checked first, then the name, role and password.
		{"everything wrong", UserInput{Email: Some("x"), Name: Some(""), Role: Some("x")}, "email", "email must be an e-mail address", KindInvalid, true},
		{"name and role wrong", with(func(in *UserInput) { in.Name = Some(""); in.Role = Some("x") }), "name", "name must be 1 to 200 characters", KindInvalid, true},
		{"role and hash wrong", with(func(in *UserInput) { in.Role = Some("x"); in.Hash = Some("") }), "role", roleMsg, KindInvalid, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := e.CreateUser(ws, c.in)
			wantError(t, "create user", err, c.kind, c.field, c.msg)
			if got := userEmails(t, e, ws); len(got) != 0 {
				t.Errorf("users after a refused create: %v", got)
			}
			if _, ok := e.LoginFor("alice@example.com"); ok {
				t.Errorf("a refused create left a login")
			}
		})
	}
	t.Run("unknown workspace", func(t *testing.T) {
		_, err := e.CreateUser("nope", ok)
		wantError(t, "create user", err, KindNotFound, "", "workspace not found")
		_, err = e.CreateUser(pplUnknownID().String(), ok)
		wantError(t, "create user", err, KindNotFound, "", "workspace not found")
	})
	t.Run("limits accepted", func(t *testing.T) {
		in := ok
		in.Email = Some(long[1:]) // 254 characters
		in.Name = Some(strings.Repeat("é", 200))
		v, err := e.CreateUser(ws, in)
		check(t, "create user at the limits", err)
		if v.Email != long[1:] || v.Name != in.Name.V || v.Role != state.RoleOwner || v.ID == "" || v.CreatedAt != state.Time(pplT0.UnixMilli()) {
			t.Errorf("created %+v", v)
		}
	})
}

// pplUnknownID returns an id that names nothing.
func pplUnknownID() state.ID { return state.NewIDGen().Next(1) }

// TestUserEmailUniquePerWorkspaceAndCase: an address is one user's in a
// workspace, without regard to case; another workspace may have a user of
// it too (an MSP's technician), and a login finds both.
func TestUserEmailUniquePerWorkspaceAndCase(t *testing.T) {
	e := pplOpen(t, t.TempDir(), pplT0)
	ws1 := pplWorkspace(t, e, "One", "")
	ws2 := pplWorkspace(t, e, "Two", "")
	alice, err := e.CreateUser(ws1, UserInput{Email: Some("Alice@Example.com"), Name: Some("Alice"), Role: Some(state.RoleOwner), Hash: Some("h-alice")})
	check(t, "create alice", err)
	if alice.Email != "alice@example.com" {
		t.Errorf("email kept as %q, want it in lower case", alice.Email)
	}
	const taken = "a user with this email already exists"
	for _, addr := range []string{"alice@example.com", "ALICE@example.COM"} {
		t.Run("same workspace "+addr, func(t *testing.T) {
			_, err := e.CreateUser(ws1, UserInput{Email: Some(addr), Name: Some("Other"), Role: Some(state.RoleOwner), Hash: Some("h")})
			wantError(t, "create", err, KindConflict, "", taken)
			wantError(t, "check", e.CheckUser(ws1, "", UserInput{Email: Some(addr), Name: Some("Other"), Role: Some(state.RoleOwner)}), KindConflict, "", taken)
		})
	}
	alice2, err := e.CreateUser(ws2, UserInput{Email: Some("aLiCe@eXaMpLe.CoM"), Name: Some("Alice at two"), Role: Some(state.RoleMember), Hash: Some("h-two")})
	check(t, "alice in workspace two", err)
	want := []Login{{WorkspaceID: ws1, UserID: alice.ID, Hash: "h-alice"}, {WorkspaceID: ws2, UserID: alice2.ID, Hash: "h-two"}}
	if ws2 < ws1 {
		want[0], want[1] = want[1], want[0]
	}
	for _, addr := range []string{"alice@example.com", "ALICE@EXAMPLE.COM"} {
		if got := e.Logins(addr); !reflect.DeepEqual(got, want) {
			t.Errorf("Logins(%q) = %+v, want %+v", addr, got, want)
		}
		if l, ok := e.LoginFor(addr); !ok || l != want[0] {
			t.Errorf("LoginFor(%q) = %+v, %v; want %+v", addr, l, ok, want[0])
		}
	}
	if _, ok := e.LoginFor("bob@example.com"); ok {
		t.Errorf("LoginFor of an unknown address found someone")
	}
	// Changing to an address taken in the same workspace is refused.
	bob := pplUser(t, e, ws2, "bob@example.com", state.RoleOwner)
	_, err = e.UpdateUser(ws2, bob.ID, UserInput{Email: Some("ALICE@example.com")})
	wantError(t, "update to a taken address", err, KindConflict, "", taken)
	if l, ok := e.LoginFor("bob@example.com"); !ok || l.UserID != bob.ID {
		t.Errorf("a refused update moved bob's login: %+v %v", l, ok)
	}
	// Deleting one of alice's users leaves the other's login.
	check(t, "delete alice of two", e.DeleteUser(ws2, alice2.ID, ""))
	if got := e.Logins("alice@example.com"); len(got) != 1 || got[0].UserID != alice.ID {
		t.Errorf("after the delete, Logins = %+v, want alice of workspace one alone", got)
	}
}

// TestUserEmailUniqueUnderConcurrency: creates and updates racing for one
// address in one workspace: exactly one gets it.
func TestUserEmailUniqueUnderConcurrency(t *testing.T) {
	e := pplOpen(t, t.TempDir(), pplT0)
	const n = 8
	ws := pplWorkspace(t, e, "W", "")
	var ids []string
	for i := range n {
		ids = append(ids, pplUser(t, e, ws, fmt.Sprintf("u%d@x.test", i), state.RoleOwner).ID)
	}
	for round := range 20 {
		addr := fmt.Sprintf("shared%d@x.test", round)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				if i%2 == 0 {
					_, errs[i] = e.CreateUser(ws, UserInput{Email: Some(strings.ToUpper(addr[:i]) + addr[i:]), Name: Some("N"), Role: Some(state.RoleMember), Hash: Some("h")})
				} else {
					_, errs[i] = e.UpdateUser(ws, ids[i], UserInput{Email: Some(addr)})
				}
			})
		}
		wg.Wait()
		won := 0
		for i, err := range errs {
			if err == nil {
				won++
				continue
			}
			wantError(t, fmt.Sprintf("round %d, racer %d", round, i), err, KindConflict, "", "a user with this email already exists")
		}
		var holders []UserView
		for _, u := range mustUsers(t, e, ws) {
			if u.Email == addr {
				holders = append(holders, u)
			}
		}
		if won != 1 || len(holders) != 1 {
			t.Fatalf("round %d: %d racers won, %d users hold %s", round, won, len(holders), addr)
		}
		h := holders[0]
		if i := slices.Index(ids, h.ID); i >= 0 {
			_, err := e.UpdateUser(ws, h.ID, UserInput{Email: Some(fmt.Sprintf("u%d@x.test", i))})
			check(t, "reset", err)
		} else {
			check(t, "delete", e.DeleteUser(ws, h.ID, ""))
		}
		if _, ok := e.LoginFor(addr); ok {
			t.Fatalf("round %d: %s still logs in after its holder gave it up", round, addr)
		}
	}
}

func mustUsers(t *testing.T, e *Engine, ws string) []UserView {
	t.Helper()
	list, err := e.Users(ws)
	check(t, "users", err)
	return list
}

func TestUpdateUser(t *testing.T) {
	e := pplOpen(t, t.TempDir(), pplT0)
	ws := pplWorkspace(t, e, "Acme", "")
	other := pplWorkspace(t, e, "Other", "")
	owner := pplUser(t, e, ws, "owner@acme.test", state.RoleOwner)
	m := pplUser(t, e, ws, "mary@acme.test", state.RoleMember)

	pplClock(t, e, pplT0.Add(time.Minute))
	v, err := e.UpdateUser(ws, m.ID, UserInput{Name: Some("Mary Major"), Role: Some(state.RoleAdmin), Actor: "user:owner@acme.test"})
	check(t, "update name and role", err)
	if v.Name != "Mary Major" || v.Role != state.RoleAdmin || v.Email != "mary@acme.test" || v.ID != m.ID || v.CreatedAt != m.CreatedAt {
		t.Errorf("after the update: %+v", v)
	}
	if got, err := e.User(ws, m.ID); err != nil || got != v {
		t.Errorf("User() = %+v, %v; want %+v", got, err, v)
	}

	// A new address frees the old one and moves the login.
	v, err = e.UpdateUser(ws, m.ID, UserInput{Email: Some("Mary.Major@Acme.test")})
	check(t, "update email", err)
	if v.Email != "mary.major@acme.test" {
		t.Errorf("email %q, want mary.major@acme.test", v.Email)
	}
	if l, ok := e.LoginFor("mary.major@acme.test"); !ok || l.UserID != m.ID || l.WorkspaceID != ws || l.Hash != "hash:mary@acme.test" {
		t.Errorf("LoginFor(new address) = %+v, %v", l, ok)
	}
	if l, ok := e.LoginFor("mary@acme.test"); ok {
		t.Errorf("the old address still logs in: %+v", l)
	}
	reuse, err := e.CreateUser(other, UserInput{Email: Some("MARY@acme.test"), Name: Some("Another Mary"), Role: Some(state.RoleOwner), Hash: Some("h2")})
	check(t, "reuse the freed address in another workspace", err)
	if l, ok := e.LoginFor("mary@acme.test"); !ok || l.UserID != reuse.ID || l.WorkspaceID != other {
		t.Errorf("LoginFor(freed address) = %+v, %v; want the new user", l, ok)
	}

	// The same address in another case changes nothing and is no conflict.
	before := len(userActivity(t, e, ws))
	v, err = e.UpdateUser(ws, m.ID, UserInput{Email: Some("MARY.MAJOR@acme.test"), Name: Some("Mary Major"), Role: Some(state.RoleAdmin)})
	check(t, "update to the same values", err)
	if v.Email != "mary.major@acme.test" || v.Name != "Mary Major" {
		t.Errorf("after a no-op update: %+v", v)
	}
	if after := len(userActivity(t, e, ws)); after != before {
		t.Errorf("a no-op update wrote %d activity entries", after-before)
	}

	// Refusals.
	const roleMsg = "role must be one of: owner, admin, member, viewer"
	for _, c := range []struct {
		name, id    string
		in          UserInput
		kind        ErrorKind
		field, msg  string
		wantNoLogin string
	}{
		{"bad email", m.ID, UserInput{Email: Some("nope")}, KindInvalid, "email", "email must be an e-mail address", ""},
		{"empty email", m.ID, UserInput{Email: Some("")}, KindInvalid, "email", "email is required", ""},
		{"null email", m.ID, UserInput{Email: Opt[string]{Set: true, Null: true}}, KindInvalid, "email", "email is required", ""},
		{"empty name", m.ID, UserInput{Name: Some("")}, KindInvalid, "name", "name must be 1 to 200 characters", ""},
		{"null name", m.ID, UserInput{Name: Opt[string]{Set: true, Null: true}}, KindInvalid, "name", "name is required", ""},
		{"long name", m.ID, UserInput{Name: Some(strings.Repeat("x", 201))}, KindInvalid, "name", "name must be 1 to 200 characters", ""},
		{"bad role", m.ID, UserInput{Role: Some("boss")}, KindInvalid, "role", roleMsg, ""},
		{"empty hash", m.ID, UserInput{Hash: Some("")}, KindInvalid, "password", "password is required", ""},
		{"taken email", m.ID, UserInput{Email: Some("owner@acme.test"), Name: Some("Changed")}, KindConflict, "", "a user with this email already exists", ""},
		{"unknown user", pplUnknownID().String(), UserInput{Name: Some("X")}, KindNotFound, "", "user not found", ""},
		{"not an id", "zzz", UserInput{Name: Some("X")}, KindNotFound, "", "user not found", ""},
		{"user of another workspace", reuse.ID, UserInput{Name: Some("X")}, KindNotFound, "", "user not found", ""},
		{"valid email, bad name", m.ID, UserInput{Email: Some("new@acme.test"), Name: Some("")}, KindInvalid, "name", "name must be 1 to 200 characters", "new@acme.test"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := e.UpdateUser(ws, c.id, c.in)
			wantError(t, "update", err, c.kind, c.field, c.msg)
			got, err := e.User(ws, m.ID)
			check(t, "user", err)
			if got != v {
				t.Errorf("a refused update changed the user: %+v, want %+v", got, v)
			}
			if c.wantNoLogin != "" {
				if _, ok := e.LoginFor(c.wantNoLogin); ok {
					t.Errorf("a refused update made a login for %s", c.wantNoLogin)
				}
			}
		})
	}
	if _, err := e.UpdateUser("nope", m.ID, UserInput{Name: Some("X")}); err == nil {
		t.Errorf("update in an unknown workspace succeeded")
	} else {
		wantError(t, "unknown workspace", err, KindNotFound, "", "workspace not found")
	}
	if got, err := e.User(ws, owner.ID); err != nil || got != owner {
		t.Errorf("the owner changed: %+v %v", got, err)
	}
	if _, err := e.User(ws, pplUnknownID().String()); err == nil {
		t.Errorf("User of an unknown id succeeded")
	} else {
		wantError(t, "unknown user", err, KindNotFound, "", "user not found")
	}
}

func TestUserLastOwnerIsKept(t *testing.T) {
	e := pplOpen(t, t.TempDir(), pplT0)
	ws := pplWorkspace(t, e, "Acme", "")
	// Another workspace's owner does not count.
	other := pplWorkspace(t, e, "Other", "")
	pplUser(t, e, other, "boss@other.test", state.RoleOwner)
	o := pplUser(t, e, ws, "owner@acme.test", state.RoleOwner)
	m := pplUser(t, e, ws, "member@acme.test", state.RoleMember)
	const keep = "the workspace must keep at least one owner"

	for _, role := range []string{state.RoleAdmin, state.RoleMember, state.RoleViewer} {
		_, err := e.UpdateUser(ws, o.ID, UserInput{Role: Some(role)})
		wantError(t, "demote the last owner to "+role, err, KindConflict, "", keep)
	}
	// Nothing else of a refused update happens either.
	_, err := e.UpdateUser(ws, o.ID, UserInput{Role: Some(state.RoleAdmin), Name: Some("Renamed")})
	wantError(t, "demote and rename the last owner", err, KindConflict, "", keep)
	if got, _ := e.User(ws, o.ID); got != o {
		t.Errorf("refused update changed the owner: %+v", got)
	}
	err = e.DeleteUser(ws, o.ID, "")
	wantError(t, "delete the last owner", err, KindConflict, "", keep)
	// Setting the owner's role to owner again is no change.
	if v, err := e.UpdateUser(ws, o.ID, UserInput{Role: Some(state.RoleOwner)}); err != nil || v.Role != state.RoleOwner {
		t.Errorf("owner stays owner: %+v %v", v, err)
	}

	// With a second owner, either can go.
	_, err = e.UpdateUser(ws, m.ID, UserInput{Role: Some(state.RoleOwner)})
	check(t, "promote", err)
	v, err := e.UpdateUser(ws, o.ID, UserInput{Role: Some(state.RoleViewer)})
	check(t, "demote the first owner now that there are two", err)
	if v.Role != state.RoleViewer {
		t.Errorf("role %s", v.Role)
	}
	// Now m is the last owner.
	_, err = e.UpdateUser(ws, m.ID, UserInput{Role: Some(state.RoleAdmin)})
	wantError(t, "demote the new last owner", err, KindConflict, "", keep)
	wantError(t, "delete the new last owner", e.DeleteUser(ws, m.ID, ""), KindConflict, "", keep)
	check(t, "delete the viewer", e.DeleteUser(ws, o.ID, ""))
	// A second owner again: the last one may be deleted.
	o2 := pplUser(t, e, ws, "owner2@acme.test", state.RoleOwner)
	check(t, "delete an owner of two", e.DeleteUser(ws, m.ID, ""))
	wantError(t, "delete the last owner", e.DeleteUser(ws, o2.ID, ""), KindConflict, "", keep)
	if got := userEmails(t, e, ws); fmt.Sprint(got) != "[owner2@acme.test]" {
		t.Errorf("users %v", got)
	}
}

func TestDeleteUser(t *testing.T) {
	e := pplOpen(t, t.TempDir(), pplT0)
	ws := pplWorkspace(t, e, "Acme", "")
	pplUser(t, e, ws, "owner@acme.test", state.RoleOwner)
	v := pplUser(t, e, ws, "viewer@acme.test", state.RoleViewer)
	check(t, "delete", e.DeleteUser(ws, v.ID, "user:owner@acme.test"))
	if _, err := e.User(ws, v.ID); err == nil {
		t.Errorf("deleted user still found")
	} else {
		wantError(t, "user after delete", err, KindNotFound, "", "user not found")
	}
	if l, ok := e.LoginFor("viewer@acme.test"); ok {
		t.Errorf("deleted user still logs in: %+v", l)
	}
	if got := userEmails(t, e, ws); fmt.Sprint(got) != "[owner@acme.test]" {
		t.Errorf("users %v", got)
	}
	wantError(t, "delete again", e.DeleteUser(ws, v.ID, ""), KindNotFound, "", "user not found")
	wantError(t, "delete in unknown workspace", e.DeleteUser("nope", v.ID, ""), KindNotFound, "", "workspace not found")
	// The address is free again.
	again := pplUser(t, e, ws, "viewer@acme.test", state.RoleMember)
	if again.ID == v.ID {
		t.Errorf("the new user has the deleted one's id")
	}
	if l, ok := e.LoginFor("viewer@acme.test"); !ok || l.UserID != again.ID {
		t.Errorf("LoginFor after re-creation: %+v %v", l, ok)
	}
}

func TestUsersSortedByEmail(t *testing.T) {
	e := pplOpen(t, t.TempDir(), pplT0)
	ws := pplWorkspace(t, e, "Acme", "")
	for _, addr := range []string{"carol@x.test", "Alice@x.test", "bob@x.test", "aaron@x.test", "Zed@a.test", "b@x.test"} {
		pplUser(t, e, ws, addr, state.RoleOwner)
	}
	want := "[aaron@x.test alice@x.test b@x.test bob@x.test carol@x.test zed@a.test]"
	if got := userEmails(t, e, ws); fmt.Sprint(got) != want {
		t.Errorf("users %v, want %s", got, want)
	}
	// An e-mail change moves the user in the order.
	list, _ := e.Users(ws)
	_, err := e.UpdateUser(ws, list[0].ID, UserInput{Email: Some("zz@x.test")})
	check(t, "update", err)
	want = "[alice@x.test b@x.test bob@x.test carol@x.test zed@a.test zz@x.test]"
	if got := userEmails(t, e, ws); fmt.Sprint(got) != want {
		t.Errorf("users %v, want %s", got, want)
	}
	other := pplWorkspace(t, e, "Empty", "")
	if list, err := e.Users(other); err != nil || len(list) != 0 || list == nil {
		t.Errorf("users of an empty workspace: %#v %v (want an empty, non-nil list)", list, err)
	}
	if _, err := e.Users("nope"); err == nil {
		t.Errorf("users of an unknown workspace")
	}
}

func TestUserActivity(t *testing.T) {
	dir := t.TempDir()
	e := pplOpen(t, dir, pplT0)
	ws := pplWorkspace(t, e, "Acme", "")
	_, err := e.CreateUser(ws, UserInput{Email: Some("o@acme.test"), Name: Some("O"), Role: Some(state.RoleOwner), Hash: Some("h")})
	check(t, "create by admin", err)
	u, err := e.CreateUser(ws, UserInput{Email: Some("u@acme.test"), Name: Some("U"), Role: Some(state.RoleMember), Hash: Some("h"), Actor: "user:o@acme.test"})
	check(t, "create by a user", err)
	pplClock(t, e, pplT0.Add(time.Hour))
	_, err = e.UpdateUser(ws, u.ID, UserInput{Role: Some(state.RoleAdmin)})
	check(t, "update by admin", err)
	_, err = e.UpdateUser(ws, u.ID, UserInput{Email: Some("u2@acme.test"), Actor: "user:o@acme.test"})
	check(t, "update by a user", err)
	_, err = e.UpdateUser(ws, u.ID, UserInput{Hash: Some("new"), Actor: "user:u2@acme.test"})
	check(t, "password change", err)
	check(t, "delete", e.DeleteUser(ws, u.ID, "user:o@acme.test"))
	want := []string{
		"user.deleted user:o@acme.test u2@acme.test",
		"user.updated user:u2@acme.test u2@acme.test",
		"user.updated user:o@acme.test u2@acme.test",
		"user.updated admin u@acme.test",
		"user.created user:o@acme.test u@acme.test",
		"user.created admin o@acme.test",
	}
	if got := userActivity(t, e, ws); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("activity:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	acts, _ := e.Activity(ws)
	if len(acts) == 0 || acts[0].At != state.Time(pplT0.Add(time.Hour).UnixMilli()) {
		t.Errorf("newest entry %+v, want it at %s", acts, pplT0.Add(time.Hour))
	}
	users, err := e.Users(ws)
	check(t, "users", err)
	// The same after a restart from the log alone and from the snapshot.
	crash := copyDir(t, dir)
	check(t, "close", e.Close())
	for name, d := range map[string]string{"snapshot": dir, "log alone": crash} {
		e := pplOpen(t, d, pplT0.Add(2*time.Hour))
		if got := userActivity(t, e, ws); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: activity:\n%s\nwant:\n%s", name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if got, err := e.Users(ws); err != nil || fmt.Sprint(got) != fmt.Sprint(users) {
			t.Errorf("%s: users %+v, want %+v", name, got, users)
		}
		check(t, "close", e.Close())
	}
}

// TestSessionLoginFlow: a login looks the user up, checks the hash,
// starts a session; the session names its user and workspace until it
// ends.
func TestSessionLoginFlow(t *testing.T) {
	e := pplOpen(t, t.TempDir(), pplT0)
	ws := pplWorkspace(t, e, "Acme", "Europe/London")
	u, err := e.CreateUser(ws, UserInput{Email: Some("ann@acme.test"), Name: Some("Ann"), Role: Some(state.RoleMember), Hash: Some("h1")})
	check(t, "create user", err)
	l, ok := e.LoginFor("Ann@ACME.test")
	if !ok || l.WorkspaceID != ws || l.UserID != u.ID || l.Hash != "h1" {
		t.Fatalf("LoginFor = %+v %v", l, ok)
	}
	s1 := secretHash("session one")
	check(t, "start session", e.StartSession(l.WorkspaceID, l.UserID, l.Hash, s1))
	su, ok := e.Session(s1)
	if !ok {
		t.Fatalf("the new session is refused")
	}
	if su.SessionID == "" || su.UserID != u.ID || su.Email != "ann@acme.test" || su.Name != "Ann" || su.Role != state.RoleMember {
		t.Errorf("session user %+v", su)
	}
	w := su.Workspace
	if w.ID != ws || w.Name != "Acme" || w.TimeZone != "Europe/London" || w.Plan != "pro" || w.Status != "active" || !w.Active ||
		w.Loc == nil || w.Loc.String() != "Europe/London" {
		t.Errorf("session workspace %+v", w)
	}
	// The session follows changes of its user.
	_, err = e.UpdateUser(ws, u.ID, UserInput{Name: Some("Ann B"), Role: Some(state.RoleViewer), Email: Some("annb@acme.test")})
	check(t, "update", err)
	if su, ok := e.Session(s1); !ok || su.Name != "Ann B" || su.Role != state.RoleViewer || su.Email != "annb@acme.test" {
		t.Errorf("after an update that keeps the password: %+v %v", su, ok)
	}

	// A login that checked a hash that is no longer the user's.
	wantError(t, "stale hash", e.StartSession(ws, u.ID, "h0", secretHash("stale")), KindConflict, "", "the password changed")
	if _, ok := e.Session(secretHash("stale")); ok {
		t.Errorf("a refused session works")
	}
	wantError(t, "unknown user", e.StartSession(ws, pplUnknownID().String(), "h1", secretHash("x")), KindNotFound, "", "user not found")
	wantError(t, "unknown workspace", e.StartSession("nope", u.ID, "h1", secretHash("x")), KindNotFound, "", "workspace not found")

	// Two sessions of one user are independent.
	s2 := secretHash("session two")
	check(t, "second session", e.StartSession(ws, u.ID, "h1", s2))
	su2, ok := e.Session(s2)
	if !ok || su2.SessionID == su.SessionID {
		t.Errorf("second session %+v %v (first %s)", su2, ok, su.SessionID)
	}
	check(t, "end session", e.EndSession(s1))
	if _, ok := e.Session(s1); ok {
		t.Errorf("an ended session works")
	}
	if _, ok := e.Session(s2); !ok {
		t.Errorf("ending one session ended the other")
	}
	check(t, "end an ended session", e.EndSession(s1))
	check(t, "end an unknown session", e.EndSession(secretHash("never")))
	if _, ok := e.Session(secretHash("never")); ok {
		t.Errorf("an unknown session works")
	}
}

// TestSessionIdleExpiry: a session unused for 12 hours is refused; one
// used just before is not, and its use counts from then.
func TestSessionIdleExpiry(t *testing.T) {
	if state.SessionIdleMs != 12*state.MsPerHour || state.SessionAbsoluteMs != 30*state.MsPerDay {
		t.Fatalf("session lifetimes %d, %d", state.SessionIdleMs, state.SessionAbsoluteMs)
	}
	e, ws, u := pplOwner(t, t.TempDir(), "ann@acme.test")
	a, b := pplLogin(t, e, ws, u, "a"), pplLogin(t, e, ws, u, "b")
	idle := time.Duration(state.SessionIdleMs) * time.Millisecond

	pplClock(t, e, pplT0.Add(idle-time.Millisecond))
	if _, ok := e.Session(a); !ok {
		t.Fatalf("a refused 1 ms before 12 idle hours")
	}
	pplClock(t, e, pplT0.Add(idle))
	if _, ok := e.Session(b); ok {
		t.Errorf("b works after exactly 12 idle hours")
	}
	if _, ok := e.Session(b); ok {
		t.Errorf("b works again once refused")
	}
	if _, ok := e.Session(a); !ok {
		t.Errorf("a refused though used 1 ms ago")
	}
	// a was last used at T0+12h.
	pplClock(t, e, pplT0.Add(2*idle-time.Millisecond))
	if _, ok := e.Session(a); !ok {
		t.Errorf("a refused 1 ms before 12 idle hours after its last use")
	}
	pplClock(t, e, pplT0.Add(3*idle-time.Millisecond))
	if _, ok := e.Session(a); ok {
		t.Errorf("a works after 12 idle hours")
	}
	// A refused session ends: ending it again is no error, and a new one
	// with another secret works.
	check(t, "end expired", e.EndSession(a))
	c := pplLogin(t, e, ws, u, "c")
	if _, ok := e.Session(c); !ok {
		t.Errorf("a new session after the others expired is refused")
	}
}

// TestSessionAbsoluteExpiry: a session used every 11 hours keeps going
// until 30 days after it started, also across restarts.
func TestSessionAbsoluteExpiry(t *testing.T) {
	dir := t.TempDir()
	e, ws, u := pplOwner(t, dir, "ann@acme.test")
	s := pplLogin(t, e, ws, u, "s")
	last := pplT0
	for at := pplT0.Add(11 * time.Hour); at.Sub(pplT0) < 30*24*time.Hour; at = at.Add(11 * time.Hour) {
		pplClock(t, e, at)
		if _, ok := e.Session(s); !ok {
			t.Fatalf("refused at start + %s, used every 11 hours", at.Sub(pplT0))
		}
		last = at
	}
	if last.Sub(pplT0) != 715*time.Hour {
		t.Fatalf("last use at start + %s", last.Sub(pplT0))
	}
	end := pplT0.Add(time.Duration(state.SessionAbsoluteMs) * time.Millisecond)
	check(t, "barrier", e.barrier())
	crash := copyDir(t, dir) // the log alone
	check(t, "snapshot", e.Snapshot())
	snap := copyDir(t, dir)
	probe := func(what string, e *Engine) {
		t.Helper()
		pplClock(t, e, end.Add(-time.Millisecond))
		if _, ok := e.Session(s); !ok {
			t.Errorf("%s: refused 1 ms before 30 days", what)
		}
		pplClock(t, e, end)
		if _, ok := e.Session(s); ok {
			t.Errorf("%s: works 30 days after its start", what)
		}
	}
	probe("without a restart", e)
	check(t, "close", e.Close())
	probe("from the log alone", pplOpen(t, crash, last.Add(time.Hour)))
	probe("from a snapshot", pplOpen(t, snap, last.Add(time.Hour)))
}

// TestPasswordChangeAndDeleteEndSessions: a new password and a deletion
// end the user's sessions at once, and only theirs; a name or role change
// does not.
func TestPasswordChangeAndDeleteEndSessions(t *testing.T) {
	dir := t.TempDir()
	e := pplOpen(t, dir, pplT0)
	ws := pplWorkspace(t, e, "Acme", "")
	pplUser(t, e, ws, "owner@acme.test", state.RoleOwner)
	u := pplUser(t, e, ws, "u@acme.test", state.RoleMember)
	v := pplUser(t, e, ws, "v@acme.test", state.RoleMember)
	u1, u2, v1 := pplLogin(t, e, ws, u, "u1"), pplLogin(t, e, ws, u, "u2"), pplLogin(t, e, ws, v, "v1")
	_, err := e.UpdateUser(ws, u.ID, UserInput{Name: Some("U"), Role: Some(state.RoleAdmin), Email: Some("uu@acme.test")})
	check(t, "update without password", err)
	for _, h := range [][32]byte{u1, u2, v1} {
		if _, ok := e.Session(h); !ok {
			t.Fatalf("an update without a password ended a session")
		}
	}
	_, err = e.UpdateUser(ws, u.ID, UserInput{Hash: Some("new-hash"), Actor: "user:uu@acme.test"})
	check(t, "password change", err)
	for _, h := range [][32]byte{u1, u2} {
		if _, ok := e.Session(h); ok {
			t.Errorf("a session of u works after a password change")
		}
	}
	if _, ok := e.Session(v1); !ok {
		t.Errorf("v's session ended with u's password change")
	}
	if l, ok := e.LoginFor("uu@acme.test"); !ok || l.Hash != "new-hash" {
		t.Errorf("login after the password change: %+v %v", l, ok)
	}
	wantError(t, "login with the old hash", e.StartSession(ws, u.ID, "hash:u@acme.test", secretHash("u3")), KindConflict, "", "the password changed")
	u4 := secretHash("u4")
	check(t, "login with the new hash", e.StartSession(ws, u.ID, "new-hash", u4))
	if _, ok := e.Session(u4); !ok {
		t.Errorf("a session with the new password is refused")
	}
	// Setting the same password again still ends the sessions.
	_, err = e.UpdateUser(ws, u.ID, UserInput{Hash: Some("new-hash")})
	check(t, "same password", err)
	if _, ok := e.Session(u4); ok {
		t.Errorf("a session survives a password reset to the same hash")
	}
	u5 := secretHash("u5")
	check(t, "u5", e.StartSession(ws, u.ID, "new-hash", u5))
	check(t, "delete v", e.DeleteUser(ws, v.ID, ""))
	if _, ok := e.Session(v1); ok {
		t.Errorf("a deleted user's session works")
	}
	if _, ok := e.Session(u5); !ok {
		t.Errorf("deleting v ended u's session")
	}
	wantError(t, "session for a deleted user", e.StartSession(ws, v.ID, "hash:v@acme.test", secretHash("v2")), KindNotFound, "", "user not found")

	// After a restart the ended sessions stay ended, the live one lives.
	crash := copyDir(t, dir)
	check(t, "close", e.Close())
	for name, d := range map[string]string{"snapshot": dir, "log alone": crash} {
		e := pplOpen(t, d, pplT0.Add(time.Hour))
		for _, h := range [][32]byte{u1, u2, u4, v1} {
			if _, ok := e.Session(h); ok {
				t.Errorf("%s: an ended session works after a restart", name)
			}
		}
		if su, ok := e.Session(u5); !ok || su.UserID != u.ID || su.Email != "uu@acme.test" || su.Role != state.RoleAdmin {
			t.Errorf("%s: the live session after a restart: %+v %v", name, su, ok)
		}
		if l, ok := e.LoginFor("uu@acme.test"); !ok || l.Hash != "new-hash" {
			t.Errorf("%s: login %+v %v", name, l, ok)
		}
		if _, ok := e.LoginFor("v@acme.test"); ok {
			t.Errorf("%s: the deleted user logs in", name)
		}
		check(t, "close", e.Close())
	}
}

// TestSessionsSurviveRestart: users and sessions come back from the log
// alone and from a snapshot, with their idle time. A session's use is
// logged at most every 5 minutes, so after a restart from the log a use
// within 5 minutes of the last logged one may be forgotten, but the idle
// expiry is never earlier than 12 hours after the last logged use, and
// never later than 12 hours after the last use.
func TestSessionsSurviveRestart(t *testing.T) {
	if state.SessionSeenLogMs != 5*state.MsPerMinute {
		t.Fatalf("sessionSeenLogMs %d", state.SessionSeenLogMs)
	}
	dir := t.TempDir()
	e := pplOpen(t, dir, pplT0)
	ws := pplWorkspace(t, e, "Acme", "America/New_York")
	owner := pplUser(t, e, ws, "owner@acme.test", state.RoleOwner)
	u := pplUser(t, e, ws, "u@acme.test", state.RoleViewer)
	a, b := pplLogin(t, e, ws, u, "a"), pplLogin(t, e, ws, u, "b")
	c := pplLogin(t, e, ws, owner, "c") // never used again
	T := pplT0.Add(time.Hour)
	use := func(h [32]byte, at time.Time) {
		t.Helper()
		pplClock(t, e, at)
		if _, ok := e.Session(h); !ok {
			t.Fatalf("session refused at T0 + %s", at.Sub(pplT0))
		}
	}
	use(a, T)                    // logged: 1 hour after the start
	use(a, T.Add(2*time.Minute)) // within 5 minutes: may be forgotten
	use(b, T)                    // logged
	use(b, T.Add(6*time.Minute)) // 6 minutes after the logged use: logged
	check(t, "barrier", e.barrier())
	crash := copyDir(t, dir)
	check(t, "snapshot", e.Snapshot())
	snap := copyDir(t, dir)
	check(t, "close", e.Close())
	idle := time.Duration(state.SessionIdleMs) * time.Millisecond

	type probe struct {
		h  [32]byte
		at time.Time
		ok bool
	}
	for _, c := range []struct {
		name   string
		dir    string
		probes []probe
	}{
		{"log alone", crash, []probe{
			{a, T.Add(idle - time.Millisecond), true},
			{a, T.Add(2*time.Minute + idle), false},
			{b, T.Add(6*time.Minute + idle - time.Millisecond), true},
			{b, T.Add(6*time.Minute + idle), false},
			{c, pplT0.Add(idle - time.Millisecond), true},
			{c, pplT0.Add(idle), false},
		}},
		{"snapshot", snap, []probe{
			{a, T.Add(idle - time.Millisecond), true},
			// The snapshot holds the last use, logged or not.
			{a, T.Add(2*time.Minute + idle - time.Millisecond), true},
			{a, T.Add(2*time.Minute + idle), false},
			{b, T.Add(6*time.Minute + idle - time.Millisecond), true},
			{b, T.Add(6*time.Minute + idle), false},
			{c, pplT0.Add(idle - time.Millisecond), true},
			{c, pplT0.Add(idle), false},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for i, p := range c.probes {
				e := pplOpen(t, copyDir(t, c.dir), T.Add(time.Hour)) // restarted an hour after the use
				if l, ok := e.LoginFor("u@acme.test"); !ok || l.UserID != u.ID || l.WorkspaceID != ws || l.Hash != "hash:u@acme.test" {
					t.Errorf("probe %d: login after restart %+v %v", i, l, ok)
				}
				if got := userEmails(t, e, ws); fmt.Sprint(got) != "[owner@acme.test u@acme.test]" {
					t.Errorf("probe %d: users after restart %v", i, got)
				}
				pplClock(t, e, p.at)
				su, ok := e.Session(p.h)
				if ok != p.ok {
					t.Errorf("probe %d: session at T + %s: ok %v, want %v", i, p.at.Sub(T), ok, p.ok)
				}
				if ok && (su.Workspace.ID != ws || su.Workspace.Loc == nil || su.Workspace.Loc.String() != "America/New_York") {
					t.Errorf("probe %d: session workspace %+v", i, su.Workspace)
				}
				check(t, "close", e.Close())
			}
		})
	}

	// A use after a restart is logged and counts after the next one: used
	// at T+11h after a restart at T+1h, the session lives until T+23h.
	for _, c := range []struct {
		name string
		snap bool
	}{{"log alone twice", false}, {"snapshot then log", true}} {
		t.Run(c.name, func(t *testing.T) {
			src := crash
			if c.snap {
				src = snap
			}
			d := copyDir(t, src)
			e := pplOpen(t, d, T.Add(time.Hour))
			pplClock(t, e, T.Add(11*time.Hour))
			if _, ok := e.Session(a); !ok {
				t.Fatalf("a refused at T+11h after a restart")
			}
			check(t, "barrier", e.barrier())
			again := copyDir(t, d) // the log alone (and the first snapshot, if any)
			check(t, "close", e.Close())
			for _, p := range []probe{{a, T.Add(11*time.Hour + idle - time.Millisecond), true}, {a, T.Add(11*time.Hour + idle), false}} {
				e := pplOpen(t, copyDir(t, again), T.Add(12*time.Hour))
				pplClock(t, e, p.at)
				if _, ok := e.Session(p.h); ok != p.ok {
					t.Errorf("session at T + %s: ok %v, want %v", p.at.Sub(T), ok, p.ok)
				}
				check(t, "close", e.Close())
			}
		})
	}
}

// TestExpiredSessionsLeaveTheSnapshot: a session that expired without
// being looked at is not brought back by a restart (from a snapshot taken
// after it expired, or from the log).
func TestExpiredSessionsLeaveTheSnapshot(t *testing.T) {
	dir := t.TempDir()
	e, ws, u := pplOwner(t, dir, "u@acme.test")
	s := pplLogin(t, e, ws, u, "s")
	pplClock(t, e, pplT0.Add(13*time.Hour))
	check(t, "snapshot", e.Snapshot())
	check(t, "close", e.Close())
	if entries, err := os.ReadDir(filepath.Join(dir, "snapshots")); err != nil || len(entries) == 0 {
		t.Fatalf("no snapshot: %v", err)
	}
	// Reopened with the clock set back: the snapshot dropped the session.
	e = pplOpen(t, dir, pplT0.Add(time.Hour))
	if _, ok := e.Session(s); ok {
		t.Errorf("a session that had expired when the snapshot was taken works again")
	}
	if l, ok := e.LoginFor("u@acme.test"); !ok || l.UserID != u.ID {
		t.Errorf("user lost: %+v %v", l, ok)
	}
}
