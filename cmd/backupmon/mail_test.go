package main

// End-to-end tests of report e-mails (decisions.md 10) against the real
// binary: a standard-library SMTP client sends the sample e-mails and
// e-mails built here to `backupmon serve --smtp-listen`, and the admin and
// REST APIs show what became of them.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/smtp"
	"net/textproto"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"backupmon/internal/testserver"
)

// mlT0 is where the tests' development clock starts.
var mlT0 = time.Date(2026, 3, 16, 9, 0, 0, 0, time.UTC)

const mlSampleDir = "../../testdata/emails"

// mlServer is one backupmon child listening for e-mail, with a workspace,
// a client and a REST key.
type mlServer struct {
	t *testing.T
	c *testserver.Child

	ws, client, restKey string
}

func mlFlags() []string { return []string{"--dev-clock", "--smtp-listen", "127.0.0.1:0"} }

func mlStart(t *testing.T) *mlServer {
	t.Helper()
	s := &mlServer{t: t, c: testserver.StartChild(t, "mail server", t.TempDir(), mlFlags()...)}
	s.c.NeedSMTP()
	s.c.SetClock(mlT0)
	s.ws = s.c.NewWorkspace(map[string]any{"name": "Mail MSP", "plan": "pro"})
	s.client = s.c.NewClient(s.ws, "Acme")
	s.restKey, _ = s.c.NewKey(s.ws, "rest", map[string]any{"name": "dashboard"})
	return s
}

func (s *mlServer) path(p string) string { return "/workspaces/" + s.ws + p }

// adminError makes an admin call that must fail with want and returns the
// answer's body.
func (s *mlServer) adminError(method, path string, want int) string {
	s.t.Helper()
	return string(s.c.MustAdmin(want, method, path, nil).Body)
}

// restart stops the child with SIGKILL and starts it again.
func (s *mlServer) restart() {
	s.t.Helper()
	s.c = s.c.Restart("mail server after SIGKILL", mlFlags()...)
}

// job makes a daily job of vendor and returns its id and ingest address.
func (s *mlServer) job(name, vendor string) (string, string) {
	s.t.Helper()
	var j struct {
		ID            string
		IngestAddress string
	}
	s.c.AdminInto(201, "POST", s.path("/jobs"), map[string]any{
		"clientId": s.client, "name": name, "vendor": vendor,
		"device":   map[string]any{"name": "srv", "type": "server", "hostname": "srv-" + name},
		"schedule": map[string]any{"intervalMinutes": 1440},
	}, &j)
	if !regexp.MustCompile(`^[a-z2-7]{20}@ingest\.localhost$`).MatchString(j.IngestAddress) {
		s.t.Fatalf("job %s: ingestAddress %q", name, j.IngestAddress)
	}
	return j.ID, j.IngestAddress
}

type mlResult struct {
	ID              string   `json:"id"`
	Status          string   `json:"status"`
	CompletedAt     string   `json:"completedAt"`
	StartedAt       *string  `json:"startedAt"`
	ReceivedAt      string   `json:"receivedAt"`
	DurationSeconds *int64   `json:"durationSeconds"`
	SizeBytes       *float64 `json:"sizeBytes"`
	Source          string   `json:"source"`
}

type mlJob struct {
	Status           string      `json:"status"`
	LastResult       string      `json:"lastResult"`
	IngestAddress    string      `json:"ingestAddress"`
	History          []mlResult  `json:"history"`
	UnresolvedAlerts []dashAlert `json:"unresolvedAlerts"`
}

func (s *mlServer) jobDetail(id string) mlJob {
	s.t.Helper()
	var j mlJob
	s.c.AdminInto(200, "GET", s.path("/jobs/"+id), nil, &j)
	return j
}

// alerts returns every alert of the workspace, newest first.
func (s *mlServer) alerts() []dashAlert {
	s.t.Helper()
	var list []dashAlert
	s.c.AdminInto(200, "GET", s.path("/alerts"), nil, &list)
	return list
}

// rest GETs a REST API path with the workspace's key and decodes the body.
func (s *mlServer) rest(path string, out any) string {
	s.t.Helper()
	r := s.c.REST(s.restKey, path)
	if r.Status != 200 || !json.Valid(r.Body) {
		s.t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
	}
	if out != nil {
		if err := json.Unmarshal(r.Body, out); err != nil {
			s.t.Fatal(err)
		}
	}
	return string(bytes.TrimSpace(r.Body))
}

// mlConn is one SMTP client connection to the server.
type mlConn struct {
	c *smtp.Client
}

func (s *mlServer) dial() *mlConn {
	s.t.Helper()
	c, err := smtp.Dial(s.c.SMTPAddr)
	if err != nil {
		s.t.Fatal(err)
	}
	if err := c.Hello("backup-server.example"); err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { c.Close() })
	return &mlConn{c: c}
}

