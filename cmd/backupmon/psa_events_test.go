package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"backupmon/internal/psafake"
)

// TestPSAPagerDutyAndTeams: an alert's life on PagerDuty is a trigger, an
// acknowledge and a resolve, all with the alert's id as the dedup key;
// Teams gets an Adaptive Card for the opening and the recovery (not for
// the acknowledgement: chat channels get what Slack gets).
func TestPSAPagerDutyAndTeams(t *testing.T) {
	pd, teams := psafake.NewPagerDuty(), psafake.NewTeams()
	t.Cleanup(pd.Srv.Close)
	t.Cleanup(teams.Srv.Close)
	s := psStart(t)
	s.c.MustAdmin(201, "POST", s.path("/channels"), map[string]any{
		"type": "pagerduty", "name": "On call",
		"settings": map[string]string{"url": pd.URL()}, "secrets": map[string]string{"routingKey": pd.RoutingKey},
	})
	var tc struct {
		URL        *string  `json:"url"`
		SecretsSet []string `json:"secretsSet"`
	}
	s.c.AdminInto(201, "POST", s.path("/channels"), map[string]any{"type": "teams", "name": "Teams", "secrets": map[string]string{"url": teams.URL()}}, &tc)
	if tc.URL != nil || fmt.Sprint(tc.SecretsSet) != "[url]" {
		t.Fatalf("teams channel shows url %v, secrets %v: its URL is a credential, never shown", tc.URL, tc.SecretsSet)
	}

	job := s.job(s.acme, "Nightly")
	alert := s.report(job, `{"status":"failed","size_bytes":2048,"duration_seconds":61}`)
	s.wait("the opening", delivered(2))
	s.c.MustAdmin(200, "POST", s.path("/alerts/"+alert+"/acknowledge"), map[string]any{})
	s.wait("the acknowledgement", delivered(3))
	s.report(job, `{"status":"ok"}`)
	s.wait("the recovery", delivered(5))

	events := pd.Events()
	var actions []string
	for _, e := range events {
		actions = append(actions, e.EventAction)
		if e.DedupKey != alert {
			t.Errorf("event %s: dedup_key %q, want the alert's id %s", e.EventAction, e.DedupKey, alert)
		}
	}
	if fmt.Sprint(actions) != "[trigger acknowledge resolve]" {
		t.Fatalf("actions %v, want trigger, acknowledge, resolve", actions)
	}
	p := events[0].Payload
	link := psDashboard + "/jobs/" + job
	if p["summary"] != "Backup failed on Acme / Nightly" || p["severity"] != "critical" || p["source"] != "fs01.acme.local" ||
		p["component"] != "Nightly" || p["group"] != "Acme" || events[0].ClientURL != link || len(events[0].Links) != 1 || events[0].Links[0].Href != link {
		t.Errorf("trigger %+v: want the alert's summary, severity, the device as source and the job's link", events[0])
	}

	cards := teams.Cards()
	if len(cards) != 2 {
		t.Fatalf("%d cards, want 2 (opening, recovery)", len(cards))
	}
	b, _ := json.Marshal(cards[0])
	for _, want := range []string{`"text":"Alert opened"`, `"text":"Backup failed on Acme / Nightly"`, `{"title":"Size","value":"2.0 kB"}`,
		`{"title":"Duration","value":"1m 01s"}`, `"type":"Action.OpenUrl"`, `"url":"` + link + `"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the opening's card lacks %s:\n%s", want, b)
		}
	}
	if b, _ := json.Marshal(cards[1]); !strings.Contains(string(b), `"text":"Recovered"`) {
		t.Errorf("the second card is not the recovery's: %s", b)
	}
}

// TestPSAChannelTest: every channel type's test reports the remote's
// answer through the admin API: a PSA's credentials and default company,
// PagerDuty's trigger and resolve, a Teams card, a webhook's 2xx; a
// refused key shows the PSA's own message.
func TestPSAChannelTest(t *testing.T) {
	cw, pd, teams := psafake.NewConnectWise(), psafake.NewPagerDuty(), psafake.NewTeams()
	for _, srv := range []interface{ Close() }{cw.Srv, pd.Srv, teams.Srv} {
		t.Cleanup(srv.Close)
	}
	s := psStart(t)
	good := s.cwChannel(cw, cw.PrivateKey)
	bad := s.cwChannel(cw, "wrong")
	var ch struct{ ID string }
	s.c.AdminInto(201, "POST", s.path("/channels"), map[string]any{"type": "pagerduty", "name": "PD",
		"settings": map[string]string{"url": pd.URL()}, "secrets": map[string]string{"routingKey": pd.RoutingKey}}, &ch)
	pdID := ch.ID
	s.c.AdminInto(201, "POST", s.path("/channels"), map[string]any{"type": "teams", "name": "T", "secrets": map[string]string{"url": teams.URL()}}, &ch)
	teamsID := ch.ID
	s.c.AdminInto(201, "POST", s.path("/channels"), map[string]any{"type": "webhook", "name": "W", "url": teams.Srv.URL + "/hook"}, &ch)
	hookID := ch.ID

	for _, tc := range []struct {
		name, id string
		ok       bool
		answer   string
	}{
		{"connectwise", good, true, "ConnectWise v2024.1.99999, default company Unassigned clients"},
		{"connectwise refused", bad, false, "HTTP 401: Unauthorized: Incorrect public/private key"},
		{"pagerduty", pdID, true, "trigger and resolve: Event processed"},
		{"teams", teamsID, true, "accepted"},
		{"webhook refused", hookID, false, "HTTP 401: The request must be authenticated"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var res struct {
				OK     bool   `json:"ok"`
				Answer string `json:"answer"`
			}
			s.c.AdminInto(200, "POST", s.path("/channels/"+tc.id+"/test"), map[string]any{}, &res)
			if res.OK != tc.ok || res.Answer != tc.answer {
				t.Errorf("test answered %+v, want ok %v, answer %q", res, tc.ok, tc.answer)
			}
		})
	}
	if ev := pd.Events(); len(ev) != 2 || ev[0].EventAction != "trigger" || ev[1].EventAction != "resolve" || ev[0].DedupKey != ev[1].DedupKey {
		t.Errorf("PagerDuty got %+v: want a trigger and its resolve", ev)
	}
	if len(cw.Tickets()) != 0 {
		t.Error("a PSA test made a ticket")
	}
	if n := len(s.deliveries()); n != 0 {
		t.Errorf("%d deliveries: a test does not go through the outbox", n)
	}
}
