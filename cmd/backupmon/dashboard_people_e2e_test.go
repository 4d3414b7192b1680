package main

// The people flow of the dashboard's browser suite (TestDashboardBrowser,
// dashboard_e2e_test.go): a new owner invites a technician who already
// works for another workspace; the technician opens the link, sets a
// password, turns on two-factor sign-in (the test computes the TOTP code
// from the secret the page shows), logs in with it, and switches between
// the two workspaces from the header.

import (
	"strings"

	"github.com/chromedp/chromedp"
)

func dashE2EPeople(b *dashTab) {
	t, s := b.t, b.s
	w := s.workspace(t, "b-people", nil)
	other := s.workspace(t, "b-people2", nil)
	tech := other.users["member"] // a user of the other workspace already
	const pw = "the technician's own password"

	// The owner invites the technician as a member and copies the link.
	b.login(w.users["owner"])
	b.open("/settings/invites")
	b.do("fill the invitation", chromedp.SendKeys(chromedp.CSS(`form[action="/settings/invites"] input[name=email]`), tech.email),
		chromedp.SetValue(chromedp.CSS(`form[action="/settings/invites"] select[name=role]`), "member"))
	b.click(`form[action="/settings/invites"] button`)
	b.waitText("Invitation for " + tech.email + " made.")
	b.screenshot(dashArtifacts(t), "people-invite.png")
	link := dashEval[string](b, `document.querySelector('#invite-link').value`)
	if !strings.HasPrefix(link, s.c.PublicURL+"/invite/"+w.id+"/") {
		t.Fatalf("the invitation link %q is not this workspace's on this origin", link)
	}
	b.click(`form[action="/logout"] button`)
	b.waitFor("the login form after logout", `document.querySelector('#password')`)

	// The technician sets a password through the link, then logs in.
	b.open(strings.TrimPrefix(link, s.c.PublicURL))
	if txt := b.text(); !strings.Contains(txt, "Join MSP b-people") || !strings.Contains(txt, "You are invited as member") {
		t.Fatalf("the invitation page:\n%s", b.snapshot())
	}
	b.do("choose a name and password", chromedp.SendKeys(chromedp.CSS("#name"), "Tess Tech"),
		chromedp.SendKeys(chromedp.CSS("#password"), pw), chromedp.SendKeys(chromedp.CSS("#confirm"), pw))
	resp := b.submit(`button[type=submit]`)
	if resp.Status != 200 || !strings.Contains(b.text(), "Your password is set: log in to MSP b-people.") {
		t.Fatalf("set the password: %d\n%s", resp.Status, b.snapshot())
	}
	if v := dashEval[string](b, `document.querySelector('#email').value`); v != tech.email {
		t.Errorf("the login form after the invitation reads %q, want %q", v, tech.email)
	}
	s.advance(t, 60)
	b.typeIn("#password", pw)
	if resp = b.submit(`button[type=submit]`); resp.Status != 200 || b.location() != s.c.PublicURL+"/" {
		t.Fatalf("first login: %d at %s\n%s", resp.Status, b.location(), b.snapshot())
	}

	// Two-factor sign-in, with the code of the secret shown.
	b.open("/settings/two-factor")
	secret := dashEval[string](b, `document.querySelector('#totp-secret').textContent`)
	if b.count("svg.qr path") != 1 {
		t.Errorf("no QR code drawn for the secret")
	}
	b.screenshot(dashArtifacts(t), "people-two-factor.png")
	b.typeIn(`input[name=code]`, pplCode(t, secret, s.now))
	b.click(`form[action="/settings/two-factor/enable"] button`)
	b.waitText("These are your recovery codes")
	if n := b.count("#recovery-codes li"); n != 10 {
		t.Errorf("%d recovery codes shown, want 10", n)
	}
	b.click(`form[action="/logout"] button`)
	b.waitFor("the login form after logout", `document.querySelector('#password')`)
	s.advance(t, 60)
	b.do("fill the login form", chromedp.SendKeys(chromedp.CSS("#email"), tech.email), chromedp.SendKeys(chromedp.CSS("#password"), pw))
	if resp = b.submit(`button[type=submit]`); resp.Status != 200 || b.count("#code") != 1 || b.session() != nil {
		t.Fatalf("the password of a user with two-factor: %d, want the code asked and no session\n%s", resp.Status, b.snapshot())
	}
	b.typeIn("#code", pplCode(t, secret, s.now))
	if resp = b.submit(`button[type=submit]`); resp.Status != 200 || b.location() != s.c.PublicURL+"/" {
		t.Fatalf("log in with the code: %d at %s\n%s", resp.Status, b.location(), b.snapshot())
	}
	if !strings.Contains(b.text(), "Tess Tech (member · MSP b-people)") {
		t.Errorf("the header does not show the technician in MSP b-people:\n%s", b.snapshot())
	}

	// The switcher: the other workspace asks for its own login once, then
	// the two switch without one.
	if n := b.count(`form[action="/switch"] option`); n != 2 {
		t.Fatalf("the switcher offers %d workspaces, want 2\n%s", n, b.snapshot())
	}
	b.do("choose the other workspace", chromedp.SetValue(chromedp.CSS(`form[action="/switch"] select`), other.id))
	b.submit(`form[action="/switch"] button`)
	if !strings.Contains(b.text(), "Log in to that workspace to switch to it.") || dashEval[string](b, `document.querySelector('#email').value`) != tech.email {
		t.Fatalf("switching to a workspace not logged in to:\n%s", b.snapshot())
	}
	s.advance(t, 60)
	b.typeIn("#password", tech.password)
	if resp = b.submit(`button[type=submit]`); resp.Status != 200 || !strings.Contains(b.text(), "(member · MSP b-people2)") {
		t.Fatalf("log in to the other workspace: %d\n%s", resp.Status, b.snapshot())
	}
	b.do("choose the first workspace", chromedp.SetValue(chromedp.CSS(`form[action="/switch"] select`), w.id))
	b.submit(`form[action="/switch"] button`)
	b.screenshot(dashArtifacts(t), "people-switched.png")
	if txt := b.text(); !strings.Contains(txt, "Switched to MSP b-people.") || !strings.Contains(txt, "Tess Tech (member · MSP b-people)") {
		t.Fatalf("switching back:\n%s", b.snapshot())
	}
}
