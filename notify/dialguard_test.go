package notify

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"

	"backupmon/engine"
)

const hint = " (see --allow-private-webhooks)"

// TestAddressRule: every class of address the rule refuses, at both ends
// of each range and just outside them, in IPv4, IPv6 and the IPv6 forms
// that embed an IPv4 address. want is the refusal without AllowPrivate
// ("" allowed); with it, only the refusals that do not name the flag stay.
func TestAddressRule(t *testing.T) {
	tests := []struct{ addr, want string }{
		// IPv4, range by range.
		{"0.0.0.0", "refused: 0.0.0.0 is an unspecified address" + hint},
		{"0.0.0.1", "refused: 0.0.0.1 is a this-network address" + hint},
		{"0.255.255.255", "refused: 0.255.255.255 is a this-network address" + hint},
		{"1.0.0.0", ""},
		{"8.8.8.8", ""},
		{"9.255.255.255", ""},
		{"10.0.0.0", "refused: 10.0.0.0 is a private address" + hint},
		{"10.0.0.5", "refused: 10.0.0.5 is a private address" + hint},
		{"10.255.255.255", "refused: 10.255.255.255 is a private address" + hint},
		{"11.0.0.0", ""},
		{"100.63.255.255", ""},
		{"100.64.0.0", "refused: 100.64.0.0 is a shared (carrier-grade NAT) address" + hint},
		{"100.127.255.255", "refused: 100.127.255.255 is a shared (carrier-grade NAT) address" + hint},
		{"100.128.0.0", ""},
		{"100.100.100.200", "refused: 100.100.100.200 is a cloud metadata address"},
		{"126.255.255.255", ""},
		{"127.0.0.0", "refused: 127.0.0.0 is a loopback address" + hint},
		{"127.0.0.1", "refused: 127.0.0.1 is a loopback address" + hint},
		{"127.255.255.255", "refused: 127.255.255.255 is a loopback address" + hint},
		{"128.0.0.0", ""},
		{"169.253.255.255", ""},
		{"169.254.0.0", "refused: 169.254.0.0 is a link-local address" + hint},
		{"169.254.169.253", "refused: 169.254.169.253 is a link-local address" + hint},
		{"169.254.169.254", "refused: 169.254.169.254 is a cloud metadata address"},
		{"169.254.170.2", "refused: 169.254.170.2 is a cloud metadata address"},
		{"169.254.255.255", "refused: 169.254.255.255 is a link-local address" + hint},
		{"169.255.0.0", ""},
		{"172.15.255.255", ""},
		{"172.16.0.0", "refused: 172.16.0.0 is a private address" + hint},
		{"172.31.255.255", "refused: 172.31.255.255 is a private address" + hint},
		{"172.32.0.0", ""},
		{"191.255.255.255", ""},
		{"192.0.0.0", "refused: 192.0.0.0 is a reserved address" + hint},
		{"192.0.0.255", "refused: 192.0.0.255 is a reserved address" + hint},
		{"192.0.1.0", ""},
		{"192.0.2.0", "refused: 192.0.2.0 is a reserved address" + hint},
		{"192.0.2.255", "refused: 192.0.2.255 is a reserved address" + hint},
		{"192.0.3.0", ""},
		{"192.88.99.1", "refused: 192.88.99.1 is a reserved address" + hint},
		{"192.167.255.255", ""},
		{"192.168.0.0", "refused: 192.168.0.0 is a private address" + hint},
		{"192.168.255.255", "refused: 192.168.255.255 is a private address" + hint},
		{"192.169.0.0", ""},
		{"198.17.255.255", ""},
		{"198.18.0.0", "refused: 198.18.0.0 is a reserved address" + hint},
		{"198.19.255.255", "refused: 198.19.255.255 is a reserved address" + hint},
		{"198.20.0.0", ""},
		{"198.51.100.7", "refused: 198.51.100.7 is a reserved address" + hint},
		{"203.0.113.9", "refused: 203.0.113.9 is a reserved address" + hint},
		{"223.255.255.255", ""},
		{"224.0.0.0", "refused: 224.0.0.0 is a multicast address" + hint},
		{"239.255.255.255", "refused: 239.255.255.255 is a multicast address" + hint},
		{"240.0.0.0", "refused: 240.0.0.0 is a reserved address" + hint},
		{"255.255.255.254", "refused: 255.255.255.254 is a reserved address" + hint},
		{"255.255.255.255", "refused: 255.255.255.255 is a broadcast address" + hint},

		// IPv6.
		{"::", "refused: :: is an unspecified address" + hint},
		{"::1", "refused: ::1 is a loopback address" + hint},
		{"::2", "refused: ::2 is a reserved address" + hint},
		{"::a00:5", "refused: ::a00:5 is a reserved address" + hint},               // IPv4-compatible, deprecated
		{"::ffff:0:a00:5", "refused: ::ffff:0:a00:5 is a reserved address" + hint}, // IPv4-translated
		{"100::1", "refused: 100::1 is a reserved address" + hint},                 // discard-only
		{"1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "refused: 1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff is a reserved address" + hint},
		{"2000::", ""},
		{"2001::1", "refused: 2001::1 is a reserved address" + hint}, // Teredo
		{"2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", "refused: 2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff is a reserved address" + hint},
		{"2001:200::", ""},
		{"2001:4860:4860::8888", ""},
		{"2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", ""},
		{"2001:db8::", "refused: 2001:db8:: is a reserved address" + hint},
		{"2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", "refused: 2001:db8:ffff:ffff:ffff:ffff:ffff:ffff is a reserved address" + hint},
		{"2001:db9::", ""},
		{"2606:4700::1111", ""},
		{"3ffe::1", ""},
		{"3fff::", "refused: 3fff:: is a reserved address" + hint},
		{"3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", "refused: 3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff is a reserved address" + hint},
		{"3fff:1000::", ""},
		{"4000::", "refused: 4000:: is a reserved address" + hint},
		{"fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "refused: fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff is a reserved address" + hint},
		{"fc00::", "refused: fc00:: is a private address" + hint},
		{"fd12:3456::1", "refused: fd12:3456::1 is a private address" + hint},
		{"fd00:ec2::254", "refused: fd00:ec2::254 is a cloud metadata address"},
		{"fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "refused: fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff is a private address" + hint},
		{"fe00::", "refused: fe00:: is a reserved address" + hint},
		{"fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "refused: fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff is a reserved address" + hint},
		{"fe80::", "refused: fe80:: is a link-local address" + hint},
		{"fe80::1%eth0", "refused: fe80::1 is a link-local address" + hint},
		{"febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "refused: febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff is a link-local address" + hint},
		{"fec0::", "refused: fec0:: is a private address" + hint},
		{"feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "refused: feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff is a private address" + hint},
		{"ff00::", "refused: ff00:: is a multicast address" + hint},
		{"ff02::1", "refused: ff02::1 is a multicast address" + hint},

		// IPv4-mapped: judged as the IPv4 address.
		{"::ffff:127.0.0.1", "refused: ::ffff:127.0.0.1 (127.0.0.1) is a loopback address" + hint},
		{"::ffff:10.0.0.5", "refused: ::ffff:10.0.0.5 (10.0.0.5) is a private address" + hint},
		{"::ffff:169.254.169.254", "refused: ::ffff:169.254.169.254 (169.254.169.254) is a cloud metadata address"},
		{"::ffff:8.8.8.8", ""},
		// NAT64 (64:ff9b::/96): judged as the IPv4 address in its last 32 bits.
		{"64:ff9b::7f00:1", "refused: 64:ff9b::7f00:1 (127.0.0.1) is a loopback address" + hint},
		{"64:ff9b::a00:5", "refused: 64:ff9b::a00:5 (10.0.0.5) is a private address" + hint},
		{"64:ff9b::a9fe:a9fe", "refused: 64:ff9b::a9fe:a9fe (169.254.169.254) is a cloud metadata address"},
		{"64:ff9b::808:808", ""},
		{"64:ff9b:1::808:808", "refused: 64:ff9b:1::808:808 is a private address" + hint}, // local-use NAT64
		// 6to4 (2002::/16): judged as the IPv4 address in bits 16 to 47.
		{"2002:a00:5::1", "refused: 2002:a00:5::1 (10.0.0.5) is a private address" + hint},
		{"2002:7f00:1::", "refused: 2002:7f00:1:: (127.0.0.1) is a loopback address" + hint},
		{"2002:808:808::1", ""},
	}
	for _, tt := range tests {
		ip := netip.MustParseAddr(tt.addr)
		for _, allow := range []bool{false, true} {
			want := tt.want
			if allow && strings.HasSuffix(want, hint) {
				want = ""
			}
			t.Run(fmt.Sprintf("%s/allowPrivate=%v", tt.addr, allow), func(t *testing.T) {
				got := ""
				if r := newGuard(allow, netip.AddrPort{}).check(ip, 443); r != nil {
					got = r.Error()
				}
				if got != want {
					t.Errorf("got %q, want %q", got, want)
				}
			})
		}
	}
}

// TestAdminListenerRule: the admin listener is refused whatever
// AllowPrivate says; bound to all addresses, its port is refused on
// loopback and on this machine's addresses, and nowhere else.
func TestAdminListenerRule(t *testing.T) {
	local := func() []netip.Addr { return []netip.Addr{netip.MustParseAddr("8.8.4.4")} }
	tests := []struct {
		admin, dial string
		want        string // with AllowPrivate; "" allowed
	}{
		{"127.0.0.1:8081", "127.0.0.1:8081", "refused: 127.0.0.1:8081 is this server's admin listener"},
		{"127.0.0.1:8081", "[::ffff:127.0.0.1]:8081", "refused: [::ffff:127.0.0.1]:8081 is this server's admin listener"},
		{"127.0.0.1:8081", "127.0.0.1:8082", ""},
		{"127.0.0.1:8081", "127.0.0.2:8081", ""},
		{"[::1]:8081", "[::1]:8081", "refused: [::1]:8081 is this server's admin listener"},
		{"[::1]:8081", "127.0.0.1:8081", ""},
		{"10.1.2.3:9000", "10.1.2.3:9000", "refused: 10.1.2.3:9000 is this server's admin listener"},
		{"0.0.0.0:8081", "127.0.0.5:8081", "refused: 127.0.0.5:8081 is this server's admin listener"},
		{"0.0.0.0:8081", "[::1]:8081", "refused: [::1]:8081 is this server's admin listener"},
		{"0.0.0.0:8081", "0.0.0.0:8081", "refused: 0.0.0.0:8081 is this server's admin listener"},
		{"0.0.0.0:8081", "8.8.4.4:8081", "refused: 8.8.4.4:8081 is this server's admin listener"},
		{"[::]:8081", "8.8.4.4:8081", "refused: 8.8.4.4:8081 is this server's admin listener"},
		{"0.0.0.0:8081", "8.8.8.8:8081", ""},
		{"0.0.0.0:8081", "8.8.4.4:8080", ""},
	}
	for _, tt := range tests {
		t.Run(tt.admin+"/"+tt.dial, func(t *testing.T) {
			g := newGuard(true, netip.MustParseAddrPort(tt.admin))
			g.localAddrs = local
			got := ""
			if err := g.control("tcp", tt.dial); err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestCheckChannelURL: the check at a channel's creation refuses a URL
// whose host is an internal IP address, in any form a resolver reads as
// one, or a localhost name; a host name passes (it is checked at each
// connection).
func TestCheckChannelURL(t *testing.T) {
	const pre = "url must not point at an internal address: "
	admin := netip.MustParseAddrPort("127.0.0.1:8081")
	tests := []struct {
		url       string
		want      string // without AllowPrivate; "" taken
		wantAllow string // with it
	}{
		{"https://hooks.example.com/x", "", ""},
		{"http://8.8.8.8/hook", "", ""},
		{"https://[2606:4700::1111]/hook", "", ""},
		{"http://1.2.3/hook", "", ""}, // 1.2.0.3
		{"http://256.1.1.1/hook", "", ""},
		{"http://10.internal.example/hook", "", ""},
		{"http://10.0.0.5/hook", pre + "10.0.0.5 is a private address" + hint, ""},
		{"http://10.0.0.5./hook", pre + "10.0.0.5 is a private address" + hint, ""},
		{"http://127.0.0.1:9000/hook", pre + "127.0.0.1 is a loopback address" + hint, ""},
		{"http://127.1/hook", pre + "127.0.0.1 is a loopback address" + hint, ""},
		{"http://0x7f000001/hook", pre + "127.0.0.1 is a loopback address" + hint, ""},
		{"http://0X7F.1/hook", pre + "127.0.0.1 is a loopback address" + hint, ""},
		{"http://2130706433/hook", pre + "127.0.0.1 is a loopback address" + hint, ""},
		{"http://017700000001/hook", pre + "127.0.0.1 is a loopback address" + hint, ""},
		{"http://0177.0.0.01/hook", pre + "127.0.0.1 is a loopback address" + hint, ""},
		{"http://0/hook", pre + "0.0.0.0 is an unspecified address" + hint, ""},
		{"http://%31%30.0.0.5/hook", "", ""}, // does not parse: the form check's business
		{"http://[::1]:9000/hook", pre + "::1 is a loopback address" + hint, ""},
		{"http://[::ffff:10.0.0.5]/hook", pre + "::ffff:10.0.0.5 (10.0.0.5) is a private address" + hint, ""},
		{"http://[64:ff9b::a00:5]/hook", pre + "64:ff9b::a00:5 (10.0.0.5) is a private address" + hint, ""},
		{"http://[fe80::1%25eth0]/hook", pre + "fe80::1 is a link-local address" + hint, ""},
		{"http://[fd00::1]/hook", pre + "fd00::1 is a private address" + hint, ""},
		{"http://100.64.0.1/hook", pre + "100.64.0.1 is a shared (carrier-grade NAT) address" + hint, ""},
		{"http://localhost:9000/hook", pre + "localhost is a loopback name" + hint, ""},
		{"http://LocalHost./hook", pre + "LocalHost. is a loopback name" + hint, ""},
		{"http://api.localhost/hook", pre + "api.localhost is a loopback name" + hint, ""},
		{"http://localhost.localdomain/hook", pre + "localhost.localdomain is a loopback name" + hint, ""},
		{"http://169.254.169.254/latest/meta-data/", pre + "169.254.169.254 is a cloud metadata address", pre + "169.254.169.254 is a cloud metadata address"},
		{"http://[fd00:ec2::254]/", pre + "fd00:ec2::254 is a cloud metadata address", pre + "fd00:ec2::254 is a cloud metadata address"},
		{"http://127.0.0.1:8081/admin/v1/workspaces", pre + "127.0.0.1:8081 is this server's admin listener", pre + "127.0.0.1:8081 is this server's admin listener"},
		{"http://127.0.0.1:8082/hook", pre + "127.0.0.1 is a loopback address" + hint, ""},
		{"http://:80/x", "", ""}, // no host: the form check's business
	}
	for _, tt := range tests {
		for _, allow := range []bool{false, true} {
			want := tt.want
			if allow {
				want = tt.wantAllow
			}
			t.Run(fmt.Sprintf("%s/allowPrivate=%v", tt.url, allow), func(t *testing.T) {
				got := ""
				if err := CheckChannelURL(tt.url, allow, admin); err != nil {
					got = err.Error()
				}
				if got != want {
					t.Errorf("got %q, want %q", got, want)
				}
			})
		}
	}
}

func TestParseLegacyIPv4(t *testing.T) {
	tests := []struct{ in, want string }{
		{"1", "0.0.0.1"},
		{"1.2", "1.0.0.2"},
		{"1.2.3", "1.2.0.3"},
		{"1.2.3.4", "1.2.3.4"},
		{"1.16777215", "1.255.255.255"},
		{"1.16777216", ""},
		{"1.2.65535", "1.2.255.255"},
		{"1.2.65536", ""},
		{"4294967295", "255.255.255.255"},
		{"4294967296", ""},
		{"0xffffffff", "255.255.255.255"},
		{"037777777777", "255.255.255.255"},
		{"0x", ""},
		{"08", ""},
		{"0xg", ""},
		{"1..2", ""},
		{"1.2.3.4.5", ""},
		{"256.1.1.1", ""},
		{"1.2.3.256", ""},
		{"", ""},
		{"-1", ""},
		{"+1", ""},
		{"1e3", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := ""
			if ip, ok := parseLegacyIPv4(tt.in); ok {
				got = ip.String()
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// tripwire stops every checked connection to an address outside the
// loopback range, after the rule let it through, so that no test of the
// rule can ever reach the network, even when the rule is broken.
func tripwire(address string) error {
	ap, err := netip.ParseAddrPort(address)
	if err == nil && ap.Addr().Unmap().IsLoopback() {
		return nil
	}
	return errors.New("tripwire: the rule let a connection to " + address + " through")
}

// TestDeliveryRefusal: a webhook or Slack attempt to an internal address
// fails with the refusal's text and sends nothing; with AllowPrivate the
// same attempt to a local receiver is delivered; the metadata address
// and the admin listener stay refused.
func TestDeliveryRefusal(t *testing.T) {
	srv, got := receiver(t, status(200))
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	admin, adminGot := receiver(t, status(200))
	adminAddr := admin.Listener.Addr().(*net.TCPAddr).AddrPort()
	loopback := []string{"refused: 127.0.0.1 is a loopback address" + hint, "refused: ::1 is a loopback address" + hint}
	tests := []struct {
		name      string
		typ       string
		url       string
		want      []string // without AllowPrivate: one of these
		wantAllow string   // with it ("" delivered)
	}{
		{name: "a name that resolves to loopback", typ: engine.ChannelWebhook,
			url: fmt.Sprintf("http://localhost:%d/hook", port), want: loopback},
		{name: "a loopback address", typ: engine.ChannelSlack,
			url: srv.URL + "/services/T0/B0/x", want: loopback[:1]},
		{name: "an IPv4-mapped loopback address", typ: engine.ChannelWebhook,
			url: fmt.Sprintf("http://[::ffff:127.0.0.1]:%d/hook", port), want: loopback[:1]},
		{name: "the metadata address", typ: engine.ChannelWebhook,
			url:  "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
			want: []string{"refused: 169.254.169.254 is a cloud metadata address"}, wantAllow: "refused: 169.254.169.254 is a cloud metadata address"},
		{name: "the metadata address, IPv4-mapped", typ: engine.ChannelWebhook,
			url:  "http://[::ffff:169.254.169.254]/latest/meta-data/",
			want: []string{"refused: 169.254.169.254 is a cloud metadata address"}, wantAllow: "refused: 169.254.169.254 is a cloud metadata address"},
		{name: "the admin listener", typ: engine.ChannelWebhook, url: admin.URL + "/admin/v1/workspaces",
			want: []string{"refused: " + adminAddr.String() + " is this server's admin listener"}, wantAllow: "refused: " + adminAddr.String() + " is this server's admin listener"},
	}
	for _, tt := range tests {
		for _, allow := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/allowPrivate=%v", tt.name, allow), func(t *testing.T) {
				n, rec := newTestNotifier(t, Options{AllowPrivate: allow, AdminListener: adminAddr, afterCheck: tripwire})
				failure := sendOne(t, n, rec, testNotice(tt.typ, tt.url))
				want := tt.want
				if allow {
					want = []string{tt.wantAllow}
				}
				if !slicesContain(want, failure) {
					t.Fatalf("failure %q, want %q", failure, want)
				}
				if failure == "" {
					if r := <-got; r.method != http.MethodPost {
						t.Errorf("request %s %s", r.method, r.path)
					}
				}
				if len(got) != 0 || len(adminGot) != 0 {
					t.Fatalf("a refused attempt reached a receiver")
				}
			})
		}
	}
}

func slicesContain(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestRedirectHopChecked: the notifier follows no redirect, but the rule
// sits in the dialer, so a client that did would have every hop checked:
// a redirect from an allowed receiver to the admin listener is refused.
func TestRedirectHopChecked(t *testing.T) {
	admin, adminGot := receiver(t, status(200))
	adminAddr := admin.Listener.Addr().(*net.TCPAddr).AddrPort()
	first, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, admin.URL+"/admin/v1/workspaces", http.StatusTemporaryRedirect)
	})
	tr := guardedTransport(newGuard(true, adminAddr), http.ProxyFromEnvironment, tripwire)
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr} // follows redirects
	resp, err := c.Post(first.URL+"/hook", "application/json", strings.NewReader("{}"))
	if err == nil {
		resp.Body.Close()
		t.Fatalf("the redirect to the admin listener was followed: %s", resp.Status)
	}
	var refused *RefusedError
	if !errors.As(err, &refused) || refused.Error() != "refused: "+adminAddr.String()+" is this server's admin listener" {
		t.Fatalf("error %v, want the admin listener's refusal", err)
	}
	if len(adminGot) != 0 {
		t.Fatal("the admin listener got the request")
	}
}

// fakeProxy is a local HTTP proxy that answers every request itself
// with 200 and records the URL asked for; it never connects anywhere.
func fakeProxy(t *testing.T) (*url.URL, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		asked = append(asked, r.URL.String())
		mu.Unlock()
		w.WriteHeader(200)
	}))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), asked...)
	}
}

// TestProxy: with a proxy (an operator setting, on loopback here), the
// request's host is checked before it is handed to the proxy, and the
// connection to the proxy itself is not.
func TestProxy(t *testing.T) {
	tests := []struct {
		url   string
		allow bool
		want  string // "" delivered through the proxy
	}{
		{url: "http://8.8.8.8/hook"},
		{url: "http://10.0.0.5/hook", want: "refused: 10.0.0.5 is a private address" + hint},
		{url: "http://10.0.0.5/hook", allow: true},
		{url: "http://[fd00::1]/hook", want: "refused: fd00::1 is a private address" + hint},
		{url: "http://localhost:9/hook", want: "refused: localhost is a loopback name" + hint},
		{url: "http://169.254.169.254/latest/meta-data/", allow: true, want: "refused: 169.254.169.254 is a cloud metadata address"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/allowPrivate=%v", tt.url, tt.allow), func(t *testing.T) {
			proxyURL, asked := fakeProxy(t)
			n, rec := newTestNotifier(t, Options{AllowPrivate: tt.allow, afterCheck: tripwire,
				proxy: func(*http.Request) (*url.URL, error) { return proxyURL, nil }})
			failure := sendOne(t, n, rec, testNotice(engine.ChannelWebhook, tt.url))
			if failure != tt.want {
				t.Fatalf("failure %q, want %q", failure, tt.want)
			}
			wantAsked := []string{tt.url}
			if tt.want != "" {
				wantAsked = nil
			}
			if got := asked(); fmt.Sprint(got) != fmt.Sprint(wantAsked) {
				t.Fatalf("the proxy was asked for %q, want %q", got, wantAsked)
			}
		})
	}
}

// FuzzAddressForms: the rule gives one answer for an address whatever
// form it comes in. An IPv4 address is judged the same as its IPv4-mapped,
// NAT64 and 6to4 forms, and in the URL check the same in its dotted,
// decimal, hexadecimal and octal spellings; the URL check of a literal
// agrees with the dial check; nothing panics on any host.
func FuzzAddressForms(f *testing.F) {
	for _, s := range []string{"10.0.0.5", "127.0.0.1", "169.254.169.254", "100.64.0.0", "8.8.8.8", "255.255.255.255",
		"::1", "fe80::1%eth0", "64:ff9b::a00:5", "2002:a00:5::", "fd00:ec2::254", "0x7f.1", "2130706433", "localhost."} {
		ip, err := netip.ParseAddr(s)
		raw := []byte(s)
		if err == nil {
			raw = ip.AsSlice()
		}
		f.Add(raw, s)
	}
	f.Fuzz(func(t *testing.T, raw []byte, host string) {
		g := newGuard(false, netip.AddrPort{})
		if ip, ok := netip.AddrFromSlice(raw); ok {
			v := classify(ip)
			if ip.Is4() {
				b := ip.As4()
				for _, form := range []netip.Addr{
					netip.AddrFrom16(ip.As16()), // IPv4-mapped
					netip.AddrFrom16([16]byte{0, 0x64, 0xff, 0x9b, 10: 0, 11: 0, 12: b[0], 13: b[1], 14: b[2], 15: b[3]}),
					netip.AddrFrom16([16]byte{0x20, 0x02, b[0], b[1], b[2], b[3], 15: 1}),
				} {
					w := classify(form)
					if w.class != v.class || w.always != v.always || v.class != "" && w.via != ip {
						t.Fatalf("%s is %+v but %s is %+v", ip, v, form, w)
					}
				}
				n := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
				want := urlVerdict(g, ip)
				for _, spelling := range []string{
					fmt.Sprint(n), fmt.Sprintf("0x%x", n), fmt.Sprintf("0%o", n),
					fmt.Sprintf("%d.%d", b[0], n&0xffffff), fmt.Sprintf("0x%x.0%o.%d", b[0], b[1], n&0xffff),
				} {
					err := CheckChannelURL("http://"+spelling+"/hook", false, netip.AddrPort{})
					if got := errText(err); got != want {
						t.Fatalf("%s spelled %s: %q, want %q", ip, spelling, got, want)
					}
				}
			}
		}
		// Any host: no panic, and a literal is judged as the dialer would.
		rawURL := "http://" + host + "/hook"
		err := CheckChannelURL(rawURL, false, netip.AddrPort{})
		if u, perr := url.Parse(rawURL); perr == nil {
			if ip, ok := literalIP(u.Hostname()); ok {
				if got, want := errText(err), urlVerdict(g, ip); got != want {
					t.Fatalf("host %q (%s): URL check %q, dial check %q", host, ip, got, want)
				}
			}
		}
	})
}

// urlVerdict is the URL check's text for a literal ip, made from the
// dial check's refusal.
func urlVerdict(g *guard, ip netip.Addr) string {
	r := g.check(ip, 80)
	if r == nil {
		return ""
	}
	return "url must not point at an internal address: " + r.detail()
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
