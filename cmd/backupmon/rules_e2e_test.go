package main

// End-to-end tests of parsing rules (decisions.md, parsing rules) against
// the real binary: mails of a product no parser reads are sent over SMTP,
// stay unparsed, a rule is tried on them, saved and re-reads them.

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// rlBacula is a Bacula director's job report (mailrules/testdata), sent
// to addr.
func rlBacula(t *testing.T, addr, messageID string) []byte {
	t.Helper()
	b, err := os.ReadFile("../../mailrules/testdata/bacula-failed.eml")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.ReplaceAll(string(b), "abcdefghijklmnopqrst@ingest.localhost", addr)
	s = strings.ReplaceAll(s, "<bacula-1@backup.example.net>", "<"+messageID+">")
	return []byte(strings.ReplaceAll(s, "\n", "\r\n"))
}

// rlBaculaRule is the README's Bacula rule (mailrules/testdata), routed by
// the job name the mail states (one address for the director's every job).
var rlBaculaRule = func() string {
	b, err := os.ReadFile("../../mailrules/testdata/bacula-rule.json")
	if err != nil {
		panic(err)
	}
	return strings.Replace(string(b), "\n}", ",\n  \"route\": \"jobName\"\n}", 1)
}()

type rlUnparsed struct {
	ID     string `json:"id"`
	JobID  string `json:"jobId"`
	Reason string `json:"reason"`
}

func (s *mlServer) unparsed() []rlUnparsed {
	s.t.Helper()
	var list []rlUnparsed
	s.c.AdminInto(200, "GET", s.path("/unparsed"), nil, &list)
	return list
}