// send runs one mail transaction; the error is the server's refusal (a
// *textproto.Error) at whichever step it came.
func (m *mlConn) send(to string, raw []byte) error {
	if err := m.c.Mail("backups@backup-server.example"); err != nil {
		return err
	}
	if err := m.c.Rcpt(to); err != nil {
		m.c.Reset()
		return err
	}
	w, err := m.c.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write(raw); err != nil {
		return err
	}
	return w.Close()
}

// send delivers raw to one address on a connection of its own.
func (s *mlServer) send(to string, raw []byte) error {
	s.t.Helper()
	m := s.dial()
	defer m.c.Quit()
	return m.send(to, raw)
}

func (s *mlServer) mustSend(to string, raw []byte) {
	s.t.Helper()
	if err := s.send(to, raw); err != nil {
		s.t.Fatalf("send to %s: %v", to, err)
	}
}

// mlCode returns the SMTP code and text of a refusal.
func mlCode(err error) (int, string) {
	var te *textproto.Error
	if errors.As(err, &te) {
		return te.Code, te.Msg
	}
	return 0, fmt.Sprint(err)
}

type mlSample struct {
	path, vendor string
	raw          []byte
	want         struct {
		Status          string  `json:"status"`
		CompletedAt     string  `json:"completedAt"`
		StartedAt       string  `json:"startedAt"`
		DurationSeconds *int64  `json:"durationSeconds"`
		SizeBytes       *int64  `json:"sizeBytes"`
		Summary         *string `json:"summary"`
		IntegrityFailed bool    `json:"integrityFailed"`
	}
	completed time.Time
}

func mlSamples(t *testing.T) []*mlSample {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(mlSampleDir, "*", "*.eml"))
	if len(files) < 33 {
		t.Fatalf("%d sample e-mails under %s, want the 33 of the eleven vendors", len(files), mlSampleDir)
	}
	var out []*mlSample
	for _, f := range files {
		sm := &mlSample{path: f, vendor: filepath.Base(filepath.Dir(f))}
		var err error
		if sm.raw, err = os.ReadFile(f); err != nil {
			t.Fatal(err)
		}
		js, err := os.ReadFile(strings.TrimSuffix(f, ".eml") + ".json")
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(js, &sm.want); err != nil {
			t.Fatal(err)
		}
		if sm.completed, err = time.Parse(time.RFC3339, sm.want.CompletedAt); err != nil {
			t.Fatal(err)
		}
		out = append(out, sm)
	}
	sort.Slice(out, func(i, k int) bool { return out[i].completed.Before(out[k].completed) })
	return out
}

var mlJobStatus = map[string]string{"ok": "healthy", "warn": "warning", "failed": "failed"}
var mlResultStatus = map[string]string{"ok": "ok", "warn": "warning", "failed": "failed"}

