package clustertls

import (
	"crypto/tls"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC)

func issue(t *testing.T, dir, name string, hosts ...string) *tls.Config {
	t.Helper()
	f, err := Issue(dir, name, hosts, t0)
	if err != nil {
		t.Fatalf("Issue %s: %v", name, err)
	}
	c, err := Load(f, t0)
	if err != nil {
		t.Fatalf("Load %s: %v", name, err)
	}
	return c
}

// handshake runs a TLS handshake between a client of cc dialling addr and
// a server of sc, then sends one byte each way, and returns each end's
// error (with TLS 1.3 the client learns that the server refused its
// certificate only when it reads).
func handshake(cc, sc *tls.Config, addr string) (clientErr, serverErr error) {
	a, b := tcpPair()
	a.SetDeadline(time.Now().Add(5 * time.Second))
	b.SetDeadline(time.Now().Add(5 * time.Second))
	client := tls.Client(a, Dialling(cc, addr))
	server := tls.Server(b, sc)
	done := make(chan error, 1)
	go func() {
		err := server.Handshake()
		if err == nil {
			if _, err = server.Read(make([]byte, 1)); err == nil {
				_, err = server.Write([]byte{'y'})
			}
		}
		b.Close()
		done <- err
	}()
	clientErr = client.Handshake()
	if clientErr == nil {
		if _, clientErr = client.Write([]byte{'x'}); clientErr == nil {
			_, clientErr = client.Read(make([]byte, 1))
		}
	}
	a.Close()
	return clientErr, <-done
}

// tcpPair returns both ends of a loopback TCP connection (buffered, unlike
// net.Pipe, so an alert does not wait for the other end to read).
func tcpPair() (net.Conn, net.Conn) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	a, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		panic(err)
	}
	b, err := ln.Accept()
	if err != nil {
		panic(err)
	}
	return a, b
}

func TestMembersOfOneAuthorityConnect(t *testing.T) {
	dir := t.TempDir()
	n1 := issue(t, dir, "n1", "127.0.0.1", "localhost")
	n2 := issue(t, dir, "n2", "10.0.0.2", "node2.internal")
	for _, tc := range []struct {
		name     string
		cc, sc   *tls.Config
		addr     string
		clientOK bool
		serverOK bool
	}{
		{"n1 dials n2 by address", n1, n2, "10.0.0.2:8280", true, true},
		{"n1 dials n2 by name", n1, n2, "node2.internal:8280", true, true},
		{"n2 dials n1", n2, n1, "127.0.0.1:4222", true, true},
		{"n1 dials n2 by a host not in its certificate", n1, n2, "10.0.0.9:8280", false, false},
		{"n1 dials itself by localhost", n1, n1, "localhost:4222", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ce, se := handshake(tc.cc, tc.sc, tc.addr)
			if (ce == nil) != tc.clientOK || (se == nil) != tc.serverOK {
				t.Fatalf("client err %v, server err %v; want client ok %v, server ok %v", ce, se, tc.clientOK, tc.serverOK)
			}
		})
	}
}

func TestOtherAuthoritiesAreRefused(t *testing.T) {
	ours := issue(t, t.TempDir(), "n1", "127.0.0.1")
	theirs := issue(t, t.TempDir(), "n1", "127.0.0.1")
	t.Run("their client to our server", func(t *testing.T) {
		ce, se := handshake(theirs, ours, "127.0.0.1:1")
		if se == nil || !strings.Contains(se.Error(), "certificate") {
			t.Fatalf("server took a client of another authority: %v (client: %v)", se, ce)
		}
	})
	t.Run("our client to their server", func(t *testing.T) {
		ce, _ := handshake(ours, theirs, "127.0.0.1:1")
		if ce == nil || !strings.Contains(ce.Error(), "unknown authority") {
			t.Fatalf("client took a server of another authority: %v", ce)
		}
	})
	t.Run("a client without a certificate", func(t *testing.T) {
		bare := &tls.Config{RootCAs: ours.RootCAs, MinVersion: tls.VersionTLS13}
		_, se := handshake(bare, ours, "127.0.0.1:1")
		if se == nil || !strings.Contains(se.Error(), "certificate") {
			t.Fatalf("server took a client without a certificate: %v", se)
		}
	})
}

func TestIssueKeepsTheAuthority(t *testing.T) {
	dir := t.TempDir()
	f1, err := Issue(dir, "n1", []string{"127.0.0.1"}, t0)
	if err != nil {
		t.Fatal(err)
	}
	ca1, _ := os.ReadFile(f1.CA)
	if _, err := Issue(dir, "n2", []string{"127.0.0.1"}, t0); err != nil {
		t.Fatal(err)
	}
	ca2, _ := os.ReadFile(f1.CA)
	if string(ca1) != string(ca2) {
		t.Fatal("issuing a second member made a new authority")
	}
	for _, p := range []string{f1.Key, filepath.Join(dir, "ca.key")} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600", p, st.Mode().Perm())
		}
	}
	m, err := Open(f1, t0)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Certificate().NotAfter; !got.Equal(t0.Add(MemberValidity).Truncate(time.Second)) {
		t.Errorf("NotAfter %v, want %v", got, t0.Add(MemberValidity))
	}
}

