package mailparse

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The helpers the vendor tests share: mails to parse, table tests, and the
// checks every parser is held to (refusing other products' mails, never
// panicking).

// testMail builds a complete RFC 5322 message; ctype is the body's
// Content-Type ("text/plain" or "text/html"), date "" a fixed date.
func testMail(from, subject, date, ctype, body string) []byte {
	if date == "" {
		date = "Tue, 03 Mar 2026 23:05:00 +0100"
	}
	return []byte(fmt.Sprintf("From: %s\r\nTo: ops@example.test\r\nSubject: %s\r\nDate: %s\r\nMessage-ID: <t.%d@example.test>\r\nMIME-Version: 1.0\r\nContent-Type: %s; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n%s",
		from, subject, date, len(body), ctype, strings.ReplaceAll(body, "\n", "\r\n")))
}

// sampleMail reads a sample e-mail of the shared test data (path under
// ../testdata, as "emails/veeam/01-success.eml").
func sampleMail(t *testing.T, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "testdata", path))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// vendorCase is one row of a vendor's table test: a mail and what its
// parse must say. Fields left at their zero value are not checked, except
// the status; wantUnreadable expects an *UnreadableError.
type vendorCase struct {
	name           string
	raw            []byte
	wantUnreadable bool
	status         Status
	job            string
	summary        string
	size           *int64 // nil: not checked; -1: none
	duration       *int64 // seconds; nil: not checked; -1: none
	start, end     string // RFC 3339 in UTC; "": not checked; noTime: none
	integrity      bool
}

// wantBytes is a size a vendorCase checks.
func wantBytes(n int64) *int64 { return &n }

// wantSeconds is a duration a vendorCase checks.
func wantSeconds(n int64) *int64 { return &n }

// noTime is the start or end of a vendorCase whose mail states none.
const noTime = "none"

// checkCaseTime fails t unless at, the time field name of a parse, is want
// (see vendorCase's start and end).
func checkCaseTime(t *testing.T, name string, at time.Time, want string) {
	t.Helper()
	got := noTime
	if !at.IsZero() {
		got = at.UTC().Format(time.RFC3339)
	}
	if want != "" && got != want {
		t.Errorf("%s = %s, want %s", name, got, want)
	}
}

// plainMail returns a builder of plain-text test mails from from, sent at
// date, by their subject and body.
func plainMail(from, date string) func(subject, body string) []byte {
	return func(subject, body string) []byte { return testMail(from, subject, date, "text/plain", body) }
}

// runVendorCases parses each case with vendor's parser and checks it.
func runVendorCases(t *testing.T, vendor string, cases []vendorCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, _, err := Parse(vendor, c.raw)
			if c.wantUnreadable {
				checkUnreadable(t, c.name, r, err)
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if r.Status != c.status {
				t.Errorf("status = %s, want %s", r.Status, c.status)
			}
			if c.job != "" && r.JobName != c.job {
				t.Errorf("jobName = %q, want %q", r.JobName, c.job)
			}
			if c.summary != "" && r.Summary != c.summary {
				t.Errorf("summary = %q\n want %q", r.Summary, c.summary)
			}
			if c.status == OK && !c.integrity && r.Summary != "" {
				t.Errorf("summary = %q for a clean success", r.Summary)
			}
			if c.size != nil && r.SizeBytes != *c.size {
				t.Errorf("sizeBytes = %d, want %d", r.SizeBytes, *c.size)
			}
			if c.duration != nil && r.DurationSeconds != *c.duration {
				t.Errorf("durationSeconds = %d, want %d", r.DurationSeconds, *c.duration)
			}
			checkCaseTime(t, "startedAt", r.StartedAt, c.start)
			checkCaseTime(t, "completedAt", r.CompletedAt, c.end)
			if r.IntegrityFailed != c.integrity {
				t.Errorf("integrityFailed = %v, want %v", r.IntegrityFailed, c.integrity)
			}
		})
	}
}

// integrityCase is a message of a mail and whether it tells of a failed
// integrity check.
type integrityCase struct {
	msg  string
	want bool
}

// checkIntegrityWords fails t for each case whose message re, a parser's
// integrity words, reads otherwise than the case wants.
func checkIntegrityWords(t *testing.T, re *regexp.Regexp, cases []integrityCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.msg, func(t *testing.T) {
			if got := re.MatchString(c.msg); got != c.want {
				t.Errorf("integrity(%q) = %v, want %v", c.msg, got, c.want)
			}
		})
	}
}

// unreadableCase is a mail, by its subject and body, that a parser must
// refuse.
type unreadableCase struct{ name, subject, body string }

// runUnreadableCases wants vendor's parser to refuse the mail that mail
// builds from each case's subject and body (expectUnreadable).
func runUnreadableCases(t *testing.T, vendor string, mail func(subject, body string) []byte, cases []unreadableCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			expectUnreadable(t, vendor, mail(c.subject, c.body))
		})
	}
}

// checkUnreadable fails t unless err, what a parse of what returned with
// r, is an *UnreadableError with a reason.
func checkUnreadable(t *testing.T, what string, r Result, err error) {
	t.Helper()
	var ue *UnreadableError
	if !errors.As(err, &ue) {
		t.Errorf("%s: Parse = %+v, %v; want an *UnreadableError", what, r, err)
		return
	}
	if strings.TrimSpace(ue.Reason) == "" {
		t.Errorf("%s: the unreadable error gives no reason", what)
	}
}

