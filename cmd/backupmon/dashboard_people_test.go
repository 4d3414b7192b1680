package main

// End-to-end tests of invitations, workspaces shared by one e-mail address
// and two-factor sign-in, against the real binary over HTTP (the fixture of
// dashboard_http_test.go): the exact statuses and messages of each page and
// form, every role's rights, the development clock driving expiry and TOTP
// time steps. Names start with "ppl".

import (
	"bytes"
	"io"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
)

const (
	pplLinkBad     = "This invitation link is not valid: it was used, revoked or mistyped."
	pplLinkExpired = "This invitation has expired; ask for a new one."
	pplCodeWrong   = "The code is not right."
	pplCodeUsed    = "This code was already used; wait for the next one."
)

func TestDashboardPeople(t *testing.T) {
	s := dashStart(t)
	flows := map[string]func(*testing.T, *dashServer){"InviteLink": pplInviteLink, "InviteRoles": pplInviteRoles,
		"SeveralWorkspaces": pplSeveralWorkspaces, "TwoFactor": pplTwoFactor, "TwoFactorRequired": pplTwoFactorRequired, "BadInput": pplBadInput, "Password": pplPassword}
	for _, name := range []string{"InviteLink", "InviteRoles", "SeveralWorkspaces", "TwoFactor", "TwoFactorRequired", "BadInput", "Password"} {
		t.Run(name, func(t *testing.T) { flows[name](t, s) })
	}
}

// invite posts the invitation form as u and returns the link's path.
func (s *dashServer) invite(t testing.TB, sess, email, role string) string {
	t.Helper()
	r := s.post(t, "/settings/invites", sess, url.Values{"email": {email}, "role": {role}})
	inputs := dashAll(dashParse(t, r.body), "input", "id", "invite-link")
	if r.status != 200 || len(inputs) != 1 {
		t.Fatalf("invite %s as %s: %s, want 200 with the link", email, role, r)
	}
	link := dashAttr(inputs[0], "value")
	if !strings.HasPrefix(link, s.c.PublicURL+"/invite/") {
		t.Fatalf("invitation link %q is not on the dashboard's origin %s", link, s.c.PublicURL)
	}
	if want := "Invitation for " + strings.ToLower(email) + " made. Send them this link"; !strings.Contains(dashVisible(r.body), want) {
		t.Errorf("invite %s: the page does not say %q: %s", email, want, r)
	}
	return strings.TrimPrefix(link, s.c.PublicURL)
}

// accept sets a name and password through an invitation's link.
func (s *dashServer) accept(t testing.TB, link, name, pw string) dashResp {
	t.Helper()
	return s.post(t, link, "", url.Values{"name": {name}, "password": {pw}, "confirm": {pw}})
}

// wantPage checks an answer's status and that its text holds want.
func pplWant(t testing.TB, what string, r dashResp, status int, want string) {
	t.Helper()
	if r.status != status || !strings.Contains(dashVisible(r.body), want) {
		t.Errorf("%s: %s, want %d with %q", what, r, status, want)
	}
}

// pplWantFlash checks a redirect's target and its message.
func pplWantFlash(t testing.TB, s *dashServer, what string, r dashResp, to, flash string) {
	t.Helper()
	if r.status != 303 || s.location(r) != to || r.flash() != flash {
		t.Errorf("%s: %s, flash %q; want 303 to %s with %q", what, r, r.flash(), to, flash)
	}
}

