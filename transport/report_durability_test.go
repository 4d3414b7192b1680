package transport_test

// Durability of the Report API: whatever was answered 200 is still there
// after a clean restart (snapshot) and after a crash (log replay only):
// history, alerts, and idempotency keys, which then answer duplicate.

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"backupmon/internal/testserver"
	"backupmon/vfs"
)

// rpState reads the admin views that hold what reports changed, as raw
// bodies.
func rpState(s *testserver.Server, ws string, jobs ...string) map[string]string {
	s.T.Helper()
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
	f          testserver.Fixture
	job2       string
	openAlert  string
	duplicates []struct{ job, key, body, want string }
}

func rpRecordScenario(s *testserver.Server) rpDurable {
	t := s.T
	t.Helper()
	var d rpDurable
	d.f = s.Fixture(testserver.FixtureOptions{TimeZone: "Europe/Berlin", Schedule: map[string]any{"intervalMinutes": 720, "expectedDays": []string{"mon", "wed", "fri"}}})
	f := d.f
	d.job2 = s.NewJob(f.WS, f.Client, "Second", testserver.Daily())

	s.Advance(time.Minute)
	a := rpAccepted(t, "failed K1", s.Report(f.Job, f.ReportKey, "K1", `{"status":"failed","size_bytes":1024}`), "failed")
	s.Advance(time.Minute)
	rpWant(t, "warn K2", s.Report(f.Job, f.ReportKey, "", `{"status":"warn","idempotency_key":"K2"}`), 200, rpOK("warn", a, false, false))
	s.MustAdmin(200, "POST", "/workspaces/"+f.WS+"/alerts/"+a+"/acknowledge", nil)
	s.Advance(time.Minute)
	rpWant(t, "ok K3", s.Report(f.Job, f.ReportKey, "K3", `{"status":"ok","timestamp":"`+testserver.TS(rpNow(s).Add(-10*time.Second))+`","duration_seconds":7.5,"size_bytes":2048}`), 200, rpOK("ok", "", false, false))
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
func rpCheckAfter(t *testing.T, s *testserver.Server, d rpDurable, before map[string]string) {
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
	s := testserver.Start(t, testserver.Options{})
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
	s := testserver.Start(t, testserver.Options{})
	d := rpRecordScenario(s)
	before := rpState(s, d.f.WS, d.f.Job, d.job2)
	crashed := filepath.Join(t.TempDir(), "crashed")
	if err := os.CopyFS(crashed, os.DirFS(s.Dir)); err != nil {
		t.Fatal(err)
	}
	r := testserver.Start(t, testserver.Options{Dir: crashed})
	rpCheckAfter(t, r, d, before)
}

// api.md 7.2's 500 row: when the log cannot make a report durable, the
// answer is 500 `Failed to record report`; the log fails stop, so later
// reports and admin changes fail too, with a log line naming the cause; and
// after a restart on the same data what was answered 200 is there. The
// fault is injected in the file system under the log: a segment write that
// fails (nothing written) or an fsync that fails (written but maybe not
// durable, so the report may or may not be there after the restart). The
// harness's OnFatal records the failure instead of exiting.
func TestReportWhenTheLogFails(t *testing.T) {
	for _, tc := range []struct {
		name  string
		op    vfs.Op
		cause error
		logs  string
	}{
		{"write EIO", vfs.OpWrite, syscall.EIO, "input/output error"},
		{"write ENOSPC", vfs.OpWrite, syscall.ENOSPC, "no space left on device"},
		{"fsync EIO", vfs.OpSync, syscall.EIO, "input/output error"},
		{"fsync ENOSPC", vfs.OpSync, syscall.ENOSPC, "no space left on device"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			faulty := vfs.NewFaulty(vfs.OS)
			s := testserver.Start(t, testserver.Options{FS: faulty})
			f := s.Fixture(testserver.FixtureOptions{})
			s.Advance(time.Minute)
			rpWant(t, "before the fault", s.Report(f.Job, f.ReportKey, "K1", `{"status":"ok"}`), 200, rpOK("ok", "", false, false))
			before := rpState(s, f.WS, f.Job)

			walDir := filepath.Join(s.Dir, "wal")
			faulty.Fail(func(st vfs.Step) bool { return st.Op == tc.op && strings.HasPrefix(st.Name, walDir) }, tc.cause)
			rpWantErr(t, "the report whose write fails", s.Report(f.Job, f.ReportKey, "K2", `{"status":"failed"}`), 500, "Failed to record report")
			if n := s.Fatals(); n != 1 {
				t.Fatalf("OnFatal called %d times, want once", n)
			}
			faulty.Heal() // the log stays failed: fail-stop
			rpWantErr(t, "a later report", s.Report(f.Job, f.ReportKey, "K3", `{"status":"warn"}`), 500, "Failed to record report")
			rpWantErr(t, "a later report without a key", s.Report(f.Job, f.ReportKey, "", `{"status":"ok"}`), 500, "Failed to record report")
			r := s.Admin("POST", "/workspaces/"+f.WS+"/clients", map[string]any{"name": "Later"})
			if want := `{"error":{"code":"INTERNAL_ERROR","message":"The change was not recorded"}}`; r.Status != 500 || string(r.Body) != want {
				t.Errorf("an admin change after the fault:\n got %d %s\nwant 500 %s", r.Status, r.Body, want)
			}
			if n := s.Fatals(); n != 1 {
				t.Errorf("OnFatal called %d times, want once", n)
			}
			if logs := s.Logs.String(); !strings.Contains(logs, tc.logs) || !strings.Contains(logs, "wal: write failed") {
				t.Errorf("the cause is not logged:\n%s", logs)
			}
			s.Restart()
			if n := len(s.MustAdmin(200, "GET", "/workspaces/"+f.WS+"/clients", nil).List()); n != 1 {
				t.Errorf("%d clients after the restart, want 1", n)
			}
			h := rpHistory(s, f.WS, f.Job)
			if tc.op == vfs.OpWrite {
				// Nothing of K2 was written: it records now.
				rpSameState(t, "after the restart", before, rpState(s, f.WS, f.Job))
				if len(h) != 1 {
					t.Errorf("%d results after the restart, want the one acknowledged", len(h))
				}
				s.Advance(time.Minute)
				rpAccepted(t, "K2 after the restart", s.Report(f.Job, f.ReportKey, "K2", `{"status":"failed"}`), "failed")
				return
			}
			// K2 was written but its fsync failed: it may be there or not,
			// and sending it again records it once either way.
			if len(h) != 1 && len(h) != 2 {
				t.Errorf("%d results after the restart, want K1 and maybe K2", len(h))
			}
			s.Advance(time.Minute)
			if r := s.Report(f.Job, f.ReportKey, "K2", `{"status":"failed"}`); r.Status != 200 {
				t.Fatalf("K2 after the restart: %d %s", r.Status, r.Body)
			}
			if h := rpHistory(s, f.WS, f.Job); len(h) != 2 {
				t.Errorf("%d results once K2 is sent again, want 2", len(h))
			}
		})
	}
}