// expectUnreadable parses raw with vendor's parser and wants an
// *UnreadableError with a reason.
func expectUnreadable(t *testing.T, vendor string, raw []byte) {
	t.Helper()
	r, _, err := Parse(vendor, raw)
	checkUnreadable(t, vendor+" parser", r, err)
}

// notSilentlyOK checks that vendor's parser does not read another
// product's mail (sample, a path for sampleMail) as a success: it must be
// unreadable (strict) or at least not ok.
func notSilentlyOK(t *testing.T, vendor, sample string, strict bool) {
	t.Helper()
	r, _, err := Parse(vendor, sampleMail(t, sample))
	what := sample + " read by the " + vendor + " parser"
	if strict || err != nil {
		checkUnreadable(t, what, r, err)
		return
	}
	if r.Status == OK {
		t.Errorf("%s as ok (job %q)", what, r.JobName)
	}
}

// expectForeignRefused parses other vendors' samples with vendor's parser:
// none may come out as a clean success; the one named strict (under
// testdata/emails) must be refused as unreadable.
func expectForeignRefused(t *testing.T, vendor, strict string) {
	t.Helper()
	notSilentlyOK(t, vendor, filepath.Join("emails", strict), true)
	files, _ := filepath.Glob(filepath.Join(sampleDir, "*", "*.eml"))
	for _, f := range files {
		if filepath.Base(filepath.Dir(f)) == vendor {
			continue
		}
		notSilentlyOK(t, vendor, filepath.Join("emails", filepath.Base(filepath.Dir(f)), filepath.Base(f)), false)
	}
}

// TestParsersNeverPanic holds every parser to expectNoPanic, the parsers
// side by side.
func TestParsersNeverPanic(t *testing.T) {
	for _, v := range vendorList() {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			expectNoPanic(t, v)
		})
	}
}

// expectNoPanic feeds vendor's parser every sample cut short at many
// places (its own variants too), every sample and variant cut at a few
// places and with every third line left out, odd mails and odd line
// structures, and wants no panic.
func expectNoPanic(t *testing.T, vendor string) {
	t.Helper()
	parse := func(what string, raw []byte) {
		defer func() {
			if v := recover(); v != nil {
				t.Errorf("%s parser panicked on %s: %v", vendor, what, v)
			}
		}()
		_, _, _ = Parse(vendor, raw)
	}
	files, _ := filepath.Glob(filepath.Join(sampleDir, "*", "*.eml"))
	more, _ := filepath.Glob(filepath.Join(variantDir, vendor, "*.eml"))
	for _, f := range append(files, more...) {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		step := max(len(raw)/60, 1)
		for n := 0; n <= len(raw); n += step {
			parse(fmt.Sprintf("%s cut at %d", f, n), raw[:n])
		}
	}
	all, _ := filepath.Glob(filepath.Join("..", "testdata", "*", "*", "*.eml"))
	if len(all) == 0 {
		t.Fatal("no samples")
	}
	for _, f := range all {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, cut := range []int{len(raw) / 5, len(raw) / 3, len(raw) / 2, len(raw) * 4 / 5} {
			parse(fmt.Sprintf("%s cut at %d", f, cut), raw[:cut])
		}
		var kept []string
		for i, l := range strings.Split(string(raw), "\n") {
			if i%3 != 1 {
				kept = append(kept, l)
			}
		}
		parse(f+" with every third line left out", []byte(strings.Join(kept, "\n")))
	}
	for i, raw := range [][]byte{
		nil, []byte("\r\n"), []byte("Subject: only a header"),
		testMail("a@b.example.test", "", "", "text/html", "<table><tr><td>\t</td><td></td></tr><tr><td>VM</td></tr><tr></tr></table><pre>\n\n</pre>"),
		testMail("a@b.example.test", "Job \"\" has completed:", "", "text/plain", "Status:\nStarted: 99/99/9999 99:99\nAlerts\n"),
		testMail("a@b.example.test", "[Hornetsecurity VM Backup] -  ()", "", "text/plain", "VM Name\tResult\n\t\nErrors\n"),
	} {
		parse(fmt.Sprintf("odd mail %d", i), raw)
	}
	p := parsers[vendor]
	odd := [][]string{
		nil, {""}, {"\t"}, {"\t\t\t"}, {":"}, {"Status:"}, {"Status\t"}, {"Errors"}, {"Errors:", ""},
		{"Backup job:", "\t", "Start time"}, {"Backup job: x", "Start time\t", "Name\tStatus", "a"},
		{"Name\tStatus\tDetails", "a\tFailed"}, {"Task: x", "x"}, {"Task: x", "The backup task x on"},
		{"Device name\tx", "Status\tIn process"}, {"Protected machine: x", "Status: Backup Failed", "Error"},
		{"Protection plan: p", "Status: Failed", "Errors:"},
	}
	for _, lines := range odd {
		for _, m := range []*Message{
			{Lines: lines, HTMLLines: lines, TextLines: lines},
			{Lines: lines, HTMLLines: lines, Zone: time.UTC, Date: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), Subject: "[Failed] x (Retry 1)"},
		} {
			func() {
				defer func() {
					if v := recover(); v != nil {
						t.Errorf("%s parser panicked on %q: %v", vendor, lines, v)
					}
				}()
				_, _ = p.Parse(m)
			}()
		}
	}
}
