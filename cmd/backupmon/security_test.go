package main

// Security properties of the whole server (issue 8, section 3), black-box
// against the real binary:
//
//   - TestSecuritySurface: every secret (API keys of each type, the webhook
//     signing secret, session ids, passwords, the admin token, ingest
//     addresses, a Slack URL, and keys clients get wrong) is in no answer of
//     any listener but the one that made it, and in no line of the server's
//     log, after every surface was used with them; key lists show the prefix
//     only; keys in the query string or other headers are never accepted;
//     the admin token's refusals are all the same bytes; no answer carries a
//     Server header, and the SMTP greeting names no software.
//   - TestSecurityIsolation: workspace A's credentials with each of
//     workspace B's ids, on every REST route, the Report API, every MCP tool
//     argument that names something and every dashboard page and form that
//     takes an id, answer exactly as a random id that exists nowhere, and B
//     does not change.
//   - TestSecurityTLS: --tls-cert/--tls-key serve REST, the Report API, /mcp
//     and the dashboard over HTTPS only, with a Secure session cookie; half
//     or broken TLS flags stop the start with their exact error.
//
// They reuse the dashboard tests' fixture (dashServer, workspace, login,
// page, post, mcpRaw) with an HTTP client whose transport keeps every
// answer. Every name here starts with "sec".

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/smtp"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"backupmon/internal/testserver"
)

// ---------------------------------------------------------------------------
// Every answer, kept

// secExchange is one answer the tests got (or one webhook the server sent).
type secExchange struct {
	method, url string
	status      int
	header      http.Header
	body        []byte
	// echoOK says why this answer may repeat what its request carried
	// (see secQueryKeys); "" for none.
	echoOK string
}

func (e secExchange) String() string {
	return fmt.Sprintf("%s %s → %d", e.method, secRedactURL(e.url), e.status)
}

// text is the answer's header lines and body: where no secret may be.
func (e secExchange) text() string {
	var b strings.Builder
	for k, vs := range e.header {
		for _, v := range vs {
			fmt.Fprintf(&b, "%s: %s\n", k, v)
		}
	}
	b.Write(e.body)
	return b.String()
}

// secRedactURL cuts the query off a URL for messages (it may hold a key).
func secRedactURL(u string) string {
	if i := strings.IndexByte(u, '?'); i >= 0 {
		return u[:i] + "?…"
	}
	return u
}

// secRecorder is an http.RoundTripper that keeps every answer whole.
type secRecorder struct {
	next http.RoundTripper

	mu     sync.Mutex
	log    []secExchange
	echoOK string // set around requests whose answers may echo them
}

func (r *secRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	r.mu.Lock()
	r.log = append(r.log, secExchange{method: req.Method, url: req.URL.String(), status: resp.StatusCode, header: resp.Header.Clone(), body: b, echoOK: r.echoOK})
	r.mu.Unlock()
	return resp, nil
}

func (r *secRecorder) CloseIdleConnections() {
	if c, ok := r.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

func (r *secRecorder) add(e secExchange) {
	r.mu.Lock()
	r.log = append(r.log, e)
	r.mu.Unlock()
}

func (r *secRecorder) all() []secExchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.log)
}

// echoing runs f with its answers marked as allowed to echo their request.
func (r *secRecorder) echoing(why string, f func()) {
	r.mu.Lock()
	r.echoOK = why
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.echoOK = ""
		r.mu.Unlock()
	}()
	f()
}

// secStart starts a dashboard fixture server (development clock, SMTP
// listener) with extra flags, whose client keeps every answer.
func secStart(t *testing.T, extra ...string) (*dashServer, *secRecorder) {
	t.Helper()
	s := dashStartChild(t, "security server", append([]string{"--smtp-listen", "127.0.0.1:0"}, extra...)...)
	rec := &secRecorder{next: &http.Transport{DisableCompression: true}}
	s.c.HTTP.Transport = rec
	return s, rec
}

// ---------------------------------------------------------------------------
// Secrets

type secKind int

const (
	// secMade: shown by exactly one answer, the one that made it (an API
	// key, a webhook's signing secret, a session id in the login's
	// Set-Cookie).
	secMade secKind = iota
	// secNever: in no answer at all (a password, the admin token, a key a
	// client got wrong).
	secNever
	// secAdminOnly: in admin API answers only (an ingest address, a Slack
	// URL: decisions.md 2, 10; api.md 1.7 keeps them out of the rest).
	secAdminOnly
)

type secSecret struct {
	what  string
	value string
	kind  secKind
	// visible is how many leading characters are not secret: 16 for an API
	// key (its prefix), 6 for a webhook secret ("whsec_").
	visible int
	// whole: only the whole value counts (a wrong key made from a real
	// one shares pieces with it).
	whole bool
	// within: occurrences inside this string do not count (a real key
	// that the wrong one is a piece of).
	within string
}

// needles are the pieces of the secret no answer or log line may hold:
// every 12 characters of its hidden part, and for a key its prefix and one
// character more.
func (s secSecret) needles() []string {
	v := s.value
	if s.whole || s.visible == 0 && len(v) < 32 {
		return []string{v} // a password, a token: whole
	}
	var out []string
	if s.visible > 0 {
		out = append(out, v[:s.visible+1])
	}
	for i := s.visible; ; i += 6 {
		if i+12 >= len(v) {
			out = append(out, v[max(s.visible, len(v)-12):])
			break
		}
		out = append(out, v[i:i+12])
	}
	return out
}

// secKey registers an API key, secApiKeyRe-shaped.
func secKey(what, v string) secSecret {
	return secSecret{what: what, value: v, kind: secMade, visible: 16}
}

func secRandomHex(n int) string {
	b := make([]byte, (n+1)/2)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)[:n]
}

var (
	secAnyKeyRe     = regexp.MustCompile(`svc_live_[0-9a-fA-F]{8,}`) // more than a key's 16-character prefix
	secAnyWebhookRe = regexp.MustCompile(`whsec_[0-9a-f]{8,}`)
	secRequestIDRe  = regexp.MustCompile(`,"requestId":"[0-9a-f]{24}"`)
)

// secCreates reports whether e is an answer that makes a secret: a key
// (admin API 201, or the dashboard's key form), a webhook channel (201), a
// login (303 with the session).
func secCreates(e secExchange) bool {
	if e.method != "POST" {
		return false
	}
	u, err := url.Parse(e.url)
	if err != nil {
		return false
	}
	switch {
	case strings.HasPrefix(u.Path, "/admin/v1/workspaces/") && (strings.HasSuffix(u.Path, "/keys") || strings.HasSuffix(u.Path, "/channels")):
		return e.status == 201
	case u.Path == "/settings/keys":
		return e.status == 200
	case u.Path == "/login":
		return e.status == 303
	}
	return false
}

// secCheckAnswers checks that each secret is only where its kind allows,
// and that no key or webhook secret at all (known or not) is in an answer
// but the one that made it.
func secCheckAnswers(t *testing.T, adminURL string, answers []secExchange, secrets []secSecret) {
	t.Helper()
	texts := make([]string, len(answers))
	for i, e := range answers {
		texts[i] = e.text()
	}
	for _, sec := range secrets {
		var shown []int
		for i, txt := range texts {
			if answers[i].echoOK != "" {
				continue
			}
			if sec.within != "" {
				txt = strings.ReplaceAll(txt, sec.within, "<within>")
			}
			for _, n := range sec.needles() {
				if strings.Contains(txt, n) {
					shown = append(shown, i)
					break
				}
			}
		}
		var bad []string
		switch sec.kind {
		case secMade:
			if len(shown) == 0 {
				t.Errorf("%s: no answer shows it, not even the one that made it (the check is blind)", sec.what)
			}
			for k, i := range shown {
				if k > 0 || !secCreates(answers[i]) {
					bad = append(bad, answers[i].String())
				}
			}
		case secNever:
			for _, i := range shown {
				bad = append(bad, answers[i].String())
			}
		case secAdminOnly:
			for _, i := range shown {
				if !strings.HasPrefix(answers[i].url, adminURL) && !secOwnersJobPage(answers[i]) {
					bad = append(bad, answers[i].String())
				}
			}
		}
		if len(bad) > 0 {
			t.Errorf("%s is in answers it must not be in (%d of %d answers):\n  %s", sec.what, len(bad), len(answers), strings.Join(bad, "\n  "))
		}
	}
	// Whatever the registry missed: a whole key or webhook secret, or more
	// of one than its prefix, only in the answer that made it.
	seen := map[string][]int{}
	for i, txt := range texts {
		if answers[i].echoOK != "" {
			continue
		}
		for _, m := range append(secAnyKeyRe.FindAllString(txt, -1), secAnyWebhookRe.FindAllString(txt, -1)...) {
			if l := seen[m]; len(l) == 0 || l[len(l)-1] != i {
				seen[m] = append(seen[m], i)
			}
		}
	}
	for m, list := range seen {
		if len(list) == 1 && secCreates(answers[list[0]]) {
			continue
		}
		var where []string
		for _, i := range list {
			where = append(where, answers[i].String())
		}
		t.Errorf("%.20s… (a key or webhook secret) is in %d answers, want only the one that made it:\n  %s", m, len(list), strings.Join(where, "\n  "))
	}
	for i, txt := range texts {
		if strings.Contains(txt, "$argon2") {
			t.Errorf("%s shows a password hash", answers[i])
		}
	}
}

// secCheckLog checks that no secret, nothing key-shaped, no password hash
// and no Authorization header is in the server's log.
func secCheckLog(t *testing.T, log string, secrets []secSecret) {
	t.Helper()
	for _, sec := range secrets {
		for _, n := range sec.needles() {
			if i := strings.Index(log, n); i >= 0 {
				t.Errorf("the log holds %s: …%s…", sec.what, secLine(log, i))
				break
			}
		}
	}
	for _, re := range []*regexp.Regexp{secAnyKeyRe, secAnyWebhookRe, regexp.MustCompile(`(?i)bearer [^\s"]`), regexp.MustCompile(`\$argon2`), regexp.MustCompile(`__Host-session=`)} {
		if loc := re.FindStringIndex(log); loc != nil {
			t.Errorf("the log holds %s: …%s…", re, secLine(log, loc[0]))
		}
	}
}

// secLine returns the log line around i, for messages.
func secLine(log string, i int) string {
	start := strings.LastIndexByte(log[:i], '\n') + 1
	end := strings.IndexByte(log[i:], '\n')
	if end < 0 {
		end = len(log) - i
	}
	return log[start : i+end]
}

// ---------------------------------------------------------------------------
// Small helpers

// secReq sends a request with header pairs and returns the answer.
func (s *dashServer) secReq(t testing.TB, method, rawURL, body string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, rawURL, rd)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return s.do(t, req)
}

