package notify

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"strings"
	"testing"
	"time"

	"backupmon/engine"
	"backupmon/internal/smtpsink"
)

// startSink runs a local SMTP sink until the test ends; with cert, it
// offers STARTTLS (and AUTH once under TLS).
func startSink(t *testing.T, cert *tls.Certificate, configure func(*smtpsink.Options)) *smtpsink.Sink {
	t.Helper()
	opts := smtpsink.Options{Cert: cert}
	if configure != nil {
		configure(&opts)
	}
	return smtpsink.Start(t, opts)
}

// selfSigned makes a certificate for 127.0.0.1 and the pool that trusts it.
func selfSigned(t *testing.T) (*tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "notify test relay"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// wantEmailBody is the decoded body of testNotice's e-mail (LF endings).
const wantEmailBody = `Alert opened: Backup failed on Acme / nightly-db

Event:      alert.opened
Workspace:  Demo MSP (` + wsText + `)
Client:     Acme
Job:        nightly-db
Alert type: failed
Severity:   critical
Summary:    Veeam job failed: exit code 2

Alert:
{
  "id": "0195a0b1-7c4e-7000-8000-0000000000a1",
  "type": "failed",
  "severity": "critical",
  "status": "open",
  "summary": "Veeam job failed: exit code 2"
}
`

func TestEmail(t *testing.T) {
	cert, pool := selfSigned(t)
	tests := []struct {
		name        string
		cert        bool                    // the sink offers STARTTLS
		sink        func(*smtpsink.Options) // the sink's settings
		cfg         func(*SMTPConfig)       // the Notifier's, after Relay and From
		edit        func(*engine.Notice)
		wantFailure string // "" success; else a prefix
		wantContain string
		wantTLS     bool
		wantAuth    string
		wantSubject string
		noConnect   bool // the failure comes before any connection
	}{
		{name: "plain relay", wantSubject: "[backupmon] critical: Backup failed on Acme / nightly-db"},
		{name: "STARTTLS required, AUTH PLAIN", cert: true, wantTLS: true, wantAuth: "alerts",
			sink: func(o *smtpsink.Options) { o.User, o.Pass = "alerts", "pa55" },
			cfg: func(c *SMTPConfig) {
				c.StartTLS, c.Username, c.Password = true, "alerts", "pa55"
				c.TLSConfig = &tls.Config{RootCAs: pool}
			},
			wantSubject: "[backupmon] critical: Backup failed on Acme / nightly-db"},
		{name: "STARTTLS used when offered", cert: true, wantTLS: true,
			cfg:         func(c *SMTPConfig) { c.TLSConfig = &tls.Config{RootCAs: pool} },
			wantSubject: "[backupmon] critical: Backup failed on Acme / nightly-db"},
		{name: "an untrusted certificate fails even when STARTTLS is optional", cert: true,
			wantFailure: "smtp: STARTTLS: tls: failed to verify certificate"},
		{name: "STARTTLS required but not offered", cfg: func(c *SMTPConfig) { c.StartTLS = true },
			wantFailure: "smtp: relay does not offer STARTTLS"},
		{name: "AUTH PLAIN without TLS to localhost (net/smtp allows it there only)", wantAuth: "alerts",
			sink:        func(o *smtpsink.Options) { o.User, o.Pass, o.InsecureAuth = "alerts", "pa55", true },
			cfg:         func(c *SMTPConfig) { c.Username, c.Password = "alerts", "pa55" },
			wantSubject: "[backupmon] critical: Backup failed on Acme / nightly-db"},
		{name: "AUTH not offered without TLS", cfg: func(c *SMTPConfig) { c.Username, c.Password = "alerts", "pa55" },
			wantFailure: "smtp: relay does not offer AUTH"},
		{name: "wrong password", cert: true, wantContain: "invalid credentials",
			sink: func(o *smtpsink.Options) { o.User, o.Pass = "alerts", "pa55" },
			cfg: func(c *SMTPConfig) {
				c.Username, c.Password = "alerts", "wrong"
				c.TLSConfig = &tls.Config{RootCAs: pool}
			},
			wantFailure: "smtp: AUTH: "},
		{name: "RCPT rejected with 550", sink: func(o *smtpsink.Options) { o.RejectRcpt = true },
			wantFailure: "smtp: RCPT TO: 550", wantContain: "No such user here"},
		{name: "non-ASCII names, other event", wantSubject: "[backupmon] warning: Backup missing on Zürich AG / Sauvegarde quotidienne – NAS (still open, escalated)",
			edit: func(n *engine.Notice) {
				n.Event, n.AlertType, n.Severity = engine.EventEscalated, "missing", "warning"
				n.ClientName, n.JobName = "Zürich AG", "Sauvegarde quotidienne – NAS"
			}},
		{name: "header injection in To", noConnect: true, wantFailure: "invalid recipient address: contains CR or LF",
			edit: func(n *engine.Notice) { n.Channel.To = "a@b.c\r\nBcc: x@y.z" }},
		{name: "LF alone in To", noConnect: true, wantFailure: "invalid recipient address: contains CR or LF",
			edit: func(n *engine.Notice) { n.Channel.To = "a@b.c\nBcc: x@y.z" }},
		{name: "two recipients in To", noConnect: true, wantFailure: "invalid recipient address",
			edit: func(n *engine.Notice) { n.Channel.To = "a@b.c, x@y.z" }},
		{name: "CR LF in names is flattened", wantSubject: "[backupmon] critical: Backup failed on Acme Bcc: x@y.z / nightly-db",
			edit: func(n *engine.Notice) { n.ClientName = "Acme\r\nBcc: x@y.z" }},
		{name: "no relay configured", noConnect: true, wantFailure: FailureNoRelay,
			cfg: func(c *SMTPConfig) { c.Relay = "" }},
		{name: "relay not listening", wantContain: "connection refused",
			cfg: func(c *SMTPConfig) { c.Relay = closedAddr(t) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c *tls.Certificate
			if tt.cert {
				c = cert
			}
			sink := startSink(t, c, tt.sink)
			cfg := SMTPConfig{Relay: sink.Addr, From: "Backupmon <alerts@backupmon.example>"}
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			n, rec := newTestNotifier(t, Options{SMTP: cfg, Timeout: 5 * time.Second})
			nt := testNotice(engine.ChannelEmail, "")
			if tt.edit != nil {
				tt.edit(&nt)
			}
			failure := sendOne(t, n, rec, nt)
			if tt.noConnect && sink.Accepted.Load() != 0 {
				t.Errorf("the relay was contacted")
			}
			if tt.wantFailure != "" || tt.wantContain != "" {
				if !strings.HasPrefix(failure, tt.wantFailure) || !strings.Contains(failure, tt.wantContain) {
					t.Fatalf("failure %q, want %q…%q", failure, tt.wantFailure, tt.wantContain)
				}
				if msgs := sink.Messages(); len(msgs) != 0 {
					t.Fatalf("a failed attempt delivered %d messages", len(msgs))
				}
				return
			}
			if failure != "" {
				t.Fatalf("failure %q", failure)
			}
			msgs := sink.Messages()
			if len(msgs) != 1 {
				t.Fatalf("%d messages, want 1", len(msgs))
			}
			checkEmail(t, msgs[0], nt, tt.wantSubject)
			if msgs[0].TLS != tt.wantTLS || msgs[0].AuthUser != tt.wantAuth {
				t.Errorf("tls %v auth %q, want %v %q", msgs[0].TLS, msgs[0].AuthUser, tt.wantTLS, tt.wantAuth)
			}
		})
	}
}

// checkEmail checks the envelope, headers and decoded body of m.
func checkEmail(t *testing.T, m smtpsink.Mail, nt engine.Notice, wantSubject string) {
	t.Helper()
	if m.From != "alerts@backupmon.example" || len(m.To) != 1 || m.To[0] != nt.Channel.To {
		t.Errorf("envelope MAIL FROM %q RCPT TO %q", m.From, m.To)
	}
	if bytes.Contains(bytes.ReplaceAll(m.Data, []byte("\r\n"), nil), []byte("\n")) ||
		bytes.Contains(bytes.ReplaceAll(m.Data, []byte("\r\n"), nil), []byte("\r")) {
		t.Errorf("a line does not end with CRLF:\n%q", m.Data)
	}
	for _, line := range strings.Split(string(m.Data), "\r\n") {
		if len(line) > 78 && !strings.HasPrefix(line, "From:") {
			t.Errorf("line of %d characters: %q", len(line), line)
		}
	}
	msg, err := mail.ReadMessage(bytes.NewReader(m.Data))
	if err != nil {
		t.Fatalf("message does not parse: %v\n%s", err, m.Data)
	}
	h := msg.Header
	subject, err := new(mime.WordDecoder).DecodeHeader(h.Get("Subject"))
	if err != nil || subject != wantSubject {
		t.Errorf("Subject %q (raw %q), %v; want %q", subject, h.Get("Subject"), err, wantSubject)
	}
	if strings.ContainsFunc(wantSubject, func(r rune) bool { return r > 127 }) && !strings.HasPrefix(h.Get("Subject"), "=?utf-8?q?") {
		t.Errorf("non-ASCII Subject not Q-encoded: %q", h.Get("Subject"))
	}
	from, err := h.AddressList("From")
	if err != nil || len(from) != 1 || from[0].Name != "Backupmon" || from[0].Address != "alerts@backupmon.example" {
		t.Errorf("From %q: %v", h.Get("From"), err)
	}
	to, err := h.AddressList("To")
	if err != nil || len(to) != 1 || to[0].Address != nt.Channel.To {
		t.Errorf("To %q: %v", h.Get("To"), err)
	}
	if len(h["Bcc"]) != 0 || len(h["Cc"]) != 0 {
		t.Errorf("unexpected recipients headers %v", h)
	}
	if date, err := h.Date(); err != nil || !date.Equal(sentAt.Truncate(time.Second)) {
		t.Errorf("Date %q: %v", h.Get("Date"), err)
	}
	for name, want := range map[string]string{
		"Message-Id":                "<" + deliveryID.String() + ".3@backupmon>",
		"Mime-Version":              "1.0",
		"Content-Type":              "text/plain; charset=utf-8",
		"Content-Transfer-Encoding": "quoted-printable",
		"Auto-Submitted":            "auto-generated",
		"X-Backupmon-Delivery":      deliveryID.String(),
	} {
		if got := h.Get(name); got != want {
			t.Errorf("header %s %q, want %q", name, got, want)
		}
	}
	body, err := io.ReadAll(quotedprintable.NewReader(msg.Body))
	if err != nil {
		t.Fatalf("body: %v", err)
	}
	got := strings.ReplaceAll(string(body), "\r\n", "\n")
	if nt.ClientName == "Acme" && nt.Event == engine.EventOpened && got != wantEmailBody {
		t.Errorf("body\n%s\nwant\n%s", got, wantEmailBody)
	}
	for _, want := range []string{nt.Event, oneLine(nt.ClientName), nt.JobName, "Alert type: " + nt.AlertType, "Severity:   " + nt.Severity} {
		if !strings.Contains(got, want) {
			t.Errorf("body lacks %q:\n%s", want, got)
		}
	}
}

func TestEncodeSubject(t *testing.T) {
	tests := []struct {
		name    string
		subject string
		encoded bool
	}{
		{"short ASCII", "[backupmon] critical: Backup failed on A / B", false},
		{"long ASCII", strings.Repeat("word ", 40) + "end", false},
		{"short UTF-8", "[backupmon] critical: Backup failed on Zürich / NAS", true},
		{"long UTF-8", strings.Repeat("Zürich – 東京 ", 30), true},
		{"underscore, equals, question mark", "a_b=c?d é", true},
		{"looks encoded", "=?utf-8?q?x?=", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			value := encodeSubject(tt.subject)
			if got := strings.HasPrefix(value, "=?utf-8?q?"); got != tt.encoded {
				t.Fatalf("encoded %v, want %v: %q", got, tt.encoded, value)
			}
			limit := 78
			if tt.encoded {
				limit = 76
			}
			for i, line := range strings.Split("Subject: "+value, "\r\n") {
				if len(line) > limit {
					t.Errorf("line %d has %d characters: %q", i, len(line), line)
				}
			}
			// What a reader sees once it unfolds and decodes the header.
			msg, err := mail.ReadMessage(strings.NewReader("Subject: " + value + "\r\n\r\n"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
			if err != nil || got != tt.subject {
				t.Fatalf("reads %q, %v; want %q", got, err, tt.subject)
			}
		})
	}
}
