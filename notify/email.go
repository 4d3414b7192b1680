package notify

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/smtp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"backupmon/engine"
	"backupmon/jsonx"
)

// SMTPConfig is the relay the e-mail channels are sent through.
type SMTPConfig struct {
	// Relay is the relay's host:port. Empty: every e-mail attempt fails
	// with FailureNoRelay.
	Relay string
	// From is the sender, the envelope's MAIL FROM and the From header:
	// an address, with a display name or without ("Backupmon
	// <alerts@example.com>"). Required when Relay is set.
	From string
	// Username and Password, when Username is set, authenticate with AUTH
	// PLAIN. net/smtp sends them only over TLS or to localhost.
	Username, Password string
	// StartTLS requires STARTTLS: a relay that does not offer it fails the
	// attempt. When false, STARTTLS is still used whenever the relay
	// offers it (opportunistic TLS), and the relay's certificate is then
	// verified all the same: a failed handshake fails the attempt rather
	// than falling back to plain text.
	StartTLS bool
	// TLSConfig configures STARTTLS (nil: the system's roots, the relay's
	// host as server name). Tests set RootCAs or InsecureSkipVerify here.
	TLSConfig *tls.Config
}

// sendEmail sends nt through the relay as one message. Nothing is sent, no
// connection made, when the recipient, the sender or the message is
// invalid (a CR or LF in an address among them).
func (n *Notifier) sendEmail(ctx context.Context, nt engine.Notice) error {
	cfg := n.smtp
	if cfg.Relay == "" {
		return errors.New(FailureNoRelay)
	}
	if _, _, err := net.SplitHostPort(cfg.Relay); err != nil {
		return fmt.Errorf("invalid SMTP relay %q: %w", cfg.Relay, err)
	}
	from, err := parseAddress("sender", cfg.From)
	if err != nil {
		return err
	}
	to, err := parseAddress("recipient", nt.Channel.To)
	if err != nil {
		return err
	}
	return n.relay(ctx, from, to, EmailMessage(nt, from, to, n.now()))
}

// relay sends msg from from to to through the relay, with the SMTP
// dialogue sendEmail describes.
func (n *Notifier) relay(ctx context.Context, from, to *mail.Address, msg []byte) error {
	cfg := n.smtp
	host, _, err := net.SplitHostPort(cfg.Relay)
	if err != nil {
		return fmt.Errorf("invalid SMTP relay %q: %w", cfg.Relay, err)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", cfg.Relay)
	if err != nil {
		return &stepError{"smtp", err}
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		if err := conn.SetDeadline(dl); err != nil {
			return &stepError{"smtp", err}
		}
	}
	c, err := smtp.NewClient(conn, host)
	if err != nil {
		return &stepError{"smtp: greeting", err}
	}
	defer c.Close()
	if err := c.Hello(n.helo); err != nil {
		return &stepError{"smtp: EHLO", err}
	}
	if ok, _ := c.Extension("STARTTLS"); ok {
		if err := c.StartTLS(tlsConfig(cfg.TLSConfig, host)); err != nil {
			return &stepError{"smtp: STARTTLS", err}
		}
	} else if cfg.StartTLS {
		return errors.New("smtp: relay does not offer STARTTLS")
	}
	if cfg.Username != "" {
		if ok, _ := c.Extension("AUTH"); !ok {
			return errors.New("smtp: relay does not offer AUTH")
		}
		if err := c.Auth(smtp.PlainAuth("", cfg.Username, cfg.Password, host)); err != nil {
			return &stepError{"smtp: AUTH", err}
		}
	}
	if err := c.Mail(from.Address); err != nil {
		return &stepError{"smtp: MAIL FROM", err}
	}
	if err := c.Rcpt(to.Address); err != nil {
		return &stepError{"smtp: RCPT TO", err}
	}
	w, err := c.Data()
	if err != nil {
		return &stepError{"smtp: DATA", err}
	}
	if _, err := w.Write(msg); err != nil {
		return &stepError{"smtp: DATA", err}
	}
	if err := w.Close(); err != nil { // the relay's answer to the message
		return &stepError{"smtp: DATA", err}
	}
	// The relay has taken the message: a failed QUIT must not make the
	// engine send it again.
	_ = c.Quit()
	return nil
}

// parseAddress reads one address; what names it in the error.
func parseAddress(what, s string) (*mail.Address, error) {
	if strings.ContainsAny(s, "\r\n") {
		return nil, fmt.Errorf("invalid %s address: contains CR or LF", what)
	}
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("no %s address", what)
	}
	a, err := mail.ParseAddress(s)
	if err != nil {
		return nil, fmt.Errorf("invalid %s address: %w", what, err)
	}
	return a, nil
}

