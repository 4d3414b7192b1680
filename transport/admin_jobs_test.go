package transport_test

// Jobs and clients through their lifecycle: delete, pause and resume, a
// pause with an end, schedule changes, pausing and archiving a client
// (decisions.md 2, 3, 4.4).

import (
	"bytes"
	"testing"
	"time"

	"backupmon/internal/testserver"
)

// admJobWant checks selected members of a job.
func admJobWant(t *testing.T, what string, j map[string]any, want map[string]any) {
	t.Helper()
	for k, v := range want {
		got := j[k]
		if k == "nextExpectedAt" || k == "graceMinutes" || k == "intervalMinutes" {
			got = admObj(t, j, "schedule")[k]
		}
		if got != v {
			t.Errorf("%s: %s = %#v, want %#v", what, k, got, v)
		}
	}
}

func TestAdminJobDelete(t *testing.T) {
	s, f := startFixture(t)
	// A second job on the same device, which stays.
	keep := s.NewJob(f.WS, f.Client, "Keep me", map[string]any{"intervalMinutes": 1440})
	s.Advance(time.Minute)
	alertID := admReport(s, f.Job, f.ReportKey, "failed").JSON["alert_id"].(string)
	s.Advance(time.Minute)
	admReport(s, f.Job, f.ReportKey, "warn")
	admReport(s, keep, f.ReportKey, "ok")
	var resultIDs []string
	for _, h := range admList(t, s.Job(f.WS, f.Job), "history") {
		resultIDs = append(resultIDs, h["id"].(string))
	}
	keepBefore := s.Job(f.WS, keep)

	base := "/workspaces/" + f.WS
	r := s.Admin("DELETE", base+"/jobs/"+f.Job, nil)
	if r.Status != 204 || len(r.Body) != 0 {
		t.Fatalf("delete job: %d %q", r.Status, r.Body)
	}

	checkGone := func(when string) {
		t.Helper()
		admWantError(t, when+": get deleted job", s.Admin("GET", base+"/jobs/"+f.Job, nil), 404, "NOT_FOUND", "")
		admWantError(t, when+": patch deleted job", s.Admin("PATCH", base+"/jobs/"+f.Job, map[string]any{"name": "x"}), 404, "NOT_FOUND", "")
		admWantError(t, when+": delete deleted job", s.Admin("DELETE", base+"/jobs/"+f.Job, nil), 404, "NOT_FOUND", "")
		for _, action := range []string{"acknowledge", "resolve"} {
			admWantError(t, when+": "+action+" its alert", s.Admin("POST", base+"/alerts/"+alertID+"/"+action, nil), 404, "NOT_FOUND", "")
		}
		if r := s.Report(f.Job, f.ReportKey, "", `{"status":"ok"}`); r.Status != 404 || string(r.Body) != `{"error":"Job not found"}` {
			t.Errorf("%s: report on deleted job: %d %s", when, r.Status, r.Body)
		}
		// Gone from every answer (the activity log is the one record of what
		// people did and is not searched here).
		for _, p := range []string{"/workspaces", base, base + "/clients", base + "/jobs", base + "/jobs/" + keep, base + "/alerts", base + "/keys"} {
			body := s.MustAdmin(200, "GET", p, nil).Body
			for _, id := range append([]string{f.Job, alertID}, resultIDs...) {
				if bytes.Contains(body, []byte(id)) {
					t.Errorf("%s: GET %s still shows %s: %s", when, p, id, body)
				}
			}
		}
		// The client's figures no longer count it.
		c := s.MustAdmin(200, "GET", base+"/clients", nil).List()[0]
		jobs, sla := admObj(t, c, "jobs"), admObj(t, c, "sla")
		if jobs["total"] != float64(1) || jobs["healthy"] != float64(1) || jobs["warning"] != float64(0) ||
			c["openAlerts"] != float64(0) || c["needsAttention"] != false || sla["reports"] != float64(1) || sla["successRate"] != 100.0 {
			t.Errorf("%s: client after delete: %v", when, c)
		}
		// The other job, on the same device, is untouched.
		if got := s.Job(f.WS, keep); admObj(t, got, "device")["id"] != admObj(t, keepBefore, "device")["id"] || got["status"] != "healthy" {
			t.Errorf("%s: other job: %v", when, got)
		}
		if n := len(s.MustAdmin(200, "GET", base+"/jobs", nil).List()); n != 1 {
			t.Errorf("%s: %d jobs listed, want 1", when, n)
		}
	}
	checkGone("after delete")
	s.Restart()
	checkGone("after restart")
	// A new job on the same hostname still gets the shared device.
	j := s.MustAdmin(201, "POST", base+"/jobs", admJobBody(f.Client, nil)).Data()
	if admObj(t, j, "device")["id"] != admObj(t, keepBefore, "device")["id"] {
		t.Errorf("new job on fs01: device %v, want %v", j["device"], keepBefore["device"])
	}
}

