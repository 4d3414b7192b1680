package notify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"mime/quotedprintable"
	"time"
)

// SendText sends one plain-text e-mail (an invitation's link) to one
// address through the relay e-mail channels use, and returns once the
// relay took it. It fails without a relay (FailureNoRelay), for an invalid
// address, and with the step of the SMTP dialogue that failed.
func (n *Notifier) SendText(ctx context.Context, to, subject, body string) error {
	if n.smtp.Relay == "" {
		return errors.New(FailureNoRelay)
	}
	from, err := parseAddress("sender", n.smtp.From)
	if err != nil {
		return err
	}
	rcpt, err := parseAddress("recipient", to)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	for _, h := range [][2]string{{"From", from.String()}, {"To", rcpt.String()}, {"Subject", encodeSubject(oneLine(subject))},
		{"Date", n.now().Format(time.RFC1123Z)}, {"MIME-Version", "1.0"}, {"Content-Type", "text/plain; charset=utf-8"},
		{"Content-Transfer-Encoding", "quoted-printable"}, {"Auto-Submitted", "auto-generated"}} {
		b.WriteString(h[0] + ": " + h[1] + "\r\n")
	}
	b.WriteString("\r\n")
	qp := quotedprintable.NewWriter(&b) // turns the body's \n into CRLF
	_, _ = qp.Write([]byte(body))       // a bytes.Buffer does not fail
	_ = qp.Close()
	if err := n.relay(ctx, from, rcpt, b.Bytes()); err != nil {
		return fmt.Errorf("send to %s: %w", rcpt.Address, err)
	}
	return nil
}
