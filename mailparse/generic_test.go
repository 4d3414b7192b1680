package mailparse

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
	integrity      bool
}

// testMail builds a complete RFC 5322 message; ctype is the body's
// Content-Type ("text/plain" or "text/html").
func testMail(from, subject, date, ctype, body string) []byte {
	if date == "" {
		date = "Tue, 03 Mar 2026 23:05:00 +0100"
	}
	return []byte(fmt.Sprintf("From: %s\r\nTo: ops@example.test\r\nSubject: %s\r\nDate: %s\r\nMessage-ID: <t.%d@example.test>\r\nMIME-Version: 1.0\r\nContent-Type: %s; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n%s",
		from, subject, date, len(body), ctype, strings.ReplaceAll(body, "\n", "\r\n")))
}

// wantBytes is a size a vendorCase checks.
func wantBytes(n int64) *int64 { return &n }

// sampleMail reads a sample e-mail of the shared test data.
func sampleMail(t *testing.T, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "testdata", path))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// runVendorCases parses each case with vendor's parser and checks it.
func runVendorCases(t *testing.T, vendor string, cases []vendorCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, _, err := Parse(vendor, c.raw)
			if c.wantUnreadable {
				var ue *UnreadableError
				if !errors.As(err, &ue) {
					t.Fatalf("want an *UnreadableError, got %v (status %s)", err, r.Status)
				}
				if strings.TrimSpace(ue.Reason) == "" {
					t.Fatal("the unreadable error gives no reason")
				}
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
			if r.IntegrityFailed != c.integrity {
				t.Errorf("integrityFailed = %v, want %v", r.IntegrityFailed, c.integrity)
			}
		})
	}
}

// notSilentlyOK checks that vendor's parser does not read another
// product's mail as a success: it must be unreadable (strict) or at least
// not ok.
func notSilentlyOK(t *testing.T, vendor, sample string, strict bool) {
	t.Helper()
	r, _, err := Parse(vendor, sampleMail(t, sample))
	var ue *UnreadableError
	switch {
	case err != nil && !errors.As(err, &ue):
		t.Errorf("%s: error %v is not an *UnreadableError", sample, err)
	case err == nil && r.Status == OK:
		t.Errorf("%s read by the %s parser as ok (job %q)", sample, vendor, r.JobName)
	case err == nil && strict:
		t.Errorf("%s read by the %s parser as %s, want unreadable", sample, vendor, r.Status)
	}
}

func TestGenericCases(t *testing.T) {
	plain := func(subject, body string) []byte {
		return testMail("backup@host.example.test", subject, "", "text/plain", body)
	}
	runVendorCases(t, "generic", []vendorCase{
		{name: "subject Backup OK", raw: plain("Backup OK: etc-tar", "tar: Removing leading `/' from member names\n"),
			status: OK, job: "etc-tar"},
		{name: "subject bracketed FAILED", raw: plain("[FAILED] offsite-rsync", "rsync error: some files could not be transferred (code 23)\n"),
			status: Failed, job: "offsite-rsync"},
		{name: "subject SUCCESS alone, job from the body", raw: plain("SUCCESS", "Job: media-sync\nHost: nas02\n"),
			status: OK, job: "media-sync"},
		{name: "subject ERROR alone", raw: plain("ERROR", "Host: db07\nError: disk quota exceeded on /backup\n"),
			status: Failed, job: "db07", summary: "disk quota exceeded on /backup"},
		{name: "State label", raw: plain("nightly dump", "Task: dump-crm\nState: completed with errors\nMessage: 1 table skipped\n"),
			status: Warn, job: "dump-crm", summary: "1 table skipped"},
		{name: "exit code", raw: plain("cron: pg-backup", "Job: pg-backup\nExit code: 2\nError: could not connect to server\n"),
			status: Failed, summary: "could not connect to server"},
		{name: "Verification failed keeps ok", raw: plain("Backup OK: vault", "Job: vault\nStatus: OK\nVerification: failed\nMessage: restore test could not read snapshot 9\n"),
			status: OK, integrity: true, summary: "restore test could not read snapshot 9"},
		{name: "label says worse than subject", raw: plain("Backup OK: photos", "Status: FAILED\nError: target unreachable\n"),
			status: Failed, summary: "target unreachable"},
		{name: "zero errors is no error", raw: plain("Backup completed: 0 errors, 0 warnings", "Job: docs\nSize: 0\n"),
			status: OK, job: "docs", size: wantBytes(0)},
		{name: "HTML table", raw: testMail("x@y.example.test", "report", "", "text/html",
			"<table><tr><td>Job</td><td>web-files</td></tr><tr><td>Outcome</td><td>Success</td></tr><tr><td>Bytes</td><td>4096</td></tr></table>"),
			status: OK, job: "web-files", size: wantBytes(4096)},
		{name: "unknown status label under a completed subject", raw: plain("sync completed", "Status: Pending review\n"),
			wantUnreadable: true},
		{name: "no status anywhere", raw: plain("Weekly newsletter", "Hello,\nhere is our weekly newsletter.\n"),
			wantUnreadable: true},
		{name: "empty body", raw: []byte("From: a@b.example.test\r\nSubject: x\r\n\r\n"), wantUnreadable: true},
	})
}

func TestGenericOtherVendorNotSilentlyOK(t *testing.T) {
	// The generic parser reads anything with a status, so it is only held
	// to never turning another product's failure or warning into ok.
	for _, s := range []string{"emails/veeam/03-failed.eml", "emails/datto/02-warning.eml", "emails/acronis/03-failed.eml"} {
		notSilentlyOK(t, "generic", s, false)
	}
}

// TestMyParsersNeverPanic feeds every sample, cut at many places and
// with its lines shuffled out, to the nakivo, backupexec, msp360, altaro,
// macrium and generic parsers: none may panic.
func TestMyParsersNeverPanic(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "*", "*", "*.eml"))
	if len(files) == 0 {
		t.Fatal("no samples")
	}
	vendors := []string{"nakivo", "backupexec", "msp360", "altaro", "macrium", "generic"}
	odd := [][]byte{
		nil, []byte("\r\n"), []byte("Subject: only a header"),
		testMail("a@b.example.test", "", "", "text/html", "<table><tr><td>\t</td><td></td></tr><tr><td>VM</td></tr><tr></tr></table><pre>\n\n</pre>"),
		testMail("a@b.example.test", "Job \"\" has completed:", "", "text/plain", "Status:\nStarted: 99/99/9999 99:99\nAlerts\n"),
		testMail("a@b.example.test", "[Hornetsecurity VM Backup] -  ()", "", "text/plain", "VM Name\tResult\n\t\nErrors\n"),
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, cut := range []int{len(raw) / 5, len(raw) / 3, len(raw) / 2, len(raw) * 4 / 5} {
			odd = append(odd, raw[:cut])
		}
		lines := strings.Split(string(raw), "\n")
		var kept []string
		for i, l := range lines {
			if i%3 != 1 {
				kept = append(kept, l)
			}
		}
		odd = append(odd, []byte(strings.Join(kept, "\n")))
	}
	for _, v := range vendors {
		for i, raw := range odd {
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Errorf("%s parser panicked on input %d: %v", v, i, p)
					}
				}()
				_, _, _ = Parse(v, raw)
			}()
		}
	}
}