// pplInviteLink: an invitation's link sets a password once, before it
// expires, and only in its own workspace.
func pplInviteLink(t *testing.T, s *dashServer) {
	w := s.workspace(t, "inv", nil)
	other := s.workspace(t, "inv2", nil)
	owner := s.login(t, w.users["owner"])
	link := s.invite(t, owner, "Tech@Inv.test", "member")
	parts := strings.Split(link, "/") // "", "invite", wid, secret
	if len(parts) != 4 || parts[2] != w.id || len(parts[3]) != 43 {
		t.Fatalf("link %q, want /invite/%s/<43 characters of base64url>", link, w.id)
	}
	pplWant(t, "GET the link", s.page(t, "GET", link, "", nil), 200, "You are invited as member with the address tech@inv.test")
	for _, tc := range []struct{ what, path string }{
		{"another workspace's id", "/invite/" + other.id + "/" + parts[3]},
		{"an unknown workspace", "/invite/01a1ab97-4908-7000-8000-000000000000/" + parts[3]},
		{"a mistyped secret", "/invite/" + w.id + "/" + map[bool]string{true: "B", false: "A"}[parts[3][0] == 'A'] + parts[3][1:]},
	} {
		pplWant(t, "GET with "+tc.what, s.page(t, "GET", tc.path, "", nil), 404, pplLinkBad)
		pplWant(t, "POST with "+tc.what, s.accept(t, tc.path, "Tess Tech", "a long password 1"), 404, pplLinkBad)
	}
	for _, tc := range []struct {
		what, name, pw, confirm, want string
	}{
		{"passwords that differ", "Tess Tech", "a long password 1", "a long password 2", "The two passwords differ."},
		{"a short password", "Tess Tech", "short", "short", "Password must be at least 10 characters."},
		{"no name", "", "a long password 1", "a long password 1", "Name is required."},
	} {
		r := s.post(t, link, "", url.Values{"name": {tc.name}, "password": {tc.pw}, "confirm": {tc.confirm}})
		pplWant(t, "accept with "+tc.what, r, 400, tc.want)
	}
	r := s.accept(t, link, "Tess Tech", "a long password 1")
	pplWantFlash(t, s, "accept", r, "/login?email=tech%40inv.test&workspace="+w.id, "Your password is set: log in to MSP inv.")
	pplWant(t, "GET the used link", s.page(t, "GET", link, "", nil), 404, pplLinkBad)
	pplWant(t, "POST the used link", s.accept(t, link, "Mallory", "another password 1"), 404, pplLinkBad)
	tech := dashUser{email: "tech@inv.test", password: "a long password 1"}
	if r := s.page(t, "GET", "/settings/users", s.login(t, tech), nil); r.status != 200 || !strings.Contains(dashVisible(r.body), "Tess Tech (member · MSP inv)") {
		t.Errorf("the new user's users page: %s", r)
	}
	var users []struct{ Email, Role, Name string }
	s.admin(t, "GET", w.path("/users"), nil, 200, &users)
	found := false
	for _, u := range users {
		found = found || (u.Email == "tech@inv.test" && u.Role == "member" && u.Name == "Tess Tech")
	}
	if !found {
		t.Errorf("the admin API's users %+v lack tech@inv.test, member, Tess Tech", users)
	}
	// An invitation works up to 7 days, not at 7 days.
	s.advance(t, 60)
	late := s.invite(t, owner, "late@inv.test", "viewer")
	soon := s.invite(t, owner, "soon@inv.test", "viewer")
	s.advance(t, 7*24*3600-1)
	pplWantFlash(t, s, "accept a second before expiry", s.accept(t, soon, "Soon", "a long password 2"),
		"/login?email=soon%40inv.test&workspace="+w.id, "Your password is set: log in to MSP inv.")
	s.advance(t, 1)
	pplWant(t, "GET an expired link", s.page(t, "GET", late, "", nil), 410, pplLinkExpired)
	pplWant(t, "POST an expired link", s.accept(t, late, "Late", "a long password 3"), 410, pplLinkExpired)
	// Taken addresses and open invitations.
	owner = s.login(t, w.users["owner"])
	r = s.post(t, "/settings/invites", owner, url.Values{"email": {"TECH@inv.test"}, "role": {"viewer"}})
	pplWantFlash(t, s, "invite a user", r, "/settings/invites", "!Not invited: a user with this email already exists.")
	s.invite(t, owner, "again@inv.test", "viewer")
	r = s.post(t, "/settings/invites", owner, url.Values{"email": {"again@inv.test"}, "role": {"viewer"}})
	pplWantFlash(t, s, "invite twice", r, "/settings/invites", "!Not invited: an invitation for this email is already open.")
	r = s.post(t, "/settings/invites", owner, url.Values{"email": {"not an address"}, "role": {"viewer"}})
	pplWantFlash(t, s, "invite a bad address", r, "/settings/invites", "!Not invited: email must be an e-mail address.")
	// An expired invitation of an address does not block a new one.
	s.invite(t, owner, "late@inv.test", "viewer")
	if r := s.page(t, "GET", "/settings/invites", owner, nil); !strings.Contains(dashVisible(r.body), "expired") {
		t.Errorf("the invitations page does not mark the expired one: %s", r)
	}
}

// pplInviteRoles: everyone sees the invitations; owners and admins invite
// and revoke; only an owner invites an owner.
func pplInviteRoles(t *testing.T, s *dashServer) {
	w := s.workspace(t, "invroles", nil)
	sess := map[string]string{}
	for _, role := range dashRoles {
		sess[role] = s.login(t, w.users[role])
	}
	link := s.invite(t, sess["admin"], "first@invroles.test", "admin")
	var iid string
	for _, tc := range []struct {
		role   string
		manage bool
	}{{"owner", true}, {"admin", true}, {"member", false}, {"viewer", false}} {
		r := s.page(t, "GET", "/settings/invites", sess[tc.role], nil)
		doc := dashParse(t, r.body)
		forms := dashAll(doc, "form", "action", "/settings/invites")
		if r.status != 200 || !strings.Contains(dashVisible(r.body), "first@invroles.test") || (len(forms) == 1) != tc.manage {
			t.Errorf("%s: GET /settings/invites: %s, %d invite forms; want 200 listing first@invroles.test, a form: %v", tc.role, r, len(forms), tc.manage)
		}
		rows := dashAll(doc, "tr", "data-row", "*")
		if len(rows) == 1 {
			iid = dashAttr(rows[0], "data-row")
		}
		if !tc.manage {
			pplWant(t, tc.role+" invites", s.post(t, "/settings/invites", sess[tc.role], url.Values{"email": {"x@invroles.test"}, "role": {"viewer"}}), 403, dashNoRole)
			pplWant(t, tc.role+" revokes", s.post(t, "/settings/invites/"+iid+"/revoke", sess[tc.role], nil), 403, dashNoRole)
		}
	}
	pplWant(t, "an admin invites an owner", s.post(t, "/settings/invites", sess["admin"], url.Values{"email": {"boss@invroles.test"}, "role": {"owner"}}), 403, "Only an owner can make another owner.")
	s.invite(t, sess["owner"], "boss@invroles.test", "owner")
	r := s.post(t, "/settings/invites/"+iid+"/revoke", sess["admin"], nil)
	pplWantFlash(t, s, "an admin revokes", r, "/settings/invites", "Invitation revoked; its link no longer works.")
	pplWant(t, "GET a revoked link", s.page(t, "GET", link, "", nil), 404, pplLinkBad)
	r = s.post(t, "/settings/invites/"+iid+"/revoke", sess["admin"], nil)
	pplWantFlash(t, s, "revoke twice", r, "/settings/invites", "!Not revoked: invitation not found.")
	pplWant(t, "invite without a session", s.post(t, "/settings/invites", "", url.Values{"email": {"x@invroles.test"}, "role": {"viewer"}}), 401, "Your session has ended; log in again.")
	// Two-factor settings: every role manages its own; only an owner
	// requires it of the workspace.
	for _, role := range dashRoles {
		r := s.page(t, "GET", "/settings/two-factor", sess[role], nil)
		doc := dashParse(t, r.body)
		if r.status != 200 || len(dashAll(doc, "form", "action", "/settings/two-factor/enable")) != 1 ||
			(len(dashAll(doc, "form", "action", "/settings/two-factor/require")) == 1) != (role == "owner") {
			t.Errorf("%s: GET /settings/two-factor: %s", role, r)
		}
		if role != "owner" {
			pplWant(t, role+" requires two-factor", s.post(t, "/settings/two-factor/require", sess[role], url.Values{"required": {"on"}}), 403, dashNoRole)
		}
	}
}

