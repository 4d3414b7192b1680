package main

// Notifications end to end (decisions.md 7): the real binary, run with the
// development clock, sends to a webhook receiver (net/http/httptest) and
// through a local SMTP sink (github.com/emersion/go-smtp) that the test
// starts. The tests read the outbox through GET .../deliveries and what
// arrived at the receivers: signatures and bodies, retries with backoff on
// the clock, e-mail, escalations, a SIGKILL with deliveries pending, and
// the cancellation of a delivery whose job is paused. Every name here starts
// with "dl" so that other test files of the package cannot collide with it.

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime"
	"mime/quotedprintable"
	"net/http"
	"net/http/httptest"
	"net/mail"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"backupmon/internal/smtpsink"
	"backupmon/internal/testserver"
)

const (
	dlFrom     = "alerts@backupmon.test"
	dlSMTPUser = "relay-user"
	dlSMTPPass = "relay-pass"
	// dlWait bounds every wait for an asynchronous outcome.
	dlWait = 15 * time.Second
)

// ---------------------------------------------------------------------------
// The webhook receiver

// dlHook is one request the receiver got.
type dlHook struct {
	path     string
	body     []byte
	sig      string
	event    string // X-Backupmon-Event
	delivery string // X-Backupmon-Delivery
	ctype    string
	status   int // what the receiver answered
}

// dlReceiver is a webhook endpoint that records every request and answers
// with the status its answer function gives (200 when nil).
type dlReceiver struct {
	srv *httptest.Server

	mu     sync.Mutex
	hooks  []dlHook
	answer func(n int, path string) int // n counts the requests before this one
	delay  time.Duration
}

func dlStartReceiver(t *testing.T) *dlReceiver {
	t.Helper()
	r := &dlReceiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		status := http.StatusOK
		if r.answer != nil {
			status = r.answer(len(r.hooks), req.URL.Path)
		}
		delay := r.delay
		r.hooks = append(r.hooks, dlHook{
			path: req.URL.Path, body: body, sig: req.Header.Get("X-Backupmon-Signature"),
			event: req.Header.Get("X-Backupmon-Event"), delivery: req.Header.Get("X-Backupmon-Delivery"),
			ctype: req.Header.Get("Content-Type"), status: status,
		})
		r.mu.Unlock()
		if req.Method != http.MethodPost {
			status = http.StatusMethodNotAllowed
		}
		time.Sleep(delay)
		w.WriteHeader(status)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// setAnswer sets the answer function (nil: 200 always).
func (r *dlReceiver) setAnswer(f func(n int, path string) int) {
	r.mu.Lock()
	r.answer = f
	r.mu.Unlock()
}

func (r *dlReceiver) setDelay(d time.Duration) {
	r.mu.Lock()
	r.delay = d
	r.mu.Unlock()
}

func (r *dlReceiver) all() []dlHook {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.hooks)
}

// url is the receiver's address with path.
func (r *dlReceiver) url(path string) string { return r.srv.URL + path }

// dlBody is a webhook body, decoded.
type dlBody struct {
	Event       string `json:"event"`
	SentAt      string `json:"sentAt"`
	WorkspaceID string `json:"workspaceId"`
	Alert       struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Severity string `json:"severity"`
		Status   string `json:"status"`
		JobID    string `json:"jobId"`
		JobName  string `json:"jobName"`
	} `json:"alert"`
	Job struct {
		ID     string `json:"id"`
		Name   string `json:"name"`
		Status string `json:"status"`
	} `json:"job"`
}

