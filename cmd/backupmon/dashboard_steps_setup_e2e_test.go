package main

// Steps of the set-up flows of the dashboard's browser suite
// (TestDashboardBrowser, dashboard_e2e_test.go), shared by SetUpAndTrends
// (dashboard_setup_e2e_test.go) and a technician's first day
// (dashboard_day_e2e_test.go): add a client and a job, copy the ingest
// address, report by e-mail and with the page's curl line, see the trend
// and a size drop, and screenshots at a width.

import (
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/chromedp"

	"backupmon/internal/testserver"
)

// addClient adds a client named name at /clients; it fails the test unless
// the dashboard says so and lands on the client's page.
func (b *dashTab) addClient(name string) {
	b.t.Helper()
	b.open("/clients")
	b.typeIn(`#new-client input[name=name]`, name)
	b.click(`#new-client button`)
	b.waitText("Client added.")
	if h1 := dashEval[string](b, `document.querySelector('main h1').textContent`); h1 != name {
		b.t.Fatalf("after adding the client the page is %q\n%s", h1, b.snapshot())
	}
}

// addJob adds a job from the client's page open in the tab, and returns
// its id and the admin API's view of it; it fails the test unless the
// dashboard says so and the admin API reads the job's name and vendor.
func (b *dashTab) addJob(w *dashWS, name, vendor, device, host string) (string, map[string]any) {
	t, s := b.t, b.s
	t.Helper()
	b.click(`#add-job`)
	b.waitFor("the job form", `document.querySelector('#job-form')`)
	b.do("fill the job form",
		chromedp.SendKeys(chromedp.CSS(`#job-name`), name),
		chromedp.SetValue(chromedp.CSS(`#job-vendor`), vendor),
		chromedp.SendKeys(chromedp.CSS(`input[name=deviceName]`), device),
		chromedp.SendKeys(chromedp.CSS(`input[name=hostname]`), host))
	b.click(`#job-form button.primary`)
	b.waitText("Job added.")
	jobID := strings.TrimPrefix(b.location(), s.c.PublicURL+"/jobs/")
	job := s.c.For(t).Job(w.id, jobID)
	if job["name"] != name || job["vendor"] != vendor {
		t.Fatalf("the admin API reads the new job as %v", job)
	}
	return jobID, job
}

// copyIngest reads the ingest address from the target of the copy button
// of the job page open in the tab, clicks the button and returns the
// address; it fails the test unless the address is the job's and the
// button says it copied.
func (b *dashTab) copyIngest(job map[string]any) string {
	b.t.Helper()
	target := dashEval[string](b, `document.querySelector('#ingest-h ~ .copyrow [data-copy]').dataset.copy`)
	address := dashEval[string](b, `document.getElementById(`+dashJS(target)+`).value`)
	if address != job["ingestAddress"] || !strings.HasSuffix(address, "@ingest.localhost") {
		b.t.Fatalf("the copy button's target %q holds %q, want the ingest address %v", target, address, job["ingestAddress"])
	}
	b.click(`[data-copy=` + target + `]`)
	b.waitFor("the copy button to say it copied", `document.querySelector('[data-copy=`+target+`]').textContent === 'Copied'`)
	return address
}

// mailReport sends a failed run of the job named name, finished at at, as a
// report e-mail over SMTP to address, and opens the job's page; it fails
// the test unless the run arrives there and the duration chart draws its
// one point.
func (b *dashTab) mailReport(address, jobID, name, text string, at time.Time) {
	b.t.Helper()
	b.s.mail(b.t, address, name, text, at)
	b.open("/jobs/" + jobID)
	b.waitText("email:generic")
	if b.count(`#trend-duration circle.pt`) != 1 {
		b.t.Errorf("after the e-mail the duration chart has %d points, want 1\n%s", b.count(`#trend-duration circle.pt`), b.snapshot())
	}
}