func TestAdminJobPauseAndResume(t *testing.T) {
	s, f := startFixture(t)
	path := "/workspaces/" + f.WS + "/jobs/" + f.Job
	s.Advance(time.Hour)
	admReport(s, f.Job, f.ReportKey, "ok") // T0+1h: due T0+25h, missing after T0+26h

	s.Advance(time.Hour) // T0+2h
	r := s.Admin("PATCH", path, map[string]any{"paused": true})
	admWantData(t, "pause", r, 200)
	admCheckAdminJob(t, "paused job", r.Data(), false)
	admJobWant(t, "paused job", r.Data(), map[string]any{"status": "paused", "paused": true, "pausedUntil": nil, "late": nil, "lastResult": "ok"})

	// Far past its due time plus grace it stays paused: never missing, never late.
	s.SetClock(testserver.T0.Add(30 * time.Hour))
	admJobWant(t, "paused past due", s.Job(f.WS, f.Job), map[string]any{"status": "paused", "paused": true, "late": nil})
	c := s.MustAdmin(200, "GET", "/workspaces/"+f.WS+"/clients", nil).List()[0]
	if admObj(t, c, "jobs")["paused"] != float64(1) || admObj(t, c, "jobs")["missing"] != float64(0) {
		t.Errorf("client counts while the job is paused: %v", c["jobs"])
	}
	// A report while paused updates the job but opens no alert.
	if r := admReport(s, f.Job, f.ReportKey, "failed"); r.JSON["alert_id"] != nil {
		t.Errorf("report on a paused job opened alert %v", r.JSON["alert_id"])
	}
	admJobWant(t, "paused job after a failed report", s.Job(f.WS, f.Job), map[string]any{"status": "failed", "paused": true, "lastResult": "failed"})
	s.SetClock(testserver.T0.Add(80 * time.Hour))
	admJobWant(t, "paused job long after", s.Job(f.WS, f.Job), map[string]any{"status": "failed", "paused": true, "late": nil})
	if n := len(s.MustAdmin(200, "GET", "/workspaces/"+f.WS+"/alerts", nil).List()); n != 0 {
		t.Errorf("%d alerts while paused", n)
	}

	// Resume: status follows lastResult, the next due time counts from now.
	resume := testserver.T0.Add(80 * time.Hour)
	r = s.Admin("PATCH", path, map[string]any{"paused": false})
	admWantData(t, "resume", r, 200)
	admJobWant(t, "resumed job", r.Data(), map[string]any{"status": "failed", "paused": false, "pausedUntil": nil, "late": nil,
		"nextExpectedAt": testserver.TS(resume.Add(24 * time.Hour))})
	// ... and it turns missing only after that due time plus grace.
	s.SetClock(resume.Add(25 * time.Hour))
	admJobWant(t, "resumed job at due+grace", s.Job(f.WS, f.Job), map[string]any{"status": "failed"})
	s.Advance(time.Second)
	admJobWant(t, "resumed job after due+grace", s.Job(f.WS, f.Job), map[string]any{"status": "missing", "lastResult": "failed"})

	// A job that never reported resumes as waiting.
	w := s.NewJob(f.WS, f.Client, "Never reported", map[string]any{"intervalMinutes": 60})
	wp := "/workspaces/" + f.WS + "/jobs/" + w
	admJobWant(t, "pause waiting job", s.MustAdmin(200, "PATCH", wp, map[string]any{"paused": true}).Data(), map[string]any{"status": "paused", "paused": true})
	s.Advance(10 * time.Hour)
	now := resume.Add(25*time.Hour + time.Second + 10*time.Hour)
	admJobWant(t, "resume waiting job", s.MustAdmin(200, "PATCH", wp, map[string]any{"paused": false}).Data(),
		map[string]any{"status": "waiting", "paused": false, "nextExpectedAt": testserver.TS(now.Add(time.Hour))})

	// Pausing twice, resuming twice: no change the second time.
	s.MustAdmin(200, "PATCH", wp, map[string]any{"paused": true})
	s.Advance(time.Hour)
	admJobWant(t, "pause again", s.MustAdmin(200, "PATCH", wp, map[string]any{"paused": true}).Data(), map[string]any{"status": "paused"})
	s.MustAdmin(200, "PATCH", wp, map[string]any{"paused": false})
	s.Advance(time.Minute)
	admJobWant(t, "resume again", s.MustAdmin(200, "PATCH", wp, map[string]any{"paused": false}).Data(),
		map[string]any{"status": "waiting", "nextExpectedAt": testserver.TS(now.Add(2 * time.Hour))})
}

