package smtpin

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/smtp"
	"net/textproto"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"backupmon/engine"
	"backupmon/mailstore"
	"backupmon/wal"
)

var t0 = time.Date(2026, 3, 16, 9, 0, 0, 0, time.UTC)

// fixture is an engine with one workspace and client, a mail store and an
// SMTP listener on loopback.
type fixture struct {
	t       *testing.T
	eng     *engine.Engine
	store   *mailstore.Store
	mailDir string // the store's directory
	srv     *Server
	addr    string
	ws, cl  string
	mu      sync.Mutex
	outcome map[string]int // Observe's counts by "outcome/vendor"
}

func start(t *testing.T, tlsConf *tls.Config) *fixture {
	t.Helper()
	return startWith(t, tlsConf, nil)
}

// startWith is start with the log's BeforeSync hook.
func startWith(t *testing.T, tlsConf *tls.Config, beforeSync func(first, last uint64)) *fixture {
	t.Helper()
	return startOpts(t, fixtureOpts{tls: tlsConf, beforeSync: beforeSync})
}

// fixtureOpts are the choices of startOpts.
type fixtureOpts struct {
	tls        *tls.Config
	beforeSync func(first, last uint64)        // the log's BeforeSync hook
	config     func(*Config)                   // changes the listener's Config
	listener   func(net.Listener) net.Listener // wraps the socket given to Serve
}

// startOpts is start with every choice.
func startOpts(t *testing.T, o fixtureOpts) *fixture {
	t.Helper()
	tlsConf, beforeSync := o.tls, o.beforeSync
	dir := t.TempDir()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	store, err := mailstore.Open(filepath.Join(dir, "mail"))
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.Open(engine.Options{
		Dir: dir, Clock: engine.NewDevClock(t0), Logger: logger,
		WAL:        wal.Options{Logger: logger, BeforeSync: beforeSync, OnFatal: func(err error) { t.Errorf("log failed: %v", err) }},
		RawDropped: func(refs []string) { store.Remove(refs) }, IngestDomain: "ingest.example",
	})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, eng: eng, store: store, mailDir: filepath.Join(dir, "mail"), outcome: map[string]int{}}
	cfg := Config{Domain: "Ingest.Example", TLS: tlsConf, Logger: logger,
		Suggest: func(vendor, text string) (engine.Suggestion, bool) {
			if strings.Contains(text, "space") {
				return engine.Suggestion{Cause: "The destination may be full.", Confidence: "high", Category: "storage"}, true
			}
			return engine.Suggestion{}, false
		},
		Observe: func(outcome, vendor string) {
			f.mu.Lock()
			f.outcome[outcome+"/"+vendor]++
			f.mu.Unlock()
		}}
	if o.config != nil {
		o.config(&cfg)
	}
	f.srv = New(eng, store, cfg)
	var ln net.Listener
	ln, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.addr = ln.Addr().String()
	if o.listener != nil {
		ln = o.listener(ln)
	}
	go f.srv.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		f.srv.Shutdown(ctx)
		eng.Close()
	})
	ws, err := eng.CreateWorkspace(engine.WorkspaceInput{Name: engine.Some("W"), Plan: engine.Some("pro")})
	if err != nil {
		t.Fatal(err)
	}
	c, err := eng.CreateClient(ws.ID, engine.ClientInput{Name: engine.Some("C")})
	if err != nil {
		t.Fatal(err)
	}
	f.ws, f.cl = ws.ID, c.ID
	return f
}

type jobView struct {
	ID            string `json:"id"`
	Status        string `json:"status"`
	IngestAddress string `json:"ingestAddress"`
	History       []struct {
		Status string `json:"status"`
		Source string `json:"source"`
	} `json:"history"`
	UnresolvedAlerts []struct {
		Type    string `json:"type"`
		Summary string `json:"summary"`
		AI      *struct {
			Category string `json:"category"`
		} `json:"ai"`
	} `json:"unresolvedAlerts"`
}

