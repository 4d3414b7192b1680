package mailparse

import (
	"strings"
	"testing"
	"time"
)

// TestForwardUnwrapping: a report forwarded inline by the usual mail
// clients, or attached as a message, is read from the original: its
// subject, sender, Date and body, without the forwarder's note.
func TestForwardUnwrapping(t *testing.T) {
	const report = "Status: Failed\nStarted: 2026-03-10 22:00:02\nMessage: disk full"
	orig := "From: backup@nas.example\r\nTo: it@example.test\r\nSubject: [Failed] Nightly\r\nDate: Tue, 10 Mar 2026 22:31:10 +0100\r\nMessage-ID: <orig@nas.example>\r\nContent-Type: text/plain\r\n\r\n" + strings.ReplaceAll(report, "\n", "\r\n") + "\r\n"
	attached := func(subject, note string) []byte {
		return []byte("From: Pat <pat@example.test>\r\nSubject: " + subject + "\r\nDate: Thu, 12 Mar 2026 08:00:00 -0500\r\nMessage-ID: <fwd@example.test>\r\n" +
			"Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\n" + note + "\r\n--b\r\nContent-Type: message/rfc822\r\nContent-Disposition: attachment\r\n\r\n" +
			orig + "\r\n--b--\r\n")
	}
	inline := func(subject, ctype, body string) []byte {
		return testMail("Pat <pat@example.test>", subject, "Thu, 12 Mar 2026 08:00:00 -0500", ctype, body)
	}
	plus1 := time.Date(2026, 3, 10, 22, 31, 10, 0, time.FixedZone("+0100", 3600))
	minus5 := func(h, m int) time.Time { return time.Date(2026, 3, 10, h, m, 0, 0, time.FixedZone("-0500", -5*3600)) }
	cases := []struct {
		name      string
		raw       []byte
		forwarded bool
		subject   string
		from      string
		date      time.Time // zero: the forward's own
		first     string    // the first line the parser reads
	}{
		{"Thunderbird", inline("Fwd: [Failed] Nightly", "text/plain",
			"FYI\n\n-------- Forwarded Message --------\nSubject: \t[Failed] Nightly\nDate: \tTue, 10 Mar 2026 22:31:10 +0100\nFrom: \tbackup@nas.example\nTo: \tit@example.test\n\n"+report),
			true, "[Failed] Nightly", "backup@nas.example", plus1, "Status: Failed"},
		{"Outlook plain text under a signature", inline("FW: [Failed] Nightly", "text/plain",
			"Hi,\nplease check.\nPat\nPhone 555\n\n-----Original Message-----\nFrom: backup@nas.example\nSent: Tuesday, March 10, 2026 10:31 PM\nTo: it@example.test\nSubject: [Failed] Nightly\n\n"+report),
			true, "[Failed] Nightly", "backup@nas.example", minus5(22, 31), "Status: Failed"},
		{"Outlook in German with a rule of underscores", inline("WG: [Failed] Nightly", "text/plain",
			"Zur Info\n\n________________________________\nVon: backup@nas.example\nGesendet: Dienstag, 10. März 2026 22:31\nAn: it@example.test\nBetreff: [Failed] Nightly\n\n"+report),
			true, "[Failed] Nightly", "backup@nas.example", minus5(22, 31), "Status: Failed"},
		{"Outlook in French", inline("TR: [Failed] Nightly", "text/plain",
			"Pour info\n\nDe : backup@nas.example\nEnvoyé : mardi 10 mars 2026 22:31\nÀ : it@example.test\nObjet : [Failed] Nightly\n\n"+report),
			true, "[Failed] Nightly", "backup@nas.example", minus5(22, 31), "Status: Failed"},
		{"Gmail", inline("Fwd: [Failed] Nightly", "text/plain",
			"see below\n\n---------- Forwarded message ---------\nFrom: Backup <backup@nas.example>\nDate: Tue, Mar 10, 2026 at 10:31 PM\nSubject: [Failed] Nightly\nTo: <it@example.test>\n\n\n"+report),
			true, "[Failed] Nightly", "Backup <backup@nas.example>", minus5(22, 31), "Status: Failed"},
		{"Apple Mail, quoted, a zone abbreviation", inline("Fwd: [Failed] Nightly", "text/plain",
			"Sent from my iPad\n\nBegin forwarded message:\n\n> From: backup@nas.example\n> Subject: [Failed] Nightly\n> Date: 10 March 2026 at 22:31:10 CET\n> To: it@example.test\n>\n> "+strings.ReplaceAll(report, "\n", "\n> ")),
			true, "[Failed] Nightly", "backup@nas.example", plus1, "Status: Failed"},
		{"Outlook HTML", inline("FW: [Failed] Nightly", "text/html",
			`<p>Hi</p><div id="divRplyFwdMsg"><b>From:</b> backup@nas.example<br><b>Sent:</b> Tuesday, March 10, 2026 10:31 PM<br><b>To:</b> it@example.test<br><b>Subject:</b> [Failed] Nightly</div><table><tr><td>Status</td><td>Failed</td></tr></table>`),
			true, "[Failed] Nightly", "backup@nas.example", minus5(22, 31), "Status\tFailed"},
		{"attached with a note", attached("FW: [Failed] Nightly", "See attached."), true, "[Failed] Nightly", "backup@nas.example", plus1, "Status: Failed"},
		{"attached under the original's subject", attached("[Failed] Nightly", strings.Repeat("A long note line.\r\n", 20)), true, "[Failed] Nightly", "backup@nas.example", plus1, "Status: Failed"},
		{"a forward of a forward", inline("Fwd: Fwd: [Failed] Nightly", "text/plain",
			"again\n\n-------- Forwarded Message --------\nSubject: Fwd: [Failed] Nightly\nDate: Wed, 11 Mar 2026 09:00:00 +0000\nFrom: Sam <sam@example.test>\nTo: pat@example.test\n\nfirst forward\n\n-------- Forwarded Message --------\nSubject: [Failed] Nightly\nDate: Tue, 10 Mar 2026 22:31:10 +0100\nFrom: backup@nas.example\nTo: it@example.test\n\n"+report),
			true, "[Failed] Nightly", "backup@nas.example", plus1, "Status: Failed"},
		{"a subject prefix alone is taken off", inline("FW: [Failed] Nightly", "text/plain", report),
			false, "[Failed] Nightly", "Pat <pat@example.test>", time.Time{}, "Status: Failed"},
		{"a report with From and Subject lines but no forward is left alone", inline("[Failed] Nightly", "text/plain",
			"From: the nightly job\nSubject: the database\n"+report),
			false, "[Failed] Nightly", "Pat <pat@example.test>", time.Time{}, "From: the nightly job"},
		{"an attachment that is not a forward is left alone", attached("Nightly report", strings.Repeat("The run went fine, details in the attached message.\r\n", 20)),
			false, "Nightly report", "Pat <pat@example.test>", time.Time{}, "The run went fine, details in the attached message."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := Read(c.raw)
			if err != nil {
				t.Fatal(err)
			}
			if m.Forwarded != c.forwarded || m.Subject != c.subject || m.From != c.from {
				t.Errorf("forwarded %v subject %q from %q, want %v %q %q", m.Forwarded, m.Subject, m.From, c.forwarded, c.subject, c.from)
			}
			wantDate := c.date
			if wantDate.IsZero() {
				wantDate = time.Date(2026, 3, 12, 8, 0, 0, 0, time.FixedZone("", -5*3600))
			}
			_, gotOff := m.Date.Zone()
			_, wantOff := wantDate.Zone()
			if !m.Date.Equal(wantDate) || gotOff != wantOff {
				t.Errorf("date %v, want %v", m.Date, wantDate)
			}
			if _, zoneOff := time.Date(2026, 1, 1, 0, 0, 0, 0, m.Zone).Zone(); zoneOff != wantOff {
				t.Errorf("zone offset %d, want %d", zoneOff, wantOff)
			}
			if len(m.Lines) == 0 || m.Lines[0] != c.first {
				t.Errorf("lines %q, want the first %q", m.Lines, c.first)
			}
			if strings.Contains(c.name, "attached") && c.forwarded && m.MessageID != "fwd@example.test" {
				t.Errorf("Message-ID %q, want the forward's", m.MessageID)
			}
		})
	}
}