func TestAdminJobPausedUntil(t *testing.T) {
	s, f := startFixture(t)
	path := "/workspaces/" + f.WS + "/jobs/" + f.Job
	admReport(s, f.Job, f.ReportKey, "ok") // at T0
	s.Advance(time.Hour)

	end := testserver.T0.Add(30 * time.Hour) // past the due time plus grace (T0+25h)
	r := s.Admin("PATCH", path, map[string]any{"pausedUntil": "2026-03-05T17:00:00+01:00"})
	admWantData(t, "pause until", r, 200)
	admJobWant(t, "paused until", r.Data(), map[string]any{"status": "paused", "paused": true, "pausedUntil": testserver.TS(end)})

	s.SetClock(end.Add(-time.Millisecond))
	admJobWant(t, "just before the end", s.Job(f.WS, f.Job), map[string]any{"status": "paused", "paused": true, "pausedUntil": testserver.TS(end), "late": nil})

	// At the end it resumes by itself: status follows lastResult, the next
	// due time counts from the end.
	s.SetClock(end)
	j := s.Job(f.WS, f.Job)
	admJobWant(t, "at the end", j, map[string]any{"status": "healthy", "paused": false, "pausedUntil": nil, "late": nil,
		"nextExpectedAt": testserver.TS(end.Add(24 * time.Hour))})
	s.Restart()
	admJobWant(t, "after restart", s.Job(f.WS, f.Job), map[string]any{"status": "healthy", "paused": false, "pausedUntil": nil,
		"nextExpectedAt": testserver.TS(end.Add(24 * time.Hour))})
	s.SetClock(end.Add(25*time.Hour + time.Second))
	admJobWant(t, "after the next due time plus grace", s.Job(f.WS, f.Job), map[string]any{"status": "missing"})

	// paused true with an end is the same as the end alone; paused false
	// ends it at once; pausedUntil null keeps the pause without an end.
	now := end.Add(25*time.Hour + time.Second)
	r = s.MustAdmin(200, "PATCH", path, map[string]any{"paused": true, "pausedUntil": admIn(now.Add(2 * time.Hour))})
	admJobWant(t, "paused true with an end", r.Data(), map[string]any{"status": "paused", "paused": true, "pausedUntil": testserver.TS(now.Add(2 * time.Hour))})
	r = s.MustAdmin(200, "PATCH", path, map[string]any{"pausedUntil": nil})
	admJobWant(t, "end removed", r.Data(), map[string]any{"status": "paused", "paused": true, "pausedUntil": nil})
	s.Advance(3 * time.Hour)
	admJobWant(t, "pause without an end goes on", s.Job(f.WS, f.Job), map[string]any{"status": "paused", "paused": true})
	r = s.MustAdmin(200, "PATCH", path, map[string]any{"pausedUntil": admIn(now.Add(4 * time.Hour))})
	admJobWant(t, "new end", r.Data(), map[string]any{"paused": true, "pausedUntil": testserver.TS(now.Add(4 * time.Hour))})
	r = s.MustAdmin(200, "PATCH", path, map[string]any{"paused": false})
	admJobWant(t, "resumed before the end", r.Data(), map[string]any{"status": "healthy", "paused": false, "pausedUntil": nil,
		"nextExpectedAt": testserver.TS(now.Add(3*time.Hour + 24*time.Hour))})
}