func (f *fixture) job(name, vendor string) jobView {
	f.t.Helper()
	j, err := f.eng.CreateJob(f.ws, engine.JobInput{
		ClientID: engine.Some(f.cl), Name: engine.Some(name), Vendor: engine.Some(vendor),
		Device:   engine.Some(engine.DeviceInput{Name: engine.Some("d"), Type: engine.Some("server"), Hostname: engine.Some("h-" + name)}),
		Schedule: engine.Some(engine.ScheduleInput{IntervalMinutes: engine.Some(int64(1440))}),
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return f.view(j.ID)
}

func (f *fixture) view(id string) jobView {
	f.t.Helper()
	v, err := f.eng.JobDetail(f.ws, id, 1000)
	if err != nil {
		f.t.Fatal(err)
	}
	var j jobView
	if err := json.Unmarshal(v.JSON, &j); err != nil {
		f.t.Fatal(err)
	}
	return j
}

func (f *fixture) count(key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.outcome[key]
}

func generic(id, status, message string) []byte {
	end := t0.Add(-time.Minute)
	return []byte(fmt.Sprintf("From: cron@h.example\r\nSubject: Backup %s: dump\r\nDate: %s\r\nMessage-ID: <%s@h.example>\r\n"+
		"Content-Type: text/plain\r\n\r\nJob: dump\r\nStatus: %s\r\nStarted: %s\r\nFinished: %s\r\nMessage: %s\r\n",
		status, end.Format(time.RFC1123Z), id, status,
		end.Add(-time.Minute).Format("2006-01-02 15:04:05 -0700"), end.Format("2006-01-02 15:04:05 -0700"), message))
}

// transaction runs MAIL, every RCPT, DATA on c; it returns the RCPT
// refusals by address and the DATA answer.
func transaction(c *smtp.Client, to []string, raw []byte) (map[string]error, error) {
	if err := c.Mail("cron@h.example"); err != nil {
		return nil, err
	}
	refused := map[string]error{}
	for _, a := range to {
		if err := c.Rcpt(a); err != nil {
			refused[a] = err
		}
	}
	return refused, sendData(c, raw)
}

// fill sends n reports ("fill-<i>") to address on c, one transaction each,
// failing t on a refusal.
func fill(t *testing.T, c *smtp.Client, address string, n int) {
	t.Helper()
	for i := range n {
		if _, err := transaction(c, []string{address}, generic(fmt.Sprintf("fill-%d", i), "OK", "-")); err != nil {
			t.Fatalf("fill %d: %v", i, err)
		}
	}
}

// sendData sends raw as the DATA of c's open transaction and returns the
// server's answer to its end (or the error before it).
func sendData(c *smtp.Client, raw []byte) error {
	w, err := c.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write(raw); err != nil {
		return err
	}
	return w.Close()
}

// rcptAll names each of addrs as a recipient of c's open transaction,
// failing t on a refusal.
func rcptAll(t *testing.T, c *smtp.Client, addrs ...string) {
	t.Helper()
	for _, a := range addrs {
		if err := c.Rcpt(a); err != nil {
			t.Fatalf("RCPT %s: %v", a, err)
		}
	}
}

func (f *fixture) dial() *smtp.Client {
	f.t.Helper()
	c, err := smtp.Dial(f.addr)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { c.Close() })
	return c
}

func code(err error) int {
	var te *textproto.Error
	if errors.As(err, &te) {
		return te.Code
	}
	return 0
}

// TestSeveralRecipients: one message to two jobs (and a stranger) is one
// report on each job; the stranger is refused at RCPT alone.
func TestSeveralRecipients(t *testing.T) {
	f := start(t, nil)
	a, b := f.job("a", "generic"), f.job("b", "generic")
	c := f.dial()
	// The domain is matched without case.
	upper := strings.Replace(b.IngestAddress, "ingest.example", "INGEST.example", 1)
	refused, err := transaction(c, []string{a.IngestAddress, "nobody@ingest.example", upper, a.IngestAddress}, generic("m1", "FAILED", "no space left on device"))
	if err != nil {
		t.Fatalf("DATA: %v", err)
	}
	if len(refused) != 1 || code(refused["nobody@ingest.example"]) != 550 {
		t.Errorf("RCPT refusals: %v", refused)
	}
	for _, j := range []jobView{f.view(a.ID), f.view(b.ID)} {
		if len(j.History) != 1 || j.History[0].Source != "email:generic" || j.Status != "failed" {
			t.Errorf("job %s: %+v", j.ID, j)
		}
		if len(j.UnresolvedAlerts) != 1 || j.UnresolvedAlerts[0].AI == nil || j.UnresolvedAlerts[0].AI.Category != "storage" {
			t.Errorf("job %s alerts: %+v", j.ID, j.UnresolvedAlerts)
		}
	}
	if n := f.count("recorded/generic"); n != 2 {
		t.Errorf("Observe counted %d recorded, want 2", n)
	}
	if n := f.count("unknown_recipient/"); n != 1 {
		t.Errorf("Observe counted %d unknown recipients, want 1", n)
	}
}

// TestCapAtData: a job that reaches its cap between RCPT and DATA refuses
// the whole message with 452; the other recipient that took it sees the
// sender's retry as a duplicate.
func TestCapAtData(t *testing.T) {
	f := start(t, nil)
	full, other := f.job("full", "generic"), f.job("other", "generic")
	c := f.dial()
	fill(t, c, full.IngestAddress, 99)
	if err := c.Mail("cron@h.example"); err != nil {
		t.Fatal(err)
	}
	rcptAll(t, c, other.IngestAddress, full.IngestAddress)
	// Another connection takes the full job's last place meanwhile.
	if _, err := transaction(f.dial(), []string{full.IngestAddress}, generic("race", "OK", "-")); err != nil {
		t.Fatal(err)
	}
	if err := sendData(c, generic("both", "OK", "-")); code(err) != 452 || !strings.Contains(err.Error(), "4.2.2 Daily ingest cap (100 reports/job) reached") {
		t.Fatalf("DATA with a recipient at its cap: %v, want 452 4.2.2", err)
	}
	if n := len(f.view(other.ID).History); n != 1 {
		t.Fatalf("the other job has %d results, want 1", n)
	}
	// The sender retries later for the recipient that still takes it.
	if _, err := transaction(c, []string{other.IngestAddress}, generic("both", "OK", "-")); err != nil {
		t.Fatal(err)
	}
	if n := len(f.view(other.ID).History); n != 1 {
		t.Errorf("the retry made %d results on the other job, want 1 (a duplicate)", n)
	}
	if n := f.count("duplicate/generic"); n != 1 {
		t.Errorf("Observe counted %d duplicates, want 1", n)
	}
}

// TestDataWithoutRecipient: DATA after every recipient was refused records
// nothing.
func TestDataWithoutRecipient(t *testing.T) {
	f := start(t, nil)
	c := f.dial()
	_, err := transaction(c, []string{"x@ingest.example"}, generic("m", "OK", "-"))
	if err == nil || code(err)/100 != 5 {
		t.Fatalf("DATA with no recipient: %v, want a 5xx", err)
	}
}

// TestStartTLS: with a certificate the listener offers STARTTLS, and mail
// goes through over it.
func TestStartTLS(t *testing.T) {
	f := start(t, selfSigned(t))
	j := f.job("tls", "generic")
	c := f.dial()
	if err := c.Hello("h.example"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := c.Extension("STARTTLS"); !ok {
		t.Fatal("STARTTLS not offered")
	}
	if err := c.StartTLS(&tls.Config{InsecureSkipVerify: true, ServerName: "ingest.example"}); err != nil {
		t.Fatalf("STARTTLS: %v", err)
	}
	if _, err := transaction(c, []string{j.IngestAddress}, generic("tls-1", "OK", "-")); err != nil {
		t.Fatal(err)
	}
	if n := len(f.view(j.ID).History); n != 1 {
		t.Errorf("%d results, want 1", n)
	}
	// Without a certificate, no STARTTLS.
	g := start(t, nil)
	c2 := g.dial()
	c2.Hello("h.example")
	if ok, _ := c2.Extension("STARTTLS"); ok {
		t.Error("STARTTLS offered without a certificate")
	}
}

// TestConcurrentSenders exercises sessions in parallel under the race
// detector: every message answered 250 is one result.
func TestConcurrentSenders(t *testing.T) {
	f := start(t, nil)
	jobs := make([]jobView, 8)
	for i := range jobs {
		jobs[i] = f.job(fmt.Sprintf("j%d", i), "generic")
	}
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := smtp.Dial(f.addr)
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			for n := range 20 {
				j := jobs[(i*2+n)%len(jobs)]
				if _, err := transaction(c, []string{j.IngestAddress}, generic(fmt.Sprintf("c%d-%d", i, n), "OK", "-")); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	total := 0
	for _, j := range jobs {
		total += len(f.view(j.ID).History)
	}
	if total != 80 {
		t.Errorf("%d results, want 80", total)
	}
}

// TestUnreadableKeptAndDropped: an unreadable mail's raw copy is kept while
// it is listed, and deleted when the entry is dropped.
func TestUnreadableKeptAndDropped(t *testing.T) {
	f := start(t, nil)
	j := f.job("v", "veeam")
	raw := []byte("From: x@h.example\r\nSubject: hello\r\nMessage-ID: <u1@h>\r\n\r\nnot a report\r\n")
	if _, err := transaction(f.dial(), []string{j.IngestAddress}, raw); err != nil {
		t.Fatal(err)
	}
	list, err := f.eng.Unparsed(f.ws)
	if err != nil || len(list) != 1 {
		t.Fatalf("unparsed: %v %v", list, err)
	}
	ref, err := f.eng.UnparsedMail(f.ws, list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := f.store.Get(ref.RawRef); err != nil || string(got) != string(raw) {
		t.Fatalf("kept copy: %q %v", got, err)
	}
	if _, err := Reparse(f.eng, f.store, nil, f.ws, list[0].ID); err == nil {
		t.Fatal("re-read of a mail no parser reads succeeded")
	}
	if err := f.eng.DropUnparsed(f.ws, list[0].ID); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := f.store.Get(ref.RawRef); errors.Is(err, mailstore.ErrNotFound) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the kept copy outlived its entry")
		}
	}
}

func selfSigned(t *testing.T) *tls.Config {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ingest.example"},
		DNSNames: []string{"ingest.example"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, MinVersion: tls.VersionTLS12}
}

// TestUnparsedDuplicateWaitsForDurability: the same unreadable mail sent
// again while the first copy's record waits for its fsync is not answered
// before that record is durable.
func TestUnparsedDuplicateWaitsForDurability(t *testing.T) {
	var hold sync.Mutex
	f := startWith(t, nil, func(first, last uint64) { hold.Lock(); defer hold.Unlock() })
	j := f.job("v", "veeam")
	raw := []byte("From: x@h.example\r\nSubject: hello\r\nMessage-ID: <u1@h>\r\n\r\nnot a report\r\n")
	hold.Lock()
	first := make(chan error, 1)
	go func() { _, err := transaction(f.dial(), []string{j.IngestAddress}, raw); first <- err }()
	// Wait until the first copy is listed (applied, not yet durable).
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if l, _ := f.eng.Unparsed(f.ws); len(l) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first copy was never listed")
		}
	}
	second := make(chan error, 1)
	go func() { _, err := transaction(f.dial(), []string{j.IngestAddress}, raw); second <- err }()
	select {
	case err := <-second:
		t.Fatalf("the resend was answered (%v) before the first copy was durable", err)
	case <-time.After(300 * time.Millisecond):
	}
	hold.Unlock()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	if l, _ := f.eng.Unparsed(f.ws); len(l) != 1 {
		t.Errorf("%d entries, want 1", len(l))
	}
}

