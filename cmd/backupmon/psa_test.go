package main

// Tickets in a PSA end to end (issue 23, decisions.md 7): the real binary,
// on the development clock, sends an alert's life to a local fake of the
// PSA's API (internal/psafake) through the durable outbox. Every name here
// starts with "ps" so that other test files of the package cannot collide
// with it.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"backupmon/internal/psafake"
	"backupmon/internal/testserver"
)

// psDashboard is the --public-url of these tests: the tickets' links.
const psDashboard = "https://backups.example.com"

// psFlags are the serve flags of these tests: the fakes are on loopback.
var psFlags = []string{"--dev-clock", "--allow-private-webhooks", "--public-url", psDashboard}

// psServer is a child server with a workspace, two clients and a report
// key.
type psServer struct {
	t          *testing.T
	c          *testserver.Child
	ws, key    string
	acme, beta string // client ids
}

func psStart(t *testing.T) *psServer {
	t.Helper()
	s := &psServer{t: t}
	s.c = testserver.StartChild(t, "psa server", t.TempDir(), psFlags...)
	s.c.SetClock(testserver.T0)
	s.ws = s.c.NewWorkspace(map[string]any{"name": "PSA MSP", "plan": "pro"})
	s.acme = s.c.NewClient(s.ws, "Acme")
	s.beta = s.c.NewClient(s.ws, "Beta")
	s.key, _ = s.c.NewKey(s.ws, "report", map[string]any{"name": "agent"})
	return s
}

func (s *psServer) path(p string) string { return "/workspaces/" + s.ws + p }

// job makes a daily job of client.
func (s *psServer) job(client, name string) string {
	s.t.Helper()
	var j struct{ ID string }
	s.c.AdminInto(201, "POST", s.path("/jobs"), map[string]any{
		"clientId": client, "name": name, "vendor": "veeam",
		"device":   map[string]any{"name": "fs01", "type": "server", "hostname": "fs01.acme.local"},
		"schedule": map[string]any{"intervalMinutes": 1440},
	}, &j)
	return j.ID
}

func (s *psServer) report(job, body string) string {
	s.t.Helper()
	s.c.Advance(time.Minute) // each report newer than the last
	return testserver.AlertID(s.c.MustReport(job, s.key, body))
}

// psDelivery is a delivery as GET .../deliveries lists it.
type psDelivery struct {
	Event, State string
	Attempts     int
	LastError    *string
}

// deliveries lists the outbox, newest first.
func (s *psServer) deliveries() (list []psDelivery) {
	s.c.AdminInto(200, "GET", s.path("/deliveries"), nil, &list)
	return list
}

// wait polls the outbox until done holds of it (newest first), for at
// most 15 s.
func (s *psServer) wait(what string, done func([]psDelivery) bool) []psDelivery {
	s.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	list := s.deliveries()
	for ; !done(list) && time.Now().Before(deadline); list = s.deliveries() {
		time.Sleep(20 * time.Millisecond)
	}
	if !done(list) {
		s.t.Fatalf("%s: not within 15 s; deliveries (newest first): %+v", what, list)
	}
	return list
}

// psOne returns the one element of list, failing unless there is exactly
// one.
func psOne[T any](t *testing.T, what string, list []T) T {
	t.Helper()
	if len(list) != 1 {
		t.Fatalf("%d %s, want exactly 1: %+v", len(list), what, list)
	}
	return list[0]
}

// channel creates a channel of type typ with settings and secrets and
// returns its id.
func (s *psServer) channel(typ string, settings, secrets map[string]string) string {
	s.t.Helper()
	var ch struct{ ID string }
	s.c.AdminInto(201, "POST", s.path("/channels"), map[string]any{"type": typ, "name": typ, "settings": settings, "secrets": secrets}, &ch)
	return ch.ID
}

// delivered reports whether there are n deliveries, all delivered.
func delivered(n int) func([]psDelivery) bool {
	return func(list []psDelivery) bool {
		if len(list) != n {
			return false
		}
		for _, d := range list {
			if d.State != "delivered" {
				return false
			}
		}
		return true
	}
}

// cwChannel creates a ConnectWise channel on fake f and returns its id.
func (s *psServer) cwChannel(f *psafake.ConnectWise, privateKey string) string {
	s.t.Helper()
	var ch struct {
		ID         string            `json:"id"`
		Settings   map[string]string `json:"settings"`
		SecretsSet []string          `json:"secretsSet"`
		Secret     string            `json:"secret"`
	}
	s.c.AdminInto(201, "POST", s.path("/channels"), map[string]any{
		"type": "connectwise", "name": "Service desk",
		"settings": map[string]string{
			"url": f.URL(), "company": f.Company, "publicKey": f.PublicKey, "clientId": f.ClientID,
			"defaultCompany": "Catchall", "board": "Service Desk", "closedStatus": "Closed (resolved)",
			"priority": "Priority 3 - Normal Response", "raisedPriority": "Priority 1 - Emergency Response",
		},
		"secrets": map[string]string{"privateKey": privateKey},
	}, &ch)
	if ch.Settings["publicKey"] != f.PublicKey || fmt.Sprint(ch.SecretsSet) != "[privateKey]" || ch.Secret != "" {
		s.t.Fatalf("channel record %+v: want its settings and the name of its secret, never the secret", ch)
	}
	return ch.ID
}

