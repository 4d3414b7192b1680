package main

// Webhook and Slack channels that point at internal addresses (issue 18,
// SSRF), through the real binary: the channel's creation refuses a URL
// whose host is an internal IP address or a localhost name, on the admin
// API and in the dashboard's form; a delivery whose host name resolves to
// an internal address is refused when the connection would be made, with
// the reason in the outbox; --allow-private-webhooks lets it through, but
// never to the server's own admin listener or a cloud metadata address.
// Every address a test here could make the server connect to is on
// loopback. Names here start with "ss".

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"
)

const ssHint = " (see --allow-private-webhooks)"

// TestInternalURLCreate: the create answers for literal internal URLs,
// exact status and body, on the admin API and in the dashboard's channel
// form, and that nothing was made; a host name is taken. With
// --allow-private-webhooks a private address is taken, the metadata
// address and the admin listener still are not.
func TestInternalURLCreate(t *testing.T) {
	const pre = "url must not point at an internal address: "
	refused := []struct{ url, msg string }{
		{"http://10.0.0.5/hook", pre + "10.0.0.5 is a private address" + ssHint},
		{"http://169.254.169.254/latest/meta-data/", pre + "169.254.169.254 is a cloud metadata address"},
		{"http://127.0.0.1:9/hook", pre + "127.0.0.1 is a loopback address" + ssHint},
		{"http://[::1]:9/hook", pre + "::1 is a loopback address" + ssHint},
		{"http://[::ffff:192.168.1.1]/hook", pre + "::ffff:192.168.1.1 (192.168.1.1) is a private address" + ssHint},
		{"http://0x7f000001/hook", pre + "127.0.0.1 is a loopback address" + ssHint},
		{"http://100.64.0.1/hook", pre + "100.64.0.1 is a shared (carrier-grade NAT) address" + ssHint},
		{"https://[fd12::1]/services/T0/B0/x", pre + "fd12::1 is a private address" + ssHint},
		{"http://localhost:9/hook", pre + "localhost is a loopback name" + ssHint},
	}
	s := ssStart(t)
	w := s.workspace(t, "ssrf", nil)
	owner := s.login(t, w.users["owner"])
	for i, c := range refused {
		typ := []string{"webhook", "slack"}[i%2]
		t.Run("admin/"+c.url, func(t *testing.T) {
			code, body := s.adminRaw(t, "POST", w.path("/channels"), map[string]any{"type": typ, "name": "internal", "url": c.url})
			want := fmt.Sprintf(`{"error":{"code":"INVALID_REQUEST","message":%q}}`, c.msg)
			if code != 400 || body != want {
				t.Errorf("POST channels %s: %d %s\nwant 400 %s", c.url, code, body, want)
			}
		})
		t.Run("dashboard/"+c.url, func(t *testing.T) {
			r := s.post(t, "/settings/channels", owner, url.Values{"type": {typ}, "name": {"internal"}, "url": {c.url}})
			if want := "!Not added: " + c.msg + "."; r.status != 303 || r.flash() != want {
				t.Errorf("POST /settings/channels %s: %s, flash %q\nwant 303, flash %q", c.url, r, r.flash(), want)
			}
		})
	}
	if code, body := s.adminRaw(t, "GET", w.path("/channels"), nil); code != 200 || body != `{"data":[]}` {
		t.Errorf("channels after the refusals: %d %s, want none", code, body)
	}
	// A host name passes: it is checked at each connection.
	s.admin(t, "POST", w.path("/channels"), map[string]any{"type": "webhook", "name": "named", "url": "https://hooks.example.com/x"}, 201, nil)

	// With the flag: a private address is taken; the metadata address and
	// the admin listener are not.
	p := ssStart(t, "--allow-private-webhooks")
	pw := p.workspace(t, "ssrf-allowed", nil)
	p.admin(t, "POST", pw.path("/channels"), map[string]any{"type": "webhook", "name": "lan", "url": "http://10.0.0.5/hook"}, 201, nil)
	adminHost := strings.TrimPrefix(p.c.AdminURL, "http://")
	for _, c := range []struct{ url, msg string }{
		{"http://169.254.169.254/latest/meta-data/", pre + "169.254.169.254 is a cloud metadata address"},
		{p.c.AdminURL + "/admin/v1/workspaces", pre + adminHost + " is this server's admin listener"},
	} {
		code, body := p.adminRaw(t, "POST", pw.path("/channels"), map[string]any{"type": "webhook", "name": "internal", "url": c.url})
		want := fmt.Sprintf(`{"error":{"code":"INVALID_REQUEST","message":%q}}`, c.msg)
		if code != 400 || body != want {
			t.Errorf("with the flag, POST channels %s: %d %s\nwant 400 %s", c.url, code, body, want)
		}
	}
}

// ssStart starts a dashboard fixture server with the development clock
// and extra flags.
func ssStart(t *testing.T, extra ...string) *dashServer {
	t.Helper()
	return dashStartChild(t, "ssrf server", extra...)
}

