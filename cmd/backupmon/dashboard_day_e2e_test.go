package main

// A technician's whole first day, a flow of the dashboard's browser suite
// (TestDashboardBrowser, dashboard_e2e_test.go; issue 22, "What it must
// show"), in order and in one browser: the owner of a new workspace
// invites the technician by e-mail as an admin (creating clients and jobs
// needs an owner or admin: decisions.md "People and the dashboard"); the
// technician, in a browser context of their own, opens the link, sets a
// password, turns on two-factor sign-in, logs out and in again with the
// password and a TOTP code; adds a client and a job; copies the ingest
// address and sends a report e-mail to it over SMTP, sees the run arrive
// with its trend drawn; reports successful runs with the job page's curl
// line, then one far smaller, flagged in the attention queue; and at a
// desktop's and a phone's width checks the Jobs page's search box and the
// header, with screenshots of the queue and the job page kept as
// artefacts. The steps are those of the People, SetUpAndTrends and
// RoughEdges flows (dashboard_steps_*_e2e_test.go).

import (
	"strings"
	"time"
)

// dashE2EDay walks the day (see above) from b, the owner's tab, and a tab
// of the technician's opened from it; any step that breaks fails the flow.
func dashE2EDay(b *dashTab) {
	t, s := b.t, b.s
	w := s.workspace(t, "b-day", nil)
	tech := dashUser{email: "dana@wren-it.test", name: "Dana Field", role: "admin", password: "Dana's first-day password"}
	const flag = "size 90% below usual"

	// The owner invites the technician.
	b.login(w.users["owner"])
	link := b.invite(w, tech.email, "admin")

	// The technician, without the owner's cookies, sets a password, turns
	// on two-factor sign-in and logs in again with a code.
	d := dashOpenTab(t, s, b.ctx, false)
	if d.session() != nil {
		t.Fatalf("the technician's browser context holds a session before the invitation")
	}
	d.acceptInvite(link, w, tech)
	if !strings.Contains(d.text(), "Dana Field (admin · MSP b-day)") {
		t.Errorf("the header does not show the technician as an admin of MSP b-day:\n%s", d.snapshot())
	}
	secret := d.enableTwoFactor("day-two-factor.png")
	d.logout()
	d.loginTwoFactor(tech, secret)

	// A client and a job; the ingest address copied; a report e-mail to it,
	// a failed run a week ago, arrives with its point drawn.
	d.addClient("Wren Opticians")
	jobID, job := d.addJob(w, "Practice backup", "generic", "Front desk PC", "fd01.wren.example")
	address := d.copyIngest(job)
	d.mailReport(address, jobID, "Practice backup", "Network path not found", s.now.Add(-7*24*time.Hour))

	// Five successful runs of about 20 GB flag nothing; a sixth of 2 GB is
	// flagged on the job page and in the queue.
	line := d.reportLine(jobID)
	const gb = 1_000_000_000
	d.curlRuns(line, dashDailyRuns(s.now.Add(-26*time.Hour), 20*gb, 22*gb, 21*gb, 19*gb, 20*gb))
	d.open("/jobs/" + jobID)
	d.waitFor("six duration points", `document.querySelectorAll('#trend-duration circle.pt').length === 6`)
	if n := d.count(`#trend-size circle.pt`); n != 5 || d.count(`#size-drop, #trend-size circle.pt.drop`) != 0 {
		t.Errorf("after five runs of a usual size the size chart has %d points (want 5) and flags %d\n%s", n, d.count(`#size-drop, #trend-size circle.pt.drop`), d.snapshot())
	}
	d.curlRuns(line, []dashRun{{s.now.Add(-2 * time.Hour), 1500, 2 * gb}})
	d.jobSizeDrop(jobID, 7, flag)
	d.queueSizeDrop("Practice backup", flag)

	// At each width: the search box, the header, and the queue and the job
	// page kept as screenshots.
	for _, width := range []int64{1366, 390} {
		name := dashWidths[width]
		d.viewport(width)
		d.searchBox(name)
		d.shotAt(width, "/", "day-queue")
		if !strings.Contains(d.text(), flag) {
			t.Errorf("%s: the queue does not show %q\n%s", name, flag, d.snapshot())
		}
		if width == 390 {
			dashRoughHeader(d, name) // the 5 pages, the account button and its menu
		} else {
			dashHeaderOneLine(d, name, 5) // the 5 pages; the account is spelled out
		}
		d.shotAt(width, "/jobs/"+jobID, "day-job")
	}
}