// TestMailSamples sends every sample e-mail to a job of its vendor, ten
// minutes after the run it reports ended (by the development clock), and
// checks the result, the job and the alert as the Report API would make
// them, with the mail's own text and the catalogue's suggestion.
func TestMailSamples(t *testing.T) {
	s := mlStart(t)
	for i, sm := range mlSamples(t) {
		name := fmt.Sprintf("%s-%02d", sm.vendor, i)
		t.Run(strings.TrimPrefix(sm.path, mlSampleDir+"/"), func(t *testing.T) {
			s.t = t
			s.c.SetClock(sm.completed.Add(10 * time.Minute))
			jobID, addr := s.job(name, sm.vendor)
			s.mustSend(addr, sm.raw)

			j := s.jobDetail(jobID)
			if len(j.History) != 1 {
				t.Fatalf("history has %d results, want 1", len(j.History))
			}
			r := j.History[0]
			if r.Status != mlResultStatus[sm.want.Status] || r.Source != "email:"+sm.vendor {
				t.Errorf("result status %q source %q, want %q email:%s", r.Status, r.Source, mlResultStatus[sm.want.Status], sm.vendor)
			}
			if want := sm.completed.UTC().Format(testserver.TimeLayout); r.CompletedAt != want {
				t.Errorf("completedAt %s, want the mail's %s", r.CompletedAt, want)
			}
			if sm.want.DurationSeconds != nil {
				if r.DurationSeconds == nil || *r.DurationSeconds != *sm.want.DurationSeconds {
					t.Errorf("durationSeconds %v, want %d", r.DurationSeconds, *sm.want.DurationSeconds)
				}
				started, _ := time.Parse(time.RFC3339, sm.want.StartedAt)
				if r.StartedAt == nil || *r.StartedAt != started.UTC().Format(testserver.TimeLayout) {
					t.Errorf("startedAt %v, want %s", r.StartedAt, started.UTC().Format(testserver.TimeLayout))
				}
			}
			switch {
			case sm.want.SizeBytes == nil || *sm.want.SizeBytes == 0:
				if r.SizeBytes != nil {
					t.Errorf("sizeBytes %v, want null (none or 0)", *r.SizeBytes)
				}
			case r.SizeBytes == nil || math.Abs(*r.SizeBytes-float64(*sm.want.SizeBytes)) > 0.06*float64(*sm.want.SizeBytes):
				t.Errorf("sizeBytes %v, want %d within 6%%", r.SizeBytes, *sm.want.SizeBytes)
			}
			if j.Status != mlJobStatus[sm.want.Status] || j.LastResult != mlResultStatus[sm.want.Status] {
				t.Errorf("job status %q lastResult %q after a %s mail", j.Status, j.LastResult, sm.want.Status)
			}
			switch sm.want.Status {
			case "ok":
				if len(j.UnresolvedAlerts) != 0 {
					t.Errorf("a clean success opened %+v", j.UnresolvedAlerts)
				}
			default:
				if len(j.UnresolvedAlerts) != 1 {
					t.Fatalf("%d unresolved alerts, want 1", len(j.UnresolvedAlerts))
				}
				a := j.UnresolvedAlerts[0]
				wantType, wantSev := "failed", "critical"
				if sm.want.Status == "warn" {
					wantType, wantSev = "warning", "warning"
				}
				if a.Type != wantType || a.Severity != wantSev || a.Status != "open" || a.Summary != *sm.want.Summary {
					t.Errorf("alert %+v, want %s/%s open with summary %q", a, wantType, wantSev, *sm.want.Summary)
				}
				if a.AI == nil || a.AI.LikelyCause == "" || !mlCategories[a.AI.Category] || !mlConfidences[a.AI.Confidence] {
					t.Errorf("alert ai %+v, want a suggestion for %q", a.AI, a.Summary)
				}
			}
			// The REST API shows the result, and none of the mail.
			var page struct {
				Data []map[string]any `json:"data"`
			}
			body := s.rest("/reports?jobId="+jobID, &page)
			if len(page.Data) != 1 || page.Data[0]["status"] != mlResultStatus[sm.want.Status] {
				t.Errorf("REST /reports: %s", body)
			}
			for _, word := range []string{"email", "ingest", "@"} {
				if strings.Contains(body, word) {
					t.Errorf("REST /reports shows %q: %s", word, body)
				}
			}
		})
	}
	s.t = t
	if got := s.c.Metric(`backupmon_mail_received_total{outcome="recorded",vendor="veeam"}`); got != 3 {
		t.Errorf("metrics count %v recorded veeam mails, want 3", got)
	}
}

var (
	mlCategories  = map[string]bool{"storage": true, "network": true, "credentials": true, "snapshot": true, "agent": true, "source": true, "schedule": true, "license": true, "configuration": true, "unknown": true}
	mlConfidences = map[string]bool{"low": true, "medium": true, "high": true}
)

// mlGeneric builds a generic report e-mail of a run that ended at end.
func mlGeneric(id, status string, end time.Time, message, verification string) []byte {
	start := end.Add(-90 * time.Second)
	var b strings.Builder
	fmt.Fprintf(&b, "From: backups@db01.example\r\nTo: reports@ingest.localhost\r\nSubject: Backup %s: nightly-dump\r\n", status)
	fmt.Fprintf(&b, "Date: %s\r\nMessage-ID: <%s@db01.example>\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n", end.Format(time.RFC1123Z), id)
	fmt.Fprintf(&b, "Job:          nightly-dump\r\nHost:         db01\r\nStatus:       %s\r\n", status)
	fmt.Fprintf(&b, "Started:      %s\r\nFinished:     %s\r\n", start.Format("2006-01-02 15:04:05 -0700"), end.Format("2006-01-02 15:04:05 -0700"))
	fmt.Fprintf(&b, "Duration:     90s\r\nSize:         1.5 GB\r\nVerification: %s\r\nMessage:      %s\r\n", verification, message)
	return []byte(b.String())
}