// secRPC is a JSON-RPC request body.
func secRPC(method string, params any) string {
	m := map[string]any{"jsonrpc": "2.0", "id": 1, "method": method}
	if params != nil {
		m["params"] = params
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func secCall(tool string, args any) string {
	return secRPC("tools/call", map[string]any{"name": tool, "arguments": args})
}

// secRESTAnswer is a REST answer without its request id: "status body".
func secRESTAnswer(code int, body string) string {
	return fmt.Sprintf("%d %s", code, secNoRequestID(body))
}

// secNoRequestID removes error.requestId from a REST error body.
func secNoRequestID(body string) string { return secRequestIDRe.ReplaceAllString(body, "") }

// secRawHTTP sends raw bytes to addr (host:port) and reads the answer;
// ok is false when nothing that parses as an HTTP answer came back.
func secRawHTTP(t testing.TB, addr, raw string) (secExchange, bool) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(conn, raw); err != nil {
		t.Fatalf("write to %s: %v", addr, err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return secExchange{}, false
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	line, _, _ := strings.Cut(raw, "\r\n")
	return secExchange{method: "RAW", url: "http://" + addr + " " + line, status: resp.StatusCode, header: resp.Header, body: b}, true
}

// ---------------------------------------------------------------------------
// TestSecuritySurface

// secFixture is what TestSecuritySurface made and the secrets it knows.
type secFixture struct {
	w         *dashWS
	secrets   []secSecret
	ro, rw    mcpKey
	scoped    string // a REST key with jobs:read only
	expired   string
	revoked   string
	session   string // the owner's session
	wrongKeys []struct{ what, key string }
	webhook   struct{ id, secret string }
	slackID   string
	hooks     *dlReceiver
}

func (f *secFixture) add(s secSecret) { f.secrets = append(f.secrets, s) }

// TestSecuritySurface uses every surface with every kind of secret on one
// server logging at debug level, then checks every answer and the log.
func TestSecuritySurface(t *testing.T) {
	// The webhook and Slack channels point at local receivers.
	s, rec := secStart(t, "--log-level", "debug", "--allow-private-webhooks")
	f := secSetUp(t, s)

	t.Run("KeyListsShowThePrefixOnly", func(t *testing.T) { secKeyLists(t, s, f) })
	t.Run("UseEverySurface", func(t *testing.T) { secUseEverything(t, s, f) })
	t.Run("WrongKeys", func(t *testing.T) { secWrongKeyAnswers(t, s, f) })
	t.Run("QueryStringKeys", func(t *testing.T) { secQueryKeys(t, s, rec, f) })
	t.Run("AdminToken", func(t *testing.T) { secAdminToken(t, s, f) })
	t.Run("ErrorPaths", func(t *testing.T) { secErrorPaths(t, s, rec, f) })
	t.Run("SMTPGreeting", func(t *testing.T) { secSMTPGreeting(t, s) })

	// Everything above is in rec now.
	answers := rec.all()
	for _, h := range f.hooks.all() {
		answers = append(answers, secExchange{method: "WEBHOOK", url: "webhook " + h.path, header: http.Header{"X-Backupmon-Signature": {h.sig}}, body: h.body})
	}
	t.Run("NoSecretInAnswers", func(t *testing.T) {
		if len(answers) < 300 {
			t.Errorf("only %d answers were collected", len(answers))
		}
		secCheckAnswers(t, s.c.AdminURL, answers, f.secrets)
	})
	t.Run("NoServerHeader", func(t *testing.T) {
		for _, e := range answers {
			if e.method == "WEBHOOK" {
				continue
			}
			for _, h := range []string{"Server", "X-Powered-By"} {
				if v, ok := e.header[h]; ok {
					t.Errorf("%s: %s %q", e, h, v)
				}
			}
		}
	})
	t.Run("NoSecretInLogs", func(t *testing.T) {
		// A clean stop, so that the shutdown's lines are in the log too.
		if code, err := s.c.Term(); err != nil || code != 0 {
			t.Errorf("stop: exit %d, %v", code, err)
		}
		log := s.c.Stdout.String() + s.c.Stderr.String()
		if !strings.Contains(log, `msg="engine recovered"`) || !strings.Contains(log, "stopped cleanly") {
			t.Fatalf("the log is not the whole log:\n%s", testserver.Tail(log, 20))
		}
		secCheckLog(t, log, f.secrets)
	})
}

// secSetUp makes a workspace with every kind of secret: the dashboard
// fixture's users, REST and report keys, plus assistant keys, a scoped, an
// expired and a revoked key, webhook, Slack and e-mail channels, an
// escalation, and a rotated ingest address.
func secSetUp(t *testing.T, s *dashServer) *secFixture {
	t.Helper()
	f := &secFixture{hooks: dlStartReceiver(t)}
	w := s.workspace(t, "sec", dashJobs)
	f.w = w
	f.add(secKey("the REST key", w.restKey))
	f.add(secKey("the report key", w.reportKey))
	for _, u := range w.users {
		f.add(secSecret{what: "the password of " + u.email, value: u.password, kind: secNever})
	}
	f.add(secSecret{what: "the admin token", value: testserver.AdminToken, kind: secNever})
	for name, addr := range w.ingest {
		token, _, _ := strings.Cut(addr, "@")
		f.add(secSecret{what: "the ingest address of " + name, value: token, kind: secAdminOnly})
	}

	f.ro = s.mcpNewKey(t, w, "assistant ro", "")
	f.rw = s.mcpNewKey(t, w, "assistant rw", "read-write")
	f.add(secKey("the read-only assistant key", f.ro.secret))
	f.add(secKey("the read-write assistant key", f.rw.secret))
	var k struct{ ID, Key string }
	s.admin(t, "POST", w.path("/keys"), map[string]any{"name": "jobs only", "type": "rest", "scopes": []string{"jobs:read"}}, 201, &k)
	f.scoped = k.Key
	f.add(secKey("the scoped REST key", k.Key))
	s.admin(t, "POST", w.path("/keys"), map[string]any{"name": "short-lived", "type": "rest", "expiresAt": testserver.TS(s.now.Add(time.Minute))}, 201, &k)
	f.expired = k.Key
	f.add(secKey("the expiring key", k.Key))
	s.admin(t, "POST", w.path("/keys"), map[string]any{"name": "to revoke", "type": "report"}, 201, &k)
	f.revoked = k.Key
	f.add(secKey("the revoked key", k.Key))
	if code, body := s.secReport(t, k.Key, w.jobs["Laptop fleet"], `{"status":"ok"}`); code != 200 {
		t.Fatalf("the key to revoke before its revocation: %d %s", code, body)
	}
	s.admin(t, "DELETE", w.path("/keys/"+k.ID), nil, 204, nil)

	// Channels: a webhook (its signing secret), a Slack webhook whose URL
	// is its credential (to a closed port: its attempts fail), e-mail.
	var ch struct{ ID, Secret string }
	s.admin(t, "POST", w.path("/channels"), map[string]any{"type": "webhook", "name": "ops hook", "url": f.hooks.url("/hook")}, 201, &ch)
	f.webhook.id, f.webhook.secret = ch.ID, ch.Secret
	if !testserver.WebhookSecretRe.MatchString(ch.Secret) {
		t.Fatalf("webhook secret %q", ch.Secret)
	}
	f.add(secSecret{what: "the webhook's signing secret", value: ch.Secret, kind: secMade, visible: 6})
	slackToken := secRandomHex(24)
	s.admin(t, "POST", w.path("/channels"), map[string]any{"type": "slack", "name": "team chat", "url": "http://127.0.0.1:1/services/T0SEC/B0SEC/" + slackToken}, 201, &ch)
	f.slackID = ch.ID
	f.add(secSecret{what: "the Slack webhook's URL token", value: slackToken, kind: secAdminOnly})
	s.admin(t, "POST", w.path("/channels"), map[string]any{"type": "email", "name": "on call", "to": "oncall@sec.test"}, 201, &ch)
	s.admin(t, "POST", w.path("/escalations"), map[string]any{"channelId": f.webhook.id, "afterMinutes": 30}, 201, nil)

	// A rotated ingest address: the old one is retired, both stay secret.
	var rot struct{ IngestAddress string }
	s.admin(t, "POST", w.path("/jobs/"+w.jobs["NAS sync"]+"/ingest-address/rotate"), nil, 200, &rot)
	token, _, _ := strings.Cut(rot.IngestAddress, "@")
	f.add(secSecret{what: "the rotated ingest address", value: token, kind: secAdminOnly})

	// A new password set through the admin API.
	member := w.users["member"]
	member.password = "a brand new member password 42"
	w.users["member"] = member
	s.admin(t, "PATCH", w.path("/users/"+member.id), map[string]any{"password": member.password}, 200, nil)
	f.add(secSecret{what: "the member's new password", value: member.password, kind: secNever})

	// Keys clients get wrong, the plausible way.
	rk := w.restKey
	last := "0"
	if rk[len(rk)-1] == '0' {
		last = "1"
	}
	for _, wk := range []struct{ what, key string }{
		{"an unknown key", "svc_live_" + secRandomHex(48)},
		{"the REST key with its last character mistyped", rk[:len(rk)-1] + last},
		{"the REST key cut short", rk[:len(rk)-1]},
		{"the REST key with a character more", rk + "7"},
		{"the REST key in capitals", "svc_live_" + strings.ToUpper(rk[9:])},
		{"the REST key as a test key", "svc_test_" + rk[9:]},
	} {
		f.wrongKeys = append(f.wrongKeys, wk)
		sec := secSecret{what: wk.what, value: wk.key, kind: secNever, whole: true}
		if strings.Contains(rk, wk.key) {
			sec.within = rk
		}
		f.add(sec)
	}
	f.session = s.login(t, w.users["owner"])
	f.add(secSecret{what: "the owner's session", value: f.session, kind: secMade})
	return f
}

// secReport posts a report body with key to a job.
func (s *dashServer) secReport(t testing.TB, key, jobID, body string, hdr ...string) (int, string) {
	t.Helper()
	h := append([]string{"Authorization", "Bearer " + key, "Content-Type", "application/json"}, hdr...)
	resp, b := s.secReq(t, "POST", s.c.PublicURL+"/api/v1/jobs/"+jobID+"/report", body, h...)
	return resp.StatusCode, string(b)
}

// secKeyLists: the admin API's key list, GET /workspace, whoami and the
// keys page show a key's first 16 characters, never more.
func secKeyLists(t *testing.T, s *dashServer, f *secFixture) {
	w := f.w
	code, body := s.adminRaw(t, "GET", w.path("/keys"), nil)
	var list struct{ Data []map[string]any }
	if code != 200 || json.Unmarshal([]byte(body), &list) != nil {
		t.Fatalf("GET keys: %d %s", code, body)
	}
	byPrefix := map[string]map[string]any{}
	for _, k := range list.Data {
		fields := make([]string, 0, len(k))
		for name := range k {
			fields = append(fields, name)
		}
		slices.Sort(fields)
		want := []string{"createdAt", "expiresAt", "id", "lastUsedAt", "name", "prefix", "scopes", "type"}
		if k["type"] == "assistant" {
			want = []string{"access", "createdAt", "expiresAt", "id", "lastUsedAt", "name", "prefix", "scopes", "type"}
		}
		if !slices.Equal(fields, want) {
			t.Errorf("key record %v: fields %q, want %q (decisions.md 2)", k["name"], fields, want)
		}
		p, _ := k["prefix"].(string)
		if len(p) != 16 || !strings.HasPrefix(p, "svc_live_") {
			t.Errorf("key record %v: prefix %q, want the secret's first 16 characters", k["name"], p)
		}
		byPrefix[p] = k
	}
	for _, key := range []string{w.restKey, w.reportKey, f.ro.secret, f.rw.secret, f.scoped, f.expired} {
		if byPrefix[key[:16]] == nil {
			t.Errorf("no key record with the prefix %s", key[:16])
		}
	}
	var ws struct {
		Data struct{ Key map[string]any }
	}
	code, body = s.rest(t, w.restKey, "/workspace")
	if code != 200 || json.Unmarshal([]byte(body), &ws) != nil || ws.Data.Key["prefix"] != w.restKey[:16] {
		t.Errorf("GET /api/v1/workspace: %d %s; want the key's prefix %s", code, body, w.restKey[:16])
	}
	resp, b := s.mcpRaw(t, "POST", "Bearer "+f.ro.secret, secCall("whoami", map[string]any{}))
	if resp.StatusCode != 200 || !strings.Contains(string(b), `\"prefix\":\"`+f.ro.prefix+`\"`) && !strings.Contains(string(b), `"prefix":"`+f.ro.prefix+`"`) {
		t.Errorf("whoami: %d %s; want the key's prefix %s", resp.StatusCode, b, f.ro.prefix)
	}
	r := s.page(t, "GET", "/settings/keys", f.session, nil)
	for _, key := range []string{w.restKey, w.reportKey, f.ro.secret, f.rw.secret} {
		if r.status != 200 || !strings.Contains(r.body, key[:16]+"…") {
			t.Errorf("the keys page does not list %s…: %s", key[:16], r)
		}
	}
}

// secUseEverything uses each surface with the fixture's keys, sessions and
// tokens, the good way and the bad way; each answer is checked only for
// its status here (the other tests check the answers themselves): what
// matters is that they are all collected.
func secUseEverything(t *testing.T, s *dashServer, f *secFixture) {
	w := f.w
	c0, j0 := w.clients[0], w.jobs["Exchange nightly"]
	a0 := w.alerts["Exchange nightly"]
	want := func(what string, got, wantCode int, body string) {
		t.Helper()
		if got != wantCode {
			t.Errorf("%s: %d, want %d: %.300s", what, got, wantCode, body)
		}
	}

	// The REST API: every route, a second page, every refused key type.
	for _, p := range []string{"/workspace", "/clients", "/clients/" + c0, "/clients/" + c0 + "/health", "/jobs", "/jobs/" + j0,
		"/reports", "/alerts", "/health", "/alerts?status=unresolved&limit=1", "/jobs?search=e&limit=2"} {
		code, body := s.rest(t, w.restKey, p)
		want("REST "+p, code, 200, body)
	}
	code, body := s.rest(t, w.restKey, "/reports?limit=1")
	want("REST /reports page 1", code, 200, body)
	var page struct{ Pagination struct{ NextCursor string } }
	json.Unmarshal([]byte(body), &page)
	code, body = s.rest(t, w.restKey, "/reports?limit=1&cursor="+url.QueryEscape(page.Pagination.NextCursor))
	want("REST /reports page 2", code, 200, body)
	code, body = s.rest(t, f.scoped, "/clients")
	want("REST /clients with a jobs:read key", code, 403, body)
	for _, k := range []string{w.reportKey, f.ro.secret, f.rw.secret} {
		code, body = s.rest(t, k, "/jobs")
		want("REST /jobs with a report or assistant key", code, 403, body)
	}
	resp, b := s.secReq(t, "GET", s.c.PublicURL+"/api/v1/openapi.json", "")
	want("openapi.json", resp.StatusCode, 200, string(b))

	// The Report API, good and bad.
	for _, tc := range []struct {
		what, key, job, body string
		hdr                  []string
		code                 int
	}{
		{"ok", w.reportKey, j0, `{"status":"ok","duration_seconds":60}`, nil, 200},
		{"failed", w.reportKey, w.jobs["Laptop fleet"], `{"status":"failed"}`, nil, 200}, // opens an alert: deliveries
		{"warn with a key", w.reportKey, j0, `{"status":"warn","idempotency_key":"run-1"}`, nil, 200},
		{"duplicate", w.reportKey, j0, `{"status":"warn"}`, []string{"Idempotency-Key", "run-1"}, 200},
		{"not JSON", w.reportKey, j0, `{"status":`, nil, 400},
		{"bad status", w.reportKey, j0, `{"status":"fine"}`, nil, 400},
		{"unknown job", w.reportKey, "0195c2a4-6f1e-7a3b-9c4d-2e8f1a6b3c5d", `{"status":"ok"}`, nil, 404},
		{"REST key", w.restKey, j0, `{"status":"ok"}`, nil, 403},
		{"assistant key", f.rw.secret, j0, `{"status":"ok"}`, nil, 403},
	} {
		code, body := s.secReport(t, tc.key, tc.job, tc.body, tc.hdr...)
		want("report "+tc.what, code, tc.code, body)
	}

	// The assistant server: lists, tools, refusals, malformed calls.
	for _, tc := range []struct {
		what, key, body string
		code            int
	}{
		{"tools/list read-only", f.ro.secret, secRPC("tools/list", nil), 200},
		{"tools/list read-write", f.rw.secret, secRPC("tools/list", nil), 200},
		{"initialize", f.rw.secret, secRPC("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "sec", "version": "1"}}), 200},
		{"whoami", f.rw.secret, secCall("whoami", map[string]any{}), 200},
		{"get_job", f.ro.secret, secCall("get_job", map[string]any{"jobId": j0}), 200},
		{"list_jobs", f.ro.secret, secCall("list_jobs", map[string]any{"limit": 2}), 200},
		{"list_alerts", f.ro.secret, secCall("list_alerts", map[string]any{}), 200},
		{"list_attention", f.ro.secret, secCall("list_attention", map[string]any{}), 200},
		{"list_clients", f.ro.secret, secCall("list_clients", map[string]any{}), 200},
		{"get_client_health", f.ro.secret, secCall("get_client_health", map[string]any{"clientId": c0}), 200},
		{"explain_failure", f.ro.secret, secCall("explain_failure", map[string]any{"alertId": a0}), 200},
		{"acknowledge_alerts", f.rw.secret, secCall("acknowledge_alerts", map[string]any{"alertIds": []string{a0}, "note": "looking"}), 200},
		{"a write tool with a read-only key", f.ro.secret, secCall("resolve_alert", map[string]any{"alertId": a0}), 200},
		{"an unknown tool", f.rw.secret, secCall("no_such_tool", map[string]any{}), 200},
		{"arguments outside the schema", f.rw.secret, secCall("get_job", map[string]any{"jobId": 42}), 200},
		{"an unknown job", f.rw.secret, secCall("get_job", map[string]any{"jobId": "not-a-job"}), 200},
		{"not JSON", f.rw.secret, `{"jsonrpc":`, 400},
		{"REST key", w.restKey, secRPC("tools/list", nil), 403},
		{"report key", w.reportKey, secRPC("tools/list", nil), 403},
	} {
		resp, b := s.mcpRaw(t, "POST", "Bearer "+tc.key, tc.body)
		want("MCP "+tc.what, resp.StatusCode, tc.code, string(b))
	}
	resp, b = s.mcpRaw(t, "GET", "Bearer "+f.rw.secret, "")
	want("GET /mcp", resp.StatusCode, 405, string(b))

	// The dashboard: every page, a wrong password, a key and a user made
	// and a key revoked with the forms, the theme, the assets, a logout.
	s.advance(t, 60)
	r := s.post(t, "/login", "", url.Values{"email": {w.users["admin"].email}, "password": {w.users["admin"].password + "!"}})
	want("login with a mistyped password", r.status, 401, r.String())
	f.add(secSecret{what: "a mistyped password", value: w.users["admin"].password + "!", kind: secNever})
	sess := f.session
	for _, p := range []string{"/", "/?all", "/clients", "/clients/" + c0, "/jobs", "/jobs?client=" + c0, "/jobs/" + j0, "/alerts", "/alerts?status=all",
		"/settings/keys", "/settings/channels", "/settings/users", "/settings/activity"} {
		r := s.page(t, "GET", p, sess, nil)
		want("dashboard "+p, r.status, 200, r.String())
	}
	r = s.post(t, "/settings/keys", sess, url.Values{"name": {"made on the page"}, "type": {"assistant"}, "access": {"read-write"}, "expiry": {"never"}})
	outs := dashAll(dashParse(t, r.body), "output", "class", "secret")
	if r.status != 200 || len(outs) != 1 || !testserver.SecretRe.MatchString(dashText(outs[0])) {
		t.Fatalf("create a key on the keys page: %s", r)
	}
	pageKey := dashText(outs[0])
	f.add(secKey("the key made on the keys page", pageKey))
	if resp, b := s.mcpRaw(t, "POST", "Bearer "+pageKey, secRPC("tools/list", nil)); resp.StatusCode != 200 {
		t.Errorf("the key made on the keys page: %d %s", resp.StatusCode, b)
	}
	r = s.page(t, "GET", "/settings/keys", sess, nil)
	want("the keys page after", r.status, 200, r.String())
	for _, k := range s.adminKeys(t, w) {
		if k.Name == "made on the page" {
			r = s.post(t, "/settings/keys/"+k.ID+"/revoke", sess, url.Values{})
			want("revoke on the keys page", r.status, 303, r.String())
		}
	}
	if resp, b := s.mcpRaw(t, "POST", "Bearer "+pageKey, secRPC("tools/list", nil)); resp.StatusCode != 401 {
		t.Errorf("the key revoked on the keys page: %d %s", resp.StatusCode, b)
	}
	newUserPW := "a password typed in the form 77"
	f.add(secSecret{what: "the password set in the users form", value: newUserPW, kind: secNever})
	r = s.post(t, "/settings/users", sess, url.Values{"email": {"new@sec.test"}, "name": {"New"}, "role": {"viewer"}, "password": {newUserPW}})
	want("add a user on the users page", r.status, 303, r.String())
	r = s.post(t, "/settings/users", sess, url.Values{"email": {"short@sec.test"}, "name": {"Short"}, "role": {"viewer"}, "password": {"short-pw"}})
	want("add a user with a short password", r.status, 303, r.String())
	f.add(secSecret{what: "a refused password", value: "short-pw", kind: secNever})
	r = s.page(t, "GET", "/settings/users", sess, nil)
	want("the users page after", r.status, 200, r.String())
	r = s.post(t, "/theme", sess, url.Values{"back": {"/"}})
	want("theme", r.status, 303, r.String())
	viewer := s.login(t, w.users["viewer"])
	f.add(secSecret{what: "the viewer's session", value: viewer, kind: secMade})
	r = s.post(t, "/alerts/bulk", viewer, url.Values{"alert": {a0}, "action": {"resolve"}})
	want("a viewer's POST", r.status, 403, r.String())
	r = s.post(t, "/logout", viewer, url.Values{})
	want("logout", r.status, 303, r.String())
	r = s.page(t, "GET", "/", viewer, nil)
	want("the page after logout", r.status, 303, r.String())

	// Report e-mails: to a job's address, and to the retired one.
	s.mail(t, w.ingest["Exchange nightly"], "Exchange nightly", "Disk full on repository", s.now)
	if err := smtp.SendMail(s.c.SMTPAddr, nil, "backup@srv.example", []string{w.ingest["NAS sync"]}, []byte("Subject: x\r\n\r\nx\r\n")); err == nil || !strings.Contains(err.Error(), "550") {
		t.Errorf("a mail to a retired ingest address: %v, want 550", err)
	}

	// The admin API's reads, and the deliveries of the failed report: the
	// webhook is sent (signed), the Slack attempt fails.
	for _, p := range []string{"/workspaces", "/workspaces/" + w.id, w.path("/clients"), w.path("/jobs"), w.path("/jobs/" + j0), w.path("/keys"),
		w.path("/activity"), w.path("/alerts"), w.path("/channels"), w.path("/escalations"), w.path("/users"), w.path("/users/" + w.users["owner"].id),
		w.path("/unparsed"), w.path("/deliveries")} {
		code, body := s.adminRaw(t, "GET", p, nil)
		want("admin GET "+p, code, 200, body)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		var ds []dlDelivery
		s.admin(t, "GET", w.path("/deliveries"), nil, 200, &ds)
		var hookDone, slackTried bool
		for _, d := range ds {
			if d.ChannelID == f.webhook.id && d.State == "delivered" {
				hookDone = true
			}
			if d.ChannelID == f.slackID && d.Attempts > 0 && d.LastError != nil {
				slackTried = true
			}
		}
		if hookDone && slackTried && len(f.hooks.all()) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("deliveries did not settle: %s", dlList(ds))
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, h := range f.hooks.all() {
		h.decode(t, f.webhook.secret) // signed with the secret, which is not in it
	}
	code, body = s.adminRaw(t, "GET", w.path("/deliveries"), nil)
	want("admin GET deliveries after", code, 200, body)
	for _, p := range []string{"/metrics", "/livez", "/readyz"} {
		resp, b := s.secReq(t, "GET", s.c.AdminURL+p, "")
		want(p, resp.StatusCode, 200, string(b))
	}
}

// secWrongKeyAnswers: keys a client gets wrong, and revoked and expired
// keys, answer 401 with the contract's fixed messages on the REST API, the
// Report API and /mcp: a revoked key as an unknown one, nothing echoed.
func secWrongKeyAnswers(t *testing.T, s *dashServer, f *secFixture) {
	w := f.w
	s.advance(t, 61) // the short-lived key has expired
	j0 := w.jobs["Exchange nightly"]
	type answer struct {
		code      int
		body      string
		wwwAuth   string
		hasLimits bool
	}
	cases := append([]struct{ what, key string }{}, f.wrongKeys...)
	cases = append(cases, struct{ what, key string }{"a revoked key", f.revoked}, struct{ what, key string }{"an expired key", f.expired})
	for _, tc := range cases {
		invalid := "Invalid API key"
		if tc.key == f.expired {
			invalid = "API key has expired"
		}
		t.Run(tc.what, func(t *testing.T) {
			resp, b := s.secReq(t, "GET", s.c.PublicURL+"/api/v1/jobs", "", "Authorization", "Bearer "+tc.key)
			got := answer{resp.StatusCode, secNoRequestID(string(b)), resp.Header.Get("WWW-Authenticate"), resp.Header.Get("X-RateLimit-Limit") != ""}
			if want := (answer{401, `{"error":{"code":"UNAUTHORIZED","message":"` + invalid + `"}}`, "", false}); got != want {
				t.Errorf("REST: %+v, want %+v", got, want)
			}
			code, body := s.secReport(t, tc.key, j0, `{"status":"ok"}`)
			if code != 401 || body != `{"error":"`+invalid+`"}` {
				t.Errorf("Report API: %d %s, want 401 %q", code, body, invalid)
			}
			resp, b = s.mcpRaw(t, "POST", "Bearer "+tc.key, secRPC("tools/list", nil))
			got = answer{resp.StatusCode, secNoRequestID(string(b)), resp.Header.Get("WWW-Authenticate"), false}
			if want := (answer{401, `{"error":{"code":"UNAUTHORIZED","message":"` + invalid + `"}}`, `Bearer error="invalid_token"`, false}); got != want {
				t.Errorf("MCP: %+v, want %+v", got, want)
			}
			// An API key is no dashboard login.
			r := s.page(t, "GET", "/", "", nil, "Authorization", "Bearer "+tc.key)
			if r.status != 303 || s.location(r) != "/login?next=%2F" {
				t.Errorf("dashboard with the key in Authorization: %s, want 303 to the login", r)
			}
		})
	}
}

// The query parameter names clients put keys in.
var secQueryNames = []string{"key", "api_key", "apiKey", "apikey", "access_token", "token", "auth", "authorization", "bearer", "session", "__Host-session"}

// secQueryKeys: a valid key in the query string (or in another header, or
// the body) is no key: each surface answers as without one, exactly.
func secQueryKeys(t *testing.T, s *dashServer, rec *secRecorder, f *secFixture) {
	w := f.w
	c0, j0 := w.clients[0], w.jobs["Exchange nightly"]
	restPaths := []string{"/workspace", "/clients", "/clients/" + c0, "/clients/" + c0 + "/health", "/jobs", "/jobs/" + j0, "/reports", "/alerts", "/health"}
	noKey := `{"error":{"code":"UNAUTHORIZED","message":"Missing or malformed Authorization header"}}`
	restNoKey := func(t *testing.T, what string, resp *http.Response, b []byte) {
		t.Helper()
		if got := secRESTAnswer(resp.StatusCode, string(b)); got != "401 "+noKey || resp.Header.Get("X-RateLimit-Limit") != "" || resp.Header.Get("WWW-Authenticate") != "" {
			t.Errorf("%s: %s (WWW-Authenticate %q), want 401 %s as without a key", what, got, resp.Header.Get("WWW-Authenticate"), noKey)
		}
	}
	before := s.state(t, w)
	jobBefore := s.adminJob(t, w, j0)

	t.Run("REST", func(t *testing.T) {
		for _, p := range restPaths {
			resp, b := s.secReq(t, "GET", s.c.PublicURL+"/api/v1"+p, "")
			restNoKey(t, p+" without a key", resp, b)
			for _, name := range secQueryNames {
				u := s.c.PublicURL + "/api/v1" + p + "?" + url.QueryEscape(name) + "=" + w.restKey
				resp, b := s.secReq(t, "GET", u, "")
				restNoKey(t, p+"?"+name+"=<REST key>", resp, b)
			}
		}
		for _, h := range [][]string{{"X-Api-Key", w.restKey}, {"Api-Key", w.restKey}, {"Authorization", w.restKey}, {"Authorization", "Token " + w.restKey},
			{"Authorization", "Basic " + base64.StdEncoding.EncodeToString([]byte(w.restKey+":"))}, {"Cookie", "api_key=" + w.restKey}} {
			resp, b := s.secReq(t, "GET", s.c.PublicURL+"/api/v1/jobs", "", h...)
			restNoKey(t, "the key in "+h[0]+": "+strings.SplitN(h[1], " ", 2)[0], resp, b)
		}
		// A wrong key in the header and the right one in the query: the
		// header's answer.
		resp, b := s.secReq(t, "GET", s.c.PublicURL+"/api/v1/jobs?api_key="+w.restKey, "", "Authorization", "Bearer "+f.wrongKeys[0].key)
		if got := secRESTAnswer(resp.StatusCode, string(b)); got != `401 {"error":{"code":"UNAUTHORIZED","message":"Invalid API key"}}` {
			t.Errorf("a wrong key in the header, the right one in the query: %s", got)
		}
	})
	t.Run("ReportAPI", func(t *testing.T) {
		for _, name := range secQueryNames {
			resp, b := s.secReq(t, "POST", s.c.PublicURL+"/api/v1/jobs/"+j0+"/report?"+url.QueryEscape(name)+"="+w.reportKey, `{"status":"failed"}`, "Content-Type", "application/json")
			if resp.StatusCode != 401 || string(b) != `{"error":"Missing or malformed Authorization header"}` {
				t.Errorf("report ?%s=<report key>: %d %s, want 401 Missing or malformed Authorization header", name, resp.StatusCode, b)
			}
		}
		for _, body := range []string{`{"status":"failed","api_key":"` + w.reportKey + `"}`, `{"status":"failed","key":"` + w.reportKey + `","token":"` + w.reportKey + `"}`} {
			resp, b := s.secReq(t, "POST", s.c.PublicURL+"/api/v1/jobs/"+j0+"/report", body, "Content-Type", "application/json")
			if resp.StatusCode != 401 || string(b) != `{"error":"Missing or malformed Authorization header"}` {
				t.Errorf("report with the key in the body: %d %s, want 401", resp.StatusCode, b)
			}
		}
		resp, b := s.secReq(t, "POST", s.c.PublicURL+"/api/v1/jobs/"+j0+"/report", `{"status":"failed"}`, "Content-Type", "application/json", "X-Api-Key", w.reportKey)
		if resp.StatusCode != 401 || string(b) != `{"error":"Missing or malformed Authorization header"}` {
			t.Errorf("report with the key in X-Api-Key: %d %s, want 401", resp.StatusCode, b)
		}
	})
	t.Run("MCP", func(t *testing.T) {
		check := func(what string, resp *http.Response, b []byte) {
			t.Helper()
			if got := secRESTAnswer(resp.StatusCode, string(b)); got != "401 "+noKey || resp.Header.Get("WWW-Authenticate") != "Bearer" {
				t.Errorf("%s: %s (WWW-Authenticate %q), want 401 %s with WWW-Authenticate: Bearer", what, got, resp.Header.Get("WWW-Authenticate"), noKey)
			}
		}
		for _, name := range secQueryNames {
			resp, b := s.secReq(t, "POST", s.c.PublicURL+"/mcp?"+url.QueryEscape(name)+"="+f.rw.secret, secRPC("tools/list", nil),
				"Content-Type", "application/json", "Accept", "application/json, text/event-stream")
			check("/mcp?"+name+"=<assistant key>", resp, b)
		}
		resp, b := s.secReq(t, "POST", s.c.PublicURL+"/mcp", secRPC("tools/list", map[string]any{"api_key": f.rw.secret}),
			"Content-Type", "application/json", "Accept", "application/json, text/event-stream", "X-Api-Key", f.rw.secret)
		check("/mcp with the key in X-Api-Key and the params", resp, b)
	})
	t.Run("Dashboard", func(t *testing.T) {
		// The login redirect carries the address asked for (next=), query
		// and all: the one answer allowed to repeat what its request held.
		rec.echoing("the login redirect's next= repeats the request's own address", func() {
			for _, name := range secQueryNames {
				for _, v := range []string{w.restKey, f.session} {
					r := s.page(t, "GET", "/?"+url.QueryEscape(name)+"="+url.QueryEscape(v), "", nil)
					if r.status != 303 || !strings.HasPrefix(s.location(r), "/login?next=") || r.cookie(dashCookie) != nil {
						t.Errorf("GET /?%s=<secret>: %s, want 303 to the login", name, r)
					}
				}
			}
		})
		for _, name := range secQueryNames {
			r := s.post(t, "/alerts/bulk?"+url.QueryEscape(name)+"="+url.QueryEscape(f.session), "", url.Values{"alert": {w.alerts["SQL backup"]}, "action": {"resolve"}})
			if r.status != 401 {
				t.Errorf("POST /alerts/bulk?%s=<session>: %s, want 401", name, r)
			}
		}
		// The session's value as another cookie's, or in the form.
		r := s.page(t, "POST", "/alerts/bulk", "", url.Values{"alert": {w.alerts["SQL backup"]}, "action": {"resolve"}, "session": {f.session}},
			"Sec-Fetch-Site", "same-origin", "Origin", s.c.PublicURL, "Cookie", "session="+f.session)
		if r.status != 401 {
			t.Errorf("POST /alerts/bulk with the session in a cookie named session: %s, want 401", r)
		}
	})
	if after := s.state(t, w); after != before {
		t.Errorf("requests with keys outside the Authorization header changed the workspace:%s", testserver.LineDiff(before, after, 4))
	}
	if after := s.adminJob(t, w, j0); after != jobBefore {
		t.Errorf("reports with the key in the query changed the job: %+v, was %+v", after, jobBefore)
	}
	// The right key in the header and in the query: the query's name is
	// an unknown parameter, named without its value.
	resp, b := s.secReq(t, "GET", s.c.PublicURL+"/api/v1/jobs?api_key="+w.restKey, "", "Authorization", "Bearer "+w.restKey)
	if got := secRESTAnswer(resp.StatusCode, string(b)); got != `400 {"error":{"code":"INVALID_PARAMETER","message":"Unknown parameter: \"api_key\"","parameter":"api_key"}}` {
		t.Errorf("the key in the header and the query: %s, want 400 naming api_key", got)
	}
}

// secAdminRoutes lists the admin API's routes (transport/admin.go) with
// the fixture's ids.
func secAdminRoutes(w *dashWS, f *secFixture) [][2]string {
	ws := "/admin/v1/workspaces/" + w.id
	j, c, a, u := w.jobs["Exchange nightly"], w.clients[0], w.alerts["Exchange nightly"], w.users["viewer"].id
	const x = "0195c2a4-6f1e-7a3b-9c4d-2e8f1a6b3c5d"
	return [][2]string{
		{"POST", "/admin/v1/workspaces"}, {"GET", "/admin/v1/workspaces"}, {"GET", ws}, {"PATCH", ws},
		{"POST", ws + "/clients"}, {"GET", ws + "/clients"}, {"PATCH", ws + "/clients/" + c},
		{"POST", ws + "/jobs"}, {"GET", ws + "/jobs"}, {"GET", ws + "/jobs/" + j}, {"PATCH", ws + "/jobs/" + j}, {"DELETE", ws + "/jobs/" + j},
		{"POST", ws + "/keys"}, {"GET", ws + "/keys"}, {"DELETE", ws + "/keys/" + f.ro.id},
		{"POST", ws + "/alerts/" + a + "/acknowledge"}, {"POST", ws + "/alerts/" + a + "/snooze"}, {"POST", ws + "/alerts/" + a + "/resolve"},
		{"GET", ws + "/alerts"}, {"GET", ws + "/activity"},
		{"POST", ws + "/channels"}, {"GET", ws + "/channels"}, {"DELETE", ws + "/channels/" + f.webhook.id},
		{"POST", ws + "/channels/" + f.webhook.id + "/test"}, {"GET", ws + "/channels/" + f.webhook.id + "/clients"},
		{"PUT", ws + "/channels/" + f.webhook.id + "/clients/" + c}, {"DELETE", ws + "/channels/" + f.webhook.id + "/clients/" + c},
		{"POST", ws + "/escalations"}, {"GET", ws + "/escalations"}, {"DELETE", ws + "/escalations/" + x},
		{"GET", ws + "/deliveries"}, {"POST", ws + "/jobs/" + j + "/ingest-address/rotate"},
		{"GET", ws + "/unparsed"}, {"POST", ws + "/unparsed/" + x + "/reparse"}, {"DELETE", ws + "/unparsed/" + x},
		{"POST", ws + "/users"}, {"GET", ws + "/users"}, {"GET", ws + "/users/" + u}, {"PATCH", ws + "/users/" + u}, {"DELETE", ws + "/users/" + u},
		{"POST", "/admin/v1/clock"},
		{"GET", "/admin/v1/cluster"},
	}
}

// secSourceRoutes reads the routes a router source file declares:
// method and path, the path's {parameters} as written.
func secSourceRoutes(t *testing.T, file string, prefixes map[string]string) [][2]string {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("read the routes of %s: %v", file, err)
	}
	re := regexp.MustCompile(`r\.(GET|POST|PATCH|DELETE|PUT)\((?:(\w+)\+)?"([^"]+)"`)
	var out [][2]string
	for _, m := range re.FindAllStringSubmatch(string(src), -1) {
		out = append(out, [2]string{m[1], prefixes[m[2]] + m[3]})
	}
	if len(out) == 0 {
		t.Fatalf("no routes found in %s", file)
	}
	return out
}

// secRouteCovered reports whether a route pattern (with {params}) matches
// one of the concrete routes.
func secRouteCovered(pattern [2]string, routes [][2]string) bool {
	re := regexp.MustCompile("^" + regexp.MustCompile(`\\\{[^}]+\\\}`).ReplaceAllString(regexp.QuoteMeta(pattern[1]), `[^/]+`) + "$")
	for _, r := range routes {
		if r[0] == pattern[0] && re.MatchString(r[1]) {
			return true
		}
	}
	return false
}

// secAdminToken: every admin route refuses every wrong token, an empty
// one, the token's prefix, a longer one, the token elsewhere than the
// Authorization header, with the same bytes; nothing changes.
func secAdminToken(t *testing.T, s *dashServer, f *secFixture) {
	w := f.w
	const want = `{"error":{"code":"UNAUTHORIZED","message":"Missing or invalid admin token"}}`
	tok := testserver.AdminToken
	routes := secAdminRoutes(w, f)
	for _, p := range secSourceRoutes(t, "../../transport/admin.go", map[string]string{"ws": "/admin/v1/workspaces/{wid}"}) {
		if strings.HasPrefix(p[1], "/admin/") && !secRouteCovered(p, routes) {
			t.Errorf("the admin route %s %s is not in the table of secAdminRoutes", p[0], p[1])
		}
	}
	wrong := []struct {
		what  string
		query string
		hdr   []string
	}{
		{"no Authorization", "", nil},
		{"an empty bearer token", "", []string{"Authorization", "Bearer "}},
		{"the scheme alone", "", []string{"Authorization", "Bearer"}},
		{"a wrong token", "", []string{"Authorization", "Bearer wrong-token"}},
		{"a wrong token of the same length", "", []string{"Authorization", "Bearer " + strings.Repeat("x", len(tok))}},
		{"the token's prefix", "", []string{"Authorization", "Bearer " + tok[:len(tok)-1]}},
		{"the token's first half", "", []string{"Authorization", "Bearer " + tok[:len(tok)/2]}},
		{"a longer token", "", []string{"Authorization", "Bearer " + tok + "x"}},
		{"the token twice", "", []string{"Authorization", "Bearer " + tok + tok}},
		{"the token in capitals", "", []string{"Authorization", "Bearer " + strings.ToUpper(tok)}},
		{"the token without a scheme", "", []string{"Authorization", tok}},
		{"the token as Basic", "", []string{"Authorization", "Basic " + base64.StdEncoding.EncodeToString([]byte("admin:"+tok))}},
		{"the token in X-Admin-Token", "", []string{"X-Admin-Token", tok}},
		{"an API key", "", []string{"Authorization", "Bearer " + w.restKey}},
		{"the token in ?token=", "token=" + tok, nil},
		{"the token in ?access_token=", "access_token=" + tok, nil},
		{"the token in ?admin_token=", "admin_token=" + tok, nil},
		{"the token in ?key=", "key=" + tok, nil},
		{"the token in ?api_key= with a wrong header", "api_key=" + tok, []string{"Authorization", "Bearer wrong"}},
	}
	for _, sec := range []string{tok[:len(tok)-1], tok[:len(tok)/2], tok + "x", tok + tok, strings.ToUpper(tok), strings.Repeat("x", len(tok))} {
		f.add(secSecret{what: "a wrong admin token " + sec, value: sec, kind: secNever})
	}
	before := s.state(t, w)
	var ref http.Header
	for _, rt := range routes {
		body := ""
		if rt[0] == "POST" || rt[0] == "PATCH" {
			body = `{}`
		}
		for _, tc := range wrong {
			u := s.c.AdminURL + rt[1]
			if tc.query != "" {
				u += "?" + tc.query
			}
			hdr := append([]string{"Content-Type", "application/json"}, tc.hdr...)
			resp, b := s.secReq(t, rt[0], u, body, hdr...)
			if resp.StatusCode != 401 || string(b) != want {
				t.Errorf("%s %s with %s: %d %s, want 401 %s", rt[0], rt[1], tc.what, resp.StatusCode, b, want)
				continue
			}
			h := resp.Header.Clone()
			h.Del("Date")
			if ref == nil {
				ref = h
			} else if fmt.Sprint(h) != fmt.Sprint(ref) {
				t.Errorf("%s %s with %s: header %v, want the same as every other refusal: %v", rt[0], rt[1], tc.what, h, ref)
			}
		}
	}
	if after := s.state(t, w); after != before {
		t.Errorf("refused admin requests changed the workspace:%s", testserver.LineDiff(before, after, 4))
	}
	// The right token opens it, in any case of the scheme; it opens
	// nothing on the public listener.
	for _, scheme := range []string{"Bearer ", "bearer ", "BEARER "} {
		if resp, b := s.secReq(t, "GET", s.c.AdminURL+"/admin/v1/workspaces", "", "Authorization", scheme+tok); resp.StatusCode != 200 {
			t.Errorf("%q and the token: %d %s", scheme, resp.StatusCode, b)
		}
	}
	if resp, b := s.secReq(t, "GET", s.c.PublicURL+"/admin/v1/workspaces", "", "Authorization", "Bearer "+tok); resp.StatusCode != 404 || bytes.Contains(b, []byte(w.id)) {
		t.Errorf("the admin API on the public listener: %d, want the dashboard's 404", resp.StatusCode)
	}
	resp, b := s.secReq(t, "GET", s.c.PublicURL+"/api/v1/workspace", "", "Authorization", "Bearer "+tok)
	if got := secRESTAnswer(resp.StatusCode, string(b)); got != `401 {"error":{"code":"UNAUTHORIZED","message":"Invalid API key"}}` {
		t.Errorf("the admin token on the REST API: %s", got)
	}
}

// secErrorPaths: answers of unknown paths, wrong methods, requests that do
// not parse and keys pasted in the path, on both listeners, for the
// Server-header check (and the secret check: nothing is echoed).
func secErrorPaths(t *testing.T, s *dashServer, rec *secRecorder, f *secFixture) {
	w := f.w
	for _, tc := range []struct {
		method, url string
		code        int
	}{
		{"GET", s.c.PublicURL + "/api/v1/nope", 404},
		{"GET", s.c.PublicURL + "/api/v1/jobs/" + w.restKey, 404}, // a key pasted where an id goes
		{"GET", s.c.PublicURL + "/api/v1/" + w.restKey, 404},
		{"DELETE", s.c.PublicURL + "/api/v1/jobs", 405},
		{"OPTIONS", s.c.PublicURL + "/api/v1/jobs", 405},
		{"GET", s.c.PublicURL + "/api/v1/jobs/x/report", 405},
		{"PUT", s.c.PublicURL + "/mcp", 403}, // the key is checked first, and a REST key is refused
		{"GET", s.c.PublicURL + "/no/such/page", 404},
		{"GET", s.c.PublicURL + "/" + w.restKey, 404},
		{"PUT", s.c.PublicURL + "/login", 405},
		{"GET", s.c.PublicURL + "/login", 200},
		{"GET", s.c.PublicURL + "/assets/app.css", 200},
		{"GET", s.c.PublicURL + "/assets/app.js", 200},
		{"GET", s.c.PublicURL + "/assets/htmx.min.js", 200},
		{"GET", s.c.PublicURL + "/assets/nope.js", 404},
		{"GET", s.c.AdminURL + "/admin/v1/nope", 404},
		{"GET", s.c.AdminURL + "/" + testserver.AdminToken, 404},
		{"PUT", s.c.AdminURL + "/admin/v1/workspaces", 405},
		{"OPTIONS", s.c.AdminURL + "/admin/v1/workspaces", 405},
	} {
		resp, b := s.secReq(t, tc.method, tc.url, "", "Authorization", "Bearer "+w.restKey)
		if resp.StatusCode != tc.code {
			t.Errorf("%s %s: %d %.200s, want %d", tc.method, secRedactURL(tc.url), resp.StatusCode, b, tc.code)
		}
	}
	// Requests that do not parse, carrying a key: answered by the
	// listeners' error handlers.
	pub := strings.TrimPrefix(s.c.PublicURL, "http://")
	adm := strings.TrimPrefix(s.c.AdminURL, "http://")
	big := strings.Repeat("a", 20<<10)
	for _, tc := range []struct {
		what, addr, raw string
		code            int
	}{
		{"a bad request line", pub, "GET /api/v1/jobs HTTP/9\r\nHost: x\r\nAuthorization: Bearer " + w.restKey + "\r\n\r\n", 400},
		{"a header line without a colon", pub, "GET /api/v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + w.restKey + "\r\nno colon here\r\n\r\n", 400},
		{"a key in a request line that does not parse", pub, "GET /api/v1/jobs?api_key=" + w.restKey + " HTTP/9\r\nHost: x\r\n\r\n", 400},
		{"a header too large", pub, "GET /api/v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + w.restKey + "\r\nX-Big: " + big + "\r\n\r\n", 431},
		{"a report with a header too large", pub, "POST /api/v1/jobs/" + w.jobs["Exchange nightly"] + "/report HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + w.reportKey + "\r\nX-Big: " + big + "\r\n\r\n", 431},
		{"an admin bad request line", adm, "GET /admin/v1/workspaces HTTP/9\r\nHost: x\r\nAuthorization: Bearer " + testserver.AdminToken + "\r\n\r\n", 400},
		{"an admin header too large", adm, "GET /admin/v1/workspaces HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + testserver.AdminToken + "\r\nX-Big: " + big + "\r\n\r\n", 431},
	} {
		e, ok := secRawHTTP(t, tc.addr, tc.raw)
		if !ok || e.status != tc.code {
			t.Errorf("%s: %d (parsed %v) %.200s, want %d", tc.what, e.status, ok, e.body, tc.code)
			continue
		}
		rec.add(e)
	}
}

// secSMTPGreeting: the SMTP listener's greeting and EHLO answer name the
// ingest domain and the protocol, no software or version.
func secSMTPGreeting(t *testing.T, s *dashServer) {
	conn, err := net.DialTimeout("tcp", s.c.SMTPAddr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	rd := bufio.NewReader(conn)
	greeting, err := rd.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if greeting != "220 ingest.localhost ESMTP Service Ready\r\n" {
		t.Errorf("SMTP greeting %q, want %q", greeting, "220 ingest.localhost ESMTP Service Ready")
	}
	fmt.Fprintf(conn, "EHLO client.example\r\n")
	var lines []string
	for {
		l, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("EHLO: %v after %q", err, lines)
		}
		lines = append(lines, l)
		if len(l) < 4 || l[3] == ' ' {
			break
		}
	}
	fmt.Fprintf(conn, "QUIT\r\n")
	banner := regexp.MustCompile(`(?i)go-smtp|emersion|backupmon|golang|\bgo\d|\bv?\d+\.\d+`)
	for _, l := range append([]string{greeting}, lines...) {
		if m := banner.FindString(l); m != "" {
			t.Errorf("SMTP line %q names software or a version (%q)", l, m)
		}
	}
}

// ---------------------------------------------------------------------------
// TestSecurityIsolation

// secNormalize replaces each id by a marker, for comparing an answer about
// one id with the answer about another.
func secNormalize(s string, ids ...string) string {
	for _, id := range ids {
		if id != "" {
			s = strings.ReplaceAll(s, id, "<ID>")
			s = strings.ReplaceAll(s, url.QueryEscape(id), "<ID>")
		}
	}
	return s
}

// secNoSuchID returns an id shaped like id (the same UUID version and
// time) that names nothing: its random part is new.
func secNoSuchID(id string) string {
	return id[:24] + secRandomHex(12)
}

// secBView is what B's own credentials see of B: its REST views and the
// admin API's.
func secBView(t *testing.T, s *dashServer, b *dashWS, rest bool) string {
	t.Helper()
	var out strings.Builder
	if rest {
		paths := []string{"/clients", "/jobs", "/reports?limit=100", "/alerts?limit=100", "/alerts?status=unresolved", "/health"}
		for _, id := range b.clients {
			paths = append(paths, "/clients/"+id, "/clients/"+id+"/health")
		}
		for _, id := range b.jobs {
			paths = append(paths, "/jobs/"+id)
		}
		slices.Sort(paths)
		for _, p := range paths {
			code, body := s.rest(t, b.restKey, p)
			fmt.Fprintf(&out, "REST %s %s\n", p, secRESTAnswer(code, body))
		}
		return out.String()
	}
	out.WriteString(s.state(t, b))
	for _, p := range []string{"/escalations", "/deliveries", "/unparsed", "/clients"} {
		code, body := s.adminRaw(t, "GET", b.path(p), nil)
		fmt.Fprintf(&out, "%s %d %s\n", p, code, body)
	}
	for _, name := range slices.Sorted(maps.Keys(b.jobs)) {
		code, body := s.adminRaw(t, "GET", b.path("/jobs/"+b.jobs[name]), nil)
		fmt.Fprintf(&out, "/jobs/%s %d %s\n", b.jobs[name], code, body)
	}
	return out.String()
}

// TestSecurityIsolation: workspace A's REST, report and assistant keys and
// A's owner's session, used with each of workspace B's ids, answer exactly
// as with an id that exists nowhere, and B does not change. Each id slot
// gets B's ids of its kind and, as well, ids of B of the kinds no surface
// takes (the workspace, a device, a result, an unreadable e-mail, an
// activity entry); A's own id of the kind is the control that the route
// finds things.
func TestSecurityIsolation(t *testing.T) {
	s, _ := secStart(t)
	a := s.workspace(t, "isoa", dashJobs)
	b := s.workspace(t, "isob", dashJobs)
	aRW := s.mcpNewKey(t, a, "assistant of A", "read-write")
	s.mcpNewKey(t, b, "assistant of B", "")
	var bChannel, bEscalation struct{ ID string }
	s.admin(t, "POST", b.path("/channels"), map[string]any{"type": "email", "name": "B on call", "to": "oncall@isob.test"}, 201, &bChannel)
	s.admin(t, "POST", b.path("/escalations"), map[string]any{"channelId": bChannel.ID, "afterMinutes": 30}, 201, &bEscalation)
	// An unreadable e-mail in B (its id exists only in the admin API).
	s.mail(t, b.ingest["Exchange nightly"], "Exchange nightly", "unreadable for veeam", s.now)
	sess := s.login(t, a.users["owner"])
	// From here on the clock stands still: B's views before and after are
	// comparable byte for byte.

	// B's ids, by kind, and the ids of B that no surface takes.
	var bKeys []dashKey
	s.admin(t, "GET", b.path("/keys"), nil, 200, &bKeys)
	ids := map[string][]string{"client": b.clients}
	for _, name := range slices.Sorted(maps.Keys(b.jobs)) {
		ids["job"] = append(ids["job"], b.jobs[name])
	}
	for _, name := range slices.Sorted(maps.Keys(b.alerts)) {
		ids["alert"] = append(ids["alert"], b.alerts[name])
	}
	for _, k := range bKeys {
		ids["key"] = append(ids["key"], k.ID)
	}
	for _, u := range b.users {
		ids["user"] = append(ids["user"], u.id)
	}
	slices.Sort(ids["user"])
	ids["channel"] = []string{bChannel.ID}
	ids["escalation"] = []string{bEscalation.ID}
	var bJob struct {
		Device  struct{ ID string }
		History []struct{ ID string }
	}
	s.admin(t, "GET", b.path("/jobs/"+b.jobs["Exchange nightly"]), nil, 200, &bJob)
	var bUnparsed, bActivity []struct{ ID string }
	s.admin(t, "GET", b.path("/unparsed"), nil, 200, &bUnparsed)
	s.admin(t, "GET", b.path("/activity"), nil, 200, &bActivity)
	if bJob.Device.ID == "" || len(bJob.History) == 0 || len(bUnparsed) != 1 || len(bActivity) == 0 {
		t.Fatalf("B's fixture: device %q, %d results, %d unreadable e-mails, %d activity entries", bJob.Device.ID, len(bJob.History), len(bUnparsed), len(bActivity))
	}
	others := []string{b.id, bJob.Device.ID, bJob.History[0].ID, bUnparsed[0].ID, bActivity[0].ID}
	// B's cursors: a second page of each list.
	for _, l := range []string{"clients", "jobs", "reports", "alerts"} {
		code, body := s.rest(t, b.restKey, "/"+l+"?limit=1")
		var p struct{ Pagination struct{ NextCursor *string } }
		if code != 200 || json.Unmarshal([]byte(body), &p) != nil || p.Pagination.NextCursor == nil {
			t.Fatalf("B's /%s?limit=1: %d %s", l, code, body)
		}
		ids[l+"Cursor"] = []string{*p.Pagination.NextCursor}
	}
	bIDs := func(kind string) []string { return append(slices.Clone(ids[kind]), others...) }
	// A's own: the controls.
	aCursor := func(kind string) string {
		code, body := s.rest(t, a.restKey, "/"+strings.TrimSuffix(kind, "Cursor")+"?limit=1")
		var p struct{ Pagination struct{ NextCursor string } }
		if code != 200 || json.Unmarshal([]byte(body), &p) != nil || len(p.Pagination.NextCursor) < 8 {
			t.Fatalf("A's %s: %d %s", kind, code, body)
		}
		return p.Pagination.NextCursor
	}
	own := func(kind string) string {
		switch kind {
		case "client":
			return a.clients[1]
		case "job":
			return a.jobs["SQL backup"]
		case "alert":
			return a.alerts["SQL backup"]
		}
		return aCursor(kind)
	}
	// An id that exists nowhere, shaped as B's; for a cursor, A's own with
	// a character changed (its signature no longer holds).
	nothing := func(kind string) string {
		if strings.HasSuffix(kind, "Cursor") {
			c := []byte(aCursor(kind))
			if c[len(c)/2] == 'A' {
				c[len(c)/2] = 'B'
			} else {
				c[len(c)/2] = 'A'
			}
			return string(c)
		}
		return secNoSuchID(ids[kind][0])
	}
	bRESTBefore := secBView(t, s, b, true)
	bAdminBefore := secBView(t, s, b, false)

	t.Run("REST", func(t *testing.T) {
		routes := []struct{ path, kind string }{
			{"/clients/%s", "client"},
			{"/clients/%s/health", "client"},
			{"/jobs/%s", "job"},
			{"/jobs?clientId=%s", "client"},
			{"/reports?clientId=%s", "client"},
			{"/reports?jobId=%s", "job"},
			{"/alerts?clientId=%s", "client"},
			{"/alerts?jobId=%s", "job"},
			{"/alerts?status=unresolved&jobId=%s", "job"},
			{"/clients?limit=1&cursor=%s", "clientsCursor"},
			{"/jobs?limit=1&cursor=%s", "jobsCursor"},
			{"/reports?limit=1&cursor=%s", "reportsCursor"},
			{"/alerts?limit=1&cursor=%s", "alertsCursor"},
		}
		secCheckOpenAPICoverage(t, s, routes)
		for _, rt := range routes {
			none := nothing(rt.kind)
			code, body := s.rest(t, a.restKey, fmt.Sprintf(rt.path, url.QueryEscape(none)))
			want := secNormalize(secRESTAnswer(code, body), none)
			if isList := strings.Contains(rt.path, "Id="); code != 200 && isList || isList && !strings.Contains(body, `"data":[]`) {
				t.Errorf("%s with an id that exists nowhere: %s, want an empty list", rt.path, want)
			}
			mine := own(rt.kind)
			if code, body := s.rest(t, a.restKey, fmt.Sprintf(rt.path, url.QueryEscape(mine))); code != 200 || strings.Contains(body, `"data":[]`) {
				t.Errorf("control: %s with A's own %s: %d %.300s, want 200 with data", rt.path, rt.kind, code, body)
			}
			for _, id := range bIDs(rt.kind) {
				code, body := s.rest(t, a.restKey, fmt.Sprintf(rt.path, url.QueryEscape(id)))
				if got := secNormalize(secRESTAnswer(code, body), id); got != want {
					t.Errorf("A's key, %s with B's id %s (%s):\n got %s\nwant %s (as for an id that exists nowhere)", rt.path, id, rt.kind, got, want)
				}
			}
		}
		// A's own lists hold nothing of B's.
		for _, p := range []string{"/workspace", "/clients", "/jobs", "/reports?limit=100", "/alerts?limit=100", "/alerts?status=unresolved", "/health"} {
			_, body := s.rest(t, a.restKey, p)
			for _, id := range bIDs("") {
				if strings.Contains(body, id) {
					t.Errorf("A's %s shows B's id %s", p, id)
				}
			}
		}
	})

	t.Run("ReportAPI", func(t *testing.T) {
		none := nothing("job")
		for _, hdr := range [][]string{nil, {"Idempotency-Key", "iso-1"}} {
			wantCode, wantBody := s.secReport(t, a.reportKey, none, `{"status":"failed"}`, hdr...)
			if wantCode != 404 || wantBody != `{"error":"Job not found"}` {
				t.Errorf("a report to a job that exists nowhere: %d %s", wantCode, wantBody)
			}
			for _, id := range bIDs("job") {
				if code, body := s.secReport(t, a.reportKey, id, `{"status":"failed"}`, hdr...); code != wantCode || body != wantBody {
					t.Errorf("A's report key on B's id %s: %d %s, want %d %s", id, code, body, wantCode, wantBody)
				}
			}
		}
	})

	t.Run("MCP", func(t *testing.T) {
		type toolArg struct {
			tool, arg, kind string
			args            map[string]any
			read            bool // a read tool: A's own id is the control
		}
		tools := []toolArg{
			{"get_client_health", "clientId", "client", nil, true},
			{"list_jobs", "clientId", "client", nil, true},
			{"get_job", "jobId", "job", nil, true},
			{"explain_failure", "jobId", "job", nil, true},
			{"explain_failure", "alertId", "alert", nil, true},
			{"acknowledge_alerts", "alertIds", "alert", map[string]any{"note": "not mine"}, false},
			{"snooze_alerts", "alertIds", "alert", map[string]any{"preset": "1h"}, false},
			{"resolve_alert", "alertId", "alert", map[string]any{"note": "not mine"}, false},
			{"pause_job", "jobId", "job", map[string]any{"until": "2027-01-01", "note": "not mine"}, false},
			{"resume_job", "jobId", "job", nil, false},
		}
		// Every tool argument that names something is in the table.
		resp, raw := s.mcpRaw(t, "POST", "Bearer "+aRW.secret, secRPC("tools/list", nil))
		var list struct {
			Result struct {
				Tools []struct {
					Name        string
					InputSchema struct{ Properties map[string]any }
				}
			}
		}
		if resp.StatusCode != 200 || json.Unmarshal(raw, &list) != nil || len(list.Result.Tools) != 13 {
			t.Fatalf("tools/list: %d %s", resp.StatusCode, raw)
		}
		for _, tl := range list.Result.Tools {
			for prop := range tl.InputSchema.Properties {
				if (strings.HasSuffix(prop, "Id") || strings.HasSuffix(prop, "Ids")) &&
					!slices.ContainsFunc(tools, func(c toolArg) bool { return c.tool == tl.Name && c.arg == prop }) {
					t.Errorf("the tool %s takes %s, which is not in the table", tl.Name, prop)
				}
			}
		}
		call := func(tc toolArg, id string) string {
			args := map[string]any{}
			for k, v := range tc.args {
				args[k] = v
			}
			if strings.HasSuffix(tc.arg, "Ids") {
				args[tc.arg] = []string{id}
			} else {
				args[tc.arg] = id
			}
			resp, b := s.mcpRaw(t, "POST", "Bearer "+aRW.secret, secCall(tc.tool, args))
			return fmt.Sprintf("%d %s", resp.StatusCode, secNormalize(string(b), id))
		}
		for _, tc := range tools {
			want := call(tc, nothing(tc.kind))
			if !strings.HasPrefix(want, "200 ") || !strings.Contains(want, "not found") {
				t.Errorf("%s with an id that exists nowhere: %s, want a not-found answer", tc.tool, want)
			}
			if tc.read {
				if got := call(tc, own(tc.kind)); strings.Contains(got, "not found") || strings.Contains(got, `"isError":true`) {
					t.Errorf("control: %s with A's own %s: %.300s", tc.tool, tc.kind, got)
				}
			}
			for _, id := range bIDs(tc.kind) {
				if got := call(tc, id); got != want {
					t.Errorf("A's assistant key, %s %s = B's id %s (%s):\n got %s\nwant %s", tc.tool, tc.arg, id, tc.kind, got, want)
				}
			}
		}
		for _, tool := range []string{"list_jobs", "list_alerts", "list_attention", "list_clients", "whoami"} {
			_, body := s.mcpRaw(t, "POST", "Bearer "+aRW.secret, secCall(tool, map[string]any{}))
			for _, id := range bIDs("") {
				if bytes.Contains(body, []byte(id)) {
					t.Errorf("A's %s shows B's id %s", tool, id)
				}
			}
		}
	})

	t.Run("Dashboard", func(t *testing.T) {
		type form struct {
			method, path string // %s: the id
			kind         string
			form         url.Values // "%s" in a value: the id
		}
		forms := []form{
			{"GET", "/clients/%s", "client", nil},
			{"GET", "/jobs/%s", "job", nil},
			{"GET", "/jobs?client=%s", "client", nil},
			{"POST", "/jobs/%s/pause", "job", url.Values{"until": {"2027-01-01"}, "note": {"not mine"}}},
			{"POST", "/jobs/%s/resume", "job", url.Values{"note": {"not mine"}}},
			{"POST", "/alerts/bulk", "alert", url.Values{"alert": {"%s"}, "action": {"acknowledge"}, "back": {"/alerts"}}},
			{"POST", "/alerts/bulk", "alert", url.Values{"alert": {"%s"}, "action": {"snooze"}, "snooze": {"1h"}, "back": {"/alerts"}}},
			{"POST", "/alerts/bulk", "alert", url.Values{"alert": {"%s"}, "action": {"resolve"}, "note": {"not mine"}, "back": {"/alerts"}}},
			{"POST", "/settings/keys/%s/revoke", "key", url.Values{}},
			{"POST", "/settings/channels/%s/delete", "channel", url.Values{}},
			{"POST", "/settings/channels/%s/test", "channel", url.Values{}},
			{"POST", "/settings/channels/%s/clients/" + a.clients[0], "channel", url.Values{"company": {"1"}}},
			{"POST", "/settings/escalations", "channel", url.Values{"channelId": {"%s"}, "afterMinutes": {"15"}}},
			{"POST", "/settings/escalations/%s/delete", "escalation", url.Values{}},
			{"POST", "/settings/users/%s", "user", url.Values{"role": {"viewer"}, "password": {"taken over 0123456789"}}},
			{"POST", "/settings/users/%s/delete", "user", url.Values{}},
		}
		// Every dashboard route with an id in its path is in the table.
		have := make([][2]string, 0, len(forms))
		for _, f := range forms {
			have = append(have, [2]string{f.method, strings.SplitN(fmt.Sprintf(f.path, "x"), "?", 2)[0]})
		}
		for _, p := range secSourceRoutes(t, "../../dashboard/server.go", nil) {
			if strings.Contains(p[1], "{") && p[1] != "/assets/{name}" && !secRouteCovered(p, have) {
				t.Errorf("the dashboard route %s %s is not in the table", p[0], p[1])
			}
		}
		do := func(f form, id string) (int, string) {
			var vals url.Values
			if f.form != nil {
				vals = url.Values{}
				for k, vs := range f.form {
					for _, v := range vs {
						vals.Add(k, strings.ReplaceAll(v, "%s", id))
					}
				}
			}
			path := strings.ReplaceAll(f.path, "%s", url.PathEscape(id))
			var r dashResp
			if f.method == "GET" {
				r = s.page(t, "GET", path, sess, nil)
			} else {
				r = s.post(t, path, sess, vals)
			}
			return r.status, secNormalize(fmt.Sprintf("%d Location %q Set-Cookie %q\n%s", r.status, r.header.Get("Location"), r.header.Values("Set-Cookie"), r.body), id)
		}
		for _, f := range forms {
			_, want := do(f, nothing(f.kind))
			if f.method == "GET" {
				if code, got := do(f, own(f.kind)); code != 200 || got == want {
					t.Errorf("control: %s with A's own %s: %d, want 200 and another page than for an id that exists nowhere", f.path, f.kind, code)
				}
			}
			for _, id := range bIDs(f.kind) {
				if _, got := do(f, id); got != want {
					t.Errorf("A's owner, %s %s with B's id %s (%s):\n got %.600s\nwant %.600s", f.method, f.path, id, f.kind, got, want)
				}
			}
		}
		// A's own pages show nothing of B's.
		for _, p := range []string{"/", "/?all", "/clients", "/jobs", "/alerts?status=all", "/settings/keys", "/settings/channels", "/settings/users", "/settings/activity"} {
			r := s.page(t, "GET", p, sess, nil)
			for kind, list := range ids {
				for _, id := range append(slices.Clone(list), others...) {
					if strings.Contains(r.body, id) {
						t.Errorf("A's page %s shows B's %s %s", p, kind, id)
					}
				}
			}
		}
	})

	if after := secBView(t, s, b, false); after != bAdminBefore {
		t.Errorf("A's requests changed B (admin API):%s", testserver.LineDiff(bAdminBefore, after, 4))
	}
	if after := secBView(t, s, b, true); after != bRESTBefore {
		t.Errorf("A's requests changed B (REST API):%s", testserver.LineDiff(bRESTBefore, after, 4))
	}
}

// secCheckOpenAPICoverage reads the served OpenAPI document and checks that
// every REST path with a path parameter, and every clientId, jobId and
// cursor query parameter, is in the table of routes.
func secCheckOpenAPICoverage(t *testing.T, s *dashServer, routes []struct{ path, kind string }) {
	t.Helper()
	resp, raw := s.secReq(t, "GET", s.c.PublicURL+"/api/v1/openapi.json", "")
	var doc struct {
		Paths      map[string]map[string]json.RawMessage
		Components struct {
			Parameters map[string]struct{ Name, In string }
		}
	}
	if resp.StatusCode != 200 || json.Unmarshal(raw, &doc) != nil || len(doc.Paths) == 0 {
		t.Fatalf("openapi.json: %d", resp.StatusCode)
	}
	covered := func(path, param string) bool {
		for _, r := range routes {
			p, q, _ := strings.Cut(r.path, "?")
			p = regexp.MustCompile(`%s`).ReplaceAllString(p, "{}")
			op := regexp.MustCompile(`\{[^}]+\}`).ReplaceAllString(path, "{}")
			if p == op && (param == "" || strings.Contains("&"+q, "&"+param+"=")) {
				return true
			}
		}
		return false
	}
	for path, ops := range doc.Paths {
		op, ok := ops["get"]
		if !ok {
			continue // the Report API: its own subtest
		}
		var o struct {
			Parameters []struct {
				Ref  string `json:"$ref"`
				Name string
				In   string
			}
		}
		json.Unmarshal(op, &o)
		if strings.Contains(path, "{") && !covered(path, "") {
			t.Errorf("the REST route %s is not in the table", path)
		}
		for _, p := range o.Parameters {
			name, in := p.Name, p.In
			if p.Ref != "" {
				c := doc.Components.Parameters[strings.TrimPrefix(p.Ref, "#/components/parameters/")]
				name, in = c.Name, c.In
			}
			if in == "query" && (name == "clientId" || name == "jobId" || name == "cursor") && !covered(path, name) {
				t.Errorf("the REST route %s?%s= is not in the table", path, name)
			}
		}
	}
}

// ---------------------------------------------------------------------------
// TestSecurityTLS

// secWriteCert writes a self-signed ECDSA certificate for 127.0.0.1 and
// localhost, and its key, into dir; it returns their paths, the pool that
// trusts it, and the path of another key that does not match it.
func secWriteCert(t *testing.T, dir string) (certFile, keyFile, otherKey string, pool *x509.CertPool) {
	t.Helper()
	cert, other := testserver.SelfSigned(t), testserver.SelfSigned(t)
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	writeKey := func(name string, k *ecdsa.PrivateKey) string {
		b, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return write(name, "EC PRIVATE KEY", b)
	}
	return write("cert.pem", "CERTIFICATE", cert.DER), writeKey("key.pem", cert.Key), writeKey("other-key.pem", other.Key), cert.Pool
}

// TestSecurityTLS: the public listener over HTTPS with the certificate of
// --tls-cert/--tls-key; refused TLS flags stop the start.
func TestSecurityTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, otherKey, pool := secWriteCert(t, dir)

	t.Run("BadFlags", func(t *testing.T) {
		missing := filepath.Join(dir, "missing.pem")
		notPEM := filepath.Join(dir, "not.pem")
		if err := os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			what   string
			flags  []string
			code   int
			stderr string // the whole stderr (code 2) or the err of the log line "backupmon stopped" (code 1)
		}{
			{"only --tls-cert", []string{"--tls-cert", certFile}, 2, "backupmon serve: --tls-cert and --tls-key go together\n"},
			{"only --tls-key", []string{"--tls-key", keyFile}, 2, "backupmon serve: --tls-cert and --tls-key go together\n"},
			{"a missing certificate", []string{"--tls-cert", missing, "--tls-key", keyFile}, 1, "load TLS certificate: open " + missing + ": no such file or directory"},
			{"a missing key", []string{"--tls-cert", certFile, "--tls-key", missing}, 1, "load TLS certificate: open " + missing + ": no such file or directory"},
			{"a key of another certificate", []string{"--tls-cert", certFile, "--tls-key", otherKey}, 1, "load TLS certificate: tls: private key does not match public key"},
			{"a certificate that is not PEM", []string{"--tls-cert", notPEM, "--tls-key", keyFile}, 1, "load TLS certificate: tls: failed to find any PEM data in certificate input"},
			{"the key as the certificate", []string{"--tls-cert", keyFile, "--tls-key", keyFile}, 1, "load TLS certificate: tls: failed to find certificate PEM data in certificate input, but did find a private key; PEM inputs may have been switched"},
		} {
			t.Run(tc.what, func(t *testing.T) {
				c, err := testserver.LaunchChild(t, "TLS flags", t.TempDir(), nil, tc.flags...)
				var ce *testserver.ExitError
				if err == nil || !errors.As(err, &ce) {
					t.Fatalf("the server started (%v); stdout:\n%s", err, c.Stdout.String())
				}
				if ce.ExitCode() != tc.code {
					t.Errorf("exit status %d, want %d", ce.ExitCode(), tc.code)
				}
				if strings.Contains(ce.Stdout, "listening") || strings.Contains(ce.Stdout, "ready") {
					t.Errorf("it listened before failing; stdout:\n%s", ce.Stdout)
				}
				if tc.code == 2 {
					if ce.Stderr != tc.stderr {
						t.Errorf("stderr %q, want %q", ce.Stderr, tc.stderr)
					}
					return
				}
				lines := logLines(ce.Stderr, "backupmon stopped")
				if len(lines) != 1 || logAttr(lines[0], "err") != tc.stderr || logAttr(lines[0], "level") != "ERROR" {
					t.Errorf("stderr:\n%s\nwant one ERROR line \"backupmon stopped\" err=%q", ce.Stderr, tc.stderr)
				}
			})
		}
	})

	c := testserver.StartChild(t, "TLS server", t.TempDir(), "--tls-cert", certFile, "--tls-key", keyFile)
	if !strings.HasPrefix(c.PublicURL, "https://127.0.0.1:") || !strings.HasPrefix(c.AdminURL, "http://127.0.0.1:") {
		t.Fatalf("listener lines: public %q admin %q, want https and http", c.PublicURL, c.AdminURL)
	}
	base := c.PublicURL
	hostport := strings.TrimPrefix(base, "https://")
	plain := &http.Client{Timeout: 10 * time.Second}
	t.Cleanup(plain.CloseIdleConnections)
	rec := &secRecorder{next: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	adm := c.For(t) // the fixture's admin calls, not recorded
	adm.HTTP = plain
	c.HTTP.Transport = rec
	s := &dashServer{c: c}

	// The fixture, through the admin listener (plain HTTP on loopback).
	admin := func(method, path string, body any, out any) {
		t.Helper()
		if err := adm.AdminCall(map[string]int{"POST": 201, "PATCH": 200, "GET": 200}[method], method, path, body, out); err != nil {
			t.Fatal(err)
		}
	}
	var ws, cl, job, rk, pk, ak struct{ ID, Key string }
	admin("POST", "/workspaces", map[string]any{"name": "TLS MSP", "plan": "pro"}, &ws)
	wp := "/workspaces/" + ws.ID
	admin("POST", wp+"/clients", map[string]any{"name": "Acme"}, &cl)
	admin("POST", wp+"/jobs", map[string]any{"clientId": cl.ID, "name": "Nightly", "vendor": "veeam",
		"device": map[string]any{"name": "fs", "type": "server", "hostname": "fs01"}, "schedule": map[string]any{"intervalMinutes": 1440}}, &job)
	admin("POST", wp+"/keys", map[string]any{"name": "rest", "type": "rest"}, &rk)
	admin("POST", wp+"/keys", map[string]any{"name": "report", "type": "report"}, &pk)
	admin("POST", wp+"/keys", map[string]any{"name": "assistant", "type": "assistant"}, &ak)
	const email, pw = "owner@tls.test", "tls owner password 123"
	admin("POST", wp+"/users", map[string]any{"email": email, "name": "TLS Owner", "role": "owner", "password": pw}, nil)

	t.Run("APIsOverTLS", func(t *testing.T) {
		code, body := s.rest(t, rk.Key, "/jobs/"+job.ID)
		if code != 200 || !strings.Contains(body, `"id":"`+job.ID+`"`) {
			t.Errorf("REST over TLS: %d %s", code, body)
		}
		resp, b := s.secReq(t, "POST", base+"/api/v1/jobs/"+job.ID+"/report", `{"status":"ok"}`, "Authorization", "Bearer "+pk.Key, "Content-Type", "application/json")
		if resp.StatusCode != 200 || string(b) != `{"ok":true,"status":"ok","alert_id":null,"duplicate":false,"superseded":false}` {
			t.Errorf("Report API over TLS: %d %s", resp.StatusCode, b)
		}
		resp, b = s.mcpRaw(t, "POST", "Bearer "+ak.Key, secCall("whoami", map[string]any{}))
		if resp.StatusCode != 200 || !strings.Contains(string(b), base+"/") {
			t.Errorf("MCP whoami over TLS: %d %s; want links starting %s/", resp.StatusCode, b, base)
		}
		resp, b = s.mcpRaw(t, "POST", "Bearer "+ak.Key, secRPC("tools/list", nil))
		if resp.StatusCode != 200 || !strings.Contains(string(b), `"name":"whoami"`) {
			t.Errorf("MCP tools/list over TLS: %d %.200s", resp.StatusCode, b)
		}
		if resp.TLS == nil || resp.TLS.Version < tls.VersionTLS12 {
			t.Errorf("the answer did not come over TLS 1.2 or later: %+v", resp.TLS)
		}
	})

	t.Run("DashboardOverTLS", func(t *testing.T) {
		r := s.page(t, "GET", "/login", "", nil)
		if r.status != 200 {
			t.Fatalf("GET /login over TLS: %s", r)
		}
		dashCheckPageHeaders(t, "the login page over TLS", r)
		r = s.post(t, "/login", "", url.Values{"email": {email}, "password": {pw}})
		ck := r.cookie(dashCookie)
		if r.status != 303 || ck == nil || ck.Value == "" {
			t.Fatalf("login over TLS: %s; Set-Cookie %q", r, r.header.Values("Set-Cookie"))
		}
		// decisions.md 11: a __Host- cookie, HttpOnly, Secure, SameSite=Lax.
		if !ck.Secure || !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.Path != "/" || ck.Domain != "" {
			t.Errorf("the session cookie over TLS: %q, want Secure, HttpOnly, SameSite=Lax, Path=/, no Domain", r.setCookieLine(dashCookie))
		}
		r = s.page(t, "GET", "/", ck.Value, nil)
		if r.status != 200 || !strings.Contains(dashVisible(r.body), "TLS Owner") {
			t.Errorf("the queue over TLS: %s", r)
		}
		for _, a := range []string{"/assets/app.css", "/assets/htmx.min.js"} {
			if r := s.page(t, "GET", a, "", nil); r.status != 200 {
				t.Errorf("GET %s over TLS: %s", a, r)
			}
		}
		// A cross-site POST is still refused over TLS.
		r = s.page(t, "POST", "/logout", ck.Value, url.Values{}, "Sec-Fetch-Site", "cross-site")
		if r.status != 403 {
			t.Errorf("a cross-site POST over TLS: %s, want 403", r)
		}
	})

	t.Run("PlainHTTPGetsNothing", func(t *testing.T) {
		// net/http's client over plain HTTP to the TLS port.
		req, _ := http.NewRequest("GET", "http://"+hostport+"/api/v1/jobs/"+job.ID, nil)
		req.Header.Set("Authorization", "Bearer "+rk.Key)
		if resp, err := plain.Do(req); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode < 400 || bytes.Contains(b, []byte(job.ID)) {
				t.Errorf("plain HTTP to the TLS listener: %d %s", resp.StatusCode, b)
			}
		}
		// The raw bytes that come back, if any.
		for _, raw := range []string{
			"GET /api/v1/jobs/" + job.ID + " HTTP/1.1\r\nHost: " + hostport + "\r\nAuthorization: Bearer " + rk.Key + "\r\n\r\n",
			"POST /api/v1/jobs/" + job.ID + "/report HTTP/1.1\r\nHost: " + hostport + "\r\nAuthorization: Bearer " + pk.Key + "\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n{\"status\":\"ok\"}",
			"POST /mcp HTTP/1.1\r\nHost: " + hostport + "\r\nAuthorization: Bearer " + ak.Key + "\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
			"GET /login HTTP/1.1\r\nHost: " + hostport + "\r\n\r\n",
		} {
			conn, err := net.DialTimeout("tcp", hostport, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			conn.SetDeadline(time.Now().Add(5 * time.Second))
			io.WriteString(conn, raw)
			got, _ := io.ReadAll(conn)
			conn.Close()
			if bytes.Contains(got, []byte(" 200 ")) || bytes.Contains(got, []byte(job.ID)) || bytes.Contains(got, []byte(`"data"`)) || bytes.Contains(got, []byte("<html")) {
				t.Errorf("plain HTTP %q to the TLS listener got %q", strings.SplitN(raw, "\r\n", 2)[0], got)
			}
		}
		// Nothing changed: the report sent in clear was not recorded.
		var jd struct{ History []any }
		if err := adm.AdminCall(200, "GET", wp+"/jobs/"+job.ID, nil, &jd); err != nil || len(jd.History) != 1 {
			t.Errorf("the job's history after plain-HTTP reports: %d results (%v), want the one sent over TLS", len(jd.History), err)
		}
	})

	t.Run("RefusedClients", func(t *testing.T) {
		// A client that does not trust the certificate, and one that speaks
		// only TLS 1.1, get no answer.
		untrusting := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{}}
		if resp, err := untrusting.Get(base + "/api/v1/openapi.json"); err == nil {
			resp.Body.Close()
			t.Errorf("a client without the certificate in its roots was answered %d", resp.StatusCode)
		}
		old := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MaxVersion: tls.VersionTLS11}}}
		if resp, err := old.Get(base + "/api/v1/openapi.json"); err == nil {
			resp.Body.Close()
			t.Errorf("a TLS 1.1 client was answered %d, want a refused handshake (MinVersion TLS 1.2)", resp.StatusCode)
		}
	})

	t.Run("NoServerHeader", func(t *testing.T) {
		for _, p := range []string{"/api/v1/nope", "/api/v1/openapi.json", "/nope", "/mcp"} {
			s.secReq(t, "GET", base+p, "")
		}
		resp, err := plain.Get(c.AdminURL + "/livez")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if v, ok := resp.Header["Server"]; ok {
			t.Errorf("the admin listener /livez: Server %q", v)
		}
		answers := rec.all()
		if len(answers) < 10 {
			t.Errorf("only %d answers over TLS", len(answers))
		}
		for _, e := range answers {
			if v, ok := e.header["Server"]; ok {
				t.Errorf("%s over TLS: Server %q", e, v)
			}
		}
		// And the secrets: each key only in the admin answer that made it
		// (not over TLS), none in the TLS answers, none in the log.
		secrets := []secSecret{secKey("the REST key", rk.Key), secKey("the report key", pk.Key), secKey("the assistant key", ak.Key),
			{what: "the password", value: pw, kind: secNever}}
		for i := range secrets {
			secrets[i].kind = secNever
		}
		secCheckAnswers(t, c.AdminURL, answers, secrets)
		secCheckLog(t, c.Stdout.String()+c.Stderr.String(), secrets)
	})
}

// ---------------------------------------------------------------------------
// TestSecurityMalformedRequestsNotLogged

// TestSecurityMalformedRequestsNotLogged: a request that does not parse,
// carrying a key or the admin token (a header line without its colon, a
// control character after the key, a request line without its version),
// is answered 400 and leaves neither in the log. The listeners log the
// read errors fasthttp reports, and some of those quote the offending
// line or the whole header.
func TestSecurityMalformedRequestsNotLogged(t *testing.T) {
	c := testserver.StartChild(t, "malformed requests", t.TempDir())
	ws := c.NewWorkspace(map[string]any{"name": "Malformed MSP", "plan": "pro"})
	rk, _ := c.NewKey(ws, "rest", map[string]any{"name": "rest"})
	pk, _ := c.NewKey(ws, "report", map[string]any{"name": "report"})
	job := c.NewJob(ws, c.NewClient(ws, "Acme"), "Nightly", testserver.Daily())
	pub := strings.TrimPrefix(c.PublicURL, "http://")
	adm := strings.TrimPrefix(c.AdminURL, "http://")
	secrets := []secSecret{secKey("the REST key", rk), secKey("the report key", pk), {what: "the admin token", value: testserver.AdminToken, kind: secNever}}
	for i := range secrets {
		secrets[i].kind = secNever // in no answer here: they were made by another client
	}
	for _, tc := range []struct {
		what, addr, raw string
	}{
		{"REST: Authorization without its colon", pub, "GET /api/v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization Bearer " + rk + "\r\n\r\n"},
		{"REST: a control character after the key", pub, "GET /api/v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + rk + "\x01\r\n\r\n"},
		{"REST: no HTTP version", pub, "GET /api/v1/jobs\r\nAuthorization: Bearer " + rk + "\r\n\r\n"},
		{"Report API: Authorization without its colon", pub, "POST /api/v1/jobs/" + job + "/report HTTP/1.1\r\nHost: x\r\nAuthorization Bearer " + pk + "\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n{\"status\":\"ok\"}"},
		{"admin: Authorization without its colon", adm, "GET /admin/v1/workspaces HTTP/1.1\r\nHost: x\r\nAuthorization Bearer " + testserver.AdminToken + "\r\n\r\n"},
		{"admin: a control character after the token", adm, "GET /admin/v1/workspaces HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + testserver.AdminToken + "\x01\r\n\r\n"},
	} {
		t.Run(tc.what, func(t *testing.T) {
			before := len(c.Stderr.String())
			e, ok := secRawHTTP(t, tc.addr, tc.raw)
			if ok && (e.status != 400 || e.header.Get("Server") != "") {
				t.Errorf("answer %d (Server %q) %s, want 400 without a Server header", e.status, e.header.Get("Server"), e.body)
			}
			if ok {
				secCheckAnswers(t, c.AdminURL, []secExchange{e}, secrets)
			}
			// The log line, if any, is written before the connection closes.
			time.Sleep(20 * time.Millisecond)
			secCheckLog(t, c.Stderr.String()[before:], secrets)
		})
	}
}

// secOwnersJobPage reports whether e is a dashboard job page, which shows
// the job's ingest address to owners and admins (decisions.md, set-up in
// the dashboard; dashboard_setup_test.go checks that members and viewers
// do not see it). The fixture browses the dashboard as the owner.
func secOwnersJobPage(e secExchange) bool {
	u, err := url.Parse(e.url)
	return err == nil && e.method == "GET" && strings.HasPrefix(u.Path, "/jobs/") && !strings.Contains(u.Path[len("/jobs/"):], "/")
}
