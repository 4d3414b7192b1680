package main

import (
	"crypto/tls"
	"net/smtp"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"backupmon/internal/testserver"
)

// SIGHUP makes a single node read the certificates of its public
// listener (--tls-cert) and its SMTP listener (--smtp-tls-cert) again: new
// handshakes show the new certificate, the node keeps serving, and files
// that do not do are logged while the previous certificate stays.
func TestServedCertificatesReload(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, _, _ := secWriteCert(t, dir)
	c := testserver.StartChild(t, "node", t.TempDir(), "--tls-cert", certFile, "--tls-key", keyFile,
		"--smtp-listen", "127.0.0.1:0", "--smtp-tls-cert", certFile, "--smtp-tls-key", keyFile)
	c.NeedSMTP()
	u, err := url.Parse(c.PublicURL)
	if err != nil || u.Scheme != "https" {
		t.Fatalf("public URL %q (%v), want https", c.PublicURL, err)
	}
	insecure := &tls.Config{InsecureSkipVerify: true} // reads the serial only
	webSerial := func() string {
		t.Helper()
		conn, err := tls.Dial("tcp", u.Host, insecure)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].SerialNumber.String()
	}
	mailSerial := func() string {
		t.Helper()
		m, err := smtp.Dial(c.SMTPAddr)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		if err := m.StartTLS(insecure); err != nil {
			t.Fatal(err)
		}
		st, _ := m.TLSConnectionState()
		return st.PeerCertificates[0].SerialNumber.String()
	}
	hangup := func(want ...string) {
		t.Helper()
		if err := c.Cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			waitLog(t, "node", c.Stderr.String, w)
		}
	}
	waitLog(t, "node", c.Stderr.String, `level=WARN msg="TLS: the certificate expires soon`) // at start
	web, mail := webSerial(), mailSerial()
	if web != mail {
		t.Fatalf("one certificate file, two serials: %s and %s", web, mail)
	}

	expiry := func(listener string) float64 {
		return c.Metric(`backupmon_tls_certificate_expiry_timestamp_seconds{listener="` + listener + `"}`)
	}
	webExpiry, mailExpiry := expiry("public"), expiry("smtp")
	if d := time.Until(time.Unix(int64(webExpiry), 0)); d < 23*time.Hour || d > 25*time.Hour || mailExpiry != webExpiry {
		t.Fatalf("/metrics gives the expiries public %v, smtp %v; want the test certificate's, a day from now", webExpiry, mailExpiry)
	}
	time.Sleep(1100 * time.Millisecond) // a later expiry, to the second
	secWriteCert(t, dir)                // a new certificate in the same files
	// The test's certificates expire within a day: the lines are warnings.
	hangup(`level=WARN msg="TLS reloaded: the certificate expires soon; put a new one in its files and send this process SIGHUP" expires=`,
		`level=WARN msg="SMTP TLS reloaded: the certificate expires soon`)
	web2, mail2 := webSerial(), mailSerial()
	if web2 == web || mail2 == mail || web2 != mail2 {
		t.Fatalf("after SIGHUP: public %s (was %s), SMTP %s (was %s)", web2, web, mail2, mail)
	}
	if expiry("public") <= webExpiry || expiry("smtp") <= mailExpiry {
		t.Fatalf("/metrics after SIGHUP: public %v (was %v), smtp %v (was %v)", expiry("public"), webExpiry, expiry("smtp"), mailExpiry)
	}

	if err := os.WriteFile(certFile, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	hangup(`msg="TLS not reloaded: the previous certificate stays" err="load TLS certificate: tls: failed to find any PEM data in certificate input"`,
		`msg="SMTP TLS not reloaded: the previous certificate stays"`)
	if got := webSerial(); got != web2 {
		t.Fatalf("a failed reload changed the public certificate: %s, want %s", got, web2)
	}
	if r := c.Do("GET", c.AdminURL+"/readyz", nil, nil); r.Status != 200 || strings.Contains(c.Stderr.String(), "backupmon stopped") {
		t.Fatalf("after the SIGHUPs: /readyz %d %s", r.Status, r.Body)
	}
}