// EmailMessage returns the RFC 5322 message of nt from from to to, dated
// now: CRLF line endings; headers From, To, Subject (Q-encoded when not
// ASCII), Date, Message-ID <delivery.attempt@backupmon>, MIME-Version,
// Content-Type text/plain; charset=utf-8, Content-Transfer-Encoding
// quoted-printable and Auto-Submitted; a quoted-printable body listing the
// event, workspace, client, job, alert type, severity and summary, with the
// alert's JSON at the end. Every header value is one line: CR and LF in
// names and the summary become spaces; the caller checks the addresses.
func EmailMessage(nt engine.Notice, from, to *mail.Address, now time.Time) []byte {
	var b bytes.Buffer
	header := func(name, value string) {
		b.WriteString(name)
		b.WriteString(": ")
		b.WriteString(value)
		b.WriteString("\r\n")
	}
	header("From", from.String())
	header("To", to.String())
	header("Subject", encodeSubject(emailSubject(nt)))
	header("Date", now.Format(time.RFC1123Z))
	header("Message-ID", "<"+nt.Delivery.String()+"."+strconv.Itoa(nt.Attempt)+"@backupmon>")
	header("MIME-Version", "1.0")
	header("Content-Type", "text/plain; charset=utf-8")
	header("Content-Transfer-Encoding", "quoted-printable")
	header("Auto-Submitted", "auto-generated")
	// The delivery's id, the same on every attempt and after a fail-over
	// (the Message-ID changes per attempt): a receiver drops repeats by it.
	header(HeaderDelivery, nt.Delivery.String())
	b.WriteString("\r\n")

	qp := quotedprintable.NewWriter(&b) // turns the body's \n into CRLF
	_, _ = qp.Write(emailBody(nt))      // a bytes.Buffer does not fail
	_ = qp.Close()
	return b.Bytes()
}

// emailBody is the message's text before its transfer encoding, with \n
// line endings.
func emailBody(nt engine.Notice) []byte {
	var b bytes.Buffer
	line := func(label, value string) {
		if value == "" {
			value = "-"
		}
		fmt.Fprintf(&b, "%-12s%s\n", label+":", value)
	}
	b.WriteString(eventWording(nt.Event) + ": " + headline(nt) + "\n\n")
	line("Event", oneLine(nt.Event))
	ws := nt.Workspace.String()
	if name := oneLine(nt.WorkspaceName); name != "" {
		ws = name + " (" + ws + ")"
	}
	line("Workspace", ws)
	line("Client", oneLine(nt.ClientName))
	line("Job", oneLine(nt.JobName))
	line("Alert type", oneLine(nt.AlertType))
	line("Severity", oneLine(nt.Severity))
	line("Summary", oneLine(nt.Summary))
	b.WriteString("\nAlert:\n")
	if len(nt.Alert) == 0 {
		b.WriteString("null")
	} else {
		b.Write(jsonx.Pretty(nt.Alert))
	}
	b.WriteString("\n")
	return b.Bytes()
}

// encodeSubject returns the Subject header's value for s: s itself when
// it is printable ASCII, else RFC 2047 Q-encoded words ("=?utf-8?q?...?="),
// split at character boundaries so that no line of the header, "Subject: "
// included, exceeds 76 characters; folded in either case.
func encodeSubject(s string) string {
	const lead = len("Subject: ")
	if !needsEncoding(s) {
		return fold(s, lead, 78)
	}
	const open, end = "=?utf-8?q?", "?="
	var words []string
	var w []byte
	limit := 76 - lead // the first word shares its line with "Subject: "
	var buf [utf8.UTFMax]byte
	for _, r := range s {
		var enc []byte
		for _, c := range buf[:utf8.EncodeRune(buf[:], r)] {
			switch {
			case c == ' ':
				enc = append(enc, '_')
			case c > ' ' && c <= '~' && c != '=' && c != '?' && c != '_':
				// A subject is unstructured text: RFC 2047 (5.1) lets
				// every printable character but these stand for itself.
				enc = append(enc, c)
			default:
				enc = append(enc, '=', upperHex[c>>4], upperHex[c&0xf])
			}
		}
		if len(w) > 0 && len(open)+len(w)+len(enc)+len(end) > limit {
			words = append(words, open+string(w)+end)
			w = w[:0]
			limit = 75 // later words follow one space on their line
		}
		w = append(w, enc...)
	}
	words = append(words, open+string(w)+end)
	return fold(strings.Join(words, " "), lead, 76)
}

const upperHex = "0123456789ABCDEF"

// needsEncoding reports whether s cannot stand in a header as it is: a
// character outside printable ASCII, or "=?", which a reader would take
// for the start of an encoded word.
func needsEncoding(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] > '~' {
			return true
		}
	}
	return strings.Contains(s, "=?")
}

// fold breaks a header value made of space-separated words (plain text or
// encoded words) into lines of at most limit characters where it can, lead
// being the length of "Name: " before it. Unfolding gives the value back.
func fold(value string, lead, limit int) string {
	words := strings.Split(value, " ")
	var b strings.Builder
	n := lead
	for i, w := range words {
		if i > 0 {
			if n+1+len(w) > limit {
				b.WriteString("\r\n ")
				n = 1
			} else {
				b.WriteByte(' ')
				n++
			}
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}