// pplSeveralWorkspaces: one address, a user of two workspaces with a
// password each; the switcher moves between the sessions a browser holds,
// and sends it to log in to a workspace it has none of.
func pplSeveralWorkspaces(t *testing.T, s *dashServer) {
	a := s.workspace(t, "msa", nil)
	b := s.workspace(t, "msb", nil)
	tech := a.users["member"] // member@msa.test
	link := s.invite(t, s.login(t, b.users["owner"]), tech.email, "admin")
	const pwB = "the b password 123"
	s.accept(t, link, "Tech at B", pwB)

	s.advance(t, 60)
	r := s.post(t, "/login", "", url.Values{"email": {tech.email}, "password": {tech.password}})
	sessA := r.cookie(dashCookie)
	if r.status != 303 || sessA == nil {
		t.Fatalf("log in with A's password: %s", r)
	}
	home := s.page(t, "GET", "/", sessA.Value, nil)
	doc := dashParse(t, home.body)
	opts := dashAll(doc, "option")
	var names []string
	for _, o := range dashAll(doc, "form", "action", "/switch") {
		for _, op := range dashAll(o, "option") {
			names = append(names, dashText(op)+"="+dashAttr(op, "value"))
		}
	}
	if want := []string{"MSP msa=" + a.id, "MSP msb=" + b.id}; strings.Join(names, ",") != strings.Join(want, ",") || len(opts) < 2 {
		t.Fatalf("the switcher offers %q, want %q", names, want)
	}
	// B not logged in to yet: its login, the address filled in.
	r = s.post(t, "/switch", sessA.Value, url.Values{"workspace": {b.id}})
	wantTo := "/login?email=" + url.QueryEscape(tech.email) + "&next=%2F&workspace=" + b.id
	pplWantFlash(t, s, "switch to B", r, wantTo, "Log in to that workspace to switch to it.")
	if r := s.page(t, "GET", wantTo, sessA.Value, nil); r.status != 200 || len(dashAll(dashParse(t, r.body), "input", "name", "workspace", "value", b.id)) != 1 {
		t.Errorf("the login page for B while logged in to A: %s", r)
	}
	s.advance(t, 60)
	// A's password does not open B's user.
	r = s.page(t, "POST", "/login", sessA.Value, url.Values{"email": {tech.email}, "password": {tech.password}, "workspace": {b.id}},
		"Sec-Fetch-Site", "same-origin", "Origin", s.c.PublicURL)
	pplWant(t, "A's password for B", r, 401, dashLoginErr)
	r = s.page(t, "POST", "/login", sessA.Value, url.Values{"email": {tech.email}, "password": {pwB}, "workspace": {b.id}, "next": {"/"}},
		"Sec-Fetch-Site", "same-origin", "Origin", s.c.PublicURL)
	sessB, others := r.cookie(dashCookie), r.cookie("__Host-others")
	if r.status != 303 || sessB == nil || others == nil || others.Value != sessA.Value {
		t.Fatalf("log in to B: %s; others cookie %v, want A's session kept", r, others)
	}
	if r := s.page(t, "GET", "/", sessB.Value, nil); !strings.Contains(dashVisible(r.body), "Tech at B (admin · MSP msb)") {
		t.Errorf("B's home page: %s", r)
	}
	// Back to A without a login, then to B again.
	both := "__Host-others=" + others.Value
	r = s.page(t, "POST", "/switch", sessB.Value, url.Values{"workspace": {a.id}}, "Sec-Fetch-Site", "same-origin", "Origin", s.c.PublicURL, "Cookie", both)
	pplWantFlash(t, s, "switch back to A", r, "/", "Switched to MSP msa.")
	if c, o := r.cookie(dashCookie), r.cookie("__Host-others"); c == nil || c.Value != sessA.Value || o == nil || o.Value != sessB.Value {
		t.Errorf("switch to A: session %v, others %v; want A's session in use and B's kept", c, o)
	}
	// The password alone (no workspace named) opens the first user it
	// matches: B's for B's password.
	s.advance(t, 60)
	r = s.post(t, "/login", "", url.Values{"email": {strings.ToUpper(tech.email)}, "password": {pwB}})
	if r.status != 303 || r.cookie(dashCookie) == nil {
		t.Fatalf("log in with B's password: %s", r)
	}
	if p := s.page(t, "GET", "/", r.cookie(dashCookie).Value, nil); !strings.Contains(dashVisible(p.body), "(admin · MSP msb)") {
		t.Errorf("B's password opened another workspace: %s", p)
	}
	// Logging out ends every session the browser holds.
	r = s.page(t, "POST", "/logout", sessB.Value, nil, "Sec-Fetch-Site", "same-origin", "Origin", s.c.PublicURL, "Cookie", both)
	if r.status != 303 {
		t.Fatalf("logout: %s", r)
	}
	for name, v := range map[string]string{"A": sessA.Value, "B": sessB.Value} {
		if r := s.page(t, "GET", "/", v, nil); r.status != 303 {
			t.Errorf("%s's session after logout: %s, want 303 to the login", name, r)
		}
	}
}

