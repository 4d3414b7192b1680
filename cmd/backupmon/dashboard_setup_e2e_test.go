package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
)

// dashE2ESetup (a flow of TestDashboardBrowser): an owner adds a client and
// a generic job in the dashboard, reads the ingest address from the copy
// button's target and copies it, sends a report e-mail to that address,
// makes a report key on the job page and reports runs with its curl line,
// sees them arrive and their trend drawn, then a size drop flagged on the
// job page and in the queue; screenshots at 1366 and 390 pixels wide. The
// steps are in dashboard_steps_setup_e2e_test.go.
func dashE2ESetup(b *dashTab) {
	t, s := b.t, b.s
	w, _ := b.loginNew("b-setup", nil, "owner")

	// A client, and a job of that client, from its page.
	b.addClient("Osprey Vets")
	jobID, job := b.addJob(w, "Nightly export", "generic", "Practice server", "ps01.osprey.example")

	// The ingest address: the copy button's target holds it.
	address := b.copyIngest(job)

	// A report e-mail to the address copied: a failed run, five days ago.
	now := s.now
	b.mailReport(address, jobID, "Nightly export", "Disk full on the target", now.Add(-5*24*time.Hour))
	if strings.Contains(b.text(), "Job added.") {
		t.Errorf("the message of the job's creation shows again on a later page")
	}

	// A report key made here, and runs reported with the curl line shown.
	line := b.reportLine(jobID)
	const gb = 1_000_000_000
	b.curlRuns(line, dashDailyRuns(now.Add(-time.Hour), 10*gb, 11*gb, 10*gb, 9*gb, 500_000_000))
	b.jobSizeDrop(jobID, 6, "size 95% below usual")
	shots := func(page, name string) {
		for _, width := range []int64{1366, 390} {
			b.do(fmt.Sprintf("a %d px window", width), chromedp.EmulateViewport(width, 900))
			b.shotAt(width, page, name)
		}
	}
	shots("/jobs/"+jobID, "setup-job")

	// The queue: the job is there for its size drop alone.
	b.queueSizeDrop("Nightly export", "size 95% below usual")
	shots("/", "setup-queue")
}
