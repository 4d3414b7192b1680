package mailparse

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// seedMails returns every sample and variant e-mail, for the fuzz corpora.
func seedMails(tb testing.TB) [][]byte {
	tb.Helper()
	var out [][]byte
	for _, dir := range []string{sampleDir, variantDir} {
		files, _ := filepath.Glob(filepath.Join(dir, "*", "*.eml"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				tb.Fatal(err)
			}
			out = append(out, b)
		}
	}
	return out
}

func vendorList() []string {
	v := Vendors()
	sort.Strings(v)
	return v
}

// checkParse holds a parse to what Parse promises whatever the input: a
// result with a status, every field in range and valid text; or an
// *UnreadableError with a reason.
func checkParse(t *testing.T, vendor string, r Result, err error) {
	t.Helper()
	if err != nil {
		ue, ok := err.(*UnreadableError)
		if !ok || ue.Reason == "" {
			t.Fatalf("%s: error %T %v is not an *UnreadableError with a reason", vendor, err, err)
		}
		return
	}
	if r.Status < OK || r.Status > Failed {
		t.Fatalf("%s: status %d", vendor, r.Status)
	}
	if r.DurationSeconds < -1 || r.SizeBytes < -1 {
		t.Fatalf("%s: duration %d size %d", vendor, r.DurationSeconds, r.SizeBytes)
	}
	if utf8.RuneCountInString(r.Summary) > MaxSummary || !utf8.ValidString(r.Summary) || !utf8.ValidString(r.JobName) {
		t.Fatalf("%s: summary of %d characters, valid %v", vendor, utf8.RuneCountInString(r.Summary), utf8.ValidString(r.Summary))
	}
	for _, at := range []time.Time{r.StartedAt, r.CompletedAt} {
		if !at.IsZero() && (at.Year() < 1970 || at.Year() > 2200) {
			t.Fatalf("%s: time %v out of range", vendor, at)
		}
	}
}

// FuzzParse runs the whole path — header, MIME structure, charsets,
// transfer encodings, HTML, and every vendor's parser — on arbitrary
// bytes: no panic, and a result within its bounds.
func FuzzParse(f *testing.F) {
	for _, m := range seedMails(f) {
		f.Add(m)
	}
	f.Add([]byte("Subject: x\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/html\r\n\r\n<td>Status</td><td>Failed"))
	vendors := vendorList()
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, v := range vendors {
			r, _, err := Parse(v, raw)
			checkParse(t, v, r, err)
		}
	})
}

// FuzzRead: the decoding alone keeps its bounds on arbitrary bytes.
func FuzzRead(f *testing.F) {
	for _, m := range seedMails(f) {
		f.Add(m)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := Read(raw)
		if m == nil {
			if err == nil {
				t.Fatal("no message and no error")
			}
			return
		}
		if len(m.Text) > maxBodyBytes+4 || len(m.HTML) > maxBodyBytes+4 {
			t.Fatalf("bodies of %d and %d bytes", len(m.Text), len(m.HTML))
		}
		if len(m.HTMLLines) > maxLines {
			t.Fatalf("%d HTML lines", len(m.HTMLLines))
		}
		for _, l := range append(append([]string{}, m.TextLines...), m.HTMLLines...) {
			if strings.ContainsAny(l, "\r\n") || !utf8.ValidString(l) {
				t.Fatalf("line %q", l)
			}
		}
	})
}

// FuzzHTMLLines: any markup renders to bounded, single lines.
func FuzzHTMLLines(f *testing.F) {
	f.Add("<table><tr><td>Status</td><td>Failed</td></tr></table>")
	f.Add("<div><p>a<br>b</div><pre>x\ny</pre><script>z</script>")
	f.Add(strings.Repeat("<div>", 1000) + "deep")
	f.Fuzz(func(t *testing.T, src string) {
		lines := htmlLines(src)
		if len(lines) > maxLines {
			t.Fatalf("%d lines", len(lines))
		}
		for _, l := range lines {
			if strings.ContainsAny(l, "\n") {
				t.Fatalf("line with a newline: %q", l)
			}
		}
	})
}

