package transport_test

import (
	"testing"
	"time"
)

func TestSmokeReportOpensAndResolvesAlert(t *testing.T) {
	s, f := startFixture(t)
	r := s.Report(f.Job, f.ReportKey, "", `{"status":"failed"}`)
	if r.Status != 200 || r.JSON["alert_id"] == nil {
		t.Fatalf("failed report: %d %s", r.Status, r.Body)
	}
	job := s.Job(f.WS, f.Job)
	if job["status"] != "failed" || len(job["unresolvedAlerts"].([]any)) != 1 {
		t.Fatalf("job after failed report: %v", job)
	}
	s.Advance(time.Minute)
	r = s.Report(f.Job, f.ReportKey, "", `{"status":"ok"}`)
	if r.Status != 200 || string(r.Body) != `{"ok":true,"status":"ok","alert_id":null,"duplicate":false,"superseded":false}` {
		t.Fatalf("ok report: %d %s", r.Status, r.Body)
	}
	s.Restart()
	job = s.Job(f.WS, f.Job)
	if job["status"] != "healthy" || len(job["history"].([]any)) != 2 {
		t.Fatalf("job after restart: %v", job)
	}
}
