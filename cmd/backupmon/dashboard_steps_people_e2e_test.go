package main

// Steps of the people flows of the dashboard's browser suite
// (TestDashboardBrowser, dashboard_e2e_test.go), shared by the People flow
// (dashboard_people_e2e_test.go) and a technician's first day
// (dashboard_day_e2e_test.go): invite, accept the invitation with a
// password, turn on two-factor sign-in, log out, log in with a code.

import (
	"strings"

	"github.com/chromedp/chromedp"
)

// invite makes an invitation to w for email with role from
// /settings/invites (the tab's user must be allowed to invite) and returns
// the link the page shows; it fails the test unless the link is w's on
// this server's origin.
func (b *dashTab) invite(w *dashWS, email, role string) string {
	b.t.Helper()
	b.open("/settings/invites")
	b.do("fill the invitation", chromedp.SendKeys(chromedp.CSS(`form[action="/settings/invites"] input[name=email]`), email),
		chromedp.SetValue(chromedp.CSS(`form[action="/settings/invites"] select[name=role]`), role))
	b.click(`form[action="/settings/invites"] button`)
	b.waitText("Invitation for " + email + " made.")
	link := dashEval[string](b, `document.querySelector('#invite-link').value`)
	if !strings.HasPrefix(link, b.s.c.PublicURL+"/invite/"+w.id+"/") {
		b.t.Fatalf("the invitation link %q is not this workspace's on this origin", link)
	}
	return link
}

// logout clicks the header's Log out and waits for the login form.
func (b *dashTab) logout() {
	b.t.Helper()
	// Waits for the login page's load, not only for its #password: a step
	// that looks nodes up while chromedp still holds the page before it
	// finds stale ones ("Could not find node with given id").
	if resp := b.submit(`form[action="/logout"] button`); resp.Status != 200 || b.count("#password") != 1 || b.location() != b.s.c.PublicURL+"/login" {
		b.t.Fatalf("log out: %d at %s\n%s", resp.Status, b.location(), b.snapshot())
	}
}

// acceptInvite opens the invitation link to w for u's role, sets u's name
// and password there and logs in with that password; it fails the test
// unless the page names w and the role, the password is taken, the login
// form that follows holds u's address, and the login lands on the queue.
func (b *dashTab) acceptInvite(link string, w *dashWS, u dashUser) {
	t, s := b.t, b.s
	t.Helper()
	b.open(strings.TrimPrefix(link, s.c.PublicURL))
	if txt := b.text(); !strings.Contains(txt, "Join MSP "+w.slug) || !strings.Contains(txt, "You are invited as "+u.role) {
		t.Fatalf("the invitation page:\n%s", b.snapshot())
	}
	b.do("choose a name and password", chromedp.SendKeys(chromedp.CSS("#name"), u.name),
		chromedp.SendKeys(chromedp.CSS("#password"), u.password), chromedp.SendKeys(chromedp.CSS("#confirm"), u.password))
	resp := b.submit(`button[type=submit]`)
	if resp.Status != 200 || !strings.Contains(b.text(), "Your password is set: log in to MSP "+w.slug+".") {
		t.Fatalf("set the password: %d\n%s", resp.Status, b.snapshot())
	}
	if v := dashEval[string](b, `document.querySelector('#email').value`); v != u.email {
		t.Errorf("the login form after the invitation reads %q, want %q", v, u.email)
	}
	s.advance(t, 60)
	b.typeIn("#password", u.password)
	if resp = b.submit(`button[type=submit]`); resp.Status != 200 || b.location() != s.c.PublicURL+"/" {
		t.Fatalf("first login: %d at %s\n%s", resp.Status, b.location(), b.snapshot())
	}
}

// enableTwoFactor turns on two-factor sign-in for the tab's user at
// /settings/two-factor with the code of the secret the page shows, saves a
// screenshot of the set-up page as shot in the artefacts, and returns the
// secret; it fails the test unless a QR code is drawn and ten recovery
// codes are shown.
func (b *dashTab) enableTwoFactor(shot string) string {
	t := b.t
	t.Helper()
	b.open("/settings/two-factor")
	secret := dashEval[string](b, `document.querySelector('#totp-secret').textContent`)
	if b.count("svg.qr path") != 1 {
		t.Errorf("no QR code drawn for the secret")
	}
	b.screenshot(dashArtifacts(t), shot)
	b.typeIn(`input[name=code]`, pplCode(t, secret, b.s.now))
	b.click(`form[action="/settings/two-factor/enable"] button`)
	b.waitText("These are your recovery codes")
	if n := b.count("#recovery-codes li"); n != 10 {
		t.Errorf("%d recovery codes shown, want 10", n)
	}
	return secret
}

// loginTwoFactor logs u in from the login form open in the tab with u's
// password and then the TOTP code of secret (a minute later than any code
// used before); it fails the test unless the password alone asks for the
// code and sets no session, and the code lands on the queue.
func (b *dashTab) loginTwoFactor(u dashUser, secret string) {
	t, s := b.t, b.s
	t.Helper()
	s.advance(t, 60)
	b.do("fill the login form", chromedp.SendKeys(chromedp.CSS("#email"), u.email), chromedp.SendKeys(chromedp.CSS("#password"), u.password))
	if resp := b.submit(`button[type=submit]`); resp.Status != 200 || b.count("#code") != 1 || b.session() != nil {
		t.Fatalf("the password of a user with two-factor: %d, want the code asked and no session\n%s", resp.Status, b.snapshot())
	}
	b.typeIn("#code", pplCode(t, secret, s.now))
	if resp := b.submit(`button[type=submit]`); resp.Status != 200 || b.location() != s.c.PublicURL+"/" {
		t.Fatalf("log in with the code: %d at %s\n%s", resp.Status, b.location(), b.snapshot())
	}
}