// TestMailJobFollowsReports: a job's status and alert follow its e-mails
// as they follow Report API reports — failed opens, warn raises (severity
// stays), a resent Message-ID is a duplicate, ok resolves, and a failed
// verification in an otherwise good run opens an integrity alert.
func TestMailJobFollowsReports(t *testing.T) {
	s := mlStart(t)
	jobID, addr := s.job("nightly-dump", "generic")
	at := mlT0

	step := func(d time.Duration) time.Time { at = at.Add(d); s.c.SetClock(at); return at }
	end := step(time.Hour)
	failed := mlGeneric("run-1", "FAILED", end.Add(-time.Minute), "pg_dump: error: could not write to output file: No space left on device", "skipped")
	s.mustSend(addr, failed)
	j := s.jobDetail(jobID)
	if j.Status != "failed" || len(j.UnresolvedAlerts) != 1 {
		t.Fatalf("after a failed mail: status %q, alerts %+v", j.Status, j.UnresolvedAlerts)
	}
	a := j.UnresolvedAlerts[0]
	if a.Type != "failed" || a.Severity != "critical" || a.Summary != "pg_dump: error: could not write to output file: No space left on device" {
		t.Errorf("failed alert %+v", a)
	}
	if a.AI == nil || a.AI.Category != "storage" {
		t.Errorf("a full disk's alert suggests %+v, want the storage category", a.AI)
	}
	alertID := a.ID

	// The same e-mail again (a sending server's retry): 250, nothing new.
	step(time.Minute)
	s.mustSend(addr, failed)
	if j := s.jobDetail(jobID); len(j.History) != 1 {
		t.Errorf("a resent Message-ID made %d results, want 1", len(j.History))
	}
	if got := s.c.Metric(`backupmon_mail_received_total{outcome="duplicate",vendor="generic"}`); got != 1 {
		t.Errorf("metrics count %v duplicates, want 1", got)
	}

	end = step(time.Hour)
	s.mustSend(addr, mlGeneric("run-2", "WARNING", end.Add(-time.Minute), "3 files changed while being read", "passed"))
	j = s.jobDetail(jobID)
	a = j.UnresolvedAlerts[0]
	if j.Status != "warning" || a.ID != alertID || a.Type != "warning" || a.Severity != "critical" || a.Summary != "3 files changed while being read" {
		t.Errorf("after a warning mail: job %q, alert %+v; want the same alert raised to warning, severity kept critical", j.Status, a)
	}

	end = step(time.Hour)
	s.mustSend(addr, mlGeneric("run-3", "OK", end.Add(-time.Minute), "-", "passed"))
	j = s.jobDetail(jobID)
	if j.Status != "healthy" || len(j.UnresolvedAlerts) != 0 {
		t.Fatalf("after an ok mail: status %q, alerts %+v", j.Status, j.UnresolvedAlerts)
	}
	resolved := s.alerts()[0]
	if resolved.ID != alertID || resolved.Status != "resolved" || resolved.RecoverySeconds == nil || *resolved.RecoverySeconds != int64(2*time.Hour/time.Second)+60 {
		t.Errorf("resolved alert %+v, want %s resolved after 2h01m", resolved, alertID)
	}

	end = step(time.Hour)
	s.mustSend(addr, mlGeneric("run-4", "OK", end.Add(-time.Minute), "restore test: checksum mismatch in dump file", "failed"))
	j = s.jobDetail(jobID)
	if len(j.UnresolvedAlerts) != 1 || j.LastResult != "ok" {
		t.Fatalf("after an ok run whose verification failed: lastResult %q, alerts %+v", j.LastResult, j.UnresolvedAlerts)
	}
	if a := j.UnresolvedAlerts[0]; a.Type != "integrity" || a.Severity != "critical" || a.ID == alertID {
		t.Errorf("integrity alert %+v, want a new integrity/critical alert", a)
	}
	if got := len(j.History); got != 4 {
		t.Errorf("history has %d results, want 4", got)
	}
}

