package mailparse

import (
	"io"
	netmail "net/mail"
	"regexp"
	"strings"
	"time"

	"github.com/emersion/go-message"
)

// Forwarded reports. A person or a mail rule may forward a product's
// report instead of the product sending it: inline, the original quoted
// below the forwarder's lines and a block of its header fields (as
// Outlook, Thunderbird, Apple Mail and webmail clients write it), or as an
// attached message/rfc822. Either way the report is read from the
// original: its subject, sender, Date (the zone that the body's times are
// read in) and body, without the forwarder's note or signature.

// maxForwards bounds how many forwards, one inside another, are unwrapped.
const maxForwards = 3

var (
	// fwdPrefixRe is a forward's subject prefixes, in the languages mail
	// clients write them ("Fwd:", "FW:", "WG:", "TR:", "RV:", "Doorst:").
	fwdPrefixRe = regexp.MustCompile(`(?i)^(?:\s*(?:fwd?|fw|wg|tr|rv|enc|doorst)\s*:)+\s*`)
	// fwdSeparatorRe is the line a client writes above the original's
	// header fields, lowercased.
	fwdSeparatorRe = regexp.MustCompile(`^(?:-{2,}\s*(?:forwarded message|original message|weitergeleitete nachricht|ursprüngliche nachricht|message transféré|message transfere|message d'origine|message original|doorgestuurd bericht|oorspronkelijk bericht|mensaje reenviado|mensaje original|messaggio inoltrato|messaggio originale)\s*-{2,}|(?:begin forwarded message|anfang der weitergeleiteten nachricht|début du message réexpédié|début du message transféré)\s*:?|_{10,})$`)
	// zoneAbbrevRe finds a zone abbreviation that a forward's Date field
	// may end in ("10 March 2026 at 03:41:12 CET").
	zoneAbbrevRe = regexp.MustCompile(`\b(UTC|GMT|UT|WET|WEST|BST|IST|CET|CEST|MEZ|MESZ|EET|EEST|MSK|EST|EDT|CST|CDT|MST|MDT|PST|PDT|AKST|AKDT|HST|AEST|AEDT|ACST|AWST|NZST|NZDT|JST|SGT)\b`)
)

// zoneAbbrevs are the offsets, in hours, of the zone abbreviations that
// zoneAbbrevRe finds.
var zoneAbbrevs = map[string]float64{
	"UTC": 0, "GMT": 0, "UT": 0, "WET": 0, "WEST": 1, "BST": 1, "IST": 1, "CET": 1, "CEST": 2, "MEZ": 1,
	"MESZ": 2, "EET": 2, "EEST": 3, "MSK": 3, "EST": -5, "EDT": -4, "CST": -6, "CDT": -5, "MST": -7,
	"MDT": -6, "PST": -8, "PDT": -7, "AKST": -9, "AKDT": -8, "HST": -10, "AEST": 10, "AEDT": 11,
	"ACST": 9.5, "AWST": 8, "NZST": 12, "NZDT": 13, "JST": 9, "SGT": 8,
}

// fwdField is which header field of the original a forward's line gives.
type fwdField uint8

const (
	fwdNone fwdField = iota
	fwdFrom
	fwdDate
	fwdSubject
	fwdTo
)

// fwdLabels are the labels of the original's header fields in a forward,
// lowercased, in the languages mail clients write them.
var fwdLabels = map[string]fwdField{
	"from": fwdFrom, "von": fwdFrom, "de": fwdFrom, "van": fwdFrom, "da": fwdFrom, "från": fwdFrom, "fra": fwdFrom,
	"date": fwdDate, "sent": fwdDate, "datum": fwdDate, "gesendet": fwdDate, "envoyé": fwdDate, "envoye": fwdDate,
	"verzonden": fwdDate, "enviado": fwdDate, "fecha": fwdDate, "inviato": fwdDate, "data": fwdDate, "skickat": fwdDate, "sendt": fwdDate,
	"subject": fwdSubject, "betreff": fwdSubject, "objet": fwdSubject, "onderwerp": fwdSubject, "asunto": fwdSubject,
	"oggetto": fwdSubject, "assunto": fwdSubject, "ämne": fwdSubject, "emne": fwdSubject,
	"to": fwdTo, "an": fwdTo, "à": fwdTo, "a": fwdTo, "aan": fwdTo, "para": fwdTo, "cc": fwdTo, "kopie": fwdTo,
	"reply-to": fwdTo, "antwort an": fwdTo, "répondre à": fwdTo,
}

