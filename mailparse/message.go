package mailparse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/emersion/go-message"
	_ "github.com/emersion/go-message/charset" // registers the charsets mails use
	"github.com/emersion/go-message/mail"
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
	Subject   string    // decoded, unfolded
	From      string    // the From header as written
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
}

// ErrNoBody is returned by Read for a message with no text or HTML body.
var ErrNoBody = errors.New("the message has no text or HTML body")

// Read decodes raw into a Message. It returns an error when the header
// cannot be read or the message has no readable body; unknown charsets and
// transfer encodings are read as they are rather than refused.
func Read(raw []byte) (*Message, error) {
	if len(raw) > MaxMessageBytes {
		return nil, fmt.Errorf("message of %d bytes is over the %d-byte limit", len(raw), MaxMessageBytes)
	}
	ent, err := message.ReadWithOptions(bytes.NewReader(raw), &message.ReadOptions{MaxHeaderBytes: maxHeaderBytes})
	if err != nil && ent == nil {
		return nil, fmt.Errorf("read header: %w", err)
	}
	m := &Message{Zone: time.UTC}
	h := mail.Header{Header: ent.Header}
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
	w.walk(ent, 0)
	if m.Text == "" && m.HTML == "" {
		return m, ErrNoBody
	}
	if m.Text != "" {
		m.TextLines = textLines(m.Text)
	}
	if m.HTML != "" {
		m.HTMLLines = htmlLines(m.HTML)
	}
	m.Lines = m.TextLines
	if len(m.Lines) == 0 {
		m.Lines = m.HTMLLines
	}
	return m, nil
}

// walker collects a message's bodies into m, counting the parts it visits.
type walker struct {
	m     *Message
	parts int
}

// walk visits ent and its parts depth first, keeping the first plain-text
// and the first HTML body that are not attachments.
func (w *walker) walk(ent *message.Entity, depth int) {
	w.parts++
	if w.parts > maxParts || depth > maxDepth {
		return
	}
	if mr := ent.MultipartReader(); mr != nil {
		for w.parts <= maxParts {
			part, err := mr.NextPart()
			if part == nil || (err != nil && !message.IsUnknownCharset(err) && !message.IsUnknownEncoding(err)) {
				return
			}
			w.walk(part, depth+1)
		}
		return
	}
	if disp, _, err := ent.Header.ContentDisposition(); err == nil && strings.EqualFold(disp, "attachment") {
		return
	}
	typ, _, err := ent.Header.ContentType()
	if err != nil || typ == "" {
		typ = "text/plain" // RFC 2045's default
	}
	switch {
	case typ == "text/plain" && w.m.Text == "":
		w.m.Text = readBody(ent.Body)
	case typ == "text/html" && w.m.HTML == "":
		w.m.HTML = readBody(ent.Body)
	}
}

// readBody reads at most maxBodyBytes of a decoded body, as valid UTF-8.
func readBody(r io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(r, maxBodyBytes))
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
	var b strings.Builder
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

// zoneName returns the name of the zone off seconds east of UTC: "+0100".
func zoneName(off int) string {
	sign := '+'
	if off < 0 {
		sign, off = '-', -off
	}
	return fmt.Sprintf("%c%02d%02d", sign, off/3600, off/60%60)
}

// decodeWords decodes RFC 2047 encoded words, leaving s as it is on error.
func decodeWords(s string) string {
	d, err := (&mime.WordDecoder{}).DecodeHeader(s)
	if err != nil {
		return s
	}
	return d
}