// TestMailRefusals: the SMTP answers that refuse an e-mail, each at the
// step the contract puts it, and each changing nothing.
func TestMailRefusals(t *testing.T) {
	s := mlStart(t)
	jobID, addr := s.job("nightly-dump", "generic")
	mail := func(id string) []byte { return mlGeneric(id, "OK", mlT0.Add(-time.Minute), "-", "passed") }

	t.Run("unknown recipients 550 5.1.1", func(t *testing.T) {
		local := addr[:strings.IndexByte(addr, '@')]
		for _, to := range []string{
			"aaaaaaaaaaaaaaaaaaaa@ingest.localhost", // no such token
			local + "@other.example",                // another domain
			"postmaster@ingest.localhost",
			local + "x@ingest.localhost",
		} {
			code, msg := mlCode(s.send(to, mail("unknown")))
			if code != 550 || !strings.HasPrefix(msg, "5.1.1 ") {
				t.Errorf("RCPT %s: %d %q, want 550 5.1.1", to, code, msg)
			}
		}
		// Upper case is the same address: local parts are read without case.
		if err := s.send(strings.ToUpper(addr[:20])+addr[20:], mail("upper")); err != nil {
			t.Errorf("the address in upper case: %v", err)
		}
	})

	t.Run("rotation retires the old address", func(t *testing.T) {
		var j struct{ IngestAddress string }
		s.c.AdminInto(200, "POST", s.path("/jobs/"+jobID+"/ingest-address/rotate"), nil, &j)
		if j.IngestAddress == addr || j.IngestAddress == "" {
			t.Fatalf("rotate answered address %q (old %q)", j.IngestAddress, addr)
		}
		if code, msg := mlCode(s.send(addr, mail("old-address"))); code != 550 || !strings.HasPrefix(msg, "5.1.1 ") {
			t.Errorf("the retired address: %d %q, want 550 5.1.1", code, msg)
		}
		if err := s.send(j.IngestAddress, mail("new-address")); err != nil {
			t.Errorf("the new address: %v", err)
		}
		s.c.AdminInto(404, "POST", s.path("/jobs/nope/ingest-address/rotate"), nil, nil)
		addr = j.IngestAddress
	})

	t.Run("over 10 MiB 552", func(t *testing.T) {
		big := append(mail("big"), []byte(strings.Repeat(strings.Repeat("x", 76)+"\r\n", 140000))...)
		code, _ := mlCode(s.send(addr, big))
		if code != 552 {
			t.Errorf("an 11 MB message: %d, want 552", code)
		}
	})

	t.Run("the 101st in 24 hours 452 4.2.2", func(t *testing.T) {
		before := len(s.jobDetail(jobID).History)
		m := s.dial()
		for i := before; i < 100; i++ {
			if err := m.send(addr, mail(fmt.Sprintf("cap-%d", i))); err != nil {
				t.Fatalf("mail %d of 100: %v", i+1, err)
			}
		}
		code, msg := mlCode(m.send(addr, mail("cap-101")))
		if code != 452 || msg != "4.2.2 Daily ingest cap (100 reports/job) reached — try again after the trailing 24h window rolls over" {
			t.Errorf("the 101st mail: %d %q", code, msg)
		}
		if n := len(s.jobDetail(jobID).History); n != 100 {
			t.Errorf("history has %d results, want 100", n)
		}
		if got := s.c.Metric(`backupmon_mail_received_total{outcome="cap_reached",vendor="generic"}`); got != 1 {
			t.Errorf("metrics count %v capped mails, want 1", got)
		}
		// 24 hours after the first of them, the window has room again.
		s.c.SetClock(mlT0.Add(24*time.Hour + time.Minute))
		if err := m.send(addr, mail("cap-next-day")); err != nil {
			t.Errorf("a day later: %v", err)
		}
	})

	t.Run("suspended workspace 550 5.7.1", func(t *testing.T) {
		s.c.AdminInto(200, "PATCH", s.path(""), map[string]any{"status": "suspended"}, nil)
		code, msg := mlCode(s.send(addr, mail("suspended")))
		if code != 550 || msg != "5.7.1 Workspace suspended" {
			t.Errorf("a suspended workspace: %d %q", code, msg)
		}
		s.c.AdminInto(200, "PATCH", s.path(""), map[string]any{"status": "active"}, nil)
	})
}

