package main

// A parsing rule decides how a mail is read, so a changed rule can turn a
// failed backup into a success: every change of one is in the activity
// log, with who made it, through the admin API and the dashboard, and
// stays there after a restart.

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

func TestRuleChangesInTheActivityLog(t *testing.T) {
	s := dashStart(t)
	w := s.workspace(t, "audit", nil)
	rule := func(name string) json.RawMessage {
		return json.RawMessage(`{"name":"` + name + `","match":{"subject":{"contains":"run"}},"status":{"ok":["ok"],"failed":["failed"]}}`)
	}
	var first, second struct{ ID string }
	s.admin(t, "POST", w.path("/parsing-rules"), rule("Nightly script"), 201, &first)
	s.admin(t, "PUT", w.path("/parsing-rules/"+first.ID), rule("Nightly script v2"), 200, nil)
	s.admin(t, "POST", w.path("/parsing-rules"), rule("Weekly script"), 201, &second)
	s.admin(t, "PUT", w.path("/parsing-rules"), map[string]any{"ids": []string{second.ID, first.ID}}, 200, nil)
	s.admin(t, "DELETE", w.path("/parsing-rules/"+second.ID), nil, 204, nil)

	owner := w.users["owner"]
	session := s.login(t, owner)
	if r := s.page(t, "POST", "/settings/rules", session, url.Values{"rule": {string(rule("From the dashboard"))}}); r.status != 303 {
		t.Fatalf("saving a rule in the dashboard: %d\n%s", r.status, r)
	}
	var rules []struct{ ID, Name string }
	s.admin(t, "GET", w.path("/parsing-rules"), nil, 200, &rules)
	if len(rules) != 2 || rules[1].Name != "From the dashboard" {
		t.Fatalf("rules %+v", rules)
	}
	third := rules[1].ID
	if r := s.page(t, "POST", "/settings/rules/"+third+"/up", session, url.Values{}); r.status != 303 {
		t.Fatalf("moving a rule up in the dashboard: %d\n%s", r.status, r)
	}
	if r := s.page(t, "POST", "/settings/rules/"+third+"/delete", session, url.Values{}); r.status != 303 {
		t.Fatalf("deleting a rule in the dashboard: %d\n%s", r.status, r)
	}

	// Newest first.
	by := "user:" + owner.email
	want := []string{
		`{"type":"rule.deleted","actor":"` + by + `","ruleId":"` + third + `","name":"From the dashboard"}`,
		`{"type":"rules.reordered","actor":"` + by + `"}`,
		`{"type":"rule.created","actor":"` + by + `","ruleId":"` + third + `","name":"From the dashboard"}`,
		`{"type":"rule.deleted","actor":"admin","ruleId":"` + second.ID + `","name":"Weekly script"}`,
		`{"type":"rules.reordered","actor":"admin"}`,
		`{"type":"rule.created","actor":"admin","ruleId":"` + second.ID + `","name":"Weekly script"}`,
		`{"type":"rule.updated","actor":"admin","ruleId":"` + first.ID + `","name":"Nightly script v2"}`,
		`{"type":"rule.created","actor":"admin","ruleId":"` + first.ID + `","name":"Nightly script"}`,
	}
	check := func(when string) {
		t.Helper()
		var entries []map[string]any
		s.admin(t, "GET", w.path("/activity"), nil, 200, &entries)
		if len(entries) < len(want) {
			t.Fatalf("%s: %d activity entries, want at least %d", when, len(entries), len(want))
		}
		for i, wantJSON := range want {
			e := entries[i]
			if e["id"] == nil || e["at"] == nil {
				t.Fatalf("%s: entry %d has no id or time: %v", when, i, e)
			}
			delete(e, "id")
			delete(e, "at")
			got, _ := json.Marshal(e)
			var wantMap map[string]any
			if err := json.Unmarshal([]byte(wantJSON), &wantMap); err != nil {
				t.Fatal(err)
			}
			wantBytes, _ := json.Marshal(wantMap)
			if string(got) != string(wantBytes) {
				t.Errorf("%s: entry %d\n got %s\nwant %s", when, i, got, wantBytes)
			}
		}
	}
	check("live")
	page := s.page(t, "GET", "/settings/activity", session, nil)
	if page.status != 200 || !strings.Contains(page.body, "rule.deleted") || !strings.Contains(page.body, "From the dashboard") {
		t.Errorf("the dashboard's activity log: %d\n%s", page.status, page)
	}

	// From the log, and from the snapshot a clean stop writes.
	s.c = s.c.Restart("dashboard server after SIGKILL", "--dev-clock")
	check("after SIGKILL")
	if code, err := s.c.Term(); code != 0 || err != nil {
		t.Fatalf("SIGTERM: exit %d, %v", code, err)
	}
	s.c = s.c.Restart("dashboard server after SIGTERM", "--dev-clock")
	check("after SIGTERM")
}
