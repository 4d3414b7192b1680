package main

// The Autotask and HaloPSA channels end to end, on local fakes of their
// APIs (internal/psafake); psa_test.go has the ConnectWise ones and the
// helpers.

import (
	"strings"
	"testing"
	"time"

	"backupmon/internal/psafake"
)

// TestPSAHaloPSAAlertLife: on a HaloPSA, an alert's life makes one ticket
// for the mapped client (its summary ending with the alert's id, by which
// a retry would find it), an action per later step and the closing
// status; the access token is taken by the client-credentials grant,
// kept, taken again once it has expired on our clock, and again when the
// resource server refuses it (401); an unmapped client's ticket goes to
// the default client.
func TestPSAHaloPSAAlertLife(t *testing.T) {
	f := psafake.NewHaloPSA()
	t.Cleanup(f.Srv.Close)
	s := psStart(t)
	ch := s.channel("halopsa", map[string]string{
		"url": f.APIURL(), "authUrl": f.AuthURL(), "tenant": f.Tenant, "clientId": f.ClientID,
		"defaultCompany": "99", "closedStatus": "9", "ticketType": "21", "priority": "4",
	}, map[string]string{"clientSecret": f.ClientSecret})
	s.c.MustAdmin(200, "PUT", s.path("/channels/"+ch+"/clients/"+s.acme), map[string]any{"company": "12"})

	job := s.job(s.acme, "Exchange")
	alert := s.report(job, `{"status":"failed"}`)
	s.wait("the opening", delivered(1))
	s.c.MustAdmin(200, "POST", s.path("/alerts/"+alert+"/acknowledge"), map[string]any{})
	s.wait("the acknowledgement", delivered(2))
	if g := f.Grants(); g != 1 {
		t.Errorf("%d tokens granted, want 1 kept for both steps", g)
	}
	s.c.Advance(2 * time.Hour) // past the token's expires_in of 3600 s
	s.report(job, `{"status":"ok"}`)
	s.wait("the recovery", delivered(3))
	if g := f.Grants(); g != 2 {
		t.Errorf("%d tokens granted, want 2: the expired one renewed", g)
	}
	tk := psOne(t, "tickets", f.Tickets())
	if tk.ClientID != 12 || tk.TypeID != 21 || tk.PriorityID != 4 || tk.StatusID != 9 || !strings.HasSuffix(tk.Summary, " [backupmon "+alert+"]") {
		t.Errorf("ticket %+v: want client 12, type 21, priority 4, closed with status 9, the alert's id ending its summary", tk)
	}
	if len(tk.Actions) != 2 || tk.Actions[0].Note != "Acknowledged by admin" || !tk.Actions[0].Hidden ||
		!strings.HasPrefix(tk.Actions[1].Note, "Recovered") || tk.Actions[1].Hidden {
		t.Errorf("actions %+v: want the acknowledgement (hidden) and the recovery note (shown)", tk.Actions)
	}

	f.RevokeTokens()
	s.report(s.job(s.beta, "Beta files"), `{"status":"failed"}`)
	s.wait("the unmapped client's opening", delivered(4))
	tickets := f.Tickets()
	if len(tickets) != 2 || tickets[1].ClientID != 99 {
		t.Fatalf("the unmapped client's ticket: %+v, want client 99", tickets)
	}
	if g := f.Grants(); g != 3 {
		t.Errorf("%d tokens granted, want 3: the refused one renewed", g)
	}
}

// TestPSAAutotaskAlertLife: on Autotask, the zone is looked up once by the
// API user's name, and an alert's life makes one ticket in the mapped
// company and queue (externalID the alert's id), a note for the raise
// with the raised priority, and the recovery note with the closing status
// (Complete, 5, by default); an unmapped client's ticket goes to the
// default company.
func TestPSAAutotaskAlertLife(t *testing.T) {
	f := psafake.NewAutotask()
	t.Cleanup(f.Srv.Close)
	s := psStart(t)
	ch := s.channel("autotask", map[string]string{
		"username": f.Username, "integrationCode": f.IntegrationCode, "zoneUrl": f.ZoneURL(),
		"defaultCompany": "3", "queue": "29683", "priority": "2", "raisedPriority": "1",
	}, map[string]string{"secret": f.Secret})
	s.c.MustAdmin(200, "PUT", s.path("/channels/"+ch+"/clients/"+s.acme), map[string]any{"company": "174", "board": "29684"})

	job := s.job(s.acme, "SQL")
	alert := s.report(job, `{"status":"warn"}`)
	s.wait("the opening", delivered(1))
	s.report(job, `{"status":"failed"}`)
	s.wait("the raise", delivered(2))
	s.report(job, `{"status":"ok"}`)
	s.wait("the recovery", delivered(3))
	tk := psOne(t, "tickets", f.Tickets())
	if tk.ExternalID != alert || tk.CompanyID != 174 || tk.QueueID != 29684 || tk.Priority != 1 || tk.Status != 5 {
		t.Errorf("ticket %+v: want externalID %s, company 174, queue 29684, raised to priority 1, status 5", tk, alert)
	}
	if len(tk.Notes) != 2 || !strings.HasPrefix(tk.Notes[0].Description, "Alert raised:") || !strings.HasPrefix(tk.Notes[1].Description, "Recovered") {
		t.Errorf("notes %+v: want the raise's and the recovery's", tk.Notes)
	}
	s.report(s.job(s.beta, "Beta SQL"), `{"status":"failed"}`)
	s.wait("the unmapped client's opening", delivered(4))
	tickets := f.Tickets()
	if len(tickets) != 2 || tickets[1].CompanyID != 3 || tickets[1].QueueID != 29683 {
		t.Fatalf("the unmapped client's ticket %+v: want the default company 3 and queue 29683", tickets)
	}
	if n := f.ZoneLookups(); n != 1 {
		t.Errorf("%d zone lookups, want 1", n)
	}
}