// TestNoMessageIDRetry: a mail without Message-ID refused for one
// recipient is retried by the sender; the recipient that took it sees the
// retry (the same bytes) as a duplicate.
func TestNoMessageIDRetry(t *testing.T) {
	f := start(t, nil)
	full, other := f.job("full", "generic"), f.job("other", "generic")
	c := f.dial()
	fill(t, c, full.IngestAddress, 100)
	noID := []byte(strings.Replace(string(generic("x", "OK", "-")), "Message-ID: <x@h.example>\r\n", "", 1))
	refused, err := transaction(c, []string{other.IngestAddress, full.IngestAddress}, noID)
	if err != nil || code(refused[full.IngestAddress]) != 452 {
		t.Fatalf("RCPT to the full job: %v, DATA: %v", refused, err)
	}
	for range 2 { // the sender's retries, to the one that took it
		if _, err := transaction(c, []string{other.IngestAddress}, noID); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(f.view(other.ID).History); n != 1 {
		t.Errorf("the mail without Message-ID made %d results, want 1", n)
	}
}

// TestMixedRefusalsAnswerTemporary: when one recipient fails for now (its
// cap) and another for good (deleted meanwhile), DATA answers the
// temporary refusal, so the sender retries instead of bouncing everyone.
func TestMixedRefusalsAnswerTemporary(t *testing.T) {
	f := start(t, nil)
	full, gone, other := f.job("full", "generic"), f.job("gone", "generic"), f.job("other", "generic")
	c := f.dial()
	fill(t, c, full.IngestAddress, 99)
	if err := c.Mail("cron@h.example"); err != nil {
		t.Fatal(err)
	}
	rcptAll(t, c, other.IngestAddress, gone.IngestAddress, full.IngestAddress)
	if err := f.eng.DeleteJob(f.ws, gone.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := transaction(f.dial(), []string{full.IngestAddress}, generic("last", "OK", "-")); err != nil {
		t.Fatal(err)
	}
	if err := sendData(c, generic("mixed", "OK", "-")); code(err) != 452 {
		t.Errorf("DATA with a capped and a deleted recipient: %v, want 452", err)
	}
}

// TestReportKeyApartFromMessageID: a Report API idempotency key spelled
// like the engine's key of a mail's Message-ID is not a duplicate of it.
func TestReportKeyApartFromMessageID(t *testing.T) {
	f := start(t, nil)
	j := f.job("j", "generic")
	if _, err := transaction(f.dial(), []string{j.IngestAddress}, generic("m9", "OK", "-")); err != nil {
		t.Fatal(err)
	}
	k, err := f.eng.CreateKey(f.ws, engine.KeyInput{Name: engine.Some("agent"), Type: engine.Some("report")})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"m9@h.example", "\x00mail:m9@h.example", "\x00\ufffdmail:m9@h.example"} {
		r := f.eng.Report(engine.HashKey([]byte(k.Key)), &engine.ReportInput{JobID: j.ID, Status: engine.ReportOK, SizeBytes: -1, DurationSeconds: -1, IdempotencyKey: key})
		if r.Outcome != engine.ReportRecorded {
			t.Errorf("Report API key %q: outcome %d, want recorded", key, r.Outcome)
		}
	}
}
