package notify

import (
	"strings"
	"testing"
	"unicode/utf8"

	"backupmon/engine"
	"backupmon/internal/psafake"
	"backupmon/state"
)

// psaNotice is testNotice bound for a channel of type typ with settings
// and secrets given as key, value pairs.
func psaNotice(typ string, settings, secrets []string) engine.Notice {
	nt := testNotice(typ, "")
	nt.AlertID = mustID("0195a0b1-7c4e-7000-8000-0000000000a1")
	nt.SizeBytes, nt.DurationSeconds = -1, -1
	for i := 0; i+1 < len(settings); i += 2 {
		nt.Channel.Settings = append(nt.Channel.Settings, state.Setting{Key: settings[i], Value: settings[i+1]})
	}
	for i := 0; i+1 < len(secrets); i += 2 {
		nt.Channel.Secrets = append(nt.Channel.Secrets, state.Setting{Key: secrets[i], Value: secrets[i+1]})
	}
	return nt
}

// psaSend sends nt through a Notifier that may reach loopback and returns
// its outcome.
func psaSend(t *testing.T, nt engine.Notice) engine.Outcome {
	t.Helper()
	got := make(chan engine.Outcome, 1)
	n, _ := newTestNotifier(t, Options{AllowPrivate: true, Outcome: func(_, _ engine.ID, _ int, o engine.Outcome) { got <- o }})
	n.Deliver(nt)
	return <-got
}

// Each API's refusals reach the delivery as the remote's own message, and
// those no retry can mend (bad credentials, an unknown company or field)
// are marked for good.
func TestRemoteRefusals(t *testing.T) {
	cw, at, halo, pd, teams := psafake.NewConnectWise(), psafake.NewAutotask(), psafake.NewHaloPSA(), psafake.NewPagerDuty(), psafake.NewTeams()
	for _, srv := range []interface{ Close() }{cw.Srv, at.Srv, halo.Srv, pd.Srv, teams.Srv} {
		t.Cleanup(srv.Close)
	}
	cwSettings := func() []string {
		return []string{"url", cw.URL(), "company", cw.Company, "publicKey", cw.PublicKey, "clientId", cw.ClientID,
			"defaultCompany", "Catchall", "board", "Service Desk", "closedStatus", "Closed (resolved)"}
	}
	for _, tc := range []struct {
		name      string
		nt        engine.Notice
		failure   string
		permanent bool
	}{
		{"connectwise, a wrong key", psaNotice(state.ChannelConnectWise, cwSettings(), []string{"privateKey", "nope"}),
			"finding the alert's ticket: HTTP 401: Unauthorized: Incorrect public/private key", true},
		{"connectwise, an unknown company", func() engine.Notice {
			nt := psaNotice(state.ChannelConnectWise, cwSettings(), []string{"privateKey", cw.PrivateKey})
			nt.Channel.Company = "Nobody"
			nt.Channel.Board = "Service Desk"
			return nt
		}(), `creating the ticket: HTTP 400: InvalidObject: ticket object is invalid (Company "Nobody" not found)`, true},
		{"autotask, an unknown company", func() engine.Notice {
			nt := psaNotice(state.ChannelAutotask, []string{"username", at.Username, "integrationCode", at.IntegrationCode, "zoneUrl", at.ZoneURL(), "priority", "2"}, []string{"secret", at.Secret})
			nt.Channel.Company, nt.Channel.Board = "5", "29683"
			return nt
		}(), "creating the ticket: HTTP 400: companyID 5 does not exist", true},
		{"autotask, an unknown user", psaNotice(state.ChannelAutotask, []string{"username", "who@example.com", "integrationCode", at.IntegrationCode, "zoneUrl", at.ZoneURL()}, []string{"secret", at.Secret}),
			"finding the alert's ticket: looking up the zone: HTTP 404: Zone information could not be determined for the user", true},
		{"halopsa, a wrong secret", psaNotice(state.ChannelHaloPSA, []string{"url", halo.APIURL(), "authUrl", halo.AuthURL(), "tenant", halo.Tenant, "clientId", halo.ClientID}, []string{"clientSecret", "nope"}),
			"finding the alert's ticket: getting a token: HTTP 400: The client credentials are invalid", true},
		{"pagerduty, an unknown routing key", psaNotice(state.ChannelPagerDuty, []string{"url", pd.URL()}, []string{"routingKey", strings.Repeat("x", 32)}),
			"HTTP 400: Event object is invalid: Invalid routing key", true},
		{"teams, a URL without its signature", psaNotice(state.ChannelTeams, nil, []string{"url", teams.Srv.URL + "/workflows/1f2e"}),
			"HTTP 401: The request must be authenticated", true},
		{"pagerduty, unreachable", psaNotice(state.ChannelPagerDuty, []string{"url", "http://" + closedAddr(t) + "/v2/enqueue"}, []string{"routingKey", pd.RoutingKey}),
			"", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := psaSend(t, tc.nt)
			if tc.failure == "" {
				if o.Failure == "" || o.Permanent {
					t.Fatalf("outcome %+v: want a failure to retry", o)
				}
				return
			}
			if o.Failure != tc.failure || o.Permanent != tc.permanent || o.Ticket != "" {
				t.Fatalf("outcome %+v\nwant failure %q, permanent %v", o, tc.failure, tc.permanent)
			}
		})
	}
}

