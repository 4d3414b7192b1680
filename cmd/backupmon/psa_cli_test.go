package main

import (
	"net/url"
	"strings"
	"testing"

	"backupmon/internal/psafake"
	"backupmon/internal/testserver"
)

// psaCLI runs the admin CLI's subcommands of the PSA channels against the
// in-process server of TestCLISubcommands (workspace wid, client cid):
// channel create with repeated --setting and --secret, channel map,
// clients and unmap, and channel test (409 there: an in-process server
// has no notifier; TestPSACLIChannelTest runs it on the binary).
func psaCLI(t *testing.T, s *cliServer, wid, cid string) {
	t.Helper()
	ch := s.must(t, "channel", "create", "--workspace", wid, "--type", "connectwise", "--name", "CW",
		"--setting", "url=https://api-na.myconnectwise.net/v4_6_release/apis/3.0", "--setting", "company=mymsp",
		"--setting", "publicKey=pub", "--setting", "clientId=cid", "--setting", "defaultCompany=Catchall",
		"--setting", "board=Service Desk", "--setting", "closedStatus=Closed", "--secret", "privateKey=priv=with=equals").data()
	settings, _ := ch["settings"].(map[string]any)
	if ch["type"] != "connectwise" || settings["board"] != "Service Desk" || settings["company"] != "mymsp" || cliStrings(ch["secretsSet"])[0] != "privateKey" || ch["privateKey"] != nil {
		t.Errorf("channel create connectwise: %v", ch)
	}
	chid := ch["id"].(string)
	cliWantError(t, "channel create, unknown setting", s.cli(t, "channel", "create", "--workspace", wid, "--type", "pagerduty", "--name", "PD",
		"--setting", "colour=red", "--secret", "routingKey=R0UT1NGKEYR0UT1NGKEYR0UT1NGKEY32"), 400, "INVALID_REQUEST")
	if m := s.must(t, "channel", "map", "--workspace", wid, "--channel", chid, "--client", cid, "--company", "AcmeCo", "--board", "Projects").data(); m["company"] != "AcmeCo" || m["board"] != "Projects" || m["mapped"] != true {
		t.Errorf("channel map: %v", m)
	}
	if l := s.must(t, "channel", "clients", "--workspace", wid, "--channel", chid).list(); len(l) == 0 || l[0]["mapped"] != true {
		t.Errorf("channel clients: %v", l)
	}
	s.must(t, "channel", "unmap", "--workspace", wid, "--channel", chid, "--client", cid)
	if l := s.must(t, "channel", "clients", "--workspace", wid, "--channel", chid).list(); len(l) == 0 || l[0]["mapped"] != false || l[0]["company"] != nil {
		t.Errorf("channel clients after unmap: %v", l)
	}
	cliWantError(t, "channel test in process", s.cli(t, "channel", "test", "--workspace", wid, "--channel", chid), 409, "CONFLICT")
	s.must(t, "channel", "delete", "--workspace", wid, "--channel", chid)
}

// TestPSACLIChannelTest: backupmon admin channel test prints what the
// channel's remote answered.
func TestPSACLIChannelTest(t *testing.T) {
	f := psafake.NewConnectWise()
	t.Cleanup(f.Srv.Close)
	s := psStart(t)
	ch := s.cwChannel(f, f.PrivateKey)
	r := cliRunRaw(t, "channel", "test", "--admin-url", s.c.AdminURL, "--admin-token", testserver.AdminToken, "--workspace", s.ws, "--channel", ch)
	if r.code != 0 || r.data()["ok"] != true || r.data()["answer"] != "ConnectWise v2024.1.99999, default company Unassigned clients" {
		t.Fatalf("channel test: exit %d, %s %s", r.code, r.stdout, r.stderr)
	}
}

// TestPSADashboard: in the dashboard's settings an owner adds a
// ConnectWise channel (its private key never shown again), maps a client
// to a company, sees the other client marked unmapped with the default
// company, and sends the channel a test whose answer the page shows; an
// admin may test but not add such a channel, and the admin API's
// channel record shows the settings without the secret.
func TestPSADashboard(t *testing.T) {
	f := psafake.NewConnectWise()
	t.Cleanup(f.Srv.Close)
	s := dashStartChild(t, "psa dashboard server", "--allow-private-webhooks")
	w := s.workspace(t, "psa", nil)
	owner := s.login(t, w.users["owner"])
	admin := s.login(t, w.users["admin"])

	form := url.Values{"type": {"connectwise"}, "name": {"Service desk"},
		"settings.url": {f.URL()}, "settings.company": {f.Company}, "settings.publicKey": {f.PublicKey},
		"secrets.privateKey": {f.PrivateKey}, "settings.clientId": {f.ClientID}, "settings.defaultCompany": {"Catchall"},
		"settings.board": {"Service Desk"}, "settings.closedStatus": {"Closed (resolved)"}}
	if r := s.post(t, "/settings/channels", admin, form); r.status != 303 || !strings.Contains(r.flash(), "only owners") {
		t.Fatalf("an admin adding a ConnectWise channel: %s, flash %q", r, r.flash())
	}
	if r := s.post(t, "/settings/channels", owner, form); r.status != 303 || r.flash() != "Channel added." {
		t.Fatalf("the owner adding a ConnectWise channel: %s, flash %q", r, r.flash())
	}
	var chs []struct {
		ID, Type   string
		Settings   map[string]string
		SecretsSet []string
	}
	s.admin(t, "GET", w.path("/channels"), nil, 200, &chs)
	if len(chs) != 1 || chs[0].Type != "connectwise" || chs[0].Settings["board"] != "Service Desk" || len(chs[0].SecretsSet) != 1 {
		t.Fatalf("channels %+v", chs)
	}
	ch := chs[0].ID
	page := s.page(t, "GET", "/settings/channels", owner, nil)
	if strings.Contains(page.body, f.PrivateKey) || !strings.Contains(page.body, "/settings/companies?channel="+ch) || !strings.Contains(page.body, "Send a test") {
		t.Fatalf("channels page: the private key shown, or no Companies link or test button: %s", page)
	}

	if r := s.post(t, "/settings/channels/"+ch+"/clients/"+w.clients[0], admin, url.Values{"company": {"AcmeCo"}}); r.status != 403 || !strings.Contains(r.body, dashNoRole) {
		t.Fatalf("an admin mapping a client: %s", r)
	}
	if r := s.post(t, "/settings/channels/"+ch+"/clients/"+w.clients[0], owner, url.Values{"company": {"AcmeCo"}}); r.status != 303 || r.flash() != "Company saved." {
		t.Fatalf("mapping a client: %s, flash %q", r, r.flash())
	}
	text := dashVisible(s.page(t, "GET", "/settings/companies?channel="+ch, owner, nil).body)
	for _, want := range []string{"Harbour Dental AcmeCo", "Kestrel Law unmapped default: Catchall"} {
		if !strings.Contains(text, want) {
			t.Errorf("the companies page lacks %q: %s", want, text)
		}
	}

	if r := s.post(t, "/settings/channels/"+ch+"/test", admin, url.Values{}); r.status != 303 || r.flash() != "Test of Service desk sent: ConnectWise v2024.1.99999, default company Unassigned clients" {
		t.Fatalf("the test: %s, flash %q", r, r.flash())
	}
	if len(f.Tickets()) != 0 {
		t.Error("the test made a ticket")
	}
}
