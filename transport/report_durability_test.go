package transport_test

// Durability of the Report API: whatever was answered 200 is still there
// after a clean restart (snapshot) and after a crash (log replay only):
// history, alerts, and idempotency keys, which then answer duplicate.

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// rpState reads the admin views that hold what reports changed, as raw
// bodies.
func rpState(s *testServer, ws string, jobs ...string) map[string]string {
	s.t.Helper()
	st := map[string]string{}
	for _, j := range jobs {
		p := "/workspaces/" + ws + "/jobs/" + j + "?limit=1000"
		st[p] = string(s.MustAdmin(200, "GET", p, nil).Body)
	}
	p := "/workspaces/" + ws + "/alerts"
	st[p] = string(s.MustAdmin(200, "GET", p, nil).Body)
	return st
}

func rpSameState(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	for p, b := range before {
		if a := after[p]; a != b {
			t.Errorf("%s: %s differs:\nbefore %s\nafter  %s", what, p, b, a)
		}
	}
}

// rpDurabilityScenario records a mix of reports and returns the work to
// check afterwards.
type rpDurable struct {
	f          fixture
	job2       string
	openAlert  string
	duplicates []struct{ job, key, body, want string }
}

func rpRecordScenario(s *testServer) rpDurable {
	t := s.t
	t.Helper()
	var d rpDurable
	d.f = s.Fixture(fixtureOptions{timeZone: "Europe/Berlin", schedule: map[string]any{"intervalMinutes": 720, "expectedDays": []string{"mon", "wed", "fri"}}})
	f := d.f
	d.job2 = s.NewJob(f.WS, f.Client, "Second", rpDaily())

	s.Advance(time.Minute)
	a := rpAccepted(t, "failed K1", s.Report(f.Job, f.ReportKey, "K1", `{"status":"failed","size_bytes":1024}`), "failed")
	s.Advance(time.Minute)
	rpWant(t, "warn K2", s.Report(f.Job, f.ReportKey, "", `{"status":"warn","idempotency_key":"K2"}`), 200, rpOK("warn", a, false, false))
	s.MustAdmin(200, "POST", "/workspaces/"+f.WS+"/alerts/"+a+"/acknowledge", nil)
	s.Advance(time.Minute)
	rpWant(t, "ok K3", s.Report(f.Job, f.ReportKey, "K3", `{"status":"ok","timestamp":"`+rpTS(rpNow(s).Add(-10*time.Second))+`","duration_seconds":7.5,"size_bytes":2048}`), 200, rpOK("ok", "", false, false))
	s.Advance(time.Minute)
	d.openAlert = rpAccepted(t, "failed, no key", s.Report(f.Job, f.ReportKey, "", `{"status":"failed"}`), "failed")
	rpWant(t, "superseded", s.Report(f.Job, f.ReportKey, "K4", `{"status":"warn","timestamp":"2026-03-04T09:00:00"}`), 200, rpOK("warn", "", false, true))
	rpAccepted(t, "K1 on job 2", s.Report(d.job2, f.ReportKey, "K1", `{"status":"warn"}`), "warn")
	s.MustAdmin(200, "PATCH", "/workspaces/"+f.WS+"/jobs/"+d.job2, map[string]any{"paused": true})
	s.Advance(time.Minute)
	rpWant(t, "ok K5 on paused job 2", s.Report(d.job2, f.ReportKey, "K5", `{"status":"ok"}`), 200, rpOK("ok", "", false, false))

	d.duplicates = []struct{ job, key, body, want string }{
		{f.Job, "K1", `{"status":"ok"}`, rpDup("ok")},
		{f.Job, "K2", `{"status":"failed"}`, rpDup("failed")},
		{f.Job, "K3", `{"status":"ok"}`, rpDup("ok")},
		{f.Job, "K4", `{"status":"ok"}`, rpDup("ok")},
		{d.job2, "K1", `{"status":"warn"}`, rpDup("warn")},
		{d.job2, "K5", `{"status":"ok"}`, rpDup("ok")},
	}
	return d
}

// rpCheckAfter checks a recovered server against the state read before.
func rpCheckAfter(t *testing.T, s *testServer, d rpDurable, before map[string]string) {
	t.Helper()
	f := d.f
	rpSameState(t, "recovered", before, rpState(s, f.WS, f.Job, d.job2))
	for _, c := range d.duplicates {
		rpWant(t, "resent "+c.key, s.Report(c.job, f.ReportKey, c.key, c.body), 200, c.want)
	}
	rpSameState(t, "after resending keys", before, rpState(s, f.WS, f.Job, d.job2))
	// The job's unresolved alert is still its alert: a new failure raises it.
	s.Advance(time.Minute)
	rpWant(t, "new failure", s.Report(f.Job, f.ReportKey, "", `{"status":"failed"}`), 200, rpOK("failed", d.openAlert, false, false))
	if h := rpHistory(s, f.WS, f.Job); len(h) != 6 {
		t.Errorf("%d results, want 6", len(h))
	}
}

func TestReportDurableAcrossRestart(t *testing.T) {
	s := startServer(t, serverOptions{})
	d := rpRecordScenario(s)
	before := rpState(s, d.f.WS, d.f.Job, d.job2)
	s.Restart()
	rpCheckAfter(t, s, d, before)
	// And once more, now from a snapshot that holds everything.
	before = rpState(s, d.f.WS, d.f.Job, d.job2)
	s.Restart()
	rpSameState(t, "second restart", before, rpState(s, d.f.WS, d.f.Job, d.job2))
}

// A crash: the data directory is copied while the server runs, after the
// answers, so the copy has no shutdown snapshot and recovers from the log
// alone. Every 200 was durable before it was sent.
func TestReportDurableAfterCrash(t *testing.T) {
	s := startServer(t, serverOptions{})
	d := rpRecordScenario(s)
	before := rpState(s, d.f.WS, d.f.Job, d.job2)
	crashed := filepath.Join(t.TempDir(), "crashed")
	if err := os.CopyFS(crashed, os.DirFS(s.Dir)); err != nil {
		t.Fatal(err)
	}
	r := startServer(t, serverOptions{dir: crashed})
	rpCheckAfter(t, r, d, before)
}
