package transport_test

// Notification channels and escalation rules through the admin API
// (decisions.md 2 and 7, docs/decisions.md): the records as created and
// listed, every refused body (400 naming the field, nothing changed), the
// 404s, the caps, and what deleting a channel takes with it.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"backupmon/internal/testserver"
)

var chSecretRe = testserver.WebhookSecretRe

func TestAdminChannels(t *testing.T) {
	s, f := startFixture(t)
	base := "/workspaces/" + f.WS
	at := testserver.T0.Add(5 * time.Minute)
	s.SetClock(at)

	hook := s.MustAdmin(201, "POST", base+"/channels", map[string]any{"type": "webhook", "name": "Ops hook", "url": "https://hooks.example.com/backupmon?x=1"}).Data()
	admWantKeys(t, "webhook channel", hook, "id", "type", "name", "url", "to", "minSeverity", "createdAt", "secret")
	rpFields(t, "webhook channel", hook, map[string]any{"type": "webhook", "name": "Ops hook", "url": "https://hooks.example.com/backupmon?x=1",
		"to": nil, "minSeverity": "warning", "createdAt": testserver.TS(at)})
	if !chSecretRe.MatchString(fmt.Sprint(hook["secret"])) {
		t.Errorf("webhook secret %v, want whsec_ and 64 hex digits", hook["secret"])
	}
	slack := s.MustAdmin(201, "POST", base+"/channels", map[string]any{"type": "slack", "name": "Slack", "url": "http://chat.example.com/hook", "minSeverity": "critical"}).Data()
	admWantKeys(t, "slack channel", slack, "id", "type", "name", "url", "to", "minSeverity", "createdAt")
	rpFields(t, "slack channel", slack, map[string]any{"type": "slack", "url": "http://chat.example.com/hook", "to": nil, "minSeverity": "critical"})
	mail := s.MustAdmin(201, "POST", base+"/channels", map[string]any{"type": "email", "name": "On call", "to": "oncall@example.com", "url": nil}).Data()
	admWantKeys(t, "email channel", mail, "id", "type", "name", "url", "to", "minSeverity", "createdAt")
	rpFields(t, "email channel", mail, map[string]any{"type": "email", "url": nil, "to": "oncall@example.com", "minSeverity": "warning"})

	// Listed oldest first, without secrets.
	list := s.MustAdmin(200, "GET", base+"/channels", nil)
	if strings.Contains(string(list.Body), "whsec_") || strings.Contains(string(list.Body), `"secret"`) {
		t.Errorf("channel list shows a secret: %s", list.Body)
	}
	var ids []string
	for _, c := range list.List() {
		ids = append(ids, c["id"].(string))
	}
	if want := []string{hook["id"].(string), slack["id"].(string), mail["id"].(string)}; strings.Join(ids, " ") != strings.Join(want, " ") {
		t.Errorf("channels listed %v, want %v", ids, want)
	}

	t.Run("refused channel bodies", func(t *testing.T) {
		web := map[string]any{"type": "webhook", "name": "n", "url": "https://x.example.com/h"}
		em := map[string]any{"type": "email", "name": "n", "to": "a@example.com"}
		cases := []admBad{
			{"no type", admWithout(web, "type"), "type"},
			{"null type", admWith(web, "type", nil), "type"},
			{"unknown type", admWith(web, "type", "sms"), "type"},
			{"type in capitals", admWith(web, "type", "Webhook"), "type"},
			{"type not a string", admWith(web, "type", 1), "type"},
			{"no name", admWithout(web, "name"), "name"},
			{"empty name", admWith(web, "name", ""), "name"},
			{"long name", admWith(web, "name", strings.Repeat("n", 201)), "name"},
			{"webhook without url", admWithout(web, "url"), "url"},
			{"null url", admWith(web, "url", nil), "url"},
			{"ftp url", admWith(web, "url", "ftp://x.example.com/h"), "url"},
			{"relative url", admWith(web, "url", "/hook"), "url"},
			{"url without host", admWith(web, "url", "https:///hook"), "url"},
			{"url with a space", admWith(web, "url", "https://x.example.com/a b"), "url"},
			{"url with user info", admWith(web, "url", "https://u:p@x.example.com/h"), "url"},
			{"url not a string", admWith(web, "url", 5), "url"},
			{"to on a webhook", admWith(web, "to", "a@example.com"), "to"},
			{"slack without url", map[string]any{"type": "slack", "name": "n"}, "url"},
			{"email without to", admWithout(em, "to"), "to"},
			{"email with null to", admWith(em, "to", nil), "to"},
			{"to not an address", admWith(em, "to", "not an address"), "to"},
			{"to with a display name", admWith(em, "to", "Ops <ops@example.com>"), "to"},
			{"two addresses", admWith(em, "to", "a@example.com, b@example.com"), "to"},
			{"header injection", admWith(em, "to", "a@example.com\r\nBcc: x@example.com"), "to"},
			{"url on an email channel", admWith(em, "url", "https://x.example.com/h"), "url"},
			{"unknown minSeverity", admWith(web, "minSeverity", "info"), "minSeverity"},
			{"null minSeverity", admWith(web, "minSeverity", nil), "minSeverity"},
			{"unknown field", admWith(web, "secret", "mine"), "secret"},
		}
		cases = append(cases, admNonObjects...)
		admRun(t, s, f.WS, "POST", base+"/channels", cases)
	})

	t.Run("escalations", func(t *testing.T) {
		e30 := s.MustAdmin(201, "POST", base+"/escalations", map[string]any{"channelId": hook["id"], "afterMinutes": 30}).Data()
		admWantKeys(t, "escalation", e30, "id", "channelId", "afterMinutes", "createdAt")
		rpFields(t, "escalation", e30, map[string]any{"channelId": hook["id"], "afterMinutes": 30, "createdAt": testserver.TS(at)})
		e5 := s.MustAdmin(201, "POST", base+"/escalations", map[string]any{"channelId": mail["id"], "afterMinutes": 5}).Data()
		var order []any
		for _, e := range s.MustAdmin(200, "GET", base+"/escalations", nil).List() {
			order = append(order, e["id"])
		}
		if fmt.Sprint(order) != fmt.Sprint([]any{e5["id"], e30["id"]}) {
			t.Errorf("escalations listed %v, want by afterMinutes: %v %v", order, e5["id"], e30["id"])
		}
		ok := map[string]any{"channelId": hook["id"], "afterMinutes": 10}
		admRun(t, s, f.WS, "POST", base+"/escalations", append([]admBad{
			{"no channelId", admWithout(ok, "channelId"), "channelId"},
			{"null channelId", admWith(ok, "channelId", nil), "channelId"},
			{"unknown channelId", admWith(ok, "channelId", "01900000-0000-7000-8000-000000000000"), "channelId"},
			{"malformed channelId", admWith(ok, "channelId", "hook"), "channelId"},
			{"another workspace's kind of id", admWith(ok, "channelId", f.Job), "channelId"},
			{"no afterMinutes", admWithout(ok, "afterMinutes"), "afterMinutes"},
			{"zero minutes", admWith(ok, "afterMinutes", 0), "afterMinutes"},
			{"negative minutes", admWith(ok, "afterMinutes", -5), "afterMinutes"},
			{"over 30 days", admWith(ok, "afterMinutes", 43201), "afterMinutes"},
			{"minutes as a string", admWith(ok, "afterMinutes", "10"), "afterMinutes"},
			{"fractional minutes", admWith(ok, "afterMinutes", 1.5), "afterMinutes"},
		}, admNonObjects...))
		s.MustAdmin(201, "POST", base+"/escalations", map[string]any{"channelId": hook["id"], "afterMinutes": 43200})

		// Deleting a channel deletes its rules.
		s.MustAdmin(204, "DELETE", base+"/channels/"+mail["id"].(string), nil)
		for _, e := range s.MustAdmin(200, "GET", base+"/escalations", nil).List() {
			if e["channelId"] == mail["id"] {
				t.Errorf("the deleted channel's rule is still listed: %v", e)
			}
		}
		admWantError(t, "second delete", s.Admin("DELETE", base+"/channels/"+mail["id"].(string), nil), 404, "NOT_FOUND", "")
		admWantError(t, "delete a deleted channel's rule", s.Admin("DELETE", base+"/escalations/"+e5["id"].(string), nil), 404, "NOT_FOUND", "")
		s.MustAdmin(204, "DELETE", base+"/escalations/"+e30["id"].(string), nil)
		admWantError(t, "second rule delete", s.Admin("DELETE", base+"/escalations/"+e30["id"].(string), nil), 404, "NOT_FOUND", "")
	})

	t.Run("not found", func(t *testing.T) {
		for _, c := range []struct{ method, path string }{
			{"DELETE", base + "/channels/01900000-0000-7000-8000-000000000000"},
			{"DELETE", base + "/channels/nope"},
			{"DELETE", base + "/escalations/01900000-0000-7000-8000-000000000000"},
			{"DELETE", base + "/escalations/nope"},
			{"GET", "/workspaces/01900000-0000-7000-8000-000000000000/channels"},
			{"GET", "/workspaces/01900000-0000-7000-8000-000000000000/escalations"},
			{"GET", "/workspaces/01900000-0000-7000-8000-000000000000/deliveries"},
			{"POST", "/workspaces/01900000-0000-7000-8000-000000000000/channels"},
		} {
			var body any
			if c.method == "POST" {
				body = map[string]any{"type": "slack", "name": "n", "url": "https://x.example.com"}
			}
			admWantError(t, c.method+" "+c.path, s.Admin(c.method, c.path, body), 404, "NOT_FOUND", "")
		}
	})

	t.Run("no deliveries yet", func(t *testing.T) {
		r := s.MustAdmin(200, "GET", base+"/deliveries", nil)
		if string(r.Body) != `{"data":[]}` {
			t.Errorf("deliveries %s, want {\"data\":[]}", r.Body)
		}
	})

	t.Run("caps", func(t *testing.T) {
		n := len(s.MustAdmin(200, "GET", base+"/channels", nil).List())
		for i := n; i < 100; i++ {
			s.MustAdmin(201, "POST", base+"/channels", map[string]any{"type": "slack", "name": fmt.Sprint("c", i), "url": "https://x.example.com/h"})
		}
		before := admState(s, f.WS)
		admWantError(t, "101st channel", s.Admin("POST", base+"/channels", map[string]any{"type": "slack", "name": "one more", "url": "https://x.example.com/h"}),
			409, "CONFLICT", "at most 100 channels")
		admSameState(t, "refused channel", before, admState(s, f.WS))
		m := len(s.MustAdmin(200, "GET", base+"/escalations", nil).List())
		for i := m; i < 100; i++ {
			s.MustAdmin(201, "POST", base+"/escalations", map[string]any{"channelId": hook["id"], "afterMinutes": i + 1})
		}
		before = admState(s, f.WS)
		admWantError(t, "101st rule", s.Admin("POST", base+"/escalations", map[string]any{"channelId": hook["id"], "afterMinutes": 7}),
			409, "CONFLICT", "at most 100 escalation rules")
		admSameState(t, "refused rule", before, admState(s, f.WS))
	})

	// Everything survives a restart, secrets included (a webhook still
	// signs: the delivery tests show it).
	before := admState(s, f.WS)
	s.Restart()
	admSameState(t, "restart", before, admState(s, f.WS))
}