// FuzzValues: the value readers never panic and stay in range.
func FuzzValues(f *testing.F) {
	for _, s := range []string{"6.84 GB", "184,302,118,912 bytes", "3,42 GB", "0:18:35", "1 hour, 14 minutes, and 35 seconds",
		"2/12/2026 11:00:04 PM (UTC+01:00)", "Wednesday, February 25, 2026 at 8:00:02 PM", "16. Februar 2026 14:00:12",
		"99999999999999999999 TB", "−05:00", "12:60:61", "1,536 MB", "1.536,5 GB", "1 536,5 Mo", "0,536 GB",
		"1.234.567.890 Bytes", "mar. 10 févr. 2026 à 03:00:00 (UTC +01:00)", "Tuesday, March 10, 2026 10:31 PM",
		"10 March 2026 at 03:41:12 CET", "Sent: Dienstag, 10. März 2026 22:31", "*From:* x <y@z>", "KV-FS02: the share is gone"} {
		f.Add(s)
	}
	ref := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		if v, ok := ParseSize(s); ok && v < 0 {
			t.Fatalf("ParseSize(%q) = %d", s, v)
		}
		if v, ok := ParseDuration(s); ok && v < 0 {
			t.Fatalf("ParseDuration(%q) = %d", s, v)
		}
		if at, ok := ParseTime(s, time.UTC, ref); ok && (at.Year() < 1970 || at.Year() > 2200) {
			t.Fatalf("ParseTime(%q) = %v", s, at)
		}
		if v, ok := parseSize(s, true); ok && v < 0 {
			t.Fatalf("parseSize(%q, decimal comma) = %d", s, v)
		}
		forwardDate(s, &Message{Zone: time.UTC, Date: ref})
		if k, v := fwdHeaderLine(s); k != fwdNone && v == "" && k != fwdTo {
			t.Fatalf("fwdHeaderLine(%q) = %d with no value", s, k)
		}
		if name, text, ok := namedLine(s); ok && (name == "" || text == "" || strings.ContainsAny(name, " \t")) {
			t.Fatalf("namedLine(%q) = %q, %q", s, name, text)
		}
		ParseClock(s, ref)
		StatusOf(s)
		FieldsOf(strings.Split(s, "\n"))
	})
}

// TestHostileMail: mails built to exhaust a reader — deep nesting, many
// parts, huge headers, endless base64, markup without end — are read (or
// refused) by every parser within a bounded allocation. Time is not
// measured here (bench/ does that); allocation is a count, not a clock.
func TestHostileMail(t *testing.T) {
	nested := func(depth int) []byte {
		var b bytes.Buffer
		b.WriteString("Subject: deep\r\nMIME-Version: 1.0\r\n")
		for i := range depth {
			b.WriteString("Content-Type: multipart/mixed; boundary=\"b" + itoa(i) + "\"\r\n\r\n--b" + itoa(i) + "\r\n")
		}
		b.WriteString("Content-Type: text/plain\r\n\r\nStatus: Failed\r\n")
		return b.Bytes()
	}
	manyParts := func(n int) []byte {
		var b bytes.Buffer
		b.WriteString("Subject: parts\r\nContent-Type: multipart/mixed; boundary=x\r\n\r\n")
		for range n {
			b.WriteString("--x\r\nContent-Type: application/octet-stream\r\n\r\nAAAA\r\n")
		}
		b.WriteString("--x--\r\n")
		return b.Bytes()
	}
	cases := []struct {
		name string
		raw  []byte
	}{
		{"10000 nested multiparts", nested(10000 / hostileScale)},
		{"100000 parts", manyParts(100000 / hostileScale)},
		{"a 9 MB header line", []byte("Subject: " + strings.Repeat("A", 9<<20/hostileScale) + "\r\n\r\nbody")},
		{"200000 header fields", []byte(strings.Repeat("X-A: b\r\n", 200000/hostileScale) + "\r\nbody")},
		{"9 MB of base64 on one line", []byte("Subject: b\r\nContent-Transfer-Encoding: base64\r\nContent-Type: text/html\r\n\r\n" + strings.Repeat("PGRpdj4=", (9<<20)/8/hostileScale))},
		{"9 MB of quoted-printable soft breaks", []byte("Subject: q\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n" + strings.Repeat("=\r\n", 3<<20/hostileScale))},
		{"9 MB of opening tags", []byte("Subject: h\r\nContent-Type: text/html\r\n\r\n" + strings.Repeat("<td><div>", 1<<20/hostileScale))},
		{"9 MB of one text line", []byte("Subject: t\r\n\r\nStatus: " + strings.Repeat("failed ", 9<<20/7/hostileScale))},
		{"a charset nobody knows", []byte("Subject: c\r\nContent-Type: text/plain; charset=x-unknown-42\r\n\r\nStatus: OK\r\n")},
	}
	vendors := vendorList()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if len(c.raw) > MaxMessageBytes+64 {
				t.Fatalf("case of %d bytes is over what the listener accepts", len(c.raw))
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			for _, v := range vendors {
				r, _, err := Parse(v, c.raw)
				checkParse(t, v, r, err)
			}
			runtime.ReadMemStats(&after)
			// Each parser reads the message once: allow 40 bytes allocated
			// per byte of input per vendor, plus a fixed 8 MiB each.
			limit := uint64(len(vendors)) * (40*uint64(len(c.raw)) + 8<<20)
			if got := after.TotalAlloc - before.TotalAlloc; got > limit {
				t.Errorf("allocated %d MiB for %d KiB of input across %d parsers (limit %d MiB)", got>>20, len(c.raw)>>10, len(vendors), limit>>20)
			}
		})
	}
}

func itoa(i int) string {
	var b [20]byte
	n := len(b)
	for {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
		if i == 0 {
			break
		}
	}
	return string(b[n:])
}