// reportLine makes a report key on the job page open in the tab and
// returns the ready curl line the page shows with it; it fails the test
// unless the line carries the key and the job's report path.
func (b *dashTab) reportLine(jobID string) string {
	b.t.Helper()
	b.click(`#report-key-form button`)
	b.waitFor("the new key", `document.querySelector('#new-key')`)
	key := dashEval[string](b, `document.querySelector('#new-key').textContent`)
	line := dashEval[string](b, `document.querySelector('#report-curl').value`)
	if !strings.HasPrefix(key, "svc_live_") || !strings.Contains(line, "Bearer "+key) || !strings.Contains(line, "/api/v1/jobs/"+jobID+"/report") {
		b.t.Fatalf("key %q, curl line %q", key, line)
	}
	return line
}

// dashRun is one successful run to report: when it ran, how long it took
// and its size.
type dashRun struct {
	at      time.Time
	seconds int
	size    int64
}

// dashDailyRuns returns a run a day for each size, the last at last, the
// first taking 1200 seconds and each a minute longer than the one before.
func dashDailyRuns(last time.Time, sizes ...int64) []dashRun {
	runs := make([]dashRun, len(sizes))
	for i, size := range sizes {
		runs[i] = dashRun{last.Add(time.Duration(i-len(sizes)+1) * 24 * time.Hour), 1200 + 60*i, size}
	}
	return runs
}

// curlRuns reports runs with the page's curl line (its example body
// replaced by each run's); it fails the test unless each is taken with 200.
func (b *dashTab) curlRuns(line string, runs []dashRun) {
	b.t.Helper()
	for _, run := range runs {
		body := fmt.Sprintf(`{"status":"ok","timestamp":"%s","duration_seconds":%d,"size_bytes":%d}`, run.at.UTC().Format(time.RFC3339), run.seconds, run.size)
		sent := strings.Replace(line, `{"status":"ok","duration_seconds":1200,"size_bytes":5368709120}`, body, 1)
		r, err := testserver.Curl(b.s.c.HTTP, sent)
		if err != nil || r.Status != 200 {
			b.t.Fatalf("the page's curl line with %s: %v %d %s", body, err, r.Status, r.Body)
		}
	}
}

// jobSizeDrop opens the job's page and waits for points duration points;
// it fails the test unless exactly one size point is marked as a drop and
// the job's flag reads flag.
func (b *dashTab) jobSizeDrop(jobID string, points int, flag string) {
	b.t.Helper()
	b.open("/jobs/" + jobID)
	b.waitFor(fmt.Sprintf("%d duration points", points), fmt.Sprintf(`document.querySelectorAll('#trend-duration circle.pt').length === %d`, points))
	if n := b.count(`#trend-size circle.pt.drop`); n != 1 {
		b.t.Errorf("%d size points marked as a drop, want 1\n%s", n, b.snapshot())
	}
	if got := dashEval[string](b, `document.querySelector('#size-drop').textContent`); got != flag {
		b.t.Errorf("the job's flag reads %q", got)
	}
}

// queueSizeDrop opens the attention queue; it fails the test unless it
// shows flag and lists the job named name as the one job needing
// attention.
func (b *dashTab) queueSizeDrop(name, flag string) {
	b.t.Helper()
	b.open("/")
	b.waitText(flag)
	if txt := b.text(); !strings.Contains(txt, name) || !strings.Contains(txt, "1 job(s) need attention") {
		b.t.Errorf("the queue does not list the job for its size drop:\n%s", txt)
	}
}

// shotAt opens page in the tab's window of width px and saves a screenshot
// of it as <name>-<width>.png in the artefacts; it fails the test if the
// page scrolls sideways or the screenshot is not width px wide.
func (b *dashTab) shotAt(width int64, page, name string) {
	b.t.Helper()
	b.open(page)
	if sw := dashEval[int](b, `document.documentElement.scrollWidth`); sw > int(width) {
		b.t.Errorf("%s at %d px is %d px wide: it scrolls sideways", page, width, sw)
	}
	if got := b.screenshot(dashArtifacts(b.t), fmt.Sprintf("%s-%d.png", name, width)); got != int(width) {
		b.t.Errorf("the %s screenshot is %d px wide, want %d", name, got, width)
	}
}
