package main

import (
	"strings"
	"testing"

	"backupmon/internal/psafake"
)

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
	var ch struct{ ID string }
	s.c.AdminInto(201, "POST", s.path("/channels"), map[string]any{
		"type": "autotask", "name": "Autotask",
		"settings": map[string]string{
			"username": f.Username, "integrationCode": f.IntegrationCode, "zoneUrl": f.ZoneURL(),
			"defaultCompany": "3", "queue": "29683", "priority": "2", "raisedPriority": "1",
		},
		"secrets": map[string]string{"secret": f.Secret},
	}, &ch)
	s.c.MustAdmin(200, "PUT", s.path("/channels/"+ch.ID+"/clients/"+s.acme), map[string]any{"company": "174", "board": "29684"})

	job := s.job(s.acme, "SQL")
	alert := s.report(job, `{"status":"warn"}`)
	s.wait("the opening", delivered(1))
	s.report(job, `{"status":"failed"}`)
	s.wait("the raise", delivered(2))
	s.report(job, `{"status":"ok"}`)
	s.wait("the recovery", delivered(3))
	tickets := f.Tickets()
	if len(tickets) != 1 {
		t.Fatalf("%d tickets, want 1: %+v", len(tickets), tickets)
	}
	tk := tickets[0]
	if tk.ExternalID != alert || tk.CompanyID != 174 || tk.QueueID != 29684 || tk.Priority != 1 || tk.Status != 5 {
		t.Errorf("ticket %+v: want externalID %s, company 174, queue 29684, raised to priority 1, status 5", tk, alert)
	}
	if len(tk.Notes) != 2 || !strings.HasPrefix(tk.Notes[0].Description, "Alert raised:") || !strings.HasPrefix(tk.Notes[1].Description, "Recovered") {
		t.Errorf("notes %+v: want the raise's and the recovery's", tk.Notes)
	}
	s.report(s.job(s.beta, "Beta SQL"), `{"status":"failed"}`)
	s.wait("the unmapped client's opening", delivered(4))
	tickets = f.Tickets()
	if len(tickets) != 2 || tickets[1].CompanyID != 3 || tickets[1].QueueID != 29683 {
		t.Fatalf("the unmapped client's ticket %+v: want the default company 3 and queue 29683", tickets)
	}
	if n := f.ZoneLookups(); n != 1 {
		t.Errorf("%d zone lookups, want 1", n)
	}
}
