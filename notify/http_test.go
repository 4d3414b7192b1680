package notify

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"backupmon/engine"
)

// request is what a test receiver got.
type request struct {
	method string
	path   string
	header http.Header
	body   []byte
}

// receiver is a local HTTP endpoint that records each request and answers
// with answer; it is closed when the test ends.
func receiver(t *testing.T, answer http.HandlerFunc) (*httptest.Server, chan request) {
	t.Helper()
	got := make(chan request, 256)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- request{r.Method, r.URL.Path, r.Header.Clone(), body}
		answer(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

func status(code int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(code)
		io.WriteString(w, `{"ok":true}`)
	}
}

func TestWebhook(t *testing.T) {
	wantBody := `{"event":"alert.opened","sentAt":"` + sentAtText + `","workspaceId":"` + wsText +
		`","alert":` + alertJSON + `,"job":` + jobJSON + `}`
	var redirectTargetHits atomic.Int32
	tests := []struct {
		name        string
		answer      http.HandlerFunc
		url         func(srv *httptest.Server) string
		timeout     time.Duration
		wantFailure string // "" success; else a prefix
		wantContain string // else a part of the failure
		wantRequest bool
	}{
		{name: "200 is success", answer: status(200), wantRequest: true},
		{name: "204 is success", answer: status(204), wantRequest: true},
		{name: "202 with a large answer is success", wantRequest: true, answer: func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(202)
			w.Write(bytes.Repeat([]byte("x"), 1<<20))
		}},
		{name: "500 is a failure", answer: status(500), wantFailure: "HTTP 500", wantRequest: true},
		{name: "404 is a failure", answer: status(404), wantFailure: "HTTP 404", wantRequest: true},
		{name: "302 is a failure, not followed", wantFailure: "HTTP 302", wantRequest: true,
			answer: func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/elsewhere" {
					redirectTargetHits.Add(1)
					w.WriteHeader(200)
					return
				}
				http.Redirect(w, r, "/elsewhere", http.StatusFound)
			}},
		{name: "a receiver slower than Timeout is a timeout", timeout: 300 * time.Millisecond,
			wantFailure: "timeout after 300ms", wantRequest: true,
			answer: func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-r.Context().Done():
				case <-time.After(5 * time.Second):
				}
			}},
		{name: "a closed port is a connection failure", wantContain: "connection refused",
			url: func(*httptest.Server) string { return "http://" + closedAddr(t) + "/hook" }},
		{name: "a URL that is not http is a failure", wantFailure: "invalid channel URL",
			url: func(*httptest.Server) string { return "ftp://example.com/hook" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, got := receiver(t, tt.answer)
			url := srv.URL + "/hook"
			if tt.url != nil {
				url = tt.url(srv)
			}
			n, rec := newTestNotifier(t, Options{Timeout: tt.timeout, AllowPrivate: true})
			start := time.Now()
			failure := sendOne(t, n, rec, testNotice(engine.ChannelWebhook, url))
			switch {
			case tt.wantFailure == "" && tt.wantContain == "":
				if failure != "" {
					t.Fatalf("failure %q, want success", failure)
				}
			case tt.wantFailure != "" && !strings.HasPrefix(failure, tt.wantFailure):
				t.Fatalf("failure %q, want %q", failure, tt.wantFailure)
			case tt.wantContain != "" && !strings.Contains(failure, tt.wantContain):
				t.Fatalf("failure %q, want it to contain %q", failure, tt.wantContain)
			}
			if strings.Contains(failure, url) {
				t.Errorf("failure %q shows the channel URL", failure)
			}
			if tt.timeout > 0 && time.Since(start) > tt.timeout+2*time.Second {
				t.Errorf("attempt took %v with a timeout of %v", time.Since(start), tt.timeout)
			}
			if !tt.wantRequest {
				return
			}
			r := <-got
			checkWebhookRequest(t, r, wantBody)
		})
	}
	if h := redirectTargetHits.Load(); h != 0 {
		t.Errorf("redirect followed %d times", h)
	}
}

// checkWebhookRequest checks the method, headers, signature and body of a
// webhook request.
func checkWebhookRequest(t *testing.T, r request, wantBody string) {
	t.Helper()
	if r.method != http.MethodPost || r.path != "/hook" {
		t.Errorf("request %s %s, want POST /hook", r.method, r.path)
	}
	if !bytes.HasPrefix(r.body, []byte(`{"event":"alert.opened","sentAt":"`)) {
		t.Errorf("body starts %q", r.body[:min(len(r.body), 40)])
	}
	if string(r.body) != wantBody {
		t.Errorf("body\n%s\nwant\n%s", r.body, wantBody)
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(r.body)
	if got, want := r.header.Get("X-Backupmon-Signature"), "sha256="+hex.EncodeToString(mac.Sum(nil)); got != want {
		t.Errorf("signature %q, want %q", got, want)
	}
	var body struct {
		Event       string          `json:"event"`
		SentAt      string          `json:"sentAt"`
		WorkspaceID string          `json:"workspaceId"`
		Alert       json.RawMessage `json:"alert"`
		Job         json.RawMessage `json:"job"`
	}
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		t.Fatalf("body is not the webhook object: %v", err)
	}
	if body.Event != engine.EventOpened || body.SentAt != sentAtText || body.WorkspaceID != wsText ||
		string(body.Alert) != alertJSON || string(body.Job) != jobJSON {
		t.Errorf("body fields %+v", body)
	}
	for name, want := range map[string]string{
		"Content-Type":         "application/json",
		"User-Agent":           "backupmon",
		"X-Backupmon-Event":    engine.EventOpened,
		"X-Backupmon-Delivery": deliveryID.String(),
	} {
		if got := r.header.Get(name); got != want {
			t.Errorf("header %s %q, want %q", name, got, want)
		}
	}
}