func TestRemoteErrorPermanent(t *testing.T) {
	for _, tc := range []struct {
		status    int
		permanent bool
	}{{400, true}, {401, true}, {403, true}, {404, true}, {422, true}, {408, false}, {409, false}, {425, false}, {429, false}, {500, false}, {503, false}} {
		t.Run((&RemoteError{Status: tc.status}).Error(), func(t *testing.T) {
			if got := (&RemoteError{Status: tc.status}).Permanent(); got != tc.permanent {
				t.Errorf("Permanent() = %v, want %v", got, tc.permanent)
			}
		})
	}
}

// FuzzErrorBodies: the readers of the remote APIs' error bodies take any
// bytes without panicking, and the failure they make is one line of at
// most MaxFailureLen characters.
func FuzzErrorBodies(f *testing.F) {
	for _, s := range []string{`{"code":"InvalidObject","message":"ticket object is invalid","errors":[{"code":"NotFound","message":"x","field":"company"}]}`,
		`{"errors":["a","b"]}`, `{"error":"invalid_client","error_description":"bad"}`, `"Client not found"`,
		`{"status":"invalid event","message":"Event object is invalid","errors":["Invalid routing key"]}`, `{"error":{"code":"c","message":"m"}}`,
		"plain text\r\nwith lines", "\xff\xfe", `{"message":123}`, `[]`, ``} {
		f.Add([]byte(s))
	}
	n := New(Options{})
	f.Cleanup(n.Close)
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, read := range []func([]byte) string{cwMessage, atMessage, haloMessage, pdMessage, teamsMessage, anyMessage, plainMessage} {
			msg := read(body)
			failure := n.failure(&RemoteError{Status: 400, Message: oneLine(msg)})
			if strings.ContainsAny(failure, "\r\n") || utf8.RuneCountInString(failure) > MaxFailureLen || !utf8.ValidString(failure) {
				t.Fatalf("failure %q from body %q", failure, body)
			}
		}
	})
}

// The summary a PSA gets is cut to its limit, and the description carries
// the facts and the alert's id.
func TestTicketText(t *testing.T) {
	nt := psaNotice(state.ChannelConnectWise, nil, nil)
	nt.JobName = strings.Repeat("very long job name ", 10)
	if s := truncate(headline(nt), cwSummaryMax); utf8.RuneCountInString(s) != cwSummaryMax || !strings.HasSuffix(s, "…") {
		t.Errorf("summary %q: want %d characters ending with …", s, cwSummaryMax)
	}
	nt.SizeBytes, nt.DurationSeconds = 1_500_000, 7322
	d := ticketDescription(nt, noticeFacts(nt, "https://b.example.com"))
	for _, want := range []string{"Client: Acme", "Size: 1.5 MB", "Duration: 2h 02m 02s", "Error: Veeam job failed: exit code 2",
		"Job in backupmon: https://b.example.com/jobs/0195a0b1-7c4e-7000-8000-0000000000b1", "backupmon alert 0195a0b1-7c4e-7000-8000-0000000000a1 (severity critical)"} {
		if !strings.Contains(d, want) {
			t.Errorf("description lacks %q:\n%s", want, d)
		}
	}
}

// An opening whose earlier attempt made the ticket but lost the answer
// finds that ticket by the alert's id in each PSA, and makes no second.
func TestTicketFoundAgain(t *testing.T) {
	cw, at, halo := psafake.NewConnectWise(), psafake.NewAutotask(), psafake.NewHaloPSA()
	for _, srv := range []interface{ Close() }{cw.Srv, at.Srv, halo.Srv} {
		t.Cleanup(srv.Close)
	}
	for _, tc := range []struct {
		name, company, board string
		nt                   engine.Notice
		tickets              func() int
	}{
		{"connectwise", "AcmeCo", "Service Desk", psaNotice(state.ChannelConnectWise, []string{"url", cw.URL(), "company", cw.Company, "publicKey", cw.PublicKey, "clientId", cw.ClientID},
			[]string{"privateKey", cw.PrivateKey}), func() int { return len(cw.Tickets()) }},
		{"autotask", "174", "29683", psaNotice(state.ChannelAutotask, []string{"username", at.Username, "integrationCode", at.IntegrationCode, "zoneUrl", at.ZoneURL(), "priority", "2"},
			[]string{"secret", at.Secret}), func() int { return len(at.Tickets()) }},
		{"halopsa", "12", "", psaNotice(state.ChannelHaloPSA, []string{"url", halo.APIURL(), "authUrl", halo.AuthURL(), "tenant", halo.Tenant, "clientId", halo.ClientID},
			[]string{"clientSecret", halo.ClientSecret}), func() int { return len(halo.Tickets()) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nt := tc.nt
			nt.Channel.Company, nt.Channel.Board = tc.company, tc.board
			first := psaSend(t, nt)
			if first.Failure != "" || first.Ticket == "" || tc.tickets() != 1 {
				t.Fatalf("the first attempt: %+v, %d tickets", first, tc.tickets())
			}
			nt.Attempt++ // the engine never heard of the ticket: no Channel.Ticket
			again := psaSend(t, nt)
			if again.Failure != "" || again.Ticket != first.Ticket || tc.tickets() != 1 {
				t.Fatalf("the retry: %+v, %d tickets; want ticket %s found, still 1 ticket", again, tc.tickets(), first.Ticket)
			}
		})
	}
}