// TestMailUnparsed: an e-mail whose status cannot be read changes nothing on
// the job, is listed with its reason (across a restart), counts in
// /metrics, and is read again once the job's vendor is corrected.
func TestMailUnparsed(t *testing.T) {
	s := mlStart(t)
	jobID, addr := s.job("nightly-dump", "veeam") // the wrong vendor: the mail is a script's
	raw := []byte("From: cron@db01.example\r\nTo: " + addr + "\r\nSubject: nightly-dump finished\r\n" +
		"Date: Mon, 16 Mar 2026 08:59:00 +0000\r\nMessage-ID: <cron-77@db01.example>\r\nContent-Type: text/plain\r\n\r\n" +
		"Job: nightly-dump\r\nStatus: OK\r\nStarted: 2026-03-16 08:57:30 +0000\r\nFinished: 2026-03-16 08:59:00 +0000\r\n")
	s.mustSend(addr, raw)
	if j := s.jobDetail(jobID); len(j.History) != 0 || j.Status != "waiting" {
		t.Fatalf("an unreadable mail changed the job: status %q, %d results", j.Status, len(j.History))
	}
	type entry struct {
		ID        string `json:"id"`
		JobID     string `json:"jobId"`
		Vendor    string `json:"vendor"`
		MessageID string `json:"messageId"`
		Subject   string `json:"subject"`
		Reason    string `json:"reason"`
		SizeBytes int    `json:"sizeBytes"`
	}
	var list []entry
	s.c.AdminInto(200, "GET", s.path("/unparsed"), nil, &list)
	if len(list) != 1 || list[0].JobID != jobID || list[0].Vendor != "veeam" || list[0].MessageID != "cron-77@db01.example" ||
		list[0].Subject != "nightly-dump finished" || list[0].Reason == "" || list[0].SizeBytes != len(raw) {
		t.Fatalf("unparsed list: %+v", list)
	}
	if got := s.c.Metric(`backupmon_mail_received_total{outcome="unparsed",vendor="veeam"}`); got != 1 {
		t.Errorf("metrics count %v unparsed mails, want 1", got)
	}
	// The same unreadable mail again is not listed twice.
	s.mustSend(addr, raw)

	s.restart()
	s.c.AdminInto(200, "GET", s.path("/unparsed"), nil, &list)
	if len(list) != 1 {
		t.Fatalf("after a restart the list holds %d entries, want 1", len(list))
	}
	id := list[0].ID
	if body := s.adminError("POST", s.path("/unparsed/"+id+"/reparse"), 409); !strings.HasPrefix(body, `{"error":{"code":"CONFLICT","message":"The e-mail still cannot be read: `) {
		t.Errorf("re-read with the same parser: %s", body)
	}
	s.c.AdminInto(404, "POST", s.path("/unparsed/nope/reparse"), nil, nil)

	s.c.AdminInto(200, "PATCH", s.path("/jobs/"+jobID), map[string]any{"vendor": "generic"}, nil)
	var ans struct {
		UnparsedID string  `json:"unparsedId"`
		Status     string  `json:"status"`
		ResultID   *string `json:"resultId"`
		Duplicate  bool    `json:"duplicate"`
	}
	s.c.AdminInto(200, "POST", s.path("/unparsed/"+id+"/reparse"), nil, &ans)
	if ans.UnparsedID != id || ans.Status != "ok" || ans.ResultID == nil || ans.Duplicate {
		t.Errorf("re-read answer %+v", ans)
	}
	s.c.AdminInto(200, "GET", s.path("/unparsed"), nil, &list)
	if len(list) != 0 {
		t.Errorf("the re-read mail is still listed: %+v", list)
	}
	j := s.jobDetail(jobID)
	if len(j.History) != 1 || j.History[0].Source != "email:generic" || j.History[0].ID != *ans.ResultID || j.Status != "healthy" {
		t.Errorf("after the re-read: status %q history %+v", j.Status, j.History)
	}
	// Its Message-ID is recorded now: the sender's retry is a duplicate.
	s.mustSend(addr, raw)
	if n := len(s.jobDetail(jobID).History); n != 1 {
		t.Errorf("the retry made %d results, want 1", n)
	}
	files, _ := filepath.Glob(filepath.Join(s.c.DataDir, "mail", "*", "*.eml"))
	if len(files) != 0 {
		t.Errorf("the raw mail is still kept: %v", files)
	}
}

