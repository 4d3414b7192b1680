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
	link := b.invite(w, tech.email, "member")
	b.screenshot(dashArtifacts(t), "people-invite.png")
	b.logout()

	// The technician sets a password through the link, then logs in.
	me := dashUser{email: tech.email, name: "Tess Tech", role: "member", password: pw}
	b.acceptInvite(link, w, me)

	// Two-factor sign-in, with the code of the secret shown.
	secret := b.enableTwoFactor("people-two-factor.png")
	b.logout()
	b.loginTwoFactor(me, secret)
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
	if resp := b.submit(`button[type=submit]`); resp.Status != 200 || !strings.Contains(b.text(), "(member · MSP b-people2)") {
		t.Fatalf("log in to the other workspace: %d\n%s", resp.Status, b.snapshot())
	}
	b.do("choose the first workspace", chromedp.SetValue(chromedp.CSS(`form[action="/switch"] select`), w.id))
	b.submit(`form[action="/switch"] button`)
	b.screenshot(dashArtifacts(t), "people-switched.png")
	if txt := b.text(); !strings.Contains(txt, "Switched to MSP b-people.") || !strings.Contains(txt, "Tess Tech (member · MSP b-people)") {
		t.Fatalf("switching back:\n%s", b.snapshot())
	}
}
