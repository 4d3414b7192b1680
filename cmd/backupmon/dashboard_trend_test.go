package main

// The job page's trends and size drops against the real binary
// (docs/decisions.md "Size drops"): the charts' points, and a size drop
// flagged on the job page and in the queue, sent to a webhook as a notice,
// with no alert and every REST answer equal to a twin workspace's.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestDashboardSizeDrop: a run far below the job's recent runs is flagged
// on the job page and in the queue and sent to a webhook channel as a
// job.size_drop notice, opens no alert, and leaves every REST answer as it
// is for a twin workspace whose job does not check sizes.
func TestDashboardSizeDrop(t *testing.T) {
	hooks := make(chan []byte, 16)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		hooks <- b
	}))
	defer recv.Close()
	s := dashStartChild(t, "size-drop server", "--allow-private-webhooks")
	// Twins: the same names and reports at the same times; the second
	// job's check is off (threshold 0), set in the dashboard.
	var twins []*dashWS
	for _, slug := range []string{"drop-a", "drop-b"} {
		w := s.workspace(t, slug, []dashJob{{"Nightly", "veeam", 0, ""}})
		s.admin(t, "PATCH", "/workspaces/"+w.id, map[string]any{"name": "MSP twin"}, 200, nil)
		twins = append(twins, w)
	}
	a, b := twins[0], twins[1]
	s.admin(t, "POST", a.path("/channels"), map[string]any{"type": "webhook", "name": "hook", "url": recv.URL}, 201, nil)
	sessB := s.login(t, b.users["owner"])
	off := setupJobForm("", "Nightly")
	off.Del("clientId")
	off.Set("deviceName", "srv-0")
	off.Set("hostname", "srv-0.drop-b.example")
	off.Set("sizeDropPercent", "0")
	if r := s.post(t, "/jobs/"+b.jobs["Nightly"]+"/edit", sessB, off); r.status != 303 {
		t.Fatalf("turn the check off: %s", r)
	}
	const gb = 1_000_000_000
	sizes := []int64{10 * gb, 10 * gb, 11 * gb, 9 * gb, 800_000_000}
	for i, size := range sizes {
		if i > 0 {
			s.advance(t, 86400)
		}
		for _, w := range twins {
			body := fmt.Sprintf(`{"status":"ok","duration_seconds":600,"size_bytes":%d}`, size)
			if r := s.c.For(t).MustReport(w.jobs["Nightly"], w.reportKey, body); r.JSON["alert_id"] != nil {
				t.Fatalf("report %d opened an alert: %s", i, r.Body)
			}
		}
	}
	// The flag: on A's job page and queue, not on B's (new sessions: the
	// days passed ended the first).
	sessA := s.login(t, a.users["owner"])
	sessB = s.login(t, b.users["owner"])
	const flag = "size 92% below usual"
	pageA := s.page(t, "GET", "/jobs/"+a.jobs["Nightly"], sessA, nil)
	if !strings.Contains(pageA.body, `<span class="pill sizedrop" id="size-drop">`+flag+`</span>`) {
		t.Errorf("A's job page does not flag %q", flag)
	}
	queueA := s.page(t, "GET", "/", sessA, nil)
	if !strings.Contains(queueA.body, `<span class="pill sizedrop">`+flag+`</span>`) || !strings.Contains(dashVisible(queueA.body), "1 job(s) need attention") {
		t.Errorf("A's queue does not list the job with %q: %s", flag, dashVisible(queueA.body))
	}
	for _, p := range []string{"/", "/jobs/" + b.jobs["Nightly"]} {
		if r := s.page(t, "GET", p, sessB, nil); strings.Contains(r.body, "below usual") {
			t.Errorf("B's %s flags a size drop with the check off", p)
		}
	}
	// The notice.
	select {
	case body := <-hooks:
		var n struct {
			Event string
			Alert any
			Job   struct{ ID string }
		}
		if err := json.Unmarshal(body, &n); err != nil || n.Event != "job.size_drop" || n.Alert != nil || n.Job.ID != a.jobs["Nightly"] {
			t.Errorf("webhook %s, want job.size_drop with alert null and the job", body)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no webhook for the size drop")
	}
	var dl []struct{ Event, AlertID, JobID string }
	s.admin(t, "GET", a.path("/deliveries"), nil, 200, &dl)
	if len(dl) != 1 || dl[0].Event != "job.size_drop" || dl[0].AlertID != "" || dl[0].JobID != a.jobs["Nightly"] {
		t.Errorf("deliveries %+v, want one job.size_drop without an alert", dl)
	}
	// No REST answer differs between the twins, ids aside.
	// The twins differ in their ids, their slugs (in host names) and
	// their report keys (in each result's source).
	ids := regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|drop-[ab]|svc_live_[0-9a-f]+`)
	paths := []string{"/workspace", "/clients", "/jobs", "/jobs/{job}", "/reports?limit=100", "/alerts", "/health", "/clients/{client}/health", "/jobs?status=healthy", "/reports?status=ok"}
	for _, p := range paths {
		var got []string
		for _, w := range twins {
			path := strings.NewReplacer("{job}", w.jobs["Nightly"], "{client}", w.clients[0]).Replace(p)
			st, body := s.rest(t, w.restKey, path)
			got = append(got, fmt.Sprint(st)+" "+ids.ReplaceAllString(body, "<id>"))
		}
		if got[0] != got[1] {
			t.Errorf("GET %s differs with a size drop:\n%s\n%s", p, got[0], got[1])
		}
		if !strings.HasPrefix(got[0], "200 ") {
			t.Errorf("GET %s: %.200s", p, got[0])
		}
	}
	if alerts := s.adminAlerts(t, a); len(alerts) != 0 {
		t.Errorf("the size drop opened alerts: %v", alerts)
	}
}

// setupSizes sends reports of sizes (bytes) and durations (seconds) a day
// apart, the last one now, through the Report API.
func (s *dashServer) setupSizes(t testing.TB, w *dashWS, job string, sizes []int64) {
	t.Helper()
	for i, size := range sizes {
		if i > 0 {
			s.advance(t, 86400)
		}
		body := fmt.Sprintf(`{"status":"ok","duration_seconds":%d,"size_bytes":%d}`, 600+60*i, size)
		if r := s.c.For(t).MustReport(job, w.reportKey, body); r.JSON["ok"] != true {
			t.Fatalf("report: %s", r.Body)
		}
	}
}

var setupLine = regexp.MustCompile(`<polyline class="line" points="([^"]*)"/>`)

