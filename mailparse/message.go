package mailparse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/emersion/go-message"
	gmcharset "github.com/emersion/go-message/charset" // also registers the charsets mails use
	"github.com/emersion/go-message/mail"
	"github.com/emersion/go-message/textproto"
)

// Limits that keep hostile mail cheap to read.
const (
	MaxMessageBytes = 10 << 20 // what the SMTP listener accepts (decisions.md 10)
	maxHeaderBytes  = 256 << 10
	maxDepth        = 8       // nested multiparts
	maxParts        = 64      // parts visited in all
	maxBodyBytes    = 2 << 20 // decoded text kept per body
	// maxLineBytes cuts longer lines (and table cells): no report prints
	// one that long, and it keeps every parser's per-line work bounded
	// however the body is built.
	maxLineBytes = 8 << 10
)

// Message is a report e-mail decoded for the parsers.
type Message struct {
	// Subject is decoded and unfolded. Of a forwarded report it is the
	// original's, and a forward's prefixes ("Fwd:", "FW:", "WG:") are
	// taken off any subject.
	Subject   string
	From      string    // the From header as written (the original's, when forwarded)
	MessageID string    // without angle brackets; "" when none
	Date      time.Time // the Date header; zero when missing or unreadable
	// Zone is the fixed zone of the Date header's offset: mails print local
	// times, and the header is the one place that says which zone. UTC when
	// the header is missing.
	Zone *time.Location

	Text string // the first text/plain body, UTF-8; "" when none
	HTML string // the first text/html body, UTF-8; "" when none

	TextLines []string // Text as trimmed, non-blank lines
	HTMLLines []string // HTML rendered (htmlLines); cells of a row joined by '\t'
	// Lines is TextLines when the mail has a plain-text body, else HTMLLines.
	Lines []string

	// Forwarded says the report was read from the original that a person
	// or a mail rule forwarded (forward.go): Subject, From, Date, Zone and
	// the bodies are the original's; MessageID stays the forward's own.
	Forwarded bool
	// DecimalComma says the mail's language writes decimals with a comma
	// and groups thousands with a dot or a space ("1.536,5 GB", "1 536,5
	// Go"), as German and French do; false for English ("1,536.5 GB").
	// See locale.go and parseNumber.
	DecimalComma bool
}

// ErrNoBody is returned by Read for a message with no text or HTML body.
var ErrNoBody = errors.New("the message has no text or HTML body")

// Read decodes raw into a Message. It returns an error when the header
// cannot be read or the message has no readable body; unknown charsets and
// transfer encodings are read as they are rather than refused.
func Read(raw []byte) (*Message, error) {
	return readMessage(raw, 0)
}

// readMessage is Read for a message found forwarded inside forwards
// others (0 for the message received): it decodes raw, and reads a
// forwarded report from its original (unwrapForward) while forwards is
// under maxForwards.
func readMessage(raw []byte, forwards int) (*Message, error) {
	if len(raw) > MaxMessageBytes {
		return nil, fmt.Errorf("message of %d bytes is over the %d-byte limit", len(raw), MaxMessageBytes)
	}
	hdr, body := splitHeader(raw)
	if len(hdr) > maxHeaderBytes {
		return nil, fmt.Errorf("read header: the header is over %d bytes", maxHeaderBytes)
	}
	th, err := textproto.ReadHeader(bufio.NewReader(io.MultiReader(bytes.NewReader(hdr), strings.NewReader("\r\n"))))
	if err != nil {
		return nil, fmt.Errorf("read header: %w", err)
	}
	m := &Message{Zone: time.UTC}
	h := mail.Header{Header: message.Header{Header: th}}
	if s, err := h.Subject(); err == nil {
		m.Subject = clean(s)
	} else {
		m.Subject = clean(h.Get("Subject"))
	}
	m.From = clean(h.Get("From"))
	if id, err := h.MessageID(); err == nil {
		m.MessageID = id
	} else {
		m.MessageID = strings.Trim(strings.TrimSpace(h.Get("Message-Id")), "<>")
	}
	if d, err := h.Date(); err == nil && !d.IsZero() {
		m.Date = d
		_, off := d.Zone()
		m.Zone = time.FixedZone(zoneName(off), off)
	}
	w := walker{m: m}
	w.walk(message.Header{Header: th}, bytes.NewReader(body), 0)
	if forwards < maxForwards && w.attached != nil {
		if orig := attachedOriginal(m, w.attached, forwards); orig != nil {
			return orig, nil
		}
	}
	if m.Text == "" && m.HTML == "" {
		return m, ErrNoBody
	}
	m.split()
	if forwards < maxForwards {
		unwrapInline(m, maxForwards-forwards)
	}
	m.Subject = trimForwardPrefix(m.Subject)
	m.DecimalComma = decimalComma(m)
	return m, nil
}

// split renders m's bodies into lines: TextLines, HTMLLines and Lines.
func (m *Message) split() {
	m.TextLines, m.HTMLLines = nil, nil
	if m.Text != "" {
		m.TextLines = textLines(m.Text)
	}
	if m.HTML != "" {
		m.HTMLLines = htmlLines(m.HTML)
	}
	m.pickLines()
}

// pickLines sets Lines: TextLines when there are any, else HTMLLines.
func (m *Message) pickLines() {
	m.Lines = m.TextLines
	if len(m.Lines) == 0 {
		m.Lines = m.HTMLLines
	}
}