func TestRulesReadUnparsedMail(t *testing.T) {
	s := mlStart(t)
	s.c.SetClock(time.Date(2026, 3, 16, 22, 10, 0, 0, time.UTC))
	_, shared := s.job("Bacula director", "custom")
	fileServer, _ := s.job("FileServer", "custom")

	// A second workspace gets the same mail, and never a rule.
	other := &mlServer{t: t, c: s.c}
	other.ws = s.c.NewWorkspace(map[string]any{"name": "Other MSP", "plan": "pro"})
	other.client = s.c.NewClient(other.ws, "Globex")
	_, otherAddr := other.job("Bacula director", "custom")
	other.mustSend(otherAddr, rlBacula(t, otherAddr, "b-other@x"))

	s.mustSend(shared, rlBacula(t, shared, "b-1@backup.example.net"))
	list := s.unparsed()
	if len(list) != 1 || list[0].Reason != "no parsing rule of the workspace matches the mail" {
		t.Fatalf("unparsed: %+v", list)
	}
	uid := list[0].ID

	// Tried on the kept mail: every field, with what it read.
	var tried struct {
		Matched bool   `json:"matched"`
		Status  string `json:"status"`
		Fields  []struct {
			Field, Text, Value, Why string
		} `json:"fields"`
		Result map[string]any `json:"result"`
	}
	s.c.AdminInto(200, "POST", s.path("/parsing-rules/try"), map[string]any{"rule": json.RawMessage(rlBaculaRule), "unparsedId": uid}, &tried)
	wantResult := map[string]any{"status": "failed", "jobName": "FileServer", "startedAt": "2026-03-16T22:05:02.000Z", "completedAt": "2026-03-16T22:07:45.000Z",
		"durationSeconds": float64(163), "sizeBytes": float64(1234567890), "summary": `Write error on device "FileStorage": No space left on device`}
	if !tried.Matched || tried.Status != "failed" || len(tried.Fields) != 6 {
		t.Fatalf("try: %+v", tried)
	}
	for k, v := range wantResult {
		if tried.Result[k] != v {
			t.Errorf("try result %s = %v, want %v", k, tried.Result[k], v)
		}
	}
	// A bad rule is refused with the member at fault, and nothing is kept.
	bad := strings.Replace(rlBaculaRule, `"(?m)^Job`, `"(?m)^(Job`, 1)
	if r := s.c.Admin("POST", s.path("/parsing-rules"), json.RawMessage(bad)); r.Status != 400 || !strings.Contains(string(r.Body), `jobName.regexp is not a valid regular expression`) {
		t.Fatalf("bad rule: %d %s", r.Status, r.Body)
	}
	var rule struct{ ID string }
	s.c.AdminInto(201, "POST", s.path("/parsing-rules"), json.RawMessage(rlBaculaRule), &rule)

	var reread struct {
		Reread []struct {
			UnparsedID string  `json:"unparsedId"`
			Status     string  `json:"status"`
			ResultID   *string `json:"resultId"`
			AlertID    *string `json:"alertId"`
		} `json:"reread"`
		StillUnparsed []rlUnparsed `json:"stillUnparsed"`
	}
	s.c.AdminInto(200, "POST", s.path("/parsing-rules/"+rule.ID+"/reread"), nil, &reread)
	if len(reread.Reread) != 1 || reread.Reread[0].UnparsedID != uid || reread.Reread[0].Status != "failed" || reread.Reread[0].AlertID == nil || len(reread.StillUnparsed) != 0 {
		t.Fatalf("reread: %+v", reread)
	}
	if l := s.unparsed(); len(l) != 0 {
		t.Fatalf("still unparsed: %+v", l)
	}
	// The report went to the job the mail names, with every field.
	j := s.jobDetail(fileServer)
	if len(j.History) != 1 {
		t.Fatalf("FileServer history: %+v", j.History)
	}
	h := j.History[0]
	if h.Status != "failed" || h.StartedAt == nil || *h.StartedAt != "2026-03-16T22:05:02.000Z" || h.CompletedAt != "2026-03-16T22:07:45.000Z" ||
		h.DurationSeconds == nil || *h.DurationSeconds != 163 || h.SizeBytes == nil || *h.SizeBytes != 1234567890 || h.Source != "email:custom" {
		t.Errorf("result: %+v", h)
	}
	if len(j.UnresolvedAlerts) != 1 || j.UnresolvedAlerts[0].Summary != wantResult["summary"] || j.UnresolvedAlerts[0].AI == nil ||
		j.UnresolvedAlerts[0].AI.Category != "storage" {
		t.Errorf("alert: %+v", j.UnresolvedAlerts)
	}
	// A new mail is read as it comes, and the other workspace's mails are
	// untouched by this workspace's rule.
	s.mustSend(shared, rlBacula(t, shared, "b-2@backup.example.net"))
	if n := len(s.jobDetail(fileServer).History); n != 2 {
		t.Errorf("FileServer has %d results after a second mail, want 2", n)
	}
	other.mustSend(otherAddr, rlBacula(t, otherAddr, "b-other-2@x"))
	if l := other.unparsed(); len(l) != 2 || l[0].Reason != "no parsing rule of the workspace matches the mail" {
		t.Errorf("the other workspace's mails: %+v", l)
	}
	var none []any
	other.c.AdminInto(200, "GET", other.path("/parsing-rules"), nil, &none)
	if len(none) != 0 {
		t.Errorf("the other workspace lists rules: %v", none)
	}
	// Rules survive a restart.
	s.restart()
	var rules []struct{ ID, Name string }
	s.c.AdminInto(200, "GET", s.path("/parsing-rules"), nil, &rules)
	if len(rules) != 1 || rules[0].ID != rule.ID || rules[0].Name != "Bacula" {
		t.Errorf("rules after a restart: %+v", rules)
	}
	s.mustSend(shared, rlBacula(t, shared, "b-3@backup.example.net"))
	if n := len(s.jobDetail(fileServer).History); n != 3 {
		t.Errorf("FileServer has %d results after a restart and a third mail, want 3", n)
	}
}