func TestAdminJobScheduleChange(t *testing.T) {
	s, f := startFixture(t) // daily job created at T0, a Wednesday
	path := "/workspaces/" + f.WS + "/jobs/" + f.Job
	admJobWant(t, "new job", s.Job(f.WS, f.Job), map[string]any{"nextExpectedAt": testserver.TS(testserver.T0.Add(24 * time.Hour))})

	r := s.MustAdmin(200, "PATCH", path, map[string]any{"schedule": map[string]any{"intervalMinutes": 60}})
	admJobWant(t, "hourly", r.Data(), map[string]any{"intervalMinutes": float64(60), "graceMinutes": float64(60), "nextExpectedAt": testserver.TS(testserver.T0.Add(time.Hour))})
	if days := admStrings(t, admObj(t, r.Data(), "schedule")["expectedDays"]); len(days) != 7 {
		t.Errorf("a schedule change without expectedDays changed them: %v", days)
	}

	// Thursday is not expected any more: the due time moves to Friday, same time.
	r = s.MustAdmin(200, "PATCH", path, map[string]any{"schedule": map[string]any{"intervalMinutes": 1440, "expectedDays": []string{"mon", "fri"}}})
	admJobWant(t, "mon and fri", r.Data(), map[string]any{"nextExpectedAt": testserver.TS(testserver.T0.Add(48 * time.Hour))})
	if days := admStrings(t, admObj(t, r.Data(), "schedule")["expectedDays"]); len(days) != 2 || days[0] != "mon" || days[1] != "fri" {
		t.Errorf("expectedDays %v", days)
	}
	r = s.MustAdmin(200, "PATCH", path, map[string]any{"schedule": map[string]any{"graceMinutes": 0}})
	admJobWant(t, "grace 0", r.Data(), map[string]any{"graceMinutes": float64(0), "intervalMinutes": float64(1440), "nextExpectedAt": testserver.TS(testserver.T0.Add(48 * time.Hour))})

	// The change decides when the job turns missing.
	admReport(s, f.Job, f.ReportKey, "ok") // Wed T0: due Fri T0+48h, grace 0
	s.MustAdmin(200, "PATCH", path, map[string]any{"schedule": map[string]any{"intervalMinutes": 30, "expectedDays": []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}, "graceMinutes": 15}})
	s.Advance(45*time.Minute + time.Second)
	admJobWant(t, "half-hourly, 45m later", s.Job(f.WS, f.Job), map[string]any{"status": "missing", "nextExpectedAt": testserver.TS(testserver.T0.Add(30 * time.Minute))})
	r = s.MustAdmin(200, "PATCH", path, map[string]any{"schedule": map[string]any{"intervalMinutes": 120}})
	admJobWant(t, "two-hourly again", r.Data(), map[string]any{"status": "healthy", "late": nil, "nextExpectedAt": testserver.TS(testserver.T0.Add(2 * time.Hour))})

	// Other fields of a PATCH: name, vendor, device (a new hostname is a new
	// device), slaTarget.
	before := s.Job(f.WS, f.Job)
	r = s.MustAdmin(200, "PATCH", path, map[string]any{"name": "Renamed", "vendor": "datto", "slaTarget": 99.5,
		"device": map[string]any{"hostname": "fs02"}})
	j := r.Data()
	admCheckAdminJob(t, "patched job", j, false)
	dev := admObj(t, j, "device")
	if j["name"] != "Renamed" || j["vendor"] != "datto" || j["vendorName"] != "Datto BCDR" || admObj(t, j, "sla")["target"] != 99.5 ||
		dev["hostname"] != "fs02" || dev["name"] != "File server" || dev["type"] != "server" || dev["id"] == admObj(t, before, "device")["id"] {
		t.Errorf("patched job: %v", j)
	}
	if !bytes.Contains(r.Body, []byte(`"target":99.5`)) {
		t.Errorf("target bytes: %s", r.Body)
	}
}

