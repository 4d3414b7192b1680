package main

// The parsing rules page without a browser: who may see and change what,
// and what the REST API never shows (api.md 1.7).

import (
	"net/url"
	"strings"
	"testing"
)

func TestDashboardRulesRoles(t *testing.T) {
	s := dashStart(t)
	w := s.workspace(t, "roles", []dashJob{{"Script", "custom", 0, ""}})
	rule := `{"name":"secret-rule-name","match":{"subject":{"contains":"run"}},"status":{"ok":["ok"],"failed":["failed"]}}`
	sessions := map[string]string{}
	for _, role := range dashRoles {
		sessions[role] = s.login(t, w.users[role])
	}
	for _, tc := range []struct {
		role, method, path string
		form               url.Values
		want               int
	}{
		{"viewer", "GET", "/settings/rules", nil, 403},
		{"member", "GET", "/settings/rules", nil, 403},
		{"member", "POST", "/settings/rules", url.Values{"rule": {rule}}, 403},
		{"admin", "GET", "/settings/rules", nil, 200},
		{"admin", "POST", "/settings/ai-prompt", url.Values{"prompt": {"secret-prompt"}}, 403},
		{"owner", "POST", "/settings/rules", url.Values{"rule": {rule}}, 303},
		{"owner", "POST", "/settings/ai-prompt", url.Values{"prompt": {"secret-prompt"}}, 303},
	} {
		t.Run(tc.role+" "+tc.method+" "+tc.path, func(t *testing.T) {
			if r := s.page(t, tc.method, tc.path, sessions[tc.role], tc.form); r.status != tc.want {
				t.Fatalf("%d, want %d\n%s", r.status, tc.want, r)
			}
		})
	}
	var rules []struct{ Name string }
	s.admin(t, "GET", w.path("/parsing-rules"), nil, 200, &rules)
	var prompt struct{ Prompt string }
	s.admin(t, "GET", w.path("/ai-prompt"), nil, 200, &prompt)
	if len(rules) != 1 || rules[0].Name != "secret-rule-name" || prompt.Prompt != "secret-prompt" {
		t.Fatalf("rules %+v, prompt %q", rules, prompt.Prompt)
	}
	if r := s.page(t, "GET", "/settings/rules", sessions["admin"], nil); !strings.Contains(r.body, "secret-rule-name") || strings.Contains(r.body, `name="prompt"`) {
		t.Errorf("an admin sees the rules and not the prompt's form: %s", r)
	}
	// The REST API shows neither rules nor prompts, whatever it is asked.
	for _, p := range []string{"/jobs", "/jobs/" + w.jobs["Script"], "/alerts", "/reports"} {
		if code, body := s.rest(t, w.restKey, p); code != 200 || strings.Contains(body, "secret-") {
			t.Errorf("GET %s: %d %s", p, code, body)
		}
	}
}