func TestIssueAndLoadErrors(t *testing.T) {
	dir := t.TempDir()
	good, err := Issue(dir, "n1", []string{"127.0.0.1"}, t0)
	if err != nil {
		t.Fatal(err)
	}
	other, err := Issue(t.TempDir(), "n1", []string{"127.0.0.1"}, t0)
	if err != nil {
		t.Fatal(err)
	}
	halfDir := t.TempDir()
	os.WriteFile(filepath.Join(halfDir, "ca.pem"), []byte("x"), 0o644)
	notPEM := filepath.Join(t.TempDir(), "x.pem")
	os.WriteFile(notPEM, []byte("not a certificate"), 0o644)

	issues := []struct {
		name, member string
		dir          string
		hosts        []string
		want         string
	}{
		{"bad name", "../n1", dir, []string{"127.0.0.1"}, `member name "../n1"`},
		{"the authority's name", "ca", dir, []string{"127.0.0.1"}, `member name "ca": "ca" names the authority's own files`},
		{"no host", "n3", dir, nil, "no host"},
		{"bad host", "n3", dir, []string{"a b"}, `host "a b" is neither`},
		{"half an authority", "n3", halfDir, []string{"127.0.0.1"}, "has the authority's certificate but not its key"},
	}
	for _, tc := range issues {
		t.Run("issue "+tc.name, func(t *testing.T) {
			_, err := Issue(tc.dir, tc.member, tc.hosts, t0)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
	loads := []struct {
		name string
		f    Files
		now  time.Time
		want string
	}{
		{"missing file", Files{CA: good.CA, Cert: good.Cert}, t0, "takes three files"},
		{"authority not PEM", Files{CA: notPEM, Cert: good.Cert, Key: good.Key}, t0, "holds no PEM certificate"},
		{"member as authority", Files{CA: good.Cert, Cert: good.Cert, Key: good.Key}, t0, "not an authority"},
		{"key of another member", Files{CA: good.CA, Cert: good.Cert, Key: other.Key}, t0, "private key does not match"},
		{"another authority", Files{CA: other.CA, Cert: good.Cert, Key: good.Key}, t0, "is not a member certificate of the authority"},
		{"expired", good, t0.Add(MemberValidity + time.Hour), "expired"},
	}
	for _, tc := range loads {
		t.Run("load "+tc.name, func(t *testing.T) {
			_, err := Load(tc.f, tc.now)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
}

// Reload: a configuration made before takes the reissued certificate at
// its next handshake; a file that does not do leaves the previous one.
func TestReloadSwapsTheCertificate(t *testing.T) {
	dir := t.TempDir()
	f, err := Issue(dir, "n1", []string{"127.0.0.1"}, t0)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Open(f, t0)
	if err != nil {
		t.Fatal(err)
	}
	server := m.Config()
	client := issue(t, dir, "b1", "127.0.0.2")
	seen := func() string {
		t.Helper()
		a, b := tcpPair()
		defer a.Close()
		defer b.Close()
		go tls.Server(b, server).Handshake()
		c := tls.Client(a, Dialling(client, "127.0.0.1:1"))
		if err := c.Handshake(); err != nil {
			t.Fatal(err)
		}
		return c.ConnectionState().PeerCertificates[0].SerialNumber.String()
	}
	first := seen()
	if _, err := Issue(dir, "n1", []string{"127.0.0.1"}, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got := seen(); got != first {
		t.Fatalf("the certificate changed before Reload: %s, then %s", first, got)
	}
	if err := m.Reload(t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	second := seen()
	if second == first || m.Certificate().SerialNumber.String() != second {
		t.Fatalf("after Reload the server shows %s (before %s; Certificate %s)", second, first, m.Certificate().SerialNumber)
	}
	for _, tc := range []struct {
		name  string
		write func()
		want  string
	}{
		{"not a certificate", func() { os.WriteFile(f.Cert, []byte("garbage"), 0o644) }, "failed to find any PEM data"},
		{"another authority's", func() {
			other, err := Issue(t.TempDir(), "n1", []string{"127.0.0.1"}, t0)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range [][2]string{{other.Cert, f.Cert}, {other.Key, f.Key}} {
				b, _ := os.ReadFile(p[0])
				os.WriteFile(p[1], b, 0o600)
			}
		}, "is not a member certificate of the authority"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.write()
			if err := m.Reload(t0.Add(time.Hour)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Reload: %v, want %q", err, tc.want)
			}
			if got := seen(); got != second {
				t.Fatalf("a failed Reload changed the certificate: %s, want %s", got, second)
			}
		})
	}
}