// TestMailAckedSurviveSIGKILL: e-mails from four senders to forty jobs are
// answered 250 while the server is killed mid-load; after the restart every
// answered one is there (resending it is a duplicate, and the counts add
// up).
func TestMailAckedSurviveSIGKILL(t *testing.T) {
	s := mlStart(t)
	const senders, jobsEach, perJob = 4, 10, 95
	type target struct {
		id, addr string
		acked    []int
		tried    int
	}
	targets := make([][]*target, senders)
	for i := range senders {
		for k := range jobsEach {
			id, addr := s.job(fmt.Sprintf("load-%d-%d", i, k), "generic")
			targets[i] = append(targets[i], &target{id: id, addr: addr})
		}
	}
	mail := func(jobID string, n int) []byte {
		return mlGeneric(fmt.Sprintf("%s-%d", jobID, n), "OK", mlT0.Add(-time.Minute), "-", "passed")
	}
	var wg sync.WaitGroup
	for i := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := smtp.Dial(s.c.SMTPAddr)
			if err != nil {
				return
			}
			defer c.Close()
			m := &mlConn{c: c}
			for n := 0; n < perJob; n++ {
				for _, tg := range targets[i] {
					tg.tried++
					if m.send(tg.addr, mail(tg.id, n)) != nil {
						return // the server is gone
					}
					tg.acked = append(tg.acked, n)
				}
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	s.c.Kill()
	wg.Wait()
	total, tried := 0, 0
	for _, list := range targets {
		for _, tg := range list {
			total += len(tg.acked)
			tried += tg.tried
		}
	}
	if total == 0 || total == senders*jobsEach*perJob {
		t.Fatalf("%d of %d e-mails answered 250 before the kill: the kill did not land mid-load", total, senders*jobsEach*perJob)
	}
	s.c.HTTP.CloseIdleConnections()
	s.c = testserver.StartChild(t, "mail server after SIGKILL", s.c.DataDir, mlFlags()...)
	m := s.dial()
	for _, list := range targets {
		for _, tg := range list {
			n := len(s.jobDetail(tg.id).History)
			if n < len(tg.acked) || n > tg.tried {
				t.Errorf("job %s: %d results after the restart; %d were answered 250, %d tried", tg.id, n, len(tg.acked), tg.tried)
			}
			for _, k := range tg.acked {
				if err := m.send(tg.addr, mail(tg.id, k)); err != nil {
					t.Fatalf("resend: %v", err)
				}
			}
			if after := len(s.jobDetail(tg.id).History); after != n {
				t.Errorf("job %s: resending its %d answered mails made %d new results: one was not recorded", tg.id, len(tg.acked), after-n)
			}
		}
	}
	t.Logf("%d of %d e-mails tried were answered 250 before SIGKILL; all of them are there after the restart", total, tried)
}

// TestDemoMail: the demo prints its generic job's ingest address and a
// curl command; the e-mail it names, sent to that address, is recorded
// with its alert and suggestion.
func TestDemoMail(t *testing.T) {
	dir := t.TempDir()
	c := testserver.StartChild(t, "demo", dir, "--demo", "--smtp-listen", "127.0.0.1:0")
	out := c.Stdout.String()
	m := regexp.MustCompile(`curl -s smtp://(\S+) --mail-from (\S+) --mail-rcpt (\S+) --upload-file (\S+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the demo printed no mail command:\n%s", out)
	}
	if m[1] != c.SMTPAddr {
		t.Errorf("the command names %s, the listener is %s", m[1], c.SMTPAddr)
	}
	if !strings.Contains(out, "ingest address of the job \"Case database dump\": "+m[3]) {
		t.Errorf("the demo does not print the job's ingest address:\n%s", out)
	}
	raw, err := os.ReadFile(m[4])
	if err != nil {
		t.Fatal(err)
	}
	if err := smtp.SendMail(m[1], nil, m[2], []string{m[3]}, raw); err != nil {
		t.Fatalf("send the demo mail: %v", err)
	}
	kv := map[string]string{}
	keys, _ := os.ReadFile(filepath.Join(dir, "demo-keys.txt"))
	for line := range strings.SplitSeq(string(keys), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			kv[k] = v
		}
	}
	var j mlJob
	if err := c.AdminCall(200, "GET", "/workspaces/"+kv["workspace"]+"/jobs/"+kv["mail_job"], nil, &j); err != nil {
		t.Fatal(err)
	}
	if j.Status != "failed" || len(j.History) == 0 || j.History[0].Source != "email:generic" {
		t.Fatalf("after the demo mail: status %q, newest result %+v", j.Status, j.History[:min(1, len(j.History))])
	}
	if len(j.UnresolvedAlerts) != 1 || j.UnresolvedAlerts[0].AI == nil || j.UnresolvedAlerts[0].AI.Category != "storage" {
		t.Errorf("demo mail's alert: %+v", j.UnresolvedAlerts)
	}
	if _, _, err := net.SplitHostPort(c.SMTPAddr); err != nil {
		t.Errorf("smtp listener line: %q", c.SMTPAddr)
	}
}

// TestMailShutdownEndsIdleSessions: SIGTERM ends a session waiting for its
// next command at once, with 421 4.3.2. A session in the middle of a
// message's data when the signal came is let finish it: the message is
// answered 250 and recorded, and the session is ended the same way
// at its next command. The server then stops cleanly, before the 5 s it
// gives sessions (it used to wait that long for an idle one, then cut it
// without a word).
func TestMailShutdownEndsIdleSessions(t *testing.T) {
	s := mlStart(t)
	jobID, addr := s.job("nightly-dump", "generic")
	end := mlT0.Add(time.Hour)
	s.c.SetClock(end)
	raw := mlGeneric("run-1", "FAILED", end.Add(-time.Minute), "pg_dump: error: could not write to output file: No space left on device", "skipped")
	open := func() *textproto.Conn {
		t.Helper()
		conn, err := net.DialTimeout("tcp", s.c.SMTPAddr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(20 * time.Second))
		tc := textproto.NewConn(conn)
		t.Cleanup(func() { tc.Close() })
		if _, _, err := tc.ReadResponse(220); err != nil {
			t.Fatal(err)
		}
		mlCmd(t, tc, 250, "EHLO backup-server.example")
		return tc
	}
	idle := open()
	busy := open()
	mlCmd(t, busy, 250, "MAIL FROM:<backups@db01.example>")
	mlCmd(t, busy, 250, "RCPT TO:<%s>", addr)
	mlCmd(t, busy, 354, "DATA")
	half := bytes.Index(raw, []byte("Status:"))
	if _, err := busy.W.Write(raw[:half]); err != nil || busy.W.Flush() != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)

	if err := s.c.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	signalled := time.Now()
	mlEnded(t, "the idle session", idle)
	if took := time.Since(signalled); took > 2*time.Second {
		t.Errorf("the idle session was ended %v after SIGTERM, want at once", took.Round(time.Millisecond))
	}
	select {
	case <-s.c.Exited():
		t.Fatal("the server exited with a message's data half received")
	default:
	}
	if _, err := busy.W.Write(raw[half:]); err != nil {
		t.Fatal(err)
	}
	if _, err := busy.W.WriteString(".\r\n"); err != nil || busy.W.Flush() != nil {
		t.Fatal(err)
	}
	if _, msg, err := busy.ReadResponse(250); err != nil {
		t.Fatalf("the message whose data was half sent at SIGTERM: %v %s", err, msg)
	}
	mlEnded(t, "the session after its message", busy)
	select {
	case <-s.c.Exited():
	case <-time.After(5 * time.Second):
		t.Fatal("the server did not exit once the sessions were over")
	}
	if took := time.Since(signalled); took > 4*time.Second {
		t.Errorf("stopping took %v", took.Round(time.Millisecond))
	}
	if err := s.c.ExitErr(); err != nil {
		t.Errorf("exit after SIGTERM: %v, want 0", err)
	}
	log := s.c.Stderr.String()
	if !strings.Contains(log, `msg="stopped cleanly"`) || strings.Contains(log, "smtp sessions still open at shutdown") {
		t.Errorf("not a clean stop:\n%s", testserver.Tail(log, 10))
	}
	s.c = s.c.Restart("mail server after the stop", mlFlags()...)
	if j := s.jobDetail(jobID); len(j.History) != 1 || j.Status != "failed" {
		t.Errorf("after the restart: status %q, %d results; want the message recorded", j.Status, len(j.History))
	}
}

// mlCmd sends an SMTP command and fails t unless its answer has code.
func mlCmd(t *testing.T, c *textproto.Conn, code int, format string, args ...any) {
	t.Helper()
	if err := c.PrintfLine(format, args...); err != nil {
		t.Fatal(err)
	}
	if _, msg, err := c.ReadResponse(code); err != nil {
		t.Fatalf("%s: %v %s", fmt.Sprintf(format, args...), err, msg)
	}
}

// mlEnded fails t unless the server's next line on c, unasked, is the
// shutdown's 421 4.3.2, followed by the end of the stream.
func mlEnded(t *testing.T, name string, c *textproto.Conn) {
	t.Helper()
	line, err := c.ReadLine()
	if err != nil || line != "421 4.3.2 Service shutting down, try again later" {
		t.Fatalf("%s: read %q, %v; want 421 4.3.2 Service shutting down, try again later", name, line, err)
	}
	if rest, err := io.ReadAll(c.R); err != nil || len(rest) != 0 {
		t.Errorf("%s: after the 421: %q, %v; want the end of the stream", name, rest, err)
	}
}

// TestMailForwardedSeveralObjects sends a Veeam report that a person
// forwarded from Outlook (HTML, under a signature, a day and a half later)
// and whose job failed on two of its three VMs: the run is read from the
// original (its times, not the forward's), and the alert's summary read
// back through the REST API leads with the first failed VM and names the
// other, exactly as decisions.md ("Report e-mails") writes it.
func TestMailForwardedSeveralObjects(t *testing.T) {
	raw, err := os.ReadFile("../../testdata/variants/veeam/05-forwarded-outlook-html.eml")
	if err != nil {
		t.Fatal(err)
	}
	const want = "TH-FS02: Failed to create VM snapshot: the datastore TH-DS02 has insufficient free space (1.2 GB free, 40.0 GB required). [also failed (1): TH-FS03]"
	s := mlStart(t)
	s.c.SetClock(time.Date(2026, 3, 12, 8, 15, 30, 0, time.UTC)) // the forward's arrival
	jobID, addr := s.job("file-servers", "veeam")
	s.mustSend(addr, raw)

	var alerts struct {
		Data []struct {
			Type, Severity, Status, JobID string
			Summary                       json.RawMessage
		} `json:"data"`
	}
	body := s.rest("/alerts?jobId="+jobID, &alerts)
	if len(alerts.Data) != 1 {
		t.Fatalf("REST /alerts: %s", body)
	}
	a := alerts.Data[0]
	var got string
	if err := json.Unmarshal(a.Summary, &got); err != nil {
		t.Fatal(err)
	}
	if got != want || a.Type != "failed" || a.Severity != "critical" || a.Status != "open" {
		t.Errorf("alert %s/%s/%s summary %q,\n want failed/critical/open %q", a.Type, a.Severity, a.Status, got, want)
	}
	var reports struct {
		Data []struct {
			Status, CompletedAt string
			DurationSeconds     *int64
		} `json:"data"`
	}
	body = s.rest("/reports?jobId="+jobID, &reports)
	if len(reports.Data) != 1 || reports.Data[0].Status != "failed" || reports.Data[0].CompletedAt != "2026-03-10T22:31:10.000Z" ||
		reports.Data[0].DurationSeconds == nil || *reports.Data[0].DurationSeconds != 1868 {
		t.Errorf("REST /reports: %s, want the original's run (failed, ended 2026-03-10T22:31:10Z, 1868 s)", body)
	}
}