// pplCode is the TOTP code of secret at the development clock's time.
func pplCode(t testing.TB, secret string, at time.Time) string {
	t.Helper()
	c, err := totp.GenerateCodeCustom(secret, at, totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		t.Fatalf("TOTP code: %v", err)
	}
	return c
}

// pplEnable turns on two-factor sign-in for the session's user and returns
// the secret and the recovery codes.
func pplEnable(t testing.TB, s *dashServer, sess string) (string, []string) {
	t.Helper()
	r := s.page(t, "GET", "/settings/two-factor", sess, nil)
	doc := dashParse(t, r.body)
	secretEl := dashAll(doc, "code", "id", "totp-secret")
	token := dashAll(doc, "input", "name", "secret")
	if r.status != 200 || len(secretEl) != 1 || len(token) != 1 || len(dashAll(doc, "svg", "class", "qr")) != 1 {
		t.Fatalf("GET /settings/two-factor: %s", r)
	}
	secret := dashText(secretEl[0])
	if !regexp.MustCompile(`^[A-Z2-7]{32}$`).MatchString(secret) {
		t.Fatalf("secret %q is not 160 bits of base32", secret)
	}
	form := url.Values{"secret": {dashAttr(token[0], "value")}}
	form.Set("code", "000000")
	if pplCode(t, secret, s.now) == "000000" {
		form.Set("code", "111111")
	}
	pplWant(t, "enable with a wrong code", s.post(t, "/settings/two-factor/enable", sess, form), 400, pplCodeWrong)
	tampered := url.Values{"secret": {"JBSWY3DPEHPK3PXP" + dashAttr(token[0], "value")[16:]}, "code": {pplCode(t, "JBSWY3DPEHPK3PXP", s.now)}}
	pplWant(t, "enable with a secret of the browser's choosing", s.post(t, "/settings/two-factor/enable", sess, tampered), 400,
		"The set-up form was altered; open two-factor sign-in again.")
	form.Set("code", pplCode(t, secret, s.now))
	r = s.post(t, "/settings/two-factor/enable", sess, form)
	doc = dashParse(t, r.body)
	var codes []string
	for _, li := range dashAll(doc, "li") {
		if p := li.Parent; p != nil && dashAttr(p, "id") == "recovery-codes" {
			codes = append(codes, dashText(li))
		}
	}
	if r.status != 200 || len(codes) != 10 || !regexp.MustCompile(`^[a-z2-7]{4}(-[a-z2-7]{4}){3}$`).MatchString(codes[0]) {
		t.Fatalf("enable: %s; recovery codes %q", r, codes)
	}
	return secret, codes
}

// pplLoginStep1 posts the password and returns the second step's token.
func pplLoginStep1(t testing.TB, s *dashServer, u dashUser) string {
	t.Helper()
	r := s.post(t, "/login", "", url.Values{"email": {u.email}, "password": {u.password}})
	pending := dashAll(dashParse(t, r.body), "input", "name", "pending")
	if r.status != 200 || len(pending) != 1 || r.cookie(dashCookie) != nil {
		t.Fatalf("password of a user with two-factor sign-in: %s, want 200 asking for the code and no session", r)
	}
	return dashAttr(pending[0], "value")
}

func pplLoginStep2(t testing.TB, s *dashServer, u dashUser, pending, code string) dashResp {
	t.Helper()
	return s.post(t, "/login", "", url.Values{"email": {u.email}, "pending": {pending}, "code": {code}})
}