// fwdHeader is the original's header as a forward quotes it.
type fwdHeader struct {
	from, date, subject string
}

// trimForwardPrefix returns subject without the prefixes forwards put in
// front of it ("FW: Fwd: [Failed] x" is "[Failed] x").
func trimForwardPrefix(subject string) string {
	if loc := fwdPrefixRe.FindStringIndex(subject); loc != nil && loc[1] < len(subject) {
		return subject[loc[1]:]
	}
	return subject
}

// readAttached reads an attached message's bytes, undoing a transfer
// encoding that some clients put on it, up to MaxMessageBytes.
func readAttached(h message.Header, r io.Reader) []byte {
	raw, _ := io.ReadAll(io.LimitReader(r, MaxMessageBytes))
	switch strings.ToLower(strings.TrimSpace(h.Get("Content-Transfer-Encoding"))) {
	case "base64":
		return decodeBase64(raw)
	case "quoted-printable":
		return decodeQP(raw)
	}
	return raw
}

// attachedOriginal returns the message attached to outer as the report
// to read, when outer forwards it: outer's subject has a forward's prefix
// or holds the original's subject, or outer's own text is a short note
// (at most 15 lines). It returns nil when the attached message cannot be
// read or outer is not its forward. The original keeps outer's Message-ID
// (the one the listener keys the mail by).
func attachedOriginal(outer *Message, raw []byte, forwards int) *Message {
	in, err := readMessage(raw, forwards+1)
	if err != nil || in == nil {
		return nil
	}
	outer.split()
	note := len(outer.TextLines) <= 15 && (len(outer.TextLines) > 0 || len(outer.HTMLLines) <= 15)
	if !fwdPrefixRe.MatchString(outer.Subject) && !(in.Subject != "" && strings.Contains(outer.Subject, in.Subject)) && !note {
		return nil
	}
	in.MessageID = outer.MessageID
	in.Forwarded = true
	return in
}

// unwrapInline reads an inline forward from its original, up to depth
// forwards deep: the lines after the original's quoted header fields
// become the bodies, and those fields the subject, sender and Date. It
// leaves m as it is when neither body holds such fields.
func unwrapInline(m *Message, depth int) {
	for range depth {
		subjFwd := fwdPrefixRe.MatchString(m.Subject)
		var hdr fwdHeader
		found := false
		if m.Text != "" {
			raw := strings.Split(m.Text, "\n")
			// findForwardHeader looks at the first 200 lines and a block
			// of at most 12 after them.
			view := make([]string, min(len(raw), 212))
			for i := range view {
				view[i] = clean(cutLine(stripQuote(raw[i])))
			}
			if start, end, h, ok := findForwardHeader(view, subjFwd); ok {
				quoted := strings.HasPrefix(strings.TrimSpace(raw[start]), ">")
				rest := raw[end:]
				if quoted {
					for i, l := range rest {
						rest[i] = unquoteOnce(l)
					}
				}
				m.Text = strings.Join(rest, "\n")
				m.TextLines = textLines(m.Text)
				hdr, found = h, true
			}
		}
		if len(m.HTMLLines) > 0 {
			if _, end, h, ok := findForwardHeader(m.HTMLLines, subjFwd); ok {
				m.HTMLLines = m.HTMLLines[end:]
				if !found {
					hdr, found = h, true
				}
			}
		}
		if !found {
			return
		}
		m.pickLines()
		m.Forwarded = true
		if hdr.subject != "" {
			m.Subject = clean(hdr.subject)
		}
		if hdr.from != "" {
			m.From = clean(hdr.from)
		}
		if t, ok := forwardDate(hdr.date, m); ok {
			m.Date = t
			_, off := t.Zone()
			m.Zone = time.FixedZone(zoneName(off), off)
		}
	}
}