// A pattern that backtracking engines take exponential time on is linear
// here; a rule slow even so is cut at its time per mail, and the mail stays
// unparsed with the reason rather than being read by anything else.
func TestRulesStayWithinTheirTime(t *testing.T) {
	s := mlStart(t)
	_, addr := s.job("Script", "custom")
	s.c.AdminInto(201, "POST", s.path("/parsing-rules"), map[string]any{
		"name": "catastrophic-looking", "match": map[string]any{"body": map[string]any{"regexp": "(?m)^(a+)+$"}},
		"status": map[string]any{"ok": []string{"ok"}, "failed": []string{"failed"}}}, nil)
	head := "From: x@y\r\nTo: " + addr + "\r\nSubject: run ok\r\nMessage-ID: <%s>\r\nContent-Type: text/plain\r\n\r\n"
	start := time.Now()
	s.mustSend(addr, []byte(strings.Replace(head, "%s", "evil-1@y", 1)+strings.Repeat(strings.Repeat("a", 1000)+"!\r\n", 100)))
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the mail took %v", d)
	}
	if l := s.unparsed(); len(l) != 1 || l[0].Reason != "no parsing rule of the workspace matches the mail" {
		t.Fatalf("unparsed: %+v", l)
	}

	s.c.AdminInto(201, "POST", s.path("/parsing-rules"), map[string]any{
		"name": "slow", "match": map[string]any{"body": map[string]any{"regexp": "(?s)(.*a.*b){30}z"}},
		"status": map[string]any{"ok": []string{"ok"}, "failed": []string{"failed"}}}, nil)
	s.c.AdminInto(201, "POST", s.path("/parsing-rules"), map[string]any{
		"name": "fast", "match": map[string]any{"subject": map[string]any{"contains": "run"}},
		"status": map[string]any{"ok": []string{"ok"}, "failed": []string{"failed"}}}, nil)
	start = time.Now()
	s.mustSend(addr, []byte(strings.Replace(head, "%s", "slow-1@y", 1)+strings.Repeat("abcde abcde abcde abcde abcde\r\n", 60_000)))
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the mail took %v", d)
	}
	if l := s.unparsed(); len(l) != 2 || l[0].Reason != "the parsing rules ran out of time (200 ms per mail)" {
		t.Fatalf("unparsed: %+v", l)
	}

	// At most 50 rules, and no pattern over 500 bytes.
	for i := 3; i < 50; i++ {
		s.c.AdminInto(201, "POST", s.path("/parsing-rules"), map[string]any{
			"name": fmt.Sprint("r", i), "match": map[string]any{"from": map[string]any{"contains": "nobody"}},
			"status": map[string]any{"ok": []string{"ok"}, "failed": []string{"failed"}}}, nil)
	}
	r := s.c.Admin("POST", s.path("/parsing-rules"), map[string]any{
		"name": "one too many", "match": map[string]any{"from": map[string]any{"contains": "nobody"}},
		"status": map[string]any{"ok": []string{"ok"}, "failed": []string{"failed"}}})
	if r.Status != 409 || !strings.Contains(string(r.Body), "at most 50 parsing rules") {
		t.Errorf("the 51st rule: %d %s", r.Status, r.Body)
	}
	r = s.c.Admin("PUT", s.path("/parsing-rules/"+s.rules()[0]), map[string]any{
		"name": "long", "match": map[string]any{"body": map[string]any{"regexp": strings.Repeat("a", 501)}},
		"status": map[string]any{"ok": []string{"ok"}, "failed": []string{"failed"}}})
	if r.Status != 400 || !strings.Contains(string(r.Body), "match.body.regexp must be at most 500 bytes") {
		t.Errorf("a long pattern: %d %s", r.Status, r.Body)
	}
}

// rules returns the ids of the workspace's rules in their order.
func (s *mlServer) rules() []string {
	s.t.Helper()
	var list []struct{ ID string }
	s.c.AdminInto(200, "GET", s.path("/parsing-rules"), nil, &list)
	ids := make([]string, len(list))
	for i, r := range list {
		ids[i] = r.ID
	}
	return ids
}
