package main

import (
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// dashHTTPWebhookSecret: a webhook made in the dashboard shows its signing
// secret once, on the page that answers the form (as the admin API returns
// it once, decisions.md 7), and never again.
func dashHTTPWebhookSecret(t *testing.T, s *dashServer) {
	w := s.workspace(t, "hooksecret", nil)
	sess := s.login(t, w.users["owner"])
	r := s.post(t, "/settings/channels", sess, url.Values{"type": {"webhook"}, "name": {"Ops hook"}, "url": {"https://hooks.example/ops"}})
	m := regexp.MustCompile(`<output class="secret" id="new-secret">(whsec_[0-9a-f]{64})</output>`).FindStringSubmatch(r.body)
	if r.status != 200 || m == nil || !strings.Contains(dashVisible(r.body), "Copy it now: it is shown only once.") {
		t.Fatalf("POST /settings/channels (webhook): %s, want 200 with the signing secret", r)
	}
	if !strings.Contains(dashVisible(r.body), "Ops hook") {
		t.Errorf("the answer does not list the new channel")
	}
	again := s.page(t, "GET", "/settings/channels", sess, nil)
	if again.status != 200 || strings.Contains(again.body, m[1]) || strings.Contains(again.body, "new-secret") {
		t.Errorf("the channels page shows the secret again: %s", again)
	}
	// A Slack channel has no secret: the usual redirect with a message.
	r = s.post(t, "/settings/channels", sess, url.Values{"type": {"slack"}, "name": {"Ops chat"}, "url": {"https://hooks.slack.com/services/T0/B0/x"}})
	if r.status != 303 || strings.Contains(r.body, "whsec_") {
		t.Errorf("POST /settings/channels (slack): %s, want 303", r)
	}
}