// pplTwoFactor: turning on TOTP, a wrong code, a code replayed within its
// step, recovery codes used once, the second step's expiry, and no secret
// in any answer of the APIs.
func pplTwoFactor(t *testing.T, s *dashServer) {
	w := s.workspace(t, "tfa", nil)
	u := w.users["viewer"]
	sess := s.login(t, u)
	secret, codes := pplEnable(t, s, sess)
	if r := s.page(t, "GET", "/settings/two-factor", sess, nil); !strings.Contains(dashVisible(r.body), "Two-factor sign-in is on for viewer@tfa.test") ||
		!strings.Contains(dashVisible(r.body), "10 of 10 recovery codes are unused.") {
		t.Errorf("the page once on: %s", r)
	}
	// The enrolment's code cannot sign in within its step.
	pending := pplLoginStep1(t, s, u)
	pplWant(t, "the enrolment's code", pplLoginStep2(t, s, u, pending, pplCode(t, secret, s.now)), 401, pplCodeUsed)
	wrong := "123456"
	if wrong == pplCode(t, secret, s.now) {
		wrong = "654321"
	}
	pplWant(t, "a wrong code", pplLoginStep2(t, s, u, pending, wrong), 401, pplCodeWrong)
	s.advance(t, 30)
	code := pplCode(t, secret, s.now)
	r := pplLoginStep2(t, s, u, pending, code)
	if r.status != 303 || r.cookie(dashCookie) == nil {
		t.Fatalf("the right code: %s, want 303 with a session", r)
	}
	s.advance(t, 5) // the same 30-second step
	pending = pplLoginStep1(t, s, u)
	pplWant(t, "the same code again within its step", pplLoginStep2(t, s, u, pending, code), 401, pplCodeUsed)
	// A recovery code works once, typed in any case.
	r = pplLoginStep2(t, s, u, pending, strings.ToUpper(codes[3]))
	if r.status != 303 || r.cookie(dashCookie) == nil {
		t.Fatalf("a recovery code: %s, want 303 with a session", r)
	}
	if p := s.page(t, "GET", "/settings/two-factor", r.cookie(dashCookie).Value, nil); !strings.Contains(dashVisible(p.body), "9 of 10 recovery codes are unused.") {
		t.Errorf("after a recovery code: %s", p)
	}
	s.advance(t, 60)
	pending = pplLoginStep1(t, s, u)
	pplWant(t, "the recovery code again", pplLoginStep2(t, s, u, pending, codes[3]), 401, pplCodeWrong)
	// The second step waits 5 minutes.
	s.advance(t, 300)
	pplWant(t, "a code after 5 minutes", pplLoginStep2(t, s, u, pending, pplCode(t, secret, s.now)), 401, "Your login took too long or was changed; start again.")
	// A session cannot start on the password alone, nor with a forged step.
	s.advance(t, 60)
	pending = pplLoginStep1(t, s, u)
	forged := strings.Replace(pending, w.users["viewer"].id, w.users["owner"].id, 1)
	pplWant(t, "a step for another user", s.post(t, "/login", "", url.Values{"email": {w.users["owner"].email}, "pending": {forged}, "code": {pplCode(t, secret, s.now)}}),
		401, "Your login took too long or was changed; start again.")
	// No answer of the APIs holds the secret or a recovery code.
	for _, p := range []string{w.path("/users"), w.path("/activity"), w.path("/users/" + u.id)} {
		_, body := s.adminRaw(t, "GET", p, nil)
		if strings.Contains(body, secret) || strings.Contains(body, codes[0]) || strings.Contains(strings.ToLower(body), "totp") {
			t.Errorf("GET %s shows a second factor's secret: %s", p, body)
		}
	}
	if code, body := s.rest(t, w.restKey, "/workspace"); code != 200 || strings.Contains(body, secret) {
		t.Errorf("REST workspace: %d %s", code, body)
	}
	// Turned off, the password alone signs in again.
	s.advance(t, 60)
	r = pplLoginStep2(t, s, u, pplLoginStep1(t, s, u), pplCode(t, secret, s.now))
	if r.status != 303 {
		t.Fatalf("log in: %s", r)
	}
	sess = r.cookie(dashCookie).Value
	// New recovery codes take a code of the second factor; the old ones
	// stop working, the new ones sign in.
	pplWantFlash(t, s, "renew without a code", s.post(t, "/settings/two-factor/recovery", sess, nil), "/settings/two-factor", "!Not renewed: the code is not right.")
	pplWantFlash(t, s, "renew with a used recovery code", s.post(t, "/settings/two-factor/recovery", sess, url.Values{"code": {codes[3]}}),
		"/settings/two-factor", "!Not renewed: the code is not right.")
	r = s.post(t, "/settings/two-factor/recovery", sess, url.Values{"code": {codes[5]}})
	var renewed []string
	for _, li := range dashAll(dashParse(t, r.body), "li") {
		if p := li.Parent; p != nil && dashAttr(p, "id") == "recovery-codes" {
			renewed = append(renewed, dashText(li))
		}
	}
	if r.status != 200 || len(renewed) != 10 || slices.Contains(codes, renewed[0]) ||
		!strings.Contains(dashVisible(r.body), "New recovery codes: the earlier ones no longer work.") || !strings.Contains(dashVisible(r.body), "10 of 10 recovery codes are unused.") {
		t.Fatalf("renew with an unused recovery code: %s; codes %q", r, renewed)
	}
	if _, body := s.adminRaw(t, "GET", w.path("/activity"), nil); !strings.Contains(body, `"user.recovery_codes_renewed"`) {
		t.Errorf("the activity after new recovery codes: %s", body)
	}
	s.advance(t, 60)
	pending = pplLoginStep1(t, s, u)
	pplWant(t, "an old recovery code after the renewal", pplLoginStep2(t, s, u, pending, codes[6]), 401, pplCodeWrong)
	if r := pplLoginStep2(t, s, u, pending, renewed[0]); r.status != 303 || r.cookie(dashCookie) == nil {
		t.Fatalf("a new recovery code: %s, want 303 with a session", r)
	}
	// Turning it off takes a code too: a session alone does not.
	pplWantFlash(t, s, "turn off without a code", s.post(t, "/settings/two-factor/disable", sess, nil), "/settings/two-factor", "!Not turned off: the code is not right.")
	s.advance(t, 60)
	code = pplCode(t, secret, s.now)
	if r := pplLoginStep2(t, s, u, pplLoginStep1(t, s, u), code); r.status != 303 {
		t.Fatalf("log in: %s", r)
	}
	pplWantFlash(t, s, "turn off with a code used to log in", s.post(t, "/settings/two-factor/disable", sess, url.Values{"code": {code}}),
		"/settings/two-factor", "!Not turned off: this code was already used; wait for the next one.")
	s.advance(t, 30)
	pplWantFlash(t, s, "turn off", s.post(t, "/settings/two-factor/disable", sess, url.Values{"code": {pplCode(t, secret, s.now)}}), "/settings/two-factor", "Two-factor sign-in is off.")
	s.login(t, u)
}

