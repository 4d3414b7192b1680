package transport_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"backupmon/engine"
)

// TestRESTAlertSuggestion: an alert opened by a report e-mail carries the
// catalogue's suggestion as `ai` on every endpoint that shows alerts, in
// the contract's shape; a later raise by the Report API, whose summary is
// ours, clears it.
func TestRESTAlertSuggestion(t *testing.T) {
	s, f := startFixture(t)
	addr := s.Job(f.WS, f.Job)["ingestAddress"].(string)
	token := addr[:strings.IndexByte(addr, '@')]
	r := s.Eng.Mail(token, &engine.MailInput{
		MessageID: "m1@h", Status: engine.ReportFailed, DurationSeconds: -1, SizeBytes: -1,
		Summary: "No space left on device",
		AI:      engine.Suggestion{Cause: "The destination may be full; free some space.", Confidence: "high", Category: "storage"},
	})
	if r.Outcome != engine.MailAccepted || r.AlertID.IsZero() {
		t.Fatalf("mail: %+v", r)
	}
	want := []byte(`"summary":"No space left on device",`)
	wantAI := []byte(`"ai":{"likelyCause":"The destination may be full; free some space.","confidence":"high","category":"storage"}}`)
	for _, path := range []string{"/alerts", "/alerts?status=open", "/jobs/" + f.Job} {
		resp := rsGet(s, f.RestKey, path)
		if resp.Status != 200 || !bytes.Contains(resp.Body, want) || !bytes.Contains(resp.Body, wantAI) {
			t.Errorf("GET %s: %d %s", path, resp.Status, resp.Body)
		}
		rsValidate(t, "GET", path, resp)
	}
	// The Report API raises the alert with its own summary: no suggestion.
	s.Advance(time.Minute)
	if rr := s.Report(f.Job, f.ReportKey, "", `{"status":"warn"}`); rr.Status != 200 {
		t.Fatalf("report: %d %s", rr.Status, rr.Body)
	}
	resp := rsGet(s, f.RestKey, "/alerts")
	if !bytes.Contains(resp.Body, []byte(`"ai":null`)) || bytes.Contains(resp.Body, []byte("likelyCause")) {
		t.Errorf("after a Report API raise: %s", resp.Body)
	}
	// Restart: the suggestion was in the log.
	s.Advance(time.Minute)
	s.Eng.Mail(token, &engine.MailInput{MessageID: "m2@h", Status: engine.ReportFailed, DurationSeconds: -1, SizeBytes: -1,
		Summary: "No space left on device", AI: engine.Suggestion{Cause: "The destination may be full; free some space.", Confidence: "high", Category: "storage"}})
	s.Restart()
	if resp := rsGet(s, f.RestKey, "/alerts"); !bytes.Contains(resp.Body, wantAI) {
		t.Errorf("after a restart: %s", resp.Body)
	}
}
