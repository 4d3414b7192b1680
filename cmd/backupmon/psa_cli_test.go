package main

import (
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