func TestAdminClientPauseAndArchive(t *testing.T) {
	s, f := startFixture(t)
	waiting := s.NewJob(f.WS, f.Client, "Waiting", map[string]any{"intervalMinutes": 1440})
	admReport(s, f.Job, f.ReportKey, "ok") // at T0
	cpath := "/workspaces/" + f.WS + "/clients/" + f.Client

	for i, status := range []string{"paused", "archived"} {
		off := s.MustAdmin(200, "POST", "/clock", nil).Data()["now"]
		r := s.Admin("PATCH", cpath, map[string]any{"status": status})
		admWantData(t, status, r, 200)
		admCheckClient(t, status+" client", r.Data())
		if r.Data()["status"] != status {
			t.Errorf("client status %v, want %s", r.Data()["status"], status)
		}
		if status == "paused" && admObj(t, r.Data(), "jobs")["paused"] != float64(2) {
			t.Errorf("paused client's counts: %v", r.Data()["jobs"])
		}
		for _, j := range []string{f.Job, waiting} {
			admJobWant(t, status+" client's job", s.Job(f.WS, j), map[string]any{"status": "paused", "paused": true, "pausedUntil": nil, "late": nil})
		}
		// Long past the due time plus grace: still paused, no alert.
		s.Advance(3 * 24 * time.Hour)
		for _, j := range []string{f.Job, waiting} {
			admJobWant(t, status+" client's job days later", s.Job(f.WS, j), map[string]any{"status": "paused", "paused": true})
		}
		// Back to active: the jobs follow their last result and count from now.
		r = s.Admin("PATCH", cpath, map[string]any{"status": "active"})
		admWantData(t, "reactivate", r, 200)
		now := testserver.T0.Add(time.Duration(i+1) * 3 * 24 * time.Hour)
		if r.Data()["status"] != "active" || admObj(t, r.Data(), "jobs")["paused"] != float64(0) {
			t.Errorf("reactivated client (was %v at %v): %v", status, off, r.Data())
		}
		admJobWant(t, "reactivated healthy job", s.Job(f.WS, f.Job), map[string]any{"status": "healthy", "paused": false,
			"nextExpectedAt": testserver.TS(now.Add(24 * time.Hour))})
		admJobWant(t, "reactivated waiting job", s.Job(f.WS, waiting), map[string]any{"status": "waiting", "paused": false,
			"nextExpectedAt": testserver.TS(now.Add(24 * time.Hour))})
	}
	if n := len(s.MustAdmin(200, "GET", "/workspaces/"+f.WS+"/alerts", nil).List()); n != 0 {
		t.Errorf("%d alerts after pauses", n)
	}
	// A job's own pause outlives its client's reactivation.
	s.MustAdmin(200, "PATCH", "/workspaces/"+f.WS+"/jobs/"+waiting, map[string]any{"paused": true})
	s.MustAdmin(200, "PATCH", cpath, map[string]any{"status": "paused"})
	s.MustAdmin(200, "PATCH", cpath, map[string]any{"status": "active"})
	admJobWant(t, "own pause after client reactivation", s.Job(f.WS, waiting), map[string]any{"status": "paused", "paused": true})
	admJobWant(t, "other job after client reactivation", s.Job(f.WS, f.Job), map[string]any{"status": "healthy", "paused": false})
}
