package transport_test

// The admin API of the PSA, Teams and PagerDuty channels (issue 23,
// docs/decisions.md): a channel's settings shown and its secrets never,
// every refused body (400 naming the field, nothing changed), the client
// mappings and their 404s, and the test endpoint of a server without a
// notifier.

import (
	"fmt"
	"strings"
	"testing"
)

func TestAdminPSAChannels(t *testing.T) {
	s, f := startFixture(t)
	// (The internal-address rule is the binary's: psa_test.go in
	// cmd/backupmon checks it.)
	cw := map[string]any{"type": "connectwise", "name": "CW", "secrets": map[string]any{"privateKey": "very-private"},
		"settings": map[string]any{"url": "https://api-na.myconnectwise.net/v4_6_release/apis/3.0", "company": "msp", "publicKey": "pub",
			"clientId": "cid", "defaultCompany": "Catchall", "board": "Service Desk", "closedStatus": "Closed"}}
	base := "/workspaces/" + f.WS
	ch := s.MustAdmin(201, "POST", base+"/channels", cw).Data()
	admWantKeys(t, "connectwise channel", ch, "id", "type", "name", "url", "to", "minSeverity", "createdAt", "settings", "secretsSet")
	if fmt.Sprint(ch["secretsSet"]) != "[privateKey]" || admObj(t, ch, "settings")["board"] != "Service Desk" {
		t.Errorf("connectwise channel %v", ch)
	}
	if body := string(s.MustAdmin(200, "GET", base+"/channels", nil).Body); strings.Contains(body, "very-private") {
		t.Errorf("the channel list shows a secret: %s", body)
	}
	chID := ch["id"].(string)
	hook := s.MustAdmin(201, "POST", base+"/channels", map[string]any{"type": "webhook", "name": "hook", "url": "https://x.example.com/h"}).Data()

	t.Run("refused channel bodies", func(t *testing.T) {
		pd := map[string]any{"type": "pagerduty", "name": "PD", "secrets": map[string]any{"routingKey": strings.Repeat("k", 32)}}
		admRun(t, s, f.WS, "POST", base+"/channels", []admBad{
			{"settings not an object", admWith(pd, "settings", "url=x"), "settings"},
			{"a setting not a string", admWith(pd, "settings", map[string]any{"url": 1}), "settings"},
			{"secrets missing", admWithout(pd, "secrets"), "secrets.routingKey"},
			{"an unknown secret", admWith(pd, "secrets", map[string]any{"routingKey": strings.Repeat("k", 32), "token": "t"}), "secrets.token"},
			{"a routing key too short", admWith(pd, "secrets", map[string]any{"routingKey": "short"}), "secrets.routingKey"},
			{"a url at the top", admWith(pd, "url", "https://events.example.com"), "url"},
			{"a setting on two lines", admWith(pd, "settings", map[string]any{"url": "https://e.example.com/\nx"}), "settings.url"},
		})
	})

	t.Run("mappings", func(t *testing.T) {
		path := base + "/channels/" + chID + "/clients/" + f.Client
		m := s.MustAdmin(200, "PUT", path, map[string]any{"company": "AcmeCo", "board": "Projects"}).Data()
		rpFields(t, "mapping", m, map[string]any{"clientId": f.Client, "clientName": "Globex", "mapped": true, "company": "AcmeCo", "board": "Projects", "ticketType": nil})
		admRun(t, s, f.WS, "PUT", path, []admBad{
			{"no company", map[string]any{"board": "x"}, "company"},
			{"an unknown field", map[string]any{"company": "x", "queue": "y"}, "queue"},
		})
		admRun(t, s, f.WS, "PUT", base+"/channels/"+hook["id"].(string)+"/clients/"+f.Client, []admBad{
			{"a webhook channel", map[string]any{"company": "x"}, "channel"},
		})
		for _, tc := range []struct{ what, path string }{
			{"an unknown channel", base + "/channels/0195c2a4-6f1e-7a3b-9c4d-2e8f1a6b3c5d/clients/" + f.Client},
			{"an unknown client", base + "/channels/" + chID + "/clients/0195c2a4-6f1e-7a3b-9c4d-2e8f1a6b3c5d"},
		} {
			admWantError(t, tc.what, s.Admin("PUT", tc.path, map[string]any{"company": "x"}), 404, "NOT_FOUND", "")
			admWantError(t, tc.what, s.Admin("DELETE", tc.path, nil), 404, "NOT_FOUND", "")
		}
		s.MustAdmin(204, "DELETE", path, nil)
		s.MustAdmin(204, "DELETE", path, nil) // already unmapped: nothing to change
		list := s.MustAdmin(200, "GET", base+"/channels/"+chID+"/clients", nil).List()
		if len(list) != 1 || list[0]["mapped"] != false || list[0]["company"] != nil {
			t.Errorf("mappings after the unmapping: %v", list)
		}
	})

	// The harness serves no notifier: a test answers 409, an unknown
	// channel's 404.
	admWantError(t, "test without a notifier", s.Admin("POST", base+"/channels/"+chID+"/test", nil), 409, "CONFLICT", "")
	admWantError(t, "test of an unknown channel", s.Admin("POST", base+"/channels/0195c2a4-6f1e-7a3b-9c4d-2e8f1a6b3c5d/test", nil), 404, "NOT_FOUND", "")
}