// TestPSAConnectWiseAlertLife: an alert's whole life (opened as a warning,
// raised to critical, acknowledged, snoozed, recovered) makes exactly one
// ticket in the mapped company, with a note for each step after the
// first, the raised priority and the closing status; an alert of an
// unmapped client lands on the default company, and the mapping list
// shows that client as unmapped.
func TestPSAConnectWiseAlertLife(t *testing.T) {
	f := psafake.NewConnectWise()
	t.Cleanup(f.Srv.Close)
	s := psStart(t)
	ch := s.cwChannel(f, f.PrivateKey)
	s.c.MustAdmin(200, "PUT", s.path("/channels/"+ch+"/clients/"+s.acme), map[string]any{"company": "AcmeCo"})

	var maps []struct {
		ClientName string  `json:"clientName"`
		Mapped     bool    `json:"mapped"`
		Company    *string `json:"company"`
	}
	s.c.AdminInto(200, "GET", s.path("/channels/"+ch+"/clients"), nil, &maps)
	if len(maps) != 2 || maps[0].ClientName != "Acme" || !maps[0].Mapped || *maps[0].Company != "AcmeCo" ||
		maps[1].ClientName != "Beta" || maps[1].Mapped || maps[1].Company != nil {
		t.Fatalf("mappings %+v: want Acme on AcmeCo and Beta unmapped", maps)
	}

	job := s.job(s.acme, "Nightly file server")
	alert := s.report(job, `{"status":"warn","size_bytes":1500000000,"duration_seconds":3723}`)
	s.wait("the opening", delivered(1))
	s.report(job, `{"status":"failed"}`)
	s.wait("the raise", delivered(2))
	s.c.MustAdmin(200, "POST", s.path("/alerts/"+alert+"/acknowledge"), map[string]any{})
	s.wait("the acknowledgement", delivered(3))
	s.c.MustAdmin(200, "POST", s.path("/alerts/"+alert+"/snooze"), map[string]any{"until": testserver.TS(testserver.T0.Add(3 * time.Hour))})
	s.wait("the snooze", delivered(4))
	s.report(job, `{"status":"ok"}`)
	s.wait("the recovery", delivered(5))

	tk := psOne(t, "tickets", f.Tickets())
	if tk.XRef != alert || tk.Company != "AcmeCo" || tk.Board != "Service Desk" {
		t.Errorf("ticket %+v: want externalXRef %s, company AcmeCo, board Service Desk", tk, alert)
	}
	if tk.Summary != "Backup warning on Acme / Nightly file server" {
		t.Errorf("summary %q", tk.Summary)
	}
	for _, want := range []string{"Client: Acme", "Job: Nightly file server", "Device: fs01 (fs01.acme.local)", "Last run: warning",
		"Size: 1.5 GB", "Duration: 1h 02m 03s", "Job in backupmon: " + psDashboard + "/jobs/" + job, "backupmon alert " + alert} {
		if !strings.Contains(tk.InitialDescription, want) {
			t.Errorf("description lacks %q:\n%s", want, tk.InitialDescription)
		}
	}
	if tk.Status != "Closed (resolved)" || tk.Priority != "Priority 1 - Emergency Response" {
		t.Errorf("ticket status %q, priority %q: want closed at the raised priority", tk.Status, tk.Priority)
	}
	var notes []string
	for _, n := range tk.Notes {
		notes = append(notes, strings.SplitN(n.Text, "\n", 2)[0])
	}
	want := []string{
		"Alert raised: Backup failed on Acme / Nightly file server (severity critical)",
		"Acknowledged by admin",
		"Snoozed by admin until " + testserver.T0.Add(3*time.Hour).Format("2006-01-02T15:04:05.000Z"),
		"Recovered: the job reported success and backupmon resolved the alert.",
	}
	if fmt.Sprint(notes) != fmt.Sprint(want) {
		t.Errorf("notes:\n%q\nwant\n%q", notes, want)
	}
	if len(tk.Notes) == 4 && !tk.Notes[3].Resolution {
		t.Errorf("the recovery note is not flagged as the resolution: %+v", tk.Notes[3])
	}

	// A client without a mapping: its ticket goes to the default company.
	other := s.report(s.job(s.beta, "Beta backup"), `{"status":"failed"}`)
	s.wait("the unmapped client's opening", delivered(6))
	tickets := f.Tickets()
	if len(tickets) != 2 || tickets[1].XRef != other || tickets[1].Company != "Catchall" {
		t.Fatalf("the unmapped client's ticket: %+v, want company Catchall", tickets)
	}
}