// splitHeader cuts raw at the first empty line: the header block (with its
// last line's end) and the body after the empty line.
func splitHeader(raw []byte) (hdr, body []byte) {
	switch {
	case bytes.HasPrefix(raw, []byte("\r\n")):
		return nil, raw[2:]
	case bytes.HasPrefix(raw, []byte("\n")):
		return nil, raw[1:]
	}
	lf := bytes.Index(raw, []byte("\n\n"))
	crlf := bytes.Index(raw, []byte("\n\r\n"))
	switch {
	case lf >= 0 && (crlf < 0 || lf < crlf):
		return raw[:lf+1], raw[lf+2:]
	case crlf >= 0:
		return raw[:crlf+1], raw[crlf+3:]
	}
	return raw, nil
}

// walker collects a message's bodies into m, counting the parts it
// visits, and keeps the first message attached to it (message/rfc822),
// which may be a forwarded report.
type walker struct {
	m        *Message
	parts    int
	attached []byte
}

// walk visits the entity with header h and (still encoded) body r and its
// parts depth first, keeping the first plain-text and the first HTML body
// that are not attachments.
func (w *walker) walk(h message.Header, r io.Reader, depth int) {
	w.parts++
	if w.parts > maxParts || depth > maxDepth {
		return
	}
	typ, params, _ := h.ContentType() // a malformed parameter leaves the type readable
	if typ == "" {
		typ, params = "text/plain", nil // RFC 2045's default
	}
	typ = strings.ToLower(typ)
	if strings.HasPrefix(typ, "multipart/") {
		if params["boundary"] == "" {
			return
		}
		mr := textproto.NewMultipartReader(r, params["boundary"])
		for w.parts <= maxParts {
			part, err := mr.NextPart()
			if err != nil || part == nil {
				return
			}
			w.walk(message.Header{Header: part.Header}, part, depth+1)
		}
		return
	}
	if typ == "message/rfc822" {
		if w.attached == nil {
			w.attached = readAttached(h, r)
		}
		return
	}
	if disp, _, err := h.ContentDisposition(); err == nil && strings.EqualFold(disp, "attachment") {
		return
	}
	switch {
	case typ == "text/plain" && w.m.Text == "":
		w.m.Text = readBody(h, r, params["charset"])
	case typ == "text/html" && w.m.HTML == "":
		w.m.HTML = readBody(h, r, params["charset"])
	}
}

// readBody reads a body encoded as h says in charset into at most
// maxBodyBytes of valid UTF-8. Unknown encodings and charsets are read as
// they are.
func readBody(h message.Header, r io.Reader, charset string) string {
	enc := strings.ToLower(strings.TrimSpace(h.Get("Content-Transfer-Encoding")))
	// Encoded text is at most three times its decoded size (=XX).
	raw, _ := io.ReadAll(io.LimitReader(r, 3*maxBodyBytes+1024))
	var b []byte
	switch enc {
	case "quoted-printable":
		b = decodeQP(raw)
	case "base64":
		b = decodeBase64(raw)
	default:
		b = raw
	}
	if cs := strings.ToLower(strings.Trim(strings.TrimSpace(charset), `"`)); cs != "" && cs != "utf-8" && cs != "utf8" && cs != "us-ascii" && cs != "ascii" {
		if cr, err := gmcharset.Reader(cs, bytes.NewReader(b)); err == nil {
			if conv, err := io.ReadAll(io.LimitReader(cr, 4*maxBodyBytes)); err == nil || len(conv) > 0 {
				b = conv
			}
		}
	}
	if len(b) > maxBodyBytes {
		b = b[:maxBodyBytes]
	}
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// textLines splits a plain-text body into trimmed, non-blank lines.
func textLines(s string) []string {
	var out []string
	for line := range strings.SplitSeq(s, "\n") {
		if line = clean(cutLine(line)); line != "" {
			out = append(out, line)
		}
	}
	return out
}

// cutLine cuts s to at most maxLineBytes, at a character boundary.
func cutLine(s string) string {
	if len(s) <= maxLineBytes {
		return s
	}
	i := maxLineBytes
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

// clean collapses runs of spaces (including non-breaking ones) and trims.
func clean(s string) string {
	if isClean(s) {
		return s // the usual case: nothing to collapse, no copy
	}
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		switch r {
		case ' ', '\t', '\r', '\n', '\u00a0', '\u2007', '\u202f', '\v', '\f':
			space = true
			continue
		}
		if r == '\u200b' || r == '\ufeff' {
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

// isClean reports whether clean would return s unchanged: valid UTF-8,
// single spaces only between words, none of the other spaces clean
// collapses (for bytes past ASCII it answers false at the lead bytes of
// those, 0xC2, 0xE2 and 0xEF, leaving such text to clean itself).
func isClean(s string) bool {
	if s == "" {
		return true
	}
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	prevSpace := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == ' ':
			if prevSpace {
				return false
			}
			prevSpace = true
		case c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f', c == 0xC2 || c == 0xE2 || c == 0xEF:
			return false
		default:
			prevSpace = false
		}
	}
	return utf8.ValidString(s)
}

// zoneName returns the name of the zone off seconds east of UTC: "+0100".
func zoneName(off int) string {
	sign := '+'
	if off < 0 {
		sign, off = '-', -off
	}
	return fmt.Sprintf("%c%02d%02d", sign, off/3600, off/60%60)
}