func TestWebhookBody(t *testing.T) {
	tests := []struct {
		name    string
		event   string
		alert   string
		job     string
		want    string
		wantErr bool
	}{
		{name: "raw objects", event: engine.EventResolved, alert: `{"a":1}`, job: `{"b":[true]}`,
			want: `{"event":"alert.resolved","sentAt":"` + sentAtText + `","workspaceId":"` + wsText + `","alert":{"a":1},"job":{"b":[true]}}`},
		{name: "empty objects are null", event: engine.EventEscalated,
			want: `{"event":"alert.escalated","sentAt":"` + sentAtText + `","workspaceId":"` + wsText + `","alert":null,"job":null}`},
		{name: "invalid alert JSON is refused", event: engine.EventOpened, alert: `{"a":`, job: `{}`, wantErr: true},
		{name: "invalid job JSON is refused", event: engine.EventOpened, alert: `{}`, job: `nope`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nt := testNotice(engine.ChannelWebhook, "")
			nt.Event, nt.Alert, nt.Job = tt.event, []byte(tt.alert), []byte(tt.job)
			got, err := WebhookBody(nt, sentAt.In(time.FixedZone("x", 3600)))
			if tt.wantErr {
				if err == nil {
					t.Fatalf("no error for %s", got)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("got %s, %v\nwant %s", got, err, tt.want)
			}
		})
	}
}

func TestWebhookInvalidNoticeIsNotSent(t *testing.T) {
	srv, got := receiver(t, status(200))
	n, rec := newTestNotifier(t, Options{})
	nt := testNotice(engine.ChannelWebhook, srv.URL+"/hook")
	nt.Alert = []byte(`{"broken"`)
	if f := sendOne(t, n, rec, nt); f != "invalid notice: alert is not valid JSON" {
		t.Fatalf("failure %q", f)
	}
	if len(got) != 0 {
		t.Fatal("an invalid notice was sent")
	}
}

func TestSlack(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*engine.Notice)
		want  string
		fails string
	}{
		{name: "opened", edit: func(*engine.Notice) {},
			want: "[critical] Alert opened: Backup failed on Acme / nightly-db — Veeam job failed: exit code 2"},
		{name: "raised", edit: func(n *engine.Notice) { n.Event = engine.EventRaised },
			want: "[critical] Alert raised: Backup failed on Acme / nightly-db — Veeam job failed: exit code 2"},
		{name: "escalated missing", edit: func(n *engine.Notice) {
			n.Event, n.AlertType, n.Severity, n.Summary = engine.EventEscalated, "missing", "warning", "No report since Tuesday"
		}, want: "[warning] Alert still open (escalated): Backup missing on Acme / nightly-db — No report since Tuesday"},
		{name: "resolved integrity", edit: func(n *engine.Notice) {
			n.Event, n.AlertType = engine.EventResolved, "integrity"
		}, want: "[critical] Recovered: Integrity check failed on Acme / nightly-db — Veeam job failed: exit code 2"},
		{name: "markup, quotes and line breaks are neutralised", edit: func(n *engine.Notice) {
			n.ClientName, n.JobName, n.Summary = "<!channel> & co", "db \"main\"\r\nline2", "a\tb"
		}, want: "[critical] Alert opened: Backup failed on &lt;!channel&gt; &amp; co / db \"main\" line2 — a b"},
		{name: "500 is a failure", edit: func(*engine.Notice) {}, fails: "HTTP 500",
			want: "[critical] Alert opened: Backup failed on Acme / nightly-db — Veeam job failed: exit code 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code := 200
			if tt.fails != "" {
				code = 500
			}
			srv, got := receiver(t, status(code))
			n, rec := newTestNotifier(t, Options{AllowPrivate: true})
			nt := testNotice(engine.ChannelSlack, srv.URL+"/services/T0/B0/xyz")
			tt.edit(&nt)
			if f := sendOne(t, n, rec, nt); f != tt.fails {
				t.Fatalf("failure %q, want %q", f, tt.fails)
			}
			r := <-got
			if r.method != http.MethodPost || r.header.Get("Content-Type") != "application/json" ||
				r.header.Get("X-Backupmon-Signature") != "" || r.header.Get("X-Backupmon-Delivery") != nt.Delivery.String() {
				t.Errorf("request %s %v", r.method, r.header)
			}
			var body map[string]string
			if err := json.Unmarshal(r.body, &body); err != nil {
				t.Fatalf("body %s: %v", r.body, err)
			}
			if len(body) != 1 || body["text"] != tt.want {
				t.Errorf("body %s\nwant text %q", r.body, tt.want)
			}
		})
	}
}