// TestInternalURLDelivery: a webhook channel whose host name, localhost,
// resolves to 127.0.0.1 (made while the server allowed it, as an install
// that turned --allow-private-webhooks off has) is refused when the
// delivery connects: the outbox shows the exact reason, the receiver gets
// nothing, and the delivery stays pending with its retries. Restarted with
// the flag, the same delivery succeeds at its next attempt; a channel
// pointing at the admin listener stays refused.
func TestInternalURLDelivery(t *testing.T) {
	rcv := dlStartReceiver(t)
	port := rcv.srv.Listener.Addr().(*net.TCPAddr).Port
	s := dlStart(t) // with --allow-private-webhooks
	ch := s.channel(map[string]any{"type": "webhook", "name": "lan hook", "url": fmt.Sprintf("http://localhost:%d/hook", port)})
	job := s.job("nightly")

	ssRestart(s, "without the flag", "--dev-clock")
	alert := s.report(job, "failed")
	list := s.waitDeliveries("the refused attempt", func(ds []dlDelivery) bool {
		return len(ds) == 1 && ds[0].Attempts == 1
	})
	d := list[0]
	loopback := []string{"refused: 127.0.0.1 is a loopback address" + ssHint, "refused: ::1 is a loopback address" + ssHint}
	if d.ChannelID != ch.ID || d.AlertID != alert || d.State != "pending" || d.LastError == nil ||
		(*d.LastError != loopback[0] && *d.LastError != loopback[1]) || d.NextAttemptAt == nil || d.DeliveredAt != nil {
		t.Fatalf("delivery %v\nwant pending, 1 attempt, error %q, a next attempt", d, loopback[0])
	}
	if n := len(rcv.all()); n != 0 {
		t.Fatalf("the receiver got %d requests from a refused delivery", n)
	}

	ssRestart(s, "with the flag", "--dev-clock", "--allow-private-webhooks")
	s.c.Advance(31 * time.Second) // the first retry comes 30 seconds after the first attempt
	list = s.waitDeliveries("the retry", func(ds []dlDelivery) bool {
		return len(ds) == 1 && ds[0].State == "delivered"
	})
	if d := list[0]; d.Attempts != 2 || d.LastError != nil || d.DeliveredAt == nil {
		t.Errorf("delivery after the restart with the flag %v, want delivered at its second attempt", d)
	}
	hooks := rcv.all()
	if len(hooks) != 1 || hooks[0].path != "/hook" || hooks[0].delivery != d.ID {
		t.Fatalf("the receiver got %d requests, want the delivery %s once", len(hooks), d.ID)
	}
	if b := hooks[0].decode(t, ch.Secret); b.Event != "alert.opened" {
		t.Errorf("event %q", b.Event)
	}

	// The admin listener, by a name the creation does not see through,
	// stays refused with the flag.
	adminPort := s.c.AdminURL[strings.LastIndex(s.c.AdminURL, ":")+1:]
	adm := s.channel(map[string]any{"type": "webhook", "name": "own admin", "url": "http://localhost:" + adminPort + "/admin/v1/workspaces"})
	s.report(s.job("weekly"), "failed")
	list = s.waitDeliveries("the admin listener's attempt", func(ds []dlDelivery) bool {
		for _, d := range ds {
			if d.ChannelID == adm.ID && d.Attempts == 1 {
				return true
			}
		}
		return false
	})
	want := []string{"refused: 127.0.0.1:" + adminPort + " is this server's admin listener", "refused: [::1]:" + adminPort + " is this server's admin listener"}
	for _, d := range list {
		if d.ChannelID == adm.ID && (d.State != "pending" || d.LastError == nil || *d.LastError != want[0] && *d.LastError != want[1]) {
			t.Errorf("delivery to the admin listener %v, want pending with error %q", d, want[0])
		}
	}
}

// ssRestart stops the server (SIGTERM) and starts it again on the same
// data with flags.
func ssRestart(s *dlServer, what string, flags ...string) {
	s.t.Helper()
	if code, err := s.c.Term(); err != nil || code != 0 {
		s.t.Fatalf("stop the server: exit %d, %v", code, err)
	}
	s.c = s.c.Restart("delivery server "+what, flags...)
}

// TestAllowPrivateWebhooksFlag: off by default, on with the flag or with
// BACKUPMON_ALLOW_PRIVATE_WEBHOOKS, and the flag wins over the variable.
func TestAllowPrivateWebhooksFlag(t *testing.T) {
	tests := []struct {
		env  string
		args []string
		want bool
	}{
		{"", nil, false},
		{"", []string{"--allow-private-webhooks"}, true},
		{"true", nil, true},
		{"1", nil, true},
		{"false", nil, false},
		{"true", []string{"--allow-private-webhooks=false"}, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("env %q, args %q", tt.env, tt.args), func(t *testing.T) {
			t.Setenv("BACKUPMON_ALLOW_PRIVATE_WEBHOOKS", tt.env)
			c, err := parseServeFlags(tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if c.allowPrivateWebhooks != tt.want {
				t.Errorf("allowPrivateWebhooks %v, want %v", c.allowPrivateWebhooks, tt.want)
			}
		})
	}
}