// decode checks the hook's signature under secret and decodes its body.
func (h dlHook) decode(t *testing.T, secret string) dlBody {
	t.Helper()
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(h.body)
	if want := "sha256=" + hex.EncodeToString(mac.Sum(nil)); h.sig != want {
		t.Errorf("webhook %s: X-Backupmon-Signature %q, want %q (HMAC-SHA256 of the body with the channel's secret)", h.body, h.sig, want)
	}
	if !strings.HasPrefix(h.ctype, "application/json") {
		t.Errorf("webhook Content-Type %q", h.ctype)
	}
	var b dlBody
	dec := json.NewDecoder(bytes.NewReader(h.body))
	if err := dec.Decode(&b); err != nil {
		t.Fatalf("webhook body %s: %v", h.body, err)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(h.body, &keys); err != nil {
		t.Fatal(err)
	}
	if len(keys) != 5 {
		t.Errorf("webhook body has members %v, want event, sentAt, workspaceId, alert, job", slices.Sorted(maps.Keys(keys)))
	}
	if h.event != b.Event {
		t.Errorf("X-Backupmon-Event %q, body event %q", h.event, b.Event)
	}
	return b
}

// ---------------------------------------------------------------------------
// The SMTP sink

// dlStartSink runs a local SMTP server without TLS that requires AUTH PLAIN
// with dlSMTPUser and dlSMTPPass (over plain text, which net/smtp allows to
// 127.0.0.1) and keeps every message.
func dlStartSink(t *testing.T) *smtpsink.Sink {
	return smtpsink.Start(t, smtpsink.Options{User: dlSMTPUser, Pass: dlSMTPPass, InsecureAuth: true})
}

// ---------------------------------------------------------------------------
// The server and its admin API

// dlServer is one backupmon child with the development clock and the
// sink as its relay, and the workspace the test works in.
type dlServer struct {
	t    *testing.T
	c    *testserver.Child
	sink *smtpsink.Sink

	ws, client, key string
}

// dlFlags are the serve flags of every child of these tests; the webhook
// receivers are local, so internal addresses are allowed.
func dlFlags(sink *smtpsink.Sink) []string {
	return []string{"--dev-clock", "--smtp-relay", sink.Addr, "--smtp-from", "Backupmon <" + dlFrom + ">",
		"--smtp-username", dlSMTPUser, "--smtp-password", dlSMTPPass, "--allow-private-webhooks"}
}

// dlStart starts a server on a new data directory, sets its clock to testserver.T0
// and makes a workspace with a client and a report key.
func dlStart(t *testing.T) *dlServer {
	t.Helper()
	s := &dlServer{t: t, sink: dlStartSink(t)}
	s.c = testserver.StartChild(t, "delivery server", t.TempDir(), dlFlags(s.sink)...)
	s.c.SetClock(testserver.T0)
	s.ws = s.c.NewWorkspace(map[string]any{"name": "Notify MSP", "plan": "pro", "timeZone": "Europe/Berlin"})
	s.client = s.c.NewClient(s.ws, "Acme")
	s.key, _ = s.c.NewKey(s.ws, "report", map[string]any{"name": "agent"})
	return s
}

// restart starts the child again (after a kill) on the same data directory.
func (s *dlServer) restart() {
	s.t.Helper()
	s.c = s.c.Restart("delivery server after SIGKILL", dlFlags(s.sink)...)
}

func (s *dlServer) path(p string) string { return "/workspaces/" + s.ws + p }

// job makes a job of the test's client (hourly, the default grace).
func (s *dlServer) job(name string) string {
	s.t.Helper()
	var j struct{ ID string }
	s.c.AdminInto(201, "POST", s.path("/jobs"), map[string]any{
		"clientId": s.client, "name": name, "vendor": "veeam",
		"device":   map[string]any{"name": "srv", "type": "server", "hostname": "srv-" + name},
		"schedule": map[string]any{"intervalMinutes": 60},
	}, &j)
	return j.ID
}

// report posts a report and returns the alert it opened or raised ("" when
// none).
func (s *dlServer) report(jobID, status string) string {
	s.t.Helper()
	return testserver.AlertID(s.c.MustReport(jobID, s.key, fmt.Sprintf(`{"status":%q}`, status)))
}

// dlChannel is a channel as created (with the webhook's secret).
type dlChannel struct {
	ID          string  `json:"id"`
	Type        string  `json:"type"`
	Name        string  `json:"name"`
	URL         *string `json:"url"`
	To          *string `json:"to"`
	MinSeverity string  `json:"minSeverity"`
	Secret      string  `json:"secret"`
}

func (s *dlServer) channel(body map[string]any) dlChannel {
	s.t.Helper()
	var ch dlChannel
	s.c.AdminInto(201, "POST", s.path("/channels"), body, &ch)
	return ch
}

// dlDelivery is a delivery as GET .../deliveries lists it.
type dlDelivery struct {
	ID            string  `json:"id"`
	ChannelID     string  `json:"channelId"`
	Event         string  `json:"event"`
	AlertID       string  `json:"alertId"`
	JobID         string  `json:"jobId"`
	State         string  `json:"state"`
	Attempts      int     `json:"attempts"`
	CreatedAt     string  `json:"createdAt"`
	LastAttemptAt *string `json:"lastAttemptAt"`
	NextAttemptAt *string `json:"nextAttemptAt"`
	DeliveredAt   *string `json:"deliveredAt"`
	LastError     *string `json:"lastError"`
}

func (d dlDelivery) String() string {
	str := func(p *string) string {
		if p == nil {
			return "null"
		}
		return *p
	}
	return fmt.Sprintf("{%s %s alert %s channel %s: %s, %d attempts, last %s, next %s, delivered %s, error %s}",
		d.ID, d.Event, d.AlertID, d.ChannelID, d.State, d.Attempts, str(d.LastAttemptAt), str(d.NextAttemptAt), str(d.DeliveredAt), str(d.LastError))
}

func (s *dlServer) deliveries() []dlDelivery {
	s.t.Helper()
	var list []dlDelivery
	s.c.AdminInto(200, "GET", s.path("/deliveries"), nil, &list)
	return list
}

// waitDeliveries polls the outbox until done holds, and returns it.
func (s *dlServer) waitDeliveries(what string, done func([]dlDelivery) bool) []dlDelivery {
	s.t.Helper()
	deadline := time.Now().Add(dlWait)
	for {
		list := s.deliveries()
		if done(list) {
			return list
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: not after %v; deliveries:\n%s", what, dlWait, dlList(list))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func dlList(list []dlDelivery) string {
	var b strings.Builder
	for _, d := range list {
		fmt.Fprintf(&b, "  %v\n", d)
	}
	return b.String()
}

// allIn reports whether every delivery is in state (and there are n).
func allIn(list []dlDelivery, n int, state string) bool {
	if len(list) != n {
		return false
	}
	for _, d := range list {
		if d.State != state {
			return false
		}
	}
	return true
}

// settled reports whether no attempt is in flight: every delivery is done,
// or pending with its next attempt set.
func settled(list []dlDelivery) bool {
	for _, d := range list {
		if d.State == "pending" && d.NextAttemptAt == nil {
			return false
		}
	}
	return true
}

func dlParse(t *testing.T, s *string) time.Time {
	t.Helper()
	if s == nil {
		t.Fatal("a null time")
	}
	v, err := time.Parse("2006-01-02T15:04:05.000Z", *s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// waitHooks waits until the receiver has n requests answered 2xx with
// path and returns them.
func (r *dlReceiver) waitOK(t *testing.T, path string, n int) []dlHook {
	t.Helper()
	deadline := time.Now().Add(dlWait)
	for {
		var ok []dlHook
		for _, h := range r.all() {
			if h.path == path && h.status/100 == 2 {
				ok = append(ok, h)
			}
		}
		if len(ok) >= n {
			return ok
		}
		if time.Now().After(deadline) {
			t.Fatalf("receiver %s: %d requests answered 2xx after %v, want %d", path, len(ok), dlWait, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ---------------------------------------------------------------------------
// The tests

// TestDeliveryWebhook: a failed report sends alert.opened and an ok report
// alert.resolved to every channel; a warn alert skips a channel whose
// minSeverity is critical. Each body is signed with the channel's secret
// and names the workspace, alert and job; sentAt is the server's clock.
func TestDeliveryWebhook(t *testing.T) {
	s := dlStart(t)
	rcv := dlStartReceiver(t)
	all := s.channel(map[string]any{"type": "webhook", "name": "all", "url": rcv.url("/all")})
	crit := s.channel(map[string]any{"type": "webhook", "name": "critical only", "url": rcv.url("/crit"), "minSeverity": "critical"})
	if !testserver.WebhookSecretRe.MatchString(all.Secret) || crit.Secret == all.Secret || all.MinSeverity != "warning" || crit.MinSeverity != "critical" {
		t.Fatalf("channels: %+v %+v", all, crit)
	}
	var listed []dlChannel
	s.c.AdminInto(200, "GET", s.path("/channels"), nil, &listed)
	if len(listed) != 2 || listed[0].Secret != "" || listed[1].Secret != "" {
		t.Errorf("channel list shows secrets or misses channels: %+v", listed)
	}
	secrets := map[string]string{"/all": all.Secret, "/crit": crit.Secret}

	// A failed report: alert.opened to both channels.
	db := s.job("nightly-db")
	alertID := s.report(db, "failed")
	if alertID == "" {
		t.Fatal("a failed report opened no alert")
	}
	s.waitDeliveries("alert.opened delivered to both channels", func(l []dlDelivery) bool { return allIn(l, 2, "delivered") })
	check := func(h dlHook, event, status string) {
		t.Helper()
		b := h.decode(t, secrets[h.path])
		if b.Event != event || b.WorkspaceID != s.ws || b.Alert.ID != alertID || b.Alert.JobID != db || b.Job.ID != db || b.Job.Name != "nightly-db" {
			t.Errorf("%s on %s: body %s", event, h.path, h.body)
		}
		if b.Alert.Type != "failed" || b.Alert.Severity != "critical" || b.Alert.Status != status {
			t.Errorf("%s on %s: alert %+v, want a %s failed critical alert", event, h.path, b.Alert, status)
		}
		if !testserver.TimeRe.MatchString(b.SentAt) {
			t.Errorf("sentAt %q is not YYYY-MM-DDTHH:MM:SS.mmmZ", b.SentAt)
		}
	}
	for _, p := range []string{"/all", "/crit"} {
		hooks := rcv.waitOK(t, p, 1)
		check(hooks[0], "alert.opened", "open")
		if b := hooks[0].decode(t, secrets[p]); b.SentAt != testserver.TS(testserver.T0) || b.Job.Status != "failed" {
			t.Errorf("opened on %s: sentAt %s (want the server's clock %s), job status %q", p, b.SentAt, testserver.TS(testserver.T0), b.Job.Status)
		}
	}
	// The same body goes to both channels, signed with each one's secret.
	if a, c := rcv.waitOK(t, "/all", 1)[0], rcv.waitOK(t, "/crit", 1)[0]; !bytes.Equal(a.body, c.body) || a.sig == c.sig {
		t.Errorf("the channels got %s signed %s and %s signed %s", a.body, a.sig, c.body, c.sig)
	}

	// An ok report resolves it: alert.resolved to both.
	t1 := s.c.Advance(10 * time.Minute)
	if id := s.report(db, "ok"); id != "" {
		t.Errorf("an ok report answered alert_id %q", id)
	}
	list := s.waitDeliveries("alert.resolved delivered to both channels", func(l []dlDelivery) bool { return allIn(l, 4, "delivered") })
	for _, p := range []string{"/all", "/crit"} {
		hooks := rcv.waitOK(t, p, 2)
		if len(hooks) != 2 {
			t.Fatalf("%s got %d requests, want 2", p, len(hooks))
		}
		check(hooks[1], "alert.resolved", "resolved")
		if b := hooks[1].decode(t, secrets[p]); b.SentAt != testserver.TS(t1) || b.Job.Status != "healthy" {
			t.Errorf("resolved on %s: sentAt %s (want %s), job status %q", p, b.SentAt, testserver.TS(t1), b.Job.Status)
		}
	}
	// The outbox, newest first: each delivery names its channel, event,
	// alert and job, made in one attempt.
	for i, d := range list {
		event := []string{"alert.resolved", "alert.resolved", "alert.opened", "alert.opened"}[i]
		made := []time.Time{t1, t1, testserver.T0, testserver.T0}[i]
		if d.Event != event || d.AlertID != alertID || d.JobID != db || d.Attempts != 1 || d.LastError != nil ||
			d.CreatedAt != testserver.TS(made) || d.DeliveredAt == nil || *d.DeliveredAt != testserver.TS(made) || d.NextAttemptAt != nil ||
			(d.ChannelID != all.ID && d.ChannelID != crit.ID) {
			t.Errorf("delivery %d: %v", i, d)
		}
	}
	for _, h := range rcv.all() {
		if h.delivery == "" || !slices.ContainsFunc(list, func(d dlDelivery) bool { return d.ID == h.delivery }) {
			t.Errorf("X-Backupmon-Delivery %q names no delivery", h.delivery)
		}
	}

	// A warn report: its warning alert goes to "all" only.
	fs := s.job("file-server")
	warnID := s.report(fs, "warn")
	list = s.waitDeliveries("the warning's delivery", func(l []dlDelivery) bool { return len(l) == 5 && l[0].State == "delivered" })
	if d := list[0]; d.AlertID != warnID || d.ChannelID != all.ID || d.Event != "alert.opened" {
		t.Errorf("warning delivery: %v", d)
	}
	hooks := rcv.waitOK(t, "/all", 3)
	if b := hooks[2].decode(t, all.Secret); b.Alert.ID != warnID || b.Alert.Severity != "warning" || b.Alert.Type != "warning" || b.Job.ID != fs {
		t.Errorf("warning webhook: %s", hooks[2].body)
	}
	if n := len(rcv.waitOK(t, "/crit", 2)); n != 2 {
		t.Errorf("the critical-only channel got %d requests, want 2 (nothing for a warning)", n)
	}
}

// TestDeliveryRetries: the receiver answers 500 twice, then 200. Each
// failed attempt leaves the delivery pending with its error and the next
// attempt 30 s, then 60 s later; the clock's move sends it, not before.
func TestDeliveryRetries(t *testing.T) {
	s := dlStart(t)
	rcv := dlStartReceiver(t)
	rcv.setAnswer(func(n int, _ string) int {
		if n < 2 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	ch := s.channel(map[string]any{"type": "webhook", "name": "flaky", "url": rcv.url("/hook")})
	job := s.job("nightly-db")
	alertID := s.report(job, "failed")

	one := func(l []dlDelivery) dlDelivery {
		if len(l) != 1 {
			t.Fatalf("deliveries: %s", dlList(l))
		}
		return l[0]
	}
	// Attempt 1 fails.
	d := one(s.waitDeliveries("attempt 1 failed", func(l []dlDelivery) bool { return len(l) == 1 && l[0].Attempts == 1 && settled(l) }))
	if d.State != "pending" || d.LastError == nil || *d.LastError != "HTTP 500" || d.ChannelID != ch.ID || d.AlertID != alertID {
		t.Fatalf("after attempt 1: %v", d)
	}
	if last := dlParse(t, d.LastAttemptAt); !last.Equal(testserver.T0) || !dlParse(t, d.NextAttemptAt).Equal(last.Add(30*time.Second)) {
		t.Errorf("after attempt 1: last %v next %v, want %v and 30 s later", *d.LastAttemptAt, *d.NextAttemptAt, testserver.TS(testserver.T0))
	}
	if m := s.c.Metrics(); !strings.Contains(m, "\nbackupmon_notification_outbox_pending 1\n") {
		t.Errorf("/metrics after attempt 1 lacks backupmon_notification_outbox_pending 1")
	}
	// Not before it is due.
	s.c.Advance(29 * time.Second)
	time.Sleep(200 * time.Millisecond)
	if n := len(rcv.all()); n != 1 {
		t.Fatalf("%d requests 29 s after the first attempt, want 1", n)
	}
	if d := one(s.deliveries()); d.Attempts != 1 || d.State != "pending" {
		t.Fatalf("29 s after attempt 1: %v", d)
	}
	// Attempt 2, 30 s after the first, fails: the next comes 60 s later.
	t2 := s.c.Advance(time.Second)
	d = one(s.waitDeliveries("attempt 2 failed", func(l []dlDelivery) bool { return len(l) == 1 && l[0].Attempts == 2 && settled(l) }))
	if d.State != "pending" || d.LastError == nil || *d.LastError != "HTTP 500" {
		t.Fatalf("after attempt 2: %v", d)
	}
	if last := dlParse(t, d.LastAttemptAt); !last.Equal(t2) || !dlParse(t, d.NextAttemptAt).Equal(last.Add(60*time.Second)) {
		t.Errorf("after attempt 2: last %v next %v, want %s and 60 s later", *d.LastAttemptAt, *d.NextAttemptAt, testserver.TS(t2))
	}
	// Attempt 3 gets through.
	t3 := s.c.Advance(time.Minute)
	d = one(s.waitDeliveries("attempt 3 delivered", func(l []dlDelivery) bool { return allIn(l, 1, "delivered") }))
	if d.DeliveredAt == nil || d.LastAttemptAt == nil {
		t.Fatalf("delivered: %v", d)
	}
	if d.Attempts != 3 || d.LastError != nil || *d.DeliveredAt != testserver.TS(t3) || *d.LastAttemptAt != testserver.TS(t3) || d.NextAttemptAt != nil {
		t.Errorf("delivered: %v, want 3 attempts, delivered at %s", d, testserver.TS(t3))
	}
	hooks := rcv.all()
	if len(hooks) != 3 {
		t.Fatalf("the receiver got %d requests, want 3", len(hooks))
	}
	for i, h := range hooks {
		b := h.decode(t, ch.Secret)
		if h.delivery != d.ID || b.Event != "alert.opened" || b.Alert.ID != alertID {
			t.Errorf("attempt %d: delivery %s, body %s", i+1, h.delivery, h.body)
		}
		if want := testserver.TS([]time.Time{testserver.T0, t2, t3}[i]); b.SentAt != want {
			t.Errorf("attempt %d: sentAt %s, want %s", i+1, b.SentAt, want)
		}
	}
	// Nothing more is sent (before the job turns missing, which raises
	// the alert).
	s.c.Advance(50 * time.Minute)
	time.Sleep(200 * time.Millisecond)
	if n := len(rcv.all()); n != 3 {
		t.Errorf("%d requests after the delivery, want 3", n)
	}
	// /metrics counts the attempts by channel type and outcome.
	body := s.c.Metrics()
	for _, want := range []string{
		`backupmon_notification_attempts_total{channel="webhook",outcome="failed"} 2`,
		`backupmon_notification_attempts_total{channel="webhook",outcome="delivered"} 1`,
		`backupmon_notification_attempt_seconds_count{channel="webhook"} 3`,
		`backupmon_notification_outbox_pending 0`,
	} {
		if !strings.Contains(string(body), want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// TestDeliveryEmail: an e-mail channel's notices go through the relay
// (with AUTH PLAIN) to its address; the subject carries the severity and
// the body the job's name.
func TestDeliveryEmail(t *testing.T) {
	s := dlStart(t)
	ch := s.channel(map[string]any{"type": "email", "name": "ops mail", "to": "ops@example.com"})
	if ch.To == nil || *ch.To != "ops@example.com" || ch.URL != nil || ch.Secret != "" {
		t.Fatalf("email channel: %+v", ch)
	}
	failedJob, warnJob := "Nightly SQL – Büro", "File share copy"
	a1 := s.report(s.job(failedJob), "failed")
	a2 := s.report(s.job(warnJob), "warn")
	list := s.waitDeliveries("both e-mails delivered", func(l []dlDelivery) bool { return allIn(l, 2, "delivered") })
	msgs := s.sink.Messages()
	if len(msgs) != 2 {
		t.Fatalf("the sink got %d messages, want 2 (deliveries:\n%s)", len(msgs), dlList(list))
	}
	type want struct{ job, severity, alert string }
	byJob := map[string]want{failedJob: {failedJob, "critical", a1}, warnJob: {warnJob, "warning", a2}}
	seen := map[string]bool{}
	dec := new(mime.WordDecoder)
	for _, m := range msgs {
		if m.From != dlFrom || !slices.Equal(m.To, []string{"ops@example.com"}) || m.AuthUser != dlSMTPUser {
			t.Errorf("envelope from %q to %v (auth %q)", m.From, m.To, m.AuthUser)
		}
		msg, err := mail.ReadMessage(bytes.NewReader(m.Data))
		if err != nil {
			t.Fatalf("message: %v\n%s", err, m.Data)
		}
		subject, err := dec.DecodeHeader(msg.Header.Get("Subject"))
		if err != nil {
			t.Fatalf("subject %q: %v", msg.Header.Get("Subject"), err)
		}
		to, err := msg.Header.AddressList("To")
		if err != nil || len(to) != 1 || to[0].Address != "ops@example.com" {
			t.Errorf("To %q: %v", msg.Header.Get("To"), err)
		}
		if from, err := msg.Header.AddressList("From"); err != nil || len(from) != 1 || from[0].Address != dlFrom || from[0].Name != "Backupmon" {
			t.Errorf("From %q: %v", msg.Header.Get("From"), err)
		}
		if date, err := msg.Header.Date(); err != nil || !date.Equal(testserver.T0) {
			t.Errorf("Date %q (%v), want the server's clock %v", msg.Header.Get("Date"), err, testserver.T0)
		}
		body, err := io.ReadAll(qpReader(msg))
		if err != nil {
			t.Fatal(err)
		}
		var w want
		for name, x := range byJob {
			if strings.Contains(subject, name) {
				w = x
			}
		}
		if w.job == "" {
			t.Errorf("subject %q names neither job", subject)
			continue
		}
		seen[w.job] = true
		if !strings.Contains(subject, w.severity) {
			t.Errorf("subject %q does not carry the severity %q", subject, w.severity)
		}
		if !strings.Contains(string(body), w.job) || !strings.Contains(string(body), w.alert) || !strings.Contains(string(body), "alert.opened") {
			t.Errorf("body of %q does not name the job %q, the alert %s and the event:\n%s", subject, w.job, w.alert, body)
		}
	}
	if len(seen) != 2 {
		t.Errorf("e-mails for %v, want both jobs", seen)
	}
}

// qpReader reads a message body, decoding quoted-printable.
func qpReader(msg *mail.Message) io.Reader {
	if strings.EqualFold(msg.Header.Get("Content-Transfer-Encoding"), "quoted-printable") {
		return quotedprintable.NewReader(msg.Body)
	}
	return msg.Body
}

// TestDeliveryEscalation: a rule of 15 minutes sends one alert.escalated to
// its channel for an alert still open 15 minutes after it opened, and none
// for an acknowledged, snoozed or resolved one (whose escalation instant
// comes all the same: the server must take it in its stride).
func TestDeliveryEscalation(t *testing.T) {
	s := dlStart(t)
	rcv := dlStartReceiver(t)
	team := s.channel(map[string]any{"type": "webhook", "name": "team", "url": rcv.url("/team")})
	oncall := s.channel(map[string]any{"type": "webhook", "name": "on call", "url": rcv.url("/oncall"), "minSeverity": "critical"})
	var rule struct {
		ID           string
		ChannelID    string
		AfterMinutes int
	}
	s.c.AdminInto(201, "POST", s.path("/escalations"), map[string]any{"channelId": oncall.ID, "afterMinutes": 15}, &rule)
	if rule.ChannelID != oncall.ID || rule.AfterMinutes != 15 {
		t.Fatalf("escalation: %+v", rule)
	}
	open := s.report(s.job("left-open"), "failed")
	acked := s.report(s.job("acknowledged"), "failed")
	snoozed := s.report(s.job("snoozed"), "failed")
	recoveredJob := s.job("recovered")
	recovered := s.report(recoveredJob, "failed")
	s.c.AdminInto(200, "POST", s.path("/alerts/"+acked+"/acknowledge"), map[string]any{}, nil)
	s.c.AdminInto(200, "POST", s.path("/alerts/"+snoozed+"/snooze"), map[string]any{"until": testserver.TS(testserver.T0.Add(time.Hour))}, nil)
	s.waitDeliveries("the openings delivered", func(l []dlDelivery) bool { return allIn(l, 8, "delivered") })
	s.c.Advance(5 * time.Minute)
	s.report(recoveredJob, "ok")
	s.waitDeliveries("the recovery delivered", func(l []dlDelivery) bool { return allIn(l, 10, "delivered") })

	// 14 minutes: nothing yet.
	s.c.Advance(9 * time.Minute)
	time.Sleep(100 * time.Millisecond)
	if l := s.deliveries(); len(l) != 10 {
		t.Fatalf("escalated before 15 minutes:\n%s", dlList(l))
	}
	// 15 minutes: one alert.escalated, the open alert's, to the rule's channel.
	t15 := s.c.Advance(time.Minute)
	list := s.waitDeliveries("the escalation delivered", func(l []dlDelivery) bool { return allIn(l, 11, "delivered") })
	if d := list[0]; d.Event != "alert.escalated" || d.AlertID != open || d.ChannelID != oncall.ID || d.CreatedAt != testserver.TS(t15) {
		t.Errorf("escalation delivery: %v", d)
	}
	// Later, and after the snooze ends (before the jobs turn missing): no
	// other.
	s.c.Advance(50 * time.Minute)
	time.Sleep(200 * time.Millisecond)
	list = s.deliveries()
	var escalated []dlDelivery
	for _, d := range list {
		if d.Event == "alert.escalated" {
			escalated = append(escalated, d)
		}
	}
	if len(escalated) != 1 {
		t.Errorf("%d alert.escalated deliveries, want 1:\n%s", len(escalated), dlList(list))
	}
	hooks := rcv.waitOK(t, "/oncall", 6) // 4 openings, 1 recovery, 1 escalation
	var got []string
	for _, h := range hooks {
		if b := h.decode(t, oncall.Secret); b.Event == "alert.escalated" {
			got = append(got, b.Alert.ID)
			if b.Alert.Status != "open" || b.SentAt != testserver.TS(t15) {
				t.Errorf("escalated body: %s", h.body)
			}
		}
	}
	if !slices.Equal(got, []string{open}) {
		t.Errorf("escalations received for %v, want only %s (not %s acknowledged, %s snoozed, %s resolved)", got, open, acked, snoozed, recovered)
	}
	for _, h := range rcv.all() {
		if h.path == "/team" && h.event == "alert.escalated" {
			t.Errorf("an escalation went to the channel without a rule: %s", h.body)
		}
	}
	_ = team
}

// TestDeliveryKillRestart: with the receiver failing, alerts of several
// jobs open and some resolve; the server is killed with SIGKILL while their
// deliveries are pending (some attempts in flight) and restarted on the same
// data directory. Once the receiver answers 200, every notice arrives, at
// least once, and every delivery ends delivered.
func TestDeliveryKillRestart(t *testing.T) {
	s := dlStart(t)
	rcv := dlStartReceiver(t)
	rcv.setAnswer(func(int, string) int { return http.StatusInternalServerError })
	rcv.setDelay(150 * time.Millisecond) // attempts stay in flight a while
	ch := s.channel(map[string]any{"type": "webhook", "name": "hook", "url": rcv.url("/hook")})

	type pair struct{ event, alert string }
	want := map[pair]bool{}
	alertOf := map[string]string{}
	var jobs []string
	for i := range 5 {
		j := s.job(fmt.Sprintf("job-%d", i))
		jobs = append(jobs, j)
		alertOf[j] = s.report(j, []string{"failed", "warn"}[i%2])
		want[pair{"alert.opened", alertOf[j]}] = true
	}
	// Later (a report at the same instant would be superseded), two of
	// them recover.
	s.c.Advance(10 * time.Second)
	for _, j := range jobs[:2] {
		s.report(j, "ok")
		want[pair{"alert.resolved", alertOf[j]}] = true
	}
	s.waitDeliveries("first attempts failed", func(l []dlDelivery) bool { return len(l) == 7 && settled(l) })
	// The second attempts of all seven fall due (the openings' at +30 s,
	// the recoveries' at +40 s): they are in flight (the receiver holds
	// each for 150 ms) when the kill comes.
	s.c.Advance(30 * time.Second)
	before := s.deliveries()
	s.c.Kill()
	if len(before) != 7 {
		t.Fatalf("before the kill:\n%s", dlList(before))
	}
	for _, d := range before {
		if d.State != "pending" {
			t.Fatalf("a delivery finished before the kill: %v", d)
		}
	}
	inFlight := 0
	for _, d := range before {
		if d.NextAttemptAt == nil {
			inFlight++
		}
	}
	t.Logf("at the kill: %d of 7 deliveries had an attempt in flight", inFlight)

	rcv.setAnswer(nil)
	rcv.setDelay(0)
	s.restart()
	after := s.deliveries()
	ids := func(l []dlDelivery) []string {
		var out []string
		for _, d := range l {
			out = append(out, d.ID+" "+d.Event+" "+d.AlertID)
		}
		slices.Sort(out)
		return out
	}
	if !slices.Equal(ids(after), ids(before)) {
		t.Fatalf("the outbox after the restart:\n%s\nbefore:\n%s", dlList(after), dlList(before))
	}
	// The attempts the restart started (those due) are in flight: moving
	// the clock past their 2 minutes now would count them as lost. Once
	// their outcomes are in, the retries due later go when the clock
	// reaches them.
	s.waitDeliveries("the attempts made at the restart settled", settled)
	s.c.Advance(5 * time.Minute)
	list := s.waitDeliveries("every delivery delivered after the restart", func(l []dlDelivery) bool { return allIn(l, 7, "delivered") })
	got := map[pair]int{}
	for _, h := range rcv.all() {
		if h.status != http.StatusOK {
			continue
		}
		b := h.decode(t, ch.Secret)
		got[pair{b.Event, b.Alert.ID}]++
	}
	for p := range want {
		if got[p] == 0 {
			t.Errorf("%s of alert %s never arrived", p.event, p.alert)
		}
	}
	for p, n := range got {
		if !want[p] {
			t.Errorf("%s of alert %s arrived %d times, never made", p.event, p.alert, n)
		}
	}
	if len(want) != 7 {
		t.Errorf("%d distinct notices made, want 7", len(want))
	}
	attempts := 0
	for _, d := range list {
		attempts += d.Attempts
	}
	t.Logf("%d requests received, %d answered 200, %d attempts recorded", len(rcv.all()), len(got), attempts)
}

// TestDeliveryPausedJob: a delivery waiting for its retry when its job is
// paused is cancelled at the retry (lastError "job paused") and never sent;
// a failed report on the paused job sends nothing.
func TestDeliveryPausedJob(t *testing.T) {
	s := dlStart(t)
	rcv := dlStartReceiver(t)
	rcv.setAnswer(func(int, string) int { return http.StatusServiceUnavailable })
	s.channel(map[string]any{"type": "webhook", "name": "hook", "url": rcv.url("/hook")})
	job := s.job("paused-later")
	s.report(job, "failed")
	s.waitDeliveries("attempt 1 failed", func(l []dlDelivery) bool { return len(l) == 1 && l[0].Attempts == 1 && settled(l) })
	s.c.AdminInto(200, "PATCH", s.path("/jobs/"+job), map[string]any{"paused": true}, nil)
	rcv.setAnswer(nil)
	t1 := s.c.Advance(30 * time.Second)
	list := s.waitDeliveries("the delivery cancelled", func(l []dlDelivery) bool { return allIn(l, 1, "cancelled") })
	if d := list[0]; d.LastError == nil || *d.LastError != "job paused" || d.Attempts != 1 || d.NextAttemptAt != nil || d.DeliveredAt != nil ||
		d.LastAttemptAt == nil || *d.LastAttemptAt != testserver.TS(testserver.T0) {
		t.Errorf("cancelled delivery: %v (at %s)", d, testserver.TS(t1))
	}
	// Reports on the paused job open nothing and send nothing.
	if id := s.report(job, "failed"); id != "" {
		t.Errorf("a failed report on a paused job answered alert_id %s", id)
	}
	s.c.Advance(time.Hour)
	time.Sleep(200 * time.Millisecond)
	if n := len(rcv.all()); n != 1 {
		t.Errorf("the receiver got %d requests, want the 1 failed attempt before the pause", n)
	}
	if l := s.deliveries(); len(l) != 1 || l[0].State != "cancelled" {
		t.Errorf("deliveries:\n%s", dlList(l))
	}
}