var setupPoint = regexp.MustCompile(`<circle class="(pt(?: drop)?)" cx="([0-9.]+)" cy="([0-9.]+)" r="[0-9]+" data-at="([^"]+)" data-v="(\d+)">`)

// setupTrend: the charts draw each run at its place: x by its completion
// time in the period, y by its value against the largest, with the size
// drop marked; the 90-day chart holds what the 30-day one leaves out.
func setupTrend(t *testing.T, s *dashServer) {
	w := s.workspace(t, "setup-trend", []dashJob{{"Trend job", "veeam", 0, ""}})
	job := w.jobs["Trend job"]
	const gb = 1_000_000_000
	sizes := []int64{10 * gb, 12 * gb, 11 * gb, 10 * gb, 800_000_000}
	start := s.now
	s.setupSizes(t, w, job, sizes)
	sess := s.login(t, w.users["viewer"]) // after the days, which end sessions (12 hours idle)
	now := s.now
	page := s.page(t, "GET", "/jobs/"+job, sess, nil)
	chart := func(body, name string) [][]string {
		i := strings.Index(body, `<svg class="trend" id="trend-`+name+`"`)
		if i < 0 {
			t.Fatalf("no %s chart on the job page: %.3000s", name, body)
		}
		end := strings.Index(body[i:], "</svg>")
		svg := body[i : i+end]
		pts := setupPoint.FindAllStringSubmatch(svg, -1)
		// The line goes through the dots, in order.
		var through []string
		for _, p := range pts {
			through = append(through, p[2]+","+p[3])
		}
		if line := setupLine.FindStringSubmatch(svg); len(pts) > 0 && (line == nil || line[1] != strings.Join(through, " ")) {
			t.Errorf("%s chart: line %q, want it through %q", name, line, through)
		}
		return pts
	}
	from := now.Add(-30 * 24 * time.Hour)
	for _, name := range []string{"size", "duration"} {
		pts := chart(page.body, name)
		if len(pts) != len(sizes) {
			t.Fatalf("%s chart: %d points, want %d", name, len(pts), len(sizes))
		}
		for i, p := range pts {
			at := start.Add(time.Duration(i) * 24 * time.Hour)
			v := sizes[i]
			top := int64(12 * gb)
			if name == "duration" {
				v, top = int64(600+60*i), 600+60*4
			}
			wantX := 70 + float64(at.Sub(from))/float64(30*24*time.Hour)*640
			wantY := 12 + 142 - float64(v)/float64(top)*142
			if p[4] != at.UTC().Format(time.RFC3339) || p[5] != fmt.Sprint(v) || p[2] != fmt.Sprintf("%.1f", wantX) || p[3] != fmt.Sprintf("%.1f", wantY) {
				t.Errorf("%s point %d: %v, want at %s value %d at (%.1f, %.1f)", name, i, p[1:], at.UTC().Format(time.RFC3339), v, wantX, wantY)
			}
			if drop := p[1] == "pt drop"; drop != (name == "size" && i == len(sizes)-1) {
				t.Errorf("%s point %d: class %q", name, i, p[1])
			}
		}
	}
	// 40 days on, the 30-day chart is empty and the 90-day one has them.
	s.advance(t, 40*86400)
	sess = s.login(t, w.users["viewer"])
	if pts := chart(s.page(t, "GET", "/jobs/"+job, sess, nil).body, "size"); len(pts) != 0 {
		t.Errorf("30-day chart 40 days later: %d points, want 0", len(pts))
	}
	if pts := chart(s.page(t, "GET", "/jobs/"+job+"?days=90", sess, nil).body, "size"); len(pts) != len(sizes) {
		t.Errorf("90-day chart: %d points, want %d", len(pts), len(sizes))
	}
}
