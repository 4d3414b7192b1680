package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/chromedp"

	"backupmon/internal/testserver"
)

// dashE2ESetup (a flow of TestDashboardBrowser): an owner adds a client and
// a generic job in the dashboard, reads the ingest address from the copy
// button's target and copies it, sends a report e-mail to that address,
// makes a report key on the job page and reports runs with its curl line,
// sees them arrive and their trend drawn, then a size drop flagged on the
// job page and in the queue; screenshots at 1366 and 390 pixels wide.
func dashE2ESetup(b *dashTab) {
	t, s := b.t, b.s
	w, _ := b.loginNew("b-setup", nil, "owner")
	dir := dashArtifacts(t)

	// A client.
	b.open("/clients")
	b.typeIn(`#new-client input[name=name]`, "Osprey Vets")
	b.click(`#new-client button`)
	b.waitText("Client added.")
	if h1 := dashEval[string](b, `document.querySelector('main h1').textContent`); h1 != "Osprey Vets" {
		t.Fatalf("after adding the client the page is %q\n%s", h1, b.snapshot())
	}

	// A job of that client, from its page.
	b.click(`#add-job`)
	b.waitFor("the job form", `document.querySelector('#job-form')`)
	b.do("fill the job form",
		chromedp.SendKeys(chromedp.CSS(`#job-name`), "Nightly export"),
		chromedp.SetValue(chromedp.CSS(`#job-vendor`), "generic"),
		chromedp.SendKeys(chromedp.CSS(`input[name=deviceName]`), "Practice server"),
		chromedp.SendKeys(chromedp.CSS(`input[name=hostname]`), "ps01.osprey.example"))
	b.click(`#job-form button.primary`)
	b.waitText("Job added.")
	jobID := strings.TrimPrefix(b.location(), s.c.PublicURL+"/jobs/")
	job := s.c.For(t).Job(w.id, jobID)
	if job["name"] != "Nightly export" || job["vendor"] != "generic" {
		t.Fatalf("the admin API reads the new job as %v", job)
	}

	// The ingest address: the copy button's target holds it.
	target := dashEval[string](b, `document.querySelector('#ingest-h ~ .copyrow [data-copy]').dataset.copy`)
	address := dashEval[string](b, `document.getElementById(`+dashJS(target)+`).value`)
	if address != job["ingestAddress"] || !strings.HasSuffix(address, "@ingest.localhost") {
		t.Fatalf("the copy button's target %q holds %q, want the ingest address %v", target, address, job["ingestAddress"])
	}
	b.click(`[data-copy=` + target + `]`)
	b.waitFor("the copy button to say it copied", `document.querySelector('[data-copy=`+target+`]').textContent === 'Copied'`)

	// A report e-mail to the address copied: a failed run, five days ago.
	now := s.now
	s.mail(t, address, "Nightly export", "Disk full on the target", now.Add(-5*24*time.Hour))
	b.open("/jobs/" + jobID)
	b.waitText("email:generic")
	if strings.Contains(b.text(), "Job added.") {
		t.Errorf("the message of the job's creation shows again on a later page")
	}
	if b.count(`#trend-duration circle.pt`) != 1 {
		t.Errorf("after the e-mail the duration chart has %d points, want 1\n%s", b.count(`#trend-duration circle.pt`), b.snapshot())
	}

	// A report key made here, and runs reported with the curl line shown.
	b.click(`#report-key-form button`)
	b.waitFor("the new key", `document.querySelector('#new-key')`)
	key := dashEval[string](b, `document.querySelector('#new-key').textContent`)
	line := dashEval[string](b, `document.querySelector('#report-curl').value`)
	if !strings.HasPrefix(key, "svc_live_") || !strings.Contains(line, "Bearer "+key) || !strings.Contains(line, "/api/v1/jobs/"+jobID+"/report") {
		t.Fatalf("key %q, curl line %q", key, line)
	}
	const gb = 1_000_000_000
	for i, size := range []int64{10 * gb, 11 * gb, 10 * gb, 9 * gb, 500_000_000} {
		at := now.Add(time.Duration(i-4) * 24 * time.Hour).Add(-time.Hour)
		body := fmt.Sprintf(`{"status":"ok","timestamp":"%s","duration_seconds":%d,"size_bytes":%d}`, at.UTC().Format(time.RFC3339), 1200+60*i, size)
		sent := strings.Replace(line, `{"status":"ok","duration_seconds":1200,"size_bytes":5368709120}`, body, 1)
		r, err := testserver.Curl(s.c.HTTP, sent)
		if err != nil || r.Status != 200 {
			t.Fatalf("the page's curl line with %s: %v %d %s", body, err, r.Status, r.Body)
		}
	}
	b.open("/jobs/" + jobID)
	b.waitFor("six duration points", `document.querySelectorAll('#trend-duration circle.pt').length === 6`)
	if n := b.count(`#trend-size circle.pt.drop`); n != 1 {
		t.Errorf("%d size points marked as a drop, want 1\n%s", n, b.snapshot())
	}
	if got := dashEval[string](b, `document.querySelector('#size-drop').textContent`); got != "size 95% below usual" {
		t.Errorf("the job's flag reads %q", got)
	}
	shots := func(page string) {
		for _, width := range []int64{1366, 390} {
			b.do(fmt.Sprintf("a %d px window", width), chromedp.EmulateViewport(width, 900))
			b.open(page)
			if sw := dashEval[int](b, `document.documentElement.scrollWidth`); sw > int(width) {
				t.Errorf("%s at %d px is %d px wide: it scrolls sideways", page, width, sw)
			}
			name := "setup-" + map[string]string{"/": "queue"}[page]
			if page != "/" {
				name = "setup-job"
			}
			if got := b.screenshot(dir, fmt.Sprintf("%s-%d.png", name, width)); got != int(width) {
				t.Errorf("the %s screenshot is %d px wide, want %d", name, got, width)
			}
		}
	}
	shots("/jobs/" + jobID)

	// The queue: the job is there for its size drop alone.
	b.open("/")
	b.waitText("size 95% below usual")
	if txt := b.text(); !strings.Contains(txt, "Nightly export") || !strings.Contains(txt, "1 job(s) need attention") {
		t.Errorf("the queue does not list the job for its size drop:\n%s", txt)
	}
	shots("/")
}