// pplTwoFactorRequired: an owner who uses two-factor sign-in requires it;
// a user without it is then held on its set-up after the password.
func pplTwoFactorRequired(t *testing.T, s *dashServer) {
	w := s.workspace(t, "tfreq", nil)
	owner := s.login(t, w.users["owner"])
	pplWantFlash(t, s, "require without using it", s.post(t, "/settings/two-factor/require", owner, url.Values{"required": {"on"}}),
		"/settings/two-factor", "!Turn on two-factor sign-in for yourself first.")
	secret, _ := pplEnable(t, s, owner)
	// Codes are throttled as passwords are, on buckets of their own: five
	// wrong ones, then 429 even for the right one.
	s.advance(t, 300)
	o := w.users["owner"]
	pending := pplLoginStep1(t, s, o)
	wrong := "123456"
	if wrong == pplCode(t, secret, s.now) {
		wrong = "654321"
	}
	for i := 1; i <= 5; i++ {
		pplWant(t, "a wrong code", pplLoginStep2(t, s, o, pending, wrong), 401, pplCodeWrong)
	}
	r := pplLoginStep2(t, s, o, pending, pplCode(t, secret, s.now))
	pplWant(t, "the right code after five wrong ones", r, 429, "Too many login attempts. Try again in a minute.")
	if r.header.Get("Retry-After") != "60" || r.cookie(dashCookie) != nil {
		t.Errorf("a throttled code: Retry-After %q, session %v; want 60 and none", r.header.Get("Retry-After"), r.cookie(dashCookie))
	}
	s.advance(t, 60)
	if r := pplLoginStep2(t, s, o, pending, pplCode(t, secret, s.now)); r.status != 303 {
		t.Errorf("the right code a minute later: %s, want 303", r)
	}
	pplWantFlash(t, s, "require", s.post(t, "/settings/two-factor/require", owner, url.Values{"required": {"on"}}),
		"/settings/two-factor", "Two-factor sign-in is now required in this workspace.")
	pplWantFlash(t, s, "turn off own while required", s.post(t, "/settings/two-factor/disable", owner, nil),
		"/settings/two-factor", "!Not turned off: the workspace requires two-factor sign-in.")
	m := s.login(t, w.users["member"])
	pplWantFlash(t, s, "a page without two-factor", s.page(t, "GET", "/jobs", m, nil), "/settings/two-factor",
		"!Your workspace requires two-factor sign-in: turn it on to go on.")
	pplWant(t, "an action without two-factor", s.post(t, "/alerts/bulk", m, url.Values{"action": {"acknowledge"}}), 403,
		"Your workspace requires two-factor sign-in: turn it on first.")
	if r := s.page(t, "GET", "/settings/two-factor", m, nil); r.status != 200 || !strings.Contains(dashVisible(r.body), "This workspace requires it: turn it on to go on.") {
		t.Errorf("the set-up page while required: %s", r)
	}
	pplEnable(t, s, m)
	if r := s.page(t, "GET", "/jobs", m, nil); r.status != 200 {
		t.Errorf("a page once two-factor is on: %s", r)
	}
	// A lost phone: a manager resets another user's second factor; the
	// user then sets it up again after the password.
	admin := s.login(t, w.users["admin"])
	pplEnable(t, s, admin) // the workspace requires it of the admin too
	pplWant(t, "an admin resets an owner's", s.post(t, "/settings/users/"+w.users["owner"].id+"/two-factor/reset", admin, nil), 403,
		"Only an owner can change an owner or make one.")
	pplWant(t, "a member resets", s.post(t, "/settings/users/"+w.users["owner"].id+"/two-factor/reset", m, nil), 403, dashNoRole)
	if r := s.page(t, "GET", "/settings/users", admin, nil); len(dashAll(dashParse(t, r.body), "form", "action", "/settings/users/"+w.users["member"].id+"/two-factor/reset")) != 1 ||
		!strings.Contains(dashVisible(r.body), "member@tfreq.test · two-factor on") {
		t.Errorf("the users page does not offer to reset the member's two-factor: %s", r)
	}
	pplWantFlash(t, s, "an admin resets a member's", s.post(t, "/settings/users/"+w.users["member"].id+"/two-factor/reset", admin, nil),
		"/settings/users", "Two-factor sign-in of member@tfreq.test is off; they can turn it on again.")
	m = s.login(t, w.users["member"]) // the password alone, now
	pplWantFlash(t, s, "a page after the reset", s.page(t, "GET", "/", m, nil), "/settings/two-factor",
		"!Your workspace requires two-factor sign-in: turn it on to go on.")
	pplWantFlash(t, s, "make it optional", s.post(t, "/settings/two-factor/require", owner, url.Values{"required": {"off"}}),
		"/settings/two-factor", "Two-factor sign-in is now optional in this workspace.")
}