// TestPSACrashAfterTicketMade: the server is killed (SIGKILL) after the
// PSA made the ticket and before its answer came back, so nothing of it
// is recorded; after the restart the attempt is made again, finds the
// ticket by the alert's id instead of making a second one, and keeps its
// id with the alert: the next events note that ticket without searching.
func TestPSACrashAfterTicketMade(t *testing.T) {
	f := psafake.NewConnectWise()
	t.Cleanup(f.Srv.Close)
	s := psStart(t)
	s.cwChannel(f, f.PrivateKey)
	// The kill waits for the report's answer: the ticket is made after
	// the report is durable, but can be made before its answer is written
	// (a fresh clone's make test once saw the report's connection close).
	reported := make(chan struct{})
	f.SetBeforeAnswer(func(psafake.CWTicket) {
		select {
		case <-reported:
		case <-time.After(10 * time.Second):
		}
		s.c.Kill()
	})
	alert := s.report(s.job(s.acme, "Nightly"), `{"status":"failed"}`)
	close(reported)
	select {
	case <-s.c.Exited():
	case <-time.After(15 * time.Second):
		t.Fatal("the server was not killed by the ticket's creation")
	}
	f.SetBeforeAnswer(nil)
	s.c = s.c.Restart("psa server after SIGKILL", psFlags...)
	s.wait("the opening after the restart", delivered(1))
	searches := f.Searches()
	if searches != 2 {
		t.Errorf("%d searches, want 2 (one per attempt of the opening)", searches)
	}
	s.c.MustAdmin(200, "POST", s.path("/alerts/"+alert+"/acknowledge"), map[string]any{})
	s.wait("the acknowledgement", delivered(2))
	tickets := f.Tickets()
	if len(tickets) != 1 || tickets[0].XRef != alert || len(tickets[0].Notes) != 1 || tickets[0].Notes[0].Text != "Acknowledged by admin" {
		t.Fatalf("tickets %+v: want one, for alert %s, with the acknowledgement's note", tickets, alert)
	}
	if f.Searches() != searches {
		t.Errorf("the acknowledgement searched for the ticket: its id was not kept with the alert")
	}
}

// TestPSACredentialErrorStops: a private key the PSA refuses (401) fails
// the delivery at once, without retries, with the PSA's own message.
func TestPSACredentialErrorStops(t *testing.T) {
	f := psafake.NewConnectWise()
	t.Cleanup(f.Srv.Close)
	s := psStart(t)
	s.cwChannel(f, "not-the-key")
	s.report(s.job(s.acme, "Nightly"), `{"status":"failed"}`)
	list := s.wait("the refusal", func(list []psDelivery) bool { return len(list) == 1 && list[0].State != "pending" })
	d := list[0]
	want := "finding the alert's ticket: HTTP 401: Unauthorized: Incorrect public/private key"
	if d.State != "failed" || d.Attempts != 1 || d.LastError == nil || *d.LastError != want {
		t.Fatalf("delivery %+v (error %v): want failed after 1 attempt with %q", d, d.LastError, want)
	}
	if n := len(f.Tickets()); n != 0 {
		t.Fatalf("%d tickets made with a refused key", n)
	}
}

// TestPSAInternalAddress: without --allow-private-webhooks a PSA's API
// address that points at an internal address is refused at creation,
// naming the setting, and nothing is made.
func TestPSAInternalAddress(t *testing.T) {
	c := testserver.StartChild(t, "psa server without private addresses", t.TempDir(), "--dev-clock")
	ws := c.NewWorkspace(map[string]any{"name": "PSA MSP", "plan": "pro"})
	r := c.Admin("POST", "/workspaces/"+ws+"/channels", map[string]any{"type": "teams", "name": "T", "secrets": map[string]string{"url": "http://10.0.0.5/hook"}})
	want := `{"error":{"code":"INVALID_REQUEST","message":"secrets.url must not point at an internal address: 10.0.0.5 is a private address (see --allow-private-webhooks)"}}`
	if r.Status != 400 || strings.TrimSpace(string(r.Body)) != want {
		t.Fatalf("an internal Teams URL: %d %s\nwant 400 %s", r.Status, r.Body, want)
	}
	if n := len(c.MustAdmin(200, "GET", "/workspaces/"+ws+"/channels", nil).List()); n != 0 {
		t.Fatalf("%d channels made", n)
	}
}