// findForwardHeader finds the original's header fields in lines (cleaned,
// without quote marks): a run of "Label: value" lines (or "Label:\tvalue"
// cells) that gives at least the sender, the subject and the date or the
// recipient, either under a forward's separator line, in a mail whose
// subject is a forward's (subjFwd), or giving all four. It returns the
// run's first line, the line after it, and the fields; false when there is
// no such run in the first 200 lines.
func findForwardHeader(lines []string, subjFwd bool) (int, int, fwdHeader, bool) {
	for i := 0; i < len(lines) && i < 200; i++ {
		if k, _ := fwdHeaderLine(lines[i]); k == fwdNone {
			continue
		}
		var h fwdHeader
		seen := map[fwdField]bool{}
		j := i
		for ; j < len(lines) && j-i < 12; j++ {
			k, v := fwdHeaderLine(lines[j])
			if k == fwdNone {
				break
			}
			seen[k] = true
			switch k {
			case fwdFrom:
				if h.from == "" {
					h.from = v
				}
			case fwdDate:
				if h.date == "" {
					h.date = v
				}
			case fwdSubject:
				if h.subject == "" {
					h.subject = v
				}
			}
		}
		if seen[fwdFrom] && seen[fwdSubject] && (seen[fwdDate] || seen[fwdTo]) &&
			(subjFwd || separatorAbove(lines, i) || seen[fwdDate] && seen[fwdTo]) {
			return i, j, h, true
		}
		i = j
	}
	return 0, 0, fwdHeader{}, false
}

// separatorAbove reports whether one of the two non-blank lines above
// lines[i] is a forward's separator ("-------- Forwarded Message --------",
// "-----Original Message-----", "Begin forwarded message:", a rule of
// underscores).
func separatorAbove(lines []string, i int) bool {
	n := 0
	for k := i - 1; k >= 0 && n < 2; k-- {
		if lines[k] == "" {
			continue
		}
		n++
		if fwdSeparatorRe.MatchString(strings.ToLower(lines[k])) {
			return true
		}
	}
	return false
}

// fwdHeaderLine reads a line of a forward's header block ("From: x",
// "*Sent:* y", "De : z", "Subject:\tw"): which field it gives and the
// value; fwdNone when it is not such a line.
func fwdHeaderLine(l string) (fwdField, string) {
	l = strings.ReplaceAll(l, "*", "")
	label, value := "", ""
	if i := strings.IndexByte(l, '\t'); i > 0 {
		label, value = l[:i], strings.TrimSpace(strings.ReplaceAll(l[i+1:], "\t", " "))
	} else if i := strings.IndexByte(l, ':'); i > 0 && i <= 24 {
		label, value = l[:i], strings.TrimSpace(l[i+1:])
	} else {
		return fwdNone, ""
	}
	label = strings.ToLower(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(label), ":")))
	k := fwdLabels[label]
	if k == fwdNone || value == "" && k != fwdTo {
		return fwdNone, ""
	}
	return k, value
}

// stripQuote removes the quote marks ("> ", ">>") in front of a line.
func stripQuote(l string) string {
	t := strings.TrimLeft(l, " ")
	if !strings.HasPrefix(t, ">") {
		return l
	}
	return strings.TrimLeft(t, "> ")
}

// unquoteOnce removes one level of quoting ("> ") from a line, keeping the
// indentation after it.
func unquoteOnce(l string) string {
	t := strings.TrimLeft(l, " ")
	if !strings.HasPrefix(t, ">") {
		return l
	}
	t = t[1:]
	return strings.TrimPrefix(t, " ")
}

// forwardDate reads the Date a forward quotes for the original: RFC 5322
// ("Wed, 11 Mar 2026 19:07:33 +0100"), a date with a zone abbreviation
// ("10 March 2026 at 03:41:12 CET"), or as the client shows it without a
// zone ("Tuesday, March 10, 2026 10:31 PM", read in m's zone, the
// forwarder's). It returns false when v holds no full date and time.
func forwardDate(v string, m *Message) (time.Time, bool) {
	if v == "" {
		return time.Time{}, false
	}
	if t, err := netmail.ParseDate(v); err == nil {
		return t, true
	}
	zone := m.Zone
	if z := zoneAbbrevRe.FindString(v); z != "" {
		off := int(zoneAbbrevs[z] * 3600)
		zone = time.FixedZone(zoneName(off), off)
	}
	return ParseTime(v, zone, m.Date)
}