// TestDashboardInviteMail: with --smtp-relay the invitation's link is also
// sent by e-mail through the relay (and shown all the same); a relay that
// cannot be reached leaves the link shown with a message.
func TestDashboardInviteMail(t *testing.T) {
	sink := dlStartSink(t)
	const site = "https://backups.example.test"
	s := dashStartChild(t, "invite mail", append(dlFlags(sink)[1:], "--public-url", site+"/")...)
	w := s.workspace(t, "mail", nil)
	owner := s.login(t, w.users["owner"])
	r := s.post(t, "/settings/invites", owner, url.Values{"email": {"New.Tech@Mail.test"}, "role": {"member"}})
	inputs := dashAll(dashParse(t, r.body), "input", "id", "invite-link")
	if r.status != 200 || len(inputs) != 1 || !strings.Contains(dashVisible(r.body), "Invitation for new.tech@mail.test made. It was sent by e-mail; you will not see it again.") {
		t.Fatalf("invite with a relay: %s", r)
	}
	link := dashAttr(inputs[0], "value")
	if !strings.HasPrefix(link, site+"/invite/") {
		t.Errorf("the link %q is not at --public-url %s", link, site)
	}
	msgs := sink.Messages()
	if len(msgs) != 1 || msgs[0].From != dlFrom || strings.Join(msgs[0].To, ",") != "new.tech@mail.test" {
		t.Fatalf("the relay got %d messages (%+v), want one from %s to new.tech@mail.test", len(msgs), msgs, dlFrom)
	}
	m, err := mail.ReadMessage(bytes.NewReader(msgs[0].Data))
	if err != nil {
		t.Fatalf("read the invitation e-mail: %v", err)
	}
	body, err := io.ReadAll(quotedprintable.NewReader(m.Body))
	if err != nil {
		t.Fatalf("decode the invitation e-mail: %v", err)
	}
	if got := m.Header.Get("Subject"); got != "You are invited to MSP mail on backupmon" {
		t.Errorf("Subject %q", got)
	}
	for _, want := range []string{"Owner of mail (owner@mail.test) invites you to the workspace MSP mail on backupmon, as member.", "\n" + link + "\n"} {
		if !strings.Contains(strings.ReplaceAll(string(body), "\r\n", "\n"), want) {
			t.Errorf("the e-mail lacks %q:\n%s", want, body)
		}
	}
	if r := s.accept(t, strings.TrimPrefix(link, site), "New Tech", "a long password 9"); r.status != 303 {
		t.Errorf("accept the mailed link: %s", r)
	}

	// A relay nobody answers on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	l.Close()
	s2 := dashStartChild(t, "invite mail, no relay", "--smtp-relay", dead, "--smtp-from", dlFrom)
	w2 := s2.workspace(t, "nomail", nil)
	r = s2.post(t, "/settings/invites", s2.login(t, w2.users["owner"]), url.Values{"email": {"x@nomail.test"}, "role": {"viewer"}})
	if r.status != 200 || len(dashAll(dashParse(t, r.body), "input", "id", "invite-link")) != 1 ||
		!strings.Contains(dashVisible(r.body), "The e-mail could not be sent; copy the link to them instead.") {
		t.Errorf("invite with a dead relay: %s", r)
	}
}

// pplBadInput: hostile input to the new forms gets its message and changes
// nothing.
func pplBadInput(t *testing.T, s *dashServer) {
	w := s.workspace(t, "bad", nil)
	owner := s.login(t, w.users["owner"])
	link := s.invite(t, owner, "bad.tech@bad.test", "member")
	for _, tc := range []struct {
		what, name, pw string
		status         int
		want           string
	}{
		{"a name of 201 characters", strings.Repeat("n", 201), "a long password 1", 400, "Name must be 1 to 200 characters."},
		{"a name of invalid UTF-8", "Te\xffss", "a long password 1", 400, "Name must be valid UTF-8 text."},
		{"a name of spaces", "   ", "a long password 1", 400, "Name is required."},
		{"a password of 300 KiB", "Tess", strings.Repeat("p", 300<<10), 400, "Password must be at most 256 characters."},
	} {
		pplWant(t, "accept with "+tc.what, s.accept(t, link, tc.name, tc.pw), tc.status, tc.want)
	}
	pplWant(t, "a secret of 2,000 characters", s.page(t, "GET", "/invite/"+w.id+"/"+strings.Repeat("A", 2000), "", nil), 404, pplLinkBad)
	pplWant(t, "a workspace id of junk", s.page(t, "GET", "/invite/%FF%00/x", "", nil), 404, pplLinkBad)
	r := s.post(t, "/settings/invites", owner, url.Values{"email": {strings.Repeat("a", 100_000) + "@bad.test"}, "role": {"viewer"}})
	pplWantFlash(t, s, "invite an address of 100,000 characters", r, "/settings/invites", "!Not invited: email must be at most 254 characters.")
	r = s.post(t, "/settings/invites", owner, url.Values{"email": {"x@bad.test"}, "role": {"boss"}})
	pplWantFlash(t, s, "invite with a bad role", r, "/settings/invites", "!Not invited: role must be one of: owner, admin, member, viewer.")
	// Nothing of it changed anything: the link still works, once.
	pplWantFlash(t, s, "accept after the bad input", s.accept(t, link, "Tess", "a long password 1"),
		"/login?email=bad.tech%40bad.test&workspace="+w.id, "Your password is set: log in to MSP bad.")

	// The second step and the set-up with junk.
	u := w.users["admin"]
	sess := s.login(t, u)
	secret, _ := pplEnable(t, s, sess)
	r = s.post(t, "/settings/two-factor/enable", sess, url.Values{"secret": {"\xff"}, "code": {"1"}})
	pplWant(t, "enable with a junk secret", r, 400, "The set-up form was altered; open two-factor sign-in again.")
	s.advance(t, 60)
	pending := pplLoginStep1(t, s, u)
	for _, tc := range []struct{ what, pending, code, want string }{
		{"a junk step", "\xff.\x00", pplCode(t, secret, s.now), "Your login took too long or was changed; start again."},
		{"a step of 100,000 characters", strings.Repeat(".", 100_000), pplCode(t, secret, s.now), "Your login took too long or was changed; start again."},
		{"a code of 900 KiB", pending, strings.Repeat("1", 900<<10), pplCodeWrong},
		{"a code of invalid UTF-8", pending, "12345\xff", pplCodeWrong},
	} {
		s.advance(t, 30)
		pplWant(t, tc.what, pplLoginStep2(t, s, u, tc.pending, tc.code), 401, tc.want)
	}
	r = s.post(t, "/switch", sess, url.Values{"workspace": {"\xff"}})
	if r.status != 303 || !strings.HasPrefix(s.location(r), "/login?") {
		t.Errorf("switch to a junk workspace: %s, want 303 to the login", r)
	}
}

// pplPassword: every role changes its own password with the current one
// (guesses throttled as a login's); the change ends the user's sessions;
// the users page does not set one's own.
func pplPassword(t *testing.T, s *dashServer) {
	w := s.workspace(t, "pwd", nil)
	u := w.users["viewer"]
	sess := s.login(t, u)
	if r := s.page(t, "GET", "/settings/password", sess, nil); r.status != 200 ||
		!strings.Contains(dashVisible(r.body), "The password viewer@pwd.test logs in to MSP pwd with.") ||
		len(dashAll(dashParse(t, r.body), "input", "name", "current")) != 1 {
		t.Fatalf("GET /settings/password: %s", r)
	}
	const next = "a new password 123"
	change := func(current, pw, confirm string) dashResp {
		return s.post(t, "/settings/password", sess, url.Values{"current": {current}, "password": {pw}, "confirm": {confirm}})
	}
	pplWant(t, "a wrong current password", change("not the password", next, next), 400, "The current password is not right.")
	pplWant(t, "new passwords that differ", change(u.password, next, next+"x"), 400, "The two new passwords differ.")
	pplWant(t, "a short new password", change(u.password, "short", "short"), 400, "Password must be at least 10 characters.")
	// Five guesses of the current password, then 429 even for the right
	// one, as for a login.
	s.advance(t, 300)
	for range 5 {
		pplWant(t, "a guess", change("guess "+u.password, next, next), 400, "The current password is not right.")
	}
	r := change(u.password, next, next)
	pplWant(t, "the right password after five guesses", r, 429, "Too many attempts. Try again in a minute.")
	if r.header.Get("Retry-After") != "60" {
		t.Errorf("a throttled change: Retry-After %q, want 60", r.header.Get("Retry-After"))
	}
	s.advance(t, 300)
	r = change(u.password, next, next)
	pplWantFlash(t, s, "change", r, "/login", "Password changed. Log in with the new one.")
	if c := r.cookie(dashCookie); c == nil || c.Value != "" {
		t.Errorf("the session cookie after the change: %v, want it cleared", c)
	}
	if r := s.page(t, "GET", "/jobs", sess, nil); r.status != 303 {
		t.Errorf("the old session after the change: %s, want 303 to the login", r)
	}
	s.advance(t, 60)
	pplWant(t, "the old password", s.post(t, "/login", "", url.Values{"email": {u.email}, "password": {u.password}}), 401, dashLoginErr)
	if r := s.post(t, "/login", "", url.Values{"email": {u.email}, "password": {next}}); r.status != 303 || r.cookie(dashCookie) == nil {
		t.Fatalf("log in with the new password: %s", r)
	}
	if _, body := s.adminRaw(t, "GET", w.path("/activity"), nil); !strings.Contains(body, `"user.updated"`) {
		t.Errorf("the activity after the change: %s", body)
	}
	// An owner sets others' passwords on the users page, not their own:
	// their own row links to the Password page instead.
	owner := s.login(t, w.users["owner"])
	doc := dashParse(t, s.page(t, "GET", "/settings/users", owner, nil).body)
	for _, row := range dashAll(doc, "tr", "data-row", "*") {
		own := dashAttr(row, "data-row") == w.users["owner"].id
		fields, links := len(dashAll(row, "input", "name", "password")), len(dashAll(row, "a", "href", "/settings/password"))
		if own && (fields != 0 || links != 1) || !own && fields != 1 {
			t.Errorf("users page, row %s (own: %v): %d password fields, %d links to the Password page", dashAttr(row, "data-row"), own, fields, links)
		}
	}
	pplWantFlash(t, s, "an owner sets their own on the users page", s.post(t, "/settings/users/"+w.users["owner"].id, owner, url.Values{"password": {next}}),
		"/settings/users", "!Change your own password on the Password page: it asks for the current one.")
	pplWantFlash(t, s, "an owner sets the viewer's", s.post(t, "/settings/users/"+u.id, owner, url.Values{"password": {"another password 1"}}),
		"/settings/users", "User viewer@pwd.test changed.")
}
