package main

// End-to-end tests of the dashboard (decisions.md 11) against the real
// binary with a plain net/http client, no browser, so that they run where
// Chromium is missing: sessions and their cookie, logout, login throttling,
// the admin users API, the security headers, the roles, the cross-origin
// rule, the triage, key and pause forms, escaping and the day grid across
// a change of summer time. dashboard_e2e_test.go drives the same pages in
// Chromium and uses the fixture of this file. Every name here starts with
// "dash" so that other test files of the package cannot collide with it.
//
// Go's cookie jar does not send a Secure cookie back over plain HTTP, so the
// tests read the session from the Set-Cookie of the login answer and send it
// in a Cookie header of their own.

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/smtp"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"backupmon/internal/testserver"
)

// dashT0 is where the development clock of the dashboard tests starts: a
// Thursday, eleven days after Europe/London went back from BST to GMT (on
// Sunday 2026-10-25), so that the 30-day grid of a job spans the change.
var dashT0 = time.Date(2026, 11, 5, 12, 0, 0, 0, time.UTC)

const (
	dashCookie   = "__Host-session"
	dashTimeZone = "Europe/London"
	dashLoginErr = "Wrong e-mail address or password."
	dashNoRole   = "Your role does not allow this."
	dashNoCross  = "Cross-origin requests are not accepted."
)

var dashRoles = []string{"owner", "admin", "member", "viewer"}

// dashServer is one `backupmon serve --dev-clock` child with an SMTP
// listener; its client never follows redirects.
type dashServer struct {
	c   *testserver.Child
	now time.Time // the development clock, as the last clock call left it
}

func dashStart(t *testing.T) *dashServer {
	t.Helper()
	return dashStartChild(t, "dashboard server", "--smtp-listen", "127.0.0.1:0")
}

// dashStartChild starts a child named name with the development clock and
// flags, and sets the clock to dashT0; with --smtp-listen among the flags
// the child must print its SMTP listener.
func dashStartChild(t *testing.T, name string, flags ...string) *dashServer {
	t.Helper()
	s := &dashServer{c: testserver.StartChild(t, name, t.TempDir(), append([]string{"--dev-clock"}, flags...)...)}
	if slices.Contains(flags, "--smtp-listen") {
		s.c.NeedSMTP()
	}
	s.clock(t, map[string]any{"set": dashT0.Format(time.RFC3339)})
	return s
}

// admin makes an admin call, requires want and decodes data into out.
func (s *dashServer) admin(t testing.TB, method, path string, body any, want int, out any) {
	t.Helper()
	s.c.For(t).AdminInto(want, method, path, body, out)
}

// adminRaw makes an admin call and returns its status and body.
func (s *dashServer) adminRaw(t testing.TB, method, path string, body any) (int, string) {
	t.Helper()
	r := s.c.For(t).Admin(method, path, body)
	return r.Status, string(r.Body)
}

// do sends req and returns the answer with its whole body.
func (s *dashServer) do(t testing.TB, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := s.c.HTTP.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// clock sets or moves the development clock and returns its new time.
func (s *dashServer) clock(t testing.TB, body map[string]any) time.Time {
	t.Helper()
	s.now = s.c.For(t).Clock(body)
	return s.now
}

func (s *dashServer) advance(t testing.TB, seconds int) time.Time {
	t.Helper()
	return s.clock(t, map[string]any{"advanceSeconds": seconds})
}

// ---------------------------------------------------------------------------
// The fixture: a workspace in Europe/London on plan pro, two clients, jobs,
// a user of each role, a report key and a REST key with every scope, and a
// report on each job that asks for one.

type dashUser struct {
	id, email, name, role, password string
}

type dashJob struct {
	name, vendor string
	client       int    // index into the clients
	report       string // "ok", "warn", "failed" or "" for none
}

// dashJobs are the jobs of a workspace unless a test asks for others: four
// alerts over two clients, and one healthy job.
var dashJobs = []dashJob{
	{"Exchange nightly", "veeam", 0, "failed"},
	{"File server", "acronis", 0, "warn"},
	{"SQL backup", "veeam", 1, "failed"},
	{"NAS sync", "synology", 1, "failed"},
	{"Laptop fleet", "datto", 1, "ok"},
}

type dashWS struct {
	id, slug  string
	clients   []string
	jobs      map[string]string // name → id
	ingest    map[string]string // name → ingest address
	alerts    map[string]string // job name → id of the alert its report opened
	reportKey string
	restKey   string // every scope
	users     map[string]dashUser
}

// workspace makes a workspace named after slug; the users' addresses are
// <role>@<slug>.test.
func (s *dashServer) workspace(t testing.TB, slug string, jobs []dashJob) *dashWS {
	t.Helper()
	w := &dashWS{slug: slug, jobs: map[string]string{}, ingest: map[string]string{}, alerts: map[string]string{}, users: map[string]dashUser{}}
	var ws struct{ ID string }
	s.admin(t, "POST", "/workspaces", map[string]any{"name": "MSP " + slug, "plan": "pro", "timeZone": dashTimeZone}, 201, &ws)
	w.id = ws.ID
	for _, name := range []string{"Harbour Dental", "Kestrel Law"} {
		var c struct{ ID string }
		s.admin(t, "POST", w.path("/clients"), map[string]any{"name": name}, 201, &c)
		w.clients = append(w.clients, c.ID)
	}
	var key struct{ Key string }
	s.admin(t, "POST", w.path("/keys"), map[string]any{"name": "agent", "type": "report"}, 201, &key)
	w.reportKey = key.Key
	s.admin(t, "POST", w.path("/keys"), map[string]any{"name": "checks", "type": "rest"}, 201, &key)
	w.restKey = key.Key
	for _, role := range dashRoles {
		u := dashUser{email: role + "@" + slug + ".test", name: strings.ToUpper(role[:1]) + role[1:] + " of " + slug, role: role,
			password: "pw-" + role + "-" + slug + "-0123456789"}
		var out struct{ ID string }
		s.admin(t, "POST", w.path("/users"), map[string]any{"email": u.email, "name": u.name, "role": role, "password": u.password}, 201, &out)
		u.id = out.ID
		w.users[role] = u
	}
	for i, j := range jobs {
		w.job(t, s, j, i)
	}
	return w
}

func (w *dashWS) path(p string) string { return "/workspaces/" + w.id + p }

// job makes a daily job and sends its report, if any.
func (w *dashWS) job(t testing.TB, s *dashServer, j dashJob, i int) string {
	t.Helper()
	var out struct {
		ID            string
		IngestAddress string
	}
	s.admin(t, "POST", w.path("/jobs"), map[string]any{
		"clientId": w.clients[j.client], "name": j.name, "vendor": j.vendor,
		"device":   map[string]any{"name": fmt.Sprintf("srv-%d", i), "type": "server", "hostname": fmt.Sprintf("srv-%d.%s.example", i, w.slug)},
		"schedule": map[string]any{"intervalMinutes": 1440},
	}, 201, &out)
	w.jobs[j.name] = out.ID
	w.ingest[j.name] = out.IngestAddress
	if j.report != "" {
		if a := s.report(t, w, out.ID, j.report, time.Time{}); a != "" {
			w.alerts[j.name] = a
		}
	}
	return out.ID
}

// report sends a report through the Report API (with the time the backup
// ran when at is not zero) and returns the alert it opened or raised.
func (s *dashServer) report(t testing.TB, w *dashWS, jobID, status string, at time.Time) string {
	t.Helper()
	body := map[string]any{"status": status}
	if !at.IsZero() {
		body["timestamp"] = at.UTC().Format(time.RFC3339)
	}
	b, _ := json.Marshal(body)
	r := s.c.For(t).MustReport(jobID, w.reportKey, string(b))
	alert := testserver.AlertID(r)
	if r.JSON["superseded"] != false {
		t.Fatalf("report %s on %s: %s", status, jobID, r.Body)
	}
	if status != "ok" && alert == "" {
		t.Fatalf("a %s report opened no alert: %s", status, r.Body)
	}
	return alert
}

// mail sends a report e-mail of the generic format to a job's ingest
// address: a failed run whose message is text.
func (s *dashServer) mail(t testing.TB, to, job, text string, finished time.Time) {
	t.Helper()
	f := finished.UTC()
	raw := "From: backup@srv.example\r\nTo: " + to + "\r\nSubject: Backup FAILED: " + job + "\r\n" +
		"Date: " + f.Format(time.RFC1123Z) + "\r\nMessage-ID: <" + strconv.FormatInt(f.UnixNano(), 36) + "@srv.example>\r\n" +
		"Content-Type: text/plain; charset=\"utf-8\"\r\nContent-Transfer-Encoding: 8bit\r\nMIME-Version: 1.0\r\n\r\n" +
		"Job:          " + job + "\r\nHost:         srv\r\nStatus:       FAILED\r\n" +
		"Started:      " + f.Add(-10*time.Minute).Format("2006-01-02 15:04:05 -0700") + "\r\n" +
		"Finished:     " + f.Format("2006-01-02 15:04:05 -0700") + "\r\n" +
		"Duration:     600s\r\nSize:         0 B\r\nVerification: skipped\r\nMessage:      " + text + "\r\n"
	if err := smtp.SendMail(s.c.SMTPAddr, nil, "backup@srv.example", []string{to}, []byte(raw)); err != nil {
		t.Fatalf("send the report e-mail to %s: %v", to, err)
	}
}

// ---------------------------------------------------------------------------
// The dashboard over HTTP

type dashResp struct {
	status int
	header http.Header
	body   string
}

// cookie returns the cookie of that name the answer sets, or nil.
func (r dashResp) cookie(name string) *http.Cookie {
	for _, line := range r.header.Values("Set-Cookie") {
		if c, err := http.ParseSetCookie(line); err == nil && c.Name == name {
			return c
		}
	}
	return nil
}

// setCookieLine returns the raw Set-Cookie line of the cookie name.
func (r dashResp) setCookieLine(name string) string {
	for _, line := range r.header.Values("Set-Cookie") {
		if strings.HasPrefix(line, name+"=") {
			return line
		}
	}
	return ""
}

// location returns the Location of a redirect as a path: an absolute
// address on the dashboard's own origin counts as its path.
func (s *dashServer) location(r dashResp) string {
	return strings.TrimPrefix(r.header.Get("Location"), s.c.PublicURL)
}

func (r dashResp) String() string {
	text := dashVisible(r.body)
	if len(text) > 400 {
		text = "…" + text[len(text)-400:]
	}
	return fmt.Sprintf("%d (Location %q) %q", r.status, r.header.Get("Location"), text)
}

// page sends a request to the public listener with the session (when not
// empty) as its cookie, form as a POST's body and hdr as header pairs.
func (s *dashServer) page(t testing.TB, method, path, session string, form url.Values, hdr ...string) dashResp {
	t.Helper()
	var rd io.Reader
	if form != nil {
		rd = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, s.c.PublicURL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	var cookies []string
	if session != "" {
		cookies = append(cookies, dashCookie+"="+session)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Cookie" {
			cookies = append(cookies, hdr[i+1])
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	if len(cookies) > 0 {
		req.Header.Set("Cookie", strings.Join(cookies, "; "))
	}
	resp, b := s.do(t, req)
	return dashResp{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// post sends a form as a browser on the dashboard's own pages does.
func (s *dashServer) post(t testing.TB, path, session string, form url.Values) dashResp {
	t.Helper()
	return s.page(t, "POST", path, session, form, "Sec-Fetch-Site", "same-origin", "Origin", s.c.PublicURL)
}

// login logs u in and returns the session cookie's value. It moves the
// clock a minute on first, so that the many logins of the tests, all from
// 127.0.0.1, stay under the per-address throttle.
func (s *dashServer) login(t testing.TB, u dashUser) string {
	t.Helper()
	s.advance(t, 60)
	r := s.post(t, "/login", "", url.Values{"email": {u.email}, "password": {u.password}})
	c := r.cookie(dashCookie)
	if r.status != 303 || c == nil || c.Value == "" {
		t.Fatalf("log in as %s: %s; Set-Cookie %q", u.email, r, r.header.Values("Set-Cookie"))
	}
	return c.Value
}

// flash returns the message a redirect left in its flash cookie.
func (r dashResp) flash() string {
	c := r.cookie("flash")
	if c == nil {
		return ""
	}
	v, _ := url.QueryUnescape(c.Value)
	return v
}

// rest GETs a REST API path with key; it returns the status and the body.
func (s *dashServer) rest(t testing.TB, key, path string) (int, string) {
	t.Helper()
	r := s.c.For(t).REST(key, path)
	return r.Status, string(r.Body)
}

// restError returns error.code of a REST error body.
func dashErrorCode(body string) string {
	var e struct{ Error struct{ Code string } }
	json.Unmarshal([]byte(body), &e)
	return e.Error.Code
}

// dashAlert is an alert as the admin and REST APIs show it (the tests of
// the dashboard and of report e-mails read it).
type dashAlert struct {
	ID              string  `json:"id"`
	Type            string  `json:"type"`
	Severity        string  `json:"severity"`
	Status          string  `json:"status"`
	JobID           string  `json:"jobId"`
	JobName         string  `json:"jobName"`
	Summary         string  `json:"summary"`
	AcknowledgedAt  *string `json:"acknowledgedAt"`
	SnoozedUntil    *string `json:"snoozedUntil"`
	ResolvedAt      *string `json:"resolvedAt"`
	RecoverySeconds *int64  `json:"recoverySeconds"`
	AI              *struct {
		LikelyCause string `json:"likelyCause"`
		Confidence  string `json:"confidence"`
		Category    string `json:"category"`
	} `json:"ai"`
}

// restAlerts returns the workspace's alerts through GET /api/v1/alerts, by
// id.
func (s *dashServer) restAlerts(t testing.TB, key string) map[string]dashAlert {
	t.Helper()
	code, body := s.rest(t, key, "/alerts?limit=100")
	if code != 200 {
		t.Fatalf("GET /api/v1/alerts: %d %s", code, body)
	}
	var page struct{ Data []dashAlert }
	if err := json.Unmarshal([]byte(body), &page); err != nil {
		t.Fatalf("GET /api/v1/alerts: %v: %s", err, body)
	}
	out := map[string]dashAlert{}
	for _, a := range page.Data {
		out[a.ID] = a
	}
	return out
}

// adminAlerts returns every alert of the workspace through the admin API.
func (s *dashServer) adminAlerts(t testing.TB, w *dashWS) map[string]dashAlert {
	t.Helper()
	var list []dashAlert
	s.admin(t, "GET", w.path("/alerts"), nil, 200, &list)
	out := map[string]dashAlert{}
	for _, a := range list {
		out[a.ID] = a
	}
	return out
}

type dashActivity struct {
	ID      string `json:"id"`
	At      string `json:"at"`
	Type    string `json:"type"`
	Actor   string `json:"actor"`
	KeyID   string `json:"keyId"`
	KeyName string `json:"keyName"`
	AlertID string `json:"alertId"`
	JobID   string `json:"jobId"`
	Note    string `json:"note"`
}

func (s *dashServer) activity(t testing.TB, w *dashWS) []dashActivity {
	t.Helper()
	var list []dashActivity
	s.admin(t, "GET", w.path("/activity"), nil, 200, &list)
	return list
}

// findActivity returns the entries of type typ about id (an alert, job or
// key id; "" for any).
func dashFindActivity(list []dashActivity, typ, id string) []dashActivity {
	var out []dashActivity
	for _, a := range list {
		if a.Type == typ && (id == "" || a.AlertID == id || a.JobID == id || a.KeyID == id) {
			out = append(out, a)
		}
	}
	return out
}

type dashAdminJob struct {
	ID          string  `json:"id"`
	Status      string  `json:"status"`
	Paused      bool    `json:"paused"`
	PausedUntil *string `json:"pausedUntil"`
}

func (s *dashServer) adminJob(t testing.TB, w *dashWS, id string) dashAdminJob {
	t.Helper()
	var j dashAdminJob
	s.admin(t, "GET", w.path("/jobs/"+id), nil, 200, &j)
	return j
}

type dashKey struct {
	ID        string   `json:"id"`
	Name      string   `json:"name"`
	Type      string   `json:"type"`
	Prefix    string   `json:"prefix"`
	Scopes    []string `json:"scopes"`
	ExpiresAt *string  `json:"expiresAt"`
}

func (s *dashServer) adminKeys(t testing.TB, w *dashWS) []dashKey {
	t.Helper()
	var list []dashKey
	s.admin(t, "GET", w.path("/keys"), nil, 200, &list)
	return list
}

// checkNewKey checks a REST key named name that the dashboard made with
// the scopes jobs:read and alerts:read: the shape of its secret, that it
// reads /jobs and /alerts but not /clients (403 INSUFFICIENT_SCOPE). It
// returns the key as the admin API lists it.
func (s *dashServer) checkNewKey(t testing.TB, w *dashWS, name, secret string) dashKey {
	t.Helper()
	if !testserver.SecretRe.MatchString(secret) {
		t.Fatalf("the new key %q is not svc_live_ and 48 hex characters", secret)
	}
	for _, p := range []string{"/jobs", "/alerts"} {
		if code, body := s.rest(t, secret, p); code != 200 {
			t.Errorf("GET /api/v1%s with the new key: %d %s, want 200", p, code, body)
		}
	}
	if code, body := s.rest(t, secret, "/clients"); code != 403 || dashErrorCode(body) != "INSUFFICIENT_SCOPE" {
		t.Errorf("GET /api/v1/clients with the new key: %d %s, want 403 INSUFFICIENT_SCOPE", code, body)
	}
	var key dashKey
	for _, k := range s.adminKeys(t, w) {
		if k.Name == name {
			key = k
		}
	}
	return key
}

// dashState is what the admin API shows of a workspace, to check that a
// refused request changed nothing.
func (s *dashServer) state(t testing.TB, w *dashWS) string {
	t.Helper()
	var b strings.Builder
	for _, path := range []string{"/alerts", "/keys", "/activity", "/users", "/jobs", "/channels"} {
		code, body := s.adminRaw(t, "GET", w.path(path), nil)
		fmt.Fprintf(&b, "%s %d %s\n", path, code, body)
	}
	return b.String()
}

// dashSameTime reports whether the timestamp s is the instant want.
func dashSameTime(s *string, want time.Time) bool {
	if s == nil {
		return false
	}
	got, err := time.Parse(time.RFC3339Nano, *s)
	return err == nil && got.Equal(want)
}

func dashStr(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}

// ---------------------------------------------------------------------------
// HTML

func dashParse(t testing.TB, body string) *html.Node {
	t.Helper()
	n, err := html.Parse(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parse the page: %v", err)
	}
	return n
}

// dashAll returns the elements under n named tag ("" for any) that have
// every attribute of the pairs (name, value); a value "*" only asks for
// the attribute, and the name "class" matches one class.
func dashAll(n *html.Node, tag string, attrs ...string) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && (tag == "" || n.Data == tag) && dashHasAttrs(n, attrs) {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return out
}

func dashHasAttrs(n *html.Node, attrs []string) bool {
	for i := 0; i+1 < len(attrs); i += 2 {
		v, ok := dashAttrOK(n, attrs[i])
		switch {
		case !ok:
			return false
		case attrs[i] == "class":
			if !slices.Contains(strings.Fields(v), attrs[i+1]) {
				return false
			}
		case attrs[i+1] != "*" && v != attrs[i+1]:
			return false
		}
	}
	return true
}

func dashAttrOK(n *html.Node, name string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == name {
			return a.Val, true
		}
	}
	return "", false
}

func dashAttr(n *html.Node, name string) string {
	v, _ := dashAttrOK(n, name)
	return v
}

// dashText returns the text under n, spaces collapsed.
func dashText(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
			b.WriteByte(' ')
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}

// dashVisible returns the text of a page's body (for messages).
func dashVisible(body string) string {
	n, err := html.Parse(strings.NewReader(body))
	if err != nil {
		return body
	}
	if b := dashAll(n, "body"); len(b) == 1 {
		return dashText(b[0])
	}
	return dashText(n)
}

// dashCheckPageHeaders checks the security headers every dashboard page
// carries.
func dashCheckPageHeaders(t testing.TB, what string, r dashResp) {
	t.Helper()
	want := map[string]string{
		"X-Content-Type-Options": "nosniff",
		"X-Frame-Options":        "DENY",
		"Cache-Control":          "no-store",
		"Content-Type":           "text/html; charset=utf-8",
	}
	for h, v := range want {
		if got := r.header.Get(h); got != v {
			t.Errorf("%s: %s %q, want %q", what, h, got, v)
		}
	}
	csp := r.header.Get("Content-Security-Policy")
	if !strings.HasPrefix(csp, "default-src 'self'") {
		t.Errorf("%s: Content-Security-Policy %q, want one starting with default-src 'self'", what, csp)
	}
	for _, d := range []string{"frame-ancestors 'none'", "object-src 'none'", "base-uri 'none'"} {
		if !strings.Contains(csp, d) {
			t.Errorf("%s: Content-Security-Policy %q has no %s", what, csp, d)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("%s: Content-Security-Policy %q allows inline script or eval", what, csp)
	}
}

// dashNoInlineScript checks that every script element of a page has a src
// on this site and no body.
func dashNoInlineScript(t testing.TB, what string, doc *html.Node) {
	t.Helper()
	for _, sc := range dashAll(doc, "script") {
		src := dashAttr(sc, "src")
		if src == "" || !strings.HasPrefix(src, "/assets/") || sc.FirstChild != nil {
			t.Errorf("%s: a script element that is not an asset: src %q, body %v", what, src, sc.FirstChild != nil)
		}
	}
	for _, n := range dashAll(doc, "") {
		for _, a := range n.Attr {
			if strings.HasPrefix(a.Key, "on") {
				t.Errorf("%s: <%s> has an event handler attribute %s=%q", what, n.Data, a.Key, a.Val)
			}
		}
	}
}

// ---------------------------------------------------------------------------

// TestDashboardHTTP runs the dashboard's rules over plain HTTP, each
// subtest in a workspace of its own on one server.
func TestDashboardHTTP(t *testing.T) {
	s := dashStart(t)

	t.Run("LoginSessionCookie", func(t *testing.T) { dashHTTPLogin(t, s) })
	t.Run("Logout", func(t *testing.T) { dashHTTPLogout(t, s) })
	t.Run("DeletedUserLoggedOut", func(t *testing.T) { dashHTTPDeletedUser(t, s) })
	t.Run("LoginThrottle", func(t *testing.T) { dashHTTPThrottle(t, s) })
	t.Run("DeviceCookie", func(t *testing.T) { dashHTTPDeviceCookie(t, s) })
	t.Run("SecurityHeaders", func(t *testing.T) { dashHTTPHeaders(t, s) })
	t.Run("AdminUsersAPI", func(t *testing.T) { dashHTTPAdminUsers(t, s) })
	t.Run("ViewerReadOnly", func(t *testing.T) { dashHTTPViewer(t, s) })
	t.Run("CrossOrigin", func(t *testing.T) { dashHTTPCrossOrigin(t, s) })
	t.Run("TriageForm", func(t *testing.T) { dashHTTPTriage(t, s) })
	t.Run("KeyForms", func(t *testing.T) { dashHTTPKeys(t, s) })
	t.Run("WebhookSecret", func(t *testing.T) { dashHTTPWebhookSecret(t, s) })
	t.Run("PauseForm", func(t *testing.T) { dashHTTPPause(t, s) })
	t.Run("Escaping", func(t *testing.T) { dashHTTPEscaping(t, s) })
	t.Run("DayGridDST", func(t *testing.T) { dashHTTPDayGrid(t, s) })
}

// dashHTTPLogin: the login form's answers and the session cookie.
func dashHTTPLogin(t *testing.T, s *dashServer) {
	w := s.workspace(t, "login", dashJobs[:1])
	owner := w.users["owner"]

	r := s.page(t, "GET", "/", "", nil)
	if r.status != 303 || s.location(r) != "/login?next=%2F" {
		t.Errorf("GET / without a session: %s, want 303 to /login?next=%%2F", r)
	}
	r = s.page(t, "GET", "/login", "", nil)
	if r.status != 200 || len(dashAll(dashParse(t, r.body), "input", "id", "email")) != 1 || len(dashAll(dashParse(t, r.body), "input", "id", "password")) != 1 {
		t.Errorf("GET /login: %s, want 200 with #email and #password", r)
	}

	s.advance(t, 60)
	for _, tc := range []struct{ what, email, password string }{
		{"a wrong password", owner.email, owner.password + "x"},
		{"an unknown address", "nobody@login.test", owner.password},
		{"no password", owner.email, ""},
	} {
		r = s.post(t, "/login", "", url.Values{"email": {tc.email}, "password": {tc.password}})
		if r.status != 401 || !strings.Contains(dashVisible(r.body), dashLoginErr) || r.cookie(dashCookie) != nil {
			t.Errorf("login with %s: %s; Set-Cookie %q; want 401 %q and no session", tc.what, r, r.header.Values("Set-Cookie"), dashLoginErr)
		}
		if doc := dashParse(t, r.body); len(dashAll(doc, "input", "id", "email", "value", tc.email)) != 1 {
			t.Errorf("login with %s: the form does not keep the address %q", tc.what, tc.email)
		}
	}

	s.advance(t, 60)
	r = s.post(t, "/login", "", url.Values{"email": {strings.ToUpper(owner.email)}, "password": {owner.password}, "next": {"/alerts?status=open"}})
	if r.status != 303 || s.location(r) != "/alerts?status=open" {
		t.Fatalf("login: %s, want 303 to the next page /alerts?status=open", r)
	}
	line := r.setCookieLine(dashCookie)
	c := r.cookie(dashCookie)
	if c == nil {
		t.Fatalf("login set no %s cookie: %q", dashCookie, r.header.Values("Set-Cookie"))
	}
	attrs := map[string]string{}
	for _, part := range strings.Split(line, ";")[1:] {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		attrs[strings.ToLower(k)] = v
	}
	if _, ok := attrs["httponly"]; !ok {
		t.Errorf("session cookie %q is not HttpOnly", line)
	}
	if _, ok := attrs["secure"]; !ok {
		t.Errorf("session cookie %q is not Secure", line)
	}
	if !strings.EqualFold(attrs["samesite"], "Lax") {
		t.Errorf("session cookie %q: SameSite %q, want Lax", line, attrs["samesite"])
	}
	if attrs["path"] != "/" {
		t.Errorf("session cookie %q: Path %q, want /", line, attrs["path"])
	}
	if _, ok := attrs["domain"]; ok {
		t.Errorf("session cookie %q has a Domain (a __Host- cookie must not)", line)
	}
	// A random 256-bit id: 43 characters of unpadded base64url at least.
	if len(c.Value) < 43 || strings.ContainsAny(c.Value, "+/=") {
		t.Errorf("session id %q is not 256 bits of base64url", c.Value)
	}

	r = s.page(t, "GET", "/", c.Value, nil)
	if r.status != 200 || !strings.Contains(dashVisible(r.body), owner.name) || !strings.Contains(dashVisible(r.body), "Attention") {
		t.Errorf("GET / with the session: %s, want 200 with the attention queue and %q", r, owner.name)
	}
	r = s.page(t, "GET", "/login?next=%2Fjobs", c.Value, nil)
	if r.status != 303 || s.location(r) != "/jobs" {
		t.Errorf("GET /login while logged in: %s, want 303 to /jobs", r)
	}

	// next never leads off the site.
	for _, next := range []string{"//evil.example/", "https://evil.example/", "/\\evil.example"} {
		s.advance(t, 60)
		r = s.post(t, "/login", "", url.Values{"email": {owner.email}, "password": {owner.password}, "next": {next}})
		if r.status != 303 || s.location(r) != "/" {
			t.Errorf("login with next=%q: %s, want 303 to /", next, r)
		}
	}
	// A made-up session is no session.
	r = s.page(t, "GET", "/", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", nil)
	if r.status != 303 || !strings.HasPrefix(s.location(r), "/login") {
		t.Errorf("GET / with a made-up session: %s, want 303 to /login", r)
	}
	r = s.post(t, "/alerts/bulk", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", url.Values{"alert": {w.alerts["Exchange nightly"]}, "action": {"acknowledge"}})
	if r.status != 401 {
		t.Errorf("POST /alerts/bulk with a made-up session: %s, want 401", r)
	}
}

// dashHTTPLogout: logging out ends the session on the server.
func dashHTTPLogout(t *testing.T, s *dashServer) {
	w := s.workspace(t, "logout", nil)
	u := w.users["member"]
	sess := s.login(t, u)
	other := s.login(t, u) // a second session of the same user
	if r := s.page(t, "GET", "/", sess, nil); r.status != 200 {
		t.Fatalf("GET / with the session: %s", r)
	}
	r := s.post(t, "/logout", sess, url.Values{})
	if r.status != 303 || s.location(r) != "/login" {
		t.Errorf("POST /logout: %s, want 303 to /login", r)
	}
	if c := r.cookie(dashCookie); c == nil || c.Value != "" || (c.MaxAge >= 0 && (c.Expires.IsZero() || c.Expires.After(time.Now()))) {
		t.Errorf("POST /logout: Set-Cookie %q, want the session cookie cleared", r.header.Values("Set-Cookie"))
	}
	r = s.page(t, "GET", "/", sess, nil)
	if r.status != 303 || s.location(r) != "/login?next=%2F" {
		t.Errorf("GET / with the old cookie after logout: %s, want 303 to /login?next=%%2F", r)
	}
	r = s.post(t, "/alerts/bulk", sess, url.Values{"action": {"acknowledge"}})
	if r.status != 401 {
		t.Errorf("POST with the old cookie after logout: %s, want 401", r)
	}
	if r := s.page(t, "GET", "/", other, nil); r.status != 200 {
		t.Errorf("the user's other session ended with the logout: %s", r)
	}
}

// dashHTTPDeletedUser: deleting a user through the admin API ends their
// sessions at once.
func dashHTTPDeletedUser(t *testing.T, s *dashServer) {
	w := s.workspace(t, "deleted", nil)
	u := w.users["admin"]
	a, b := s.login(t, u), s.login(t, u)
	for _, sess := range []string{a, b} {
		if r := s.page(t, "GET", "/settings/keys", sess, nil); r.status != 200 {
			t.Fatalf("GET /settings/keys before the deletion: %s", r)
		}
	}
	s.admin(t, "DELETE", w.path("/users/"+u.id), nil, 204, nil)
	for i, sess := range []string{a, b} {
		if r := s.page(t, "GET", "/settings/keys", sess, nil); r.status != 303 || s.location(r) != "/login?next=%2Fsettings%2Fkeys" {
			t.Errorf("session %d of the deleted user: GET /settings/keys %s, want 303 to /login", i+1, r)
		}
		if r := s.post(t, "/settings/keys", sess, url.Values{"name": {"x"}, "type": {"report"}, "expiry": {"never"}}); r.status != 401 {
			t.Errorf("session %d of the deleted user: POST /settings/keys %s, want 401", i+1, r)
		}
	}
	s.advance(t, 60)
	if r := s.post(t, "/login", "", url.Values{"email": {u.email}, "password": {u.password}}); r.status != 401 {
		t.Errorf("login of the deleted user: %s, want 401", r)
	}
	if keys := s.adminKeys(t, w); len(keys) != 2 {
		t.Errorf("the deleted user's sessions made keys: %+v", keys)
	}
}

// dashHTTPThrottle: the sixth wrong attempt for one address within a
// minute answers 429 with Retry-After, the right password too, and another
// user is not held up; after Retry-After the user can log in.
func dashHTTPThrottle(t *testing.T, s *dashServer) {
	w := s.workspace(t, "throttle", nil)
	u, other := w.users["viewer"], w.users["member"]
	s.advance(t, 300)
	for i := 1; i <= 5; i++ {
		r := s.post(t, "/login", "", url.Values{"email": {u.email}, "password": {fmt.Sprintf("wrong password %d", i)}})
		if r.status != 401 {
			t.Fatalf("wrong attempt %d: %s, want 401", i, r)
		}
	}
	r := s.post(t, "/login", "", url.Values{"email": {u.email}, "password": {"wrong password 6"}})
	retry, err := strconv.Atoi(r.header.Get("Retry-After"))
	if r.status != 429 || err != nil || retry < 1 || retry > 3600 {
		t.Fatalf("wrong attempt 6: %s, Retry-After %q; want 429 with Retry-After in seconds", r, r.header.Get("Retry-After"))
	}
	if r.cookie(dashCookie) != nil {
		t.Errorf("a throttled login set a session")
	}
	dashCheckPageHeaders(t, "the 429 page", r)
	// The same address in other letters is the same user.
	r = s.post(t, "/login", "", url.Values{"email": {strings.ToUpper(u.email)}, "password": {u.password}})
	if r.status != 429 || r.cookie(dashCookie) != nil {
		t.Errorf("the right password while throttled: %s, want 429 and no session", r)
	}
	r = s.post(t, "/login", "", url.Values{"email": {other.email}, "password": {other.password}})
	if r.status != 303 || r.cookie(dashCookie) == nil {
		t.Errorf("another user from the same address: %s, want 303 with a session", r)
	}
	s.advance(t, retry)
	r = s.post(t, "/login", "", url.Values{"email": {u.email}, "password": {u.password}})
	if r.status != 303 || r.cookie(dashCookie) == nil {
		t.Errorf("login %d s later (Retry-After): %s, want 303 with a session", retry, r)
	}
}

// dashHTTPDeviceCookie: guesses for a user from elsewhere (no device
// cookie) empty the user's bucket, and the right password from there is
// refused too; but a browser that signed in as that user before holds a
// device cookie and gets through, on a bucket of its own that its own wrong
// guesses empty. A device cookie altered, or issued for another user,
// counts for nothing.
func dashHTTPDeviceCookie(t *testing.T, s *dashServer) {
	const deviceCookie = "__Host-device"
	w := s.workspace(t, "device", nil)
	u, other := w.users["owner"], w.users["admin"]
	s.advance(t, 300)
	r := s.post(t, "/login", "", url.Values{"email": {u.email}, "password": {u.password}})
	dev := r.cookie(deviceCookie)
	if r.status != 303 || dev == nil {
		t.Fatalf("first login: %s, device cookie %v; want 303 with one", r, dev)
	}
	if line := r.setCookieLine(deviceCookie); !strings.Contains(line, "; HttpOnly") || !strings.Contains(line, "; secure") ||
		!strings.Contains(line, "; SameSite=Lax") || !strings.Contains(line, "; path=/") || !strings.Contains(line, "max-age=31536000") {
		t.Errorf("device cookie: %q, want HttpOnly, Secure, SameSite=Lax, path / and a year", line)
	}
	s.advance(t, 300)
	ro := s.post(t, "/login", "", url.Values{"email": {other.email}, "password": {other.password}})
	otherDev := ro.cookie(deviceCookie)
	if ro.status != 303 || otherDev == nil {
		t.Fatalf("login of the other user: %s", ro)
	}
	s.advance(t, 300)
	// 200 wrong guesses from this address, with no device cookie.
	var refused int
	for i := range 200 {
		r := s.post(t, "/login", "", url.Values{"email": {u.email}, "password": {fmt.Sprintf("guess %d", i)}})
		switch r.status {
		case 401:
		case 429:
			refused++
		default:
			t.Fatalf("guess %d: %s", i, r)
		}
	}
	if refused < 190 {
		t.Fatalf("only %d of 200 guesses were throttled", refused)
	}
	withCookie := func(c, email, pw string) dashResp {
		return s.page(t, "POST", "/login", "", url.Values{"email": {email}, "password": {pw}},
			"Sec-Fetch-Site", "same-origin", "Origin", s.c.PublicURL, "Cookie", deviceCookie+"="+c)
	}
	if r := s.post(t, "/login", "", url.Values{"email": {u.email}, "password": {u.password}}); r.status != 429 {
		t.Errorf("the right password from a browser without a device cookie: %s, want 429", r)
	}
	if r := withCookie(otherDev.Value, u.email, u.password); r.status != 429 {
		t.Errorf("the right password with another user's device cookie: %s, want 429", r)
	}
	forged := dev.Value[:len(dev.Value)-2] + map[bool]string{true: "AA", false: "BB"}[!strings.HasSuffix(dev.Value, "AA")]
	if r := withCookie(forged, u.email, u.password); r.status != 429 {
		t.Errorf("the right password with an altered device cookie: %s, want 429", r)
	}
	// The browser that signed in before gets through, at once.
	r = withCookie(dev.Value, strings.ToUpper(u.email), u.password)
	if r.status != 303 || r.cookie(dashCookie) == nil {
		t.Fatalf("the right password with the user's device cookie: %s, want 303 with a session", r)
	}
	// Its attempts spend its own bucket of five: the login above and four
	// wrong passwords, then 429.
	for i := 1; i <= 4; i++ {
		if r := withCookie(dev.Value, u.email, fmt.Sprintf("typo %d", i)); r.status != 401 {
			t.Fatalf("wrong password %d with the device cookie: %s, want 401", i, r)
		}
	}
	if r := withCookie(dev.Value, u.email, u.password); r.status != 429 {
		t.Errorf("the right password after the device's own five attempts: %s, want 429", r)
	}
	// The other user's browser is not held up by any of it.
	if r := withCookie(otherDev.Value, other.email, other.password); r.status != 303 {
		t.Errorf("the other user with their device cookie: %s, want 303", r)
	}
}

// dashHTTPHeaders: the security headers of pages, error pages and assets,
// and no script in a page but the assets.
func dashHTTPHeaders(t *testing.T, s *dashServer) {
	w := s.workspace(t, "headers", dashJobs[:2])
	sess := s.login(t, w.users["owner"])
	viewer := s.login(t, w.users["viewer"])
	jid := w.jobs["Exchange nightly"]
	pages := []struct {
		what          string
		method, path  string
		session       string
		status        int
		form          url.Values
		headerPairs   []string
		checkNoScript bool
	}{
		{"login page", "GET", "/login", "", 200, nil, nil, true},
		{"queue", "GET", "/", sess, 200, nil, nil, true},
		{"clients", "GET", "/clients", sess, 200, nil, nil, true},
		{"client", "GET", "/clients/" + w.clients[0], sess, 200, nil, nil, true},
		{"jobs", "GET", "/jobs", sess, 200, nil, nil, true},
		{"job", "GET", "/jobs/" + jid, sess, 200, nil, nil, true},
		{"alerts", "GET", "/alerts", sess, 200, nil, nil, true},
		{"keys", "GET", "/settings/keys", sess, 200, nil, nil, true},
		{"channels", "GET", "/settings/channels", sess, 200, nil, nil, true},
		{"users", "GET", "/settings/users", sess, 200, nil, nil, true},
		{"activity", "GET", "/settings/activity", sess, 200, nil, nil, true},
		{"unknown page", "GET", "/no/such/page", sess, 404, nil, nil, true},
		{"unknown job", "GET", "/jobs/nosuchjob", sess, 404, nil, nil, true},
		{"wrong password", "POST", "/login", "", 401, url.Values{"email": {"x@headers.test"}, "password": {"0123456789"}}, nil, true},
		{"viewer's POST", "POST", "/alerts/bulk", viewer, 403, url.Values{"alert": {w.alerts["Exchange nightly"]}, "action": {"acknowledge"}}, []string{"Sec-Fetch-Site", "same-origin"}, true},
		{"cross-site POST", "POST", "/alerts/bulk", sess, 403, url.Values{}, []string{"Sec-Fetch-Site", "cross-site"}, true},
	}
	for _, p := range pages {
		r := s.page(t, p.method, p.path, p.session, p.form, p.headerPairs...)
		if r.status != p.status {
			t.Errorf("%s: %s %s: %s, want %d", p.what, p.method, p.path, r, p.status)
			continue
		}
		dashCheckPageHeaders(t, p.what, r)
		if p.checkNoScript {
			dashNoInlineScript(t, p.what, dashParse(t, r.body))
		}
	}
	// The assets a page names answer with their type, cached for ever, and
	// never sniffed.
	r := s.page(t, "GET", "/", sess, nil)
	doc := dashParse(t, r.body)
	var assets []string
	for _, sc := range dashAll(doc, "script", "src", "*") {
		assets = append(assets, dashAttr(sc, "src"))
	}
	for _, l := range dashAll(doc, "link", "rel", "stylesheet") {
		assets = append(assets, dashAttr(l, "href"))
	}
	if len(assets) != 3 {
		t.Errorf("the queue names the assets %q, want app.css, htmx.min.js and app.js", assets)
	}
	for _, a := range assets {
		r := s.page(t, "GET", a, "", nil)
		ctype := "text/javascript; charset=utf-8"
		if strings.Contains(a, ".css") {
			ctype = "text/css; charset=utf-8"
		}
		if r.status != 200 || r.header.Get("Content-Type") != ctype || r.header.Get("X-Content-Type-Options") != "nosniff" || len(r.body) < 100 {
			t.Errorf("GET %s: %d %q nosniff %q, %d bytes", a, r.status, r.header.Get("Content-Type"), r.header.Get("X-Content-Type-Options"), len(r.body))
		}
	}
}

// dashHTTPAdminUsers: the admin users API, its refusals, and that no user
// record carries a password or its hash.
func dashHTTPAdminUsers(t *testing.T, s *dashServer) {
	w := s.workspace(t, "users", nil)
	owner := w.users["owner"]
	noSecrets := func(what, body string, pws ...string) {
		t.Helper()
		low := strings.ToLower(body)
		words := []string{"hash", "argon2", "$argon"}
		if !strings.Contains(body, `"error"`) {
			words = append(words, "password") // an error message may name the field
		}
		for _, word := range words {
			if strings.Contains(low, word) {
				t.Errorf("%s shows %q: %s", what, word, body)
			}
		}
		for _, pw := range pws {
			if strings.Contains(body, pw) {
				t.Errorf("%s shows a password: %s", what, body)
			}
		}
	}
	pw := "a new long password 1"
	code, body := s.adminRaw(t, "POST", w.path("/users"), map[string]any{"email": "New.Person@Users.test", "name": "New Person", "role": "member", "password": pw})
	if code != 201 {
		t.Fatalf("POST user: %d %s", code, body)
	}
	noSecrets("POST user", body, pw)
	var created map[string]any
	json.Unmarshal([]byte(body), &struct{ Data *map[string]any }{&created})
	keys := slices.Sorted(maps.Keys(created))
	if !slices.Equal(keys, []string{"createdAt", "email", "id", "name", "role"}) {
		t.Errorf("user record fields %q, want createdAt, email, id, name, role: %s", keys, body)
	}
	if created["name"] != "New Person" || created["role"] != "member" || !strings.EqualFold(fmt.Sprint(created["email"]), "new.person@users.test") {
		t.Errorf("user record %s", body)
	}
	if ca, _ := created["createdAt"].(string); ca != testserver.TS(s.now) {
		t.Errorf("createdAt %v, want the clock's %s", created["createdAt"], testserver.TS(s.now))
	}
	uid, _ := created["id"].(string)
	newUser := dashUser{id: uid, email: "new.person@users.test", password: pw}

	for _, tc := range []struct {
		what   string
		method string
		path   string
		body   map[string]any
		status int
		code   string
		msg    string
	}{
		{"a short password", "POST", "/users", map[string]any{"email": "short@users.test", "name": "Short", "role": "member", "password": "123456789"}, 400, "INVALID_REQUEST", "password must be at least 10 characters"},
		{"a short new password", "PATCH", "/users/" + uid, map[string]any{"password": "short"}, 400, "INVALID_REQUEST", "password must be at least 10 characters"},
		{"a duplicate address", "POST", "/users", map[string]any{"email": owner.email, "name": "Twin", "role": "viewer", "password": "0123456789ab"}, 409, "CONFLICT", ""},
		{"a duplicate address in capitals", "POST", "/users", map[string]any{"email": strings.ToUpper(owner.email), "name": "Twin", "role": "viewer", "password": "0123456789ab"}, 409, "CONFLICT", ""},
		{"an unknown role", "POST", "/users", map[string]any{"email": "boss@users.test", "name": "Boss", "role": "superuser", "password": "0123456789ab"}, 400, "INVALID_REQUEST", ""},
		{"no password", "POST", "/users", map[string]any{"email": "nopw@users.test", "name": "No", "role": "viewer"}, 400, "INVALID_REQUEST", ""},
		{"the last owner's role", "PATCH", "/users/" + owner.id, map[string]any{"role": "admin"}, 409, "CONFLICT", ""},
		{"the last owner", "DELETE", "/users/" + owner.id, nil, 409, "CONFLICT", ""},
		{"an unknown user", "GET", "/users/00000000-0000-0000-0000-000000000000", nil, 404, "NOT_FOUND", ""},
	} {
		code, body := s.adminRaw(t, tc.method, w.path(tc.path), tc.body)
		var e struct {
			Error struct{ Code, Message string }
		}
		json.Unmarshal([]byte(body), &e)
		if code != tc.status || e.Error.Code != tc.code || tc.msg != "" && e.Error.Message != tc.msg {
			t.Errorf("%s: %d %s, want %d %s %q", tc.what, code, body, tc.status, tc.code, tc.msg)
		}
		noSecrets(tc.what, body)
	}

	code, body = s.adminRaw(t, "GET", w.path("/users"), nil)
	if code != 200 || strings.Count(body, `"email"`) != 5 || !strings.Contains(body, "new.person@users.test") {
		t.Errorf("GET users: %d %s, want the four users and the new one", code, body)
	}
	noSecrets("GET users", body, pw, owner.password)
	code, body = s.adminRaw(t, "GET", w.path("/users/"+uid), nil)
	if code != 200 || !strings.Contains(body, `"role":"member"`) {
		t.Errorf("GET user: %d %s", code, body)
	}
	noSecrets("GET user", body, pw)

	// A new role and a new password; the old password stops working.
	sess := s.login(t, newUser)
	if r := s.post(t, "/settings/keys", sess, url.Values{"name": {"k"}, "type": {"report"}, "expiry": {"never"}}); r.status != 403 {
		t.Errorf("a member creating a key: %s, want 403", r)
	}
	pw2 := "another long password 2"
	code, body = s.adminRaw(t, "PATCH", w.path("/users/"+uid), map[string]any{"role": "admin", "password": pw2})
	if code != 200 || !strings.Contains(body, `"role":"admin"`) {
		t.Errorf("PATCH user: %d %s", code, body)
	}
	noSecrets("PATCH user", body, pw, pw2)
	s.advance(t, 60)
	if r := s.post(t, "/login", "", url.Values{"email": {newUser.email}, "password": {pw}}); r.status != 401 {
		t.Errorf("login with the old password: %s, want 401", r)
	}
	newUser.password = pw2
	sess = s.login(t, newUser)
	if r := s.post(t, "/settings/keys", sess, url.Values{"name": {"k"}, "type": {"report"}, "expiry": {"never"}}); r.status != 200 || !strings.Contains(r.body, "svc_live_") {
		t.Errorf("the new admin creating a key: %s, want 200 with the key", r)
	}

	// With a second owner the first can go.
	s.admin(t, "PATCH", w.path("/users/"+uid), map[string]any{"role": "owner"}, 200, nil)
	s.admin(t, "DELETE", w.path("/users/"+owner.id), nil, 204, nil)
	if code, body := s.adminRaw(t, "GET", w.path("/users/"+owner.id), nil); code != 404 {
		t.Errorf("GET the deleted owner: %d %s, want 404", code, body)
	}
	if code, body := s.adminRaw(t, "DELETE", w.path("/users/"+uid), nil); code != 409 {
		t.Errorf("DELETE the new last owner: %d %s, want 409", code, body)
	}
	act := s.activity(t, w)
	noSecrets("the activity log", fmt.Sprint(act), pw, pw2)
}

// dashHTTPViewer: a viewer sees no form that changes anything, and a forged
// POST with the viewer's session is refused and changes nothing.
func dashHTTPViewer(t *testing.T, s *dashServer) {
	w := s.workspace(t, "viewer", dashJobs)
	sess := s.login(t, w.users["viewer"])
	jid := w.jobs["Exchange nightly"]
	keys := s.adminKeys(t, w)

	r := s.page(t, "GET", "/", sess, nil)
	doc := dashParse(t, r.body)
	if r.status != 200 || len(dashAll(doc, "tr", "data-row", jid)) != 1 {
		t.Fatalf("the viewer's queue: %s, want the job %s in it", r, jid)
	}
	if n := len(dashAll(doc, "form", "id", "bulk")); n != 0 {
		t.Errorf("the viewer's queue has %d form#bulk", n)
	}
	if n := len(dashAll(doc, "input", "type", "checkbox")); n != 0 {
		t.Errorf("the viewer's queue has %d checkboxes", n)
	}
	for _, path := range []string{"/alerts", "/jobs/" + jid} {
		doc := dashParse(t, s.page(t, "GET", path, sess, nil).body)
		if n := len(dashAll(doc, "form", "method", "post")) - 4; n != 0 { // theme and logout, in the header and in the phone's account menu
			t.Errorf("the viewer's %s has %d POST forms besides theme and logout", path, n)
		}
		if n := len(dashAll(doc, "input", "name", "alert")); n != 0 {
			t.Errorf("the viewer's %s has %d alert checkboxes", path, n)
		}
	}
	doc = dashParse(t, s.page(t, "GET", "/settings/keys", sess, nil).body)
	if len(dashAll(doc, "form", "id", "key-form")) != 0 || len(dashAll(doc, "form", "action", "/settings/keys/"+keys[0].ID+"/revoke")) != 0 {
		t.Errorf("the viewer's keys page has the create form or a revoke form")
	}
	if !strings.Contains(dashText(doc), keys[0].Prefix) {
		t.Errorf("the viewer's keys page does not list the key %s", keys[0].Prefix)
	}

	before := s.state(t, w)
	for _, tc := range []struct {
		path string
		form url.Values
	}{
		{"/alerts/bulk", url.Values{"alert": {w.alerts["Exchange nightly"], w.alerts["SQL backup"]}, "action": {"acknowledge"}, "note": {"viewer"}}},
		{"/alerts/bulk", url.Values{"alert": {w.alerts["NAS sync"]}, "action": {"snooze"}, "snooze": {"4h"}}},
		{"/alerts/bulk", url.Values{"alert": {w.alerts["File server"]}, "action": {"resolve"}}},
		{"/jobs/" + jid + "/pause", url.Values{"until": {"2026-12-01"}, "note": {"viewer"}}},
		{"/jobs/" + jid + "/resume", url.Values{}},
		{"/settings/keys", url.Values{"name": {"viewer key"}, "type": {"rest"}, "scopes": {"jobs:read"}, "expiry": {"never"}}},
		{"/settings/keys/" + keys[0].ID + "/revoke", url.Values{}},
		{"/settings/users", url.Values{"email": {"x@viewer.test"}, "name": {"X"}, "role": {"owner"}, "password": {"0123456789ab"}}},
		{"/settings/users/" + w.users["viewer"].id, url.Values{"role": {"owner"}}},
		{"/settings/channels", url.Values{"type": {"webhook"}, "name": {"x"}, "url": {"https://hooks.example/x"}}},
	} {
		r := s.post(t, tc.path, sess, tc.form)
		if r.status != 403 || !strings.Contains(dashVisible(r.body), dashNoRole) {
			t.Errorf("the viewer's POST %s: %s, want 403 %q", tc.path, r, dashNoRole)
		}
	}
	if after := s.state(t, w); after != before {
		t.Errorf("the viewer's refused POSTs changed the workspace:\nbefore %s\nafter %s", before, after)
	}
}

// dashHTTPCrossOrigin: a cross-origin POST is refused whatever the session,
// and changes nothing.
func dashHTTPCrossOrigin(t *testing.T, s *dashServer) {
	w := s.workspace(t, "cross", dashJobs[:2])
	owner := w.users["owner"]
	sess := s.login(t, owner)
	aid := w.alerts["Exchange nightly"]
	bulk := url.Values{"alert": {aid}, "action": {"acknowledge"}, "note": {"forged"}}
	s.advance(t, 60) // for the logins below, before the state is taken
	before := s.state(t, w)
	for _, tc := range []struct {
		what string
		path string
		form url.Values
		hdr  []string
	}{
		{"bulk, Origin evil", "/alerts/bulk", bulk, []string{"Origin", "http://evil.example"}},
		{"bulk, Sec-Fetch-Site cross-site", "/alerts/bulk", bulk, []string{"Sec-Fetch-Site", "cross-site"}},
		{"bulk, Sec-Fetch-Site same-site", "/alerts/bulk", bulk, []string{"Sec-Fetch-Site", "same-site"}},
		{"bulk, both", "/alerts/bulk", bulk, []string{"Sec-Fetch-Site", "cross-site", "Origin", "http://evil.example"}},
		{"pause, cross-site", "/jobs/" + w.jobs["Exchange nightly"] + "/pause", url.Values{"note": {"forged"}}, []string{"Sec-Fetch-Site", "cross-site"}},
		{"new key, Origin evil", "/settings/keys", url.Values{"name": {"forged"}, "type": {"report"}, "expiry": {"never"}}, []string{"Origin", "http://evil.example"}},
		{"new user, cross-site", "/settings/users", url.Values{"email": {"evil@cross.test"}, "name": {"Evil"}, "role": {"owner"}, "password": {"0123456789ab"}}, []string{"Sec-Fetch-Site", "cross-site"}},
		{"logout, cross-site", "/logout", url.Values{}, []string{"Sec-Fetch-Site", "cross-site"}},
		{"theme, cross-site", "/theme", url.Values{}, []string{"Sec-Fetch-Site", "cross-site"}},
	} {
		r := s.page(t, "POST", tc.path, sess, tc.form, tc.hdr...)
		if r.status != 403 || !strings.Contains(dashVisible(r.body), dashNoCross) {
			t.Errorf("%s: %s, want 403 %q", tc.what, r, dashNoCross)
		}
		if r.header.Get("Set-Cookie") != "" {
			t.Errorf("%s: the refusal sets cookies %q", tc.what, r.header.Values("Set-Cookie"))
		}
	}
	// A login from another site is refused even with the right password.
	for _, hdr := range [][]string{{"Origin", "http://evil.example"}, {"Sec-Fetch-Site", "cross-site"}} {
		r := s.page(t, "POST", "/login", "", url.Values{"email": {owner.email}, "password": {owner.password}}, hdr...)
		if r.status != 403 || r.cookie(dashCookie) != nil {
			t.Errorf("login with %s: %s; Set-Cookie %q; want 403 and no session", hdr, r, r.header.Values("Set-Cookie"))
		}
	}
	if after := s.state(t, w); after != before {
		t.Errorf("the cross-origin POSTs changed the workspace:\nbefore %s\nafter %s", before, after)
	}
	if r := s.page(t, "GET", "/", sess, nil); r.status != 200 {
		t.Errorf("the session ended with a cross-site logout: %s", r)
	}
	// The same request from the dashboard's own page works.
	r := s.page(t, "POST", "/alerts/bulk", sess, bulk, "Sec-Fetch-Site", "same-origin", "Origin", s.c.PublicURL)
	if r.status != 303 || r.flash() != "Acknowledged 1 alert(s)." {
		t.Errorf("the same-origin POST: %s, flash %q", r, r.flash())
	}
	if a := s.adminAlerts(t, w)[aid]; a.Status != "acknowledged" {
		t.Errorf("after the same-origin POST the alert is %q", a.Status)
	}
}

// dashHTTPTriage: the bulk form acknowledges and snoozes, the REST API
// shows it, and the activity log names the user and the note.
func dashHTTPTriage(t *testing.T, s *dashServer) {
	w := s.workspace(t, "triage", dashJobs)
	u := w.users["member"]
	sess := s.login(t, u)
	a1, a2, a3, a4 := w.alerts["Exchange nightly"], w.alerts["File server"], w.alerts["SQL backup"], w.alerts["NAS sync"]

	r := s.post(t, "/alerts/bulk", sess, url.Values{"action": {"acknowledge"}, "back": {"/"}})
	if r.status != 303 || s.location(r) != "/" || r.flash() != "!Select at least one alert first." {
		t.Errorf("bulk with no alert: %s, flash %q", r, r.flash())
	}

	now := s.advance(t, 0)
	r = s.post(t, "/alerts/bulk", sess, url.Values{"alert": {a1, a2}, "action": {"acknowledge"}, "note": {"  looking into it  "}, "back": {"/"}})
	if r.status != 303 || s.location(r) != "/" || r.flash() != "Acknowledged 2 alert(s)." {
		t.Fatalf("acknowledge: %s, flash %q", r, r.flash())
	}
	// The page the redirect leads to shows the message once.
	pg := s.page(t, "GET", "/", sess, nil, "Cookie", "flash="+r.cookie("flash").Value)
	if !strings.Contains(dashVisible(pg.body), "Acknowledged 2 alert(s).") {
		t.Errorf("the queue after the redirect does not say %q", "Acknowledged 2 alert(s).")
	}
	r = s.post(t, "/alerts/bulk", sess, url.Values{"alert": {a3}, "action": {"snooze"}, "snooze": {"4h"}, "note": {"after the window"}, "back": {"/alerts"}})
	if r.status != 303 || s.location(r) != "/alerts" || r.flash() != "Snoozed 1 alert(s)." {
		t.Fatalf("snooze 4h: %s, flash %q", r, r.flash())
	}
	r = s.post(t, "/alerts/bulk", sess, url.Values{"alert": {a4}, "action": {"snooze"}, "snooze": {"tomorrow"}, "back": {"/"}})
	if r.status != 303 || r.flash() != "Snoozed 1 alert(s)." {
		t.Fatalf("snooze tomorrow: %s, flash %q", r, r.flash())
	}
	r = s.post(t, "/alerts/bulk", sess, url.Values{"alert": {a4}, "action": {"snooze"}, "back": {"/"}})
	if r.status != 303 || !strings.HasPrefix(r.flash(), "!") {
		t.Errorf("snooze with no preset: %s, flash %q, want an error", r, r.flash())
	}

	got := s.restAlerts(t, w.restKey)
	for _, id := range []string{a1, a2} {
		if a := got[id]; a.Status != "acknowledged" || !dashSameTime(a.AcknowledgedAt, now) || a.SnoozedUntil != nil {
			t.Errorf("alert %s (%s) through REST: status %q acknowledgedAt %s snoozedUntil %s; want acknowledged at %s", id, a.JobName, a.Status, dashStr(a.AcknowledgedAt), dashStr(a.SnoozedUntil), testserver.TS(now))
		}
	}
	if a := got[a3]; a.Status != "snoozed" || !dashSameTime(a.SnoozedUntil, now.Add(4*time.Hour)) {
		t.Errorf("alert %s through REST: status %q snoozedUntil %s; want snoozed until %s", a3, a.Status, dashStr(a.SnoozedUntil), testserver.TS(now.Add(4*time.Hour)))
	}
	// Tomorrow 08:00 in London (GMT in November).
	if a := got[a4]; a.Status != "snoozed" || !dashSameTime(a.SnoozedUntil, time.Date(2026, 11, 6, 8, 0, 0, 0, time.UTC)) {
		t.Errorf("alert %s through REST: status %q snoozedUntil %s; want snoozed until 2026-11-06T08:00:00.000Z", a4, a.Status, dashStr(a.SnoozedUntil))
	}

	act := s.activity(t, w)
	for _, tc := range []struct{ typ, id, note string }{
		{"alert.acknowledged", a1, "looking into it"},
		{"alert.acknowledged", a2, "looking into it"},
		{"alert.snoozed", a3, "after the window"},
		{"alert.snoozed", a4, ""},
	} {
		es := dashFindActivity(act, tc.typ, tc.id)
		if len(es) != 1 || es[0].Actor != "user:"+u.email || es[0].Note != tc.note || !dashSameTime(&es[0].At, now) {
			t.Errorf("activity %s of %s: %+v, want one by user:%s with note %q at %s", tc.typ, tc.id, es, u.email, tc.note, testserver.TS(now))
		}
	}
	// The queue hides the snoozed and keeps the acknowledged.
	doc := dashParse(t, s.page(t, "GET", "/", sess, nil).body)
	if len(dashAll(doc, "input", "name", "alert", "value", a1)) != 1 || len(dashAll(doc, "input", "name", "alert", "value", a3)) != 0 {
		t.Errorf("the queue after triage: acknowledged shown %d, snoozed shown %d; want 1 and 0",
			len(dashAll(doc, "input", "name", "alert", "value", a1)), len(dashAll(doc, "input", "name", "alert", "value", a3)))
	}
	if !strings.Contains(dashText(doc), "2 snoozed and hidden") {
		t.Errorf("the queue does not say that two alerts are snoozed: %s", testserver.Tail(dashText(doc), 3))
	}
}

// dashHTTPKeys: the key form makes a key whose secret is shown once, with
// the areas chosen; its Revoke form ends it.
func dashHTTPKeys(t *testing.T, s *dashServer) {
	w := s.workspace(t, "keys", dashJobs[:1])
	u := w.users["admin"]
	sess := s.login(t, u)

	for _, tc := range []struct {
		form url.Values
		msg  string
	}{
		{url.Values{"name": {"no areas"}, "type": {"rest"}, "expiry": {"never"}}, "Choose at least one readable area."},
		{url.Values{"name": {"no expiry"}, "type": {"rest"}, "scopes": {"jobs:read"}}, "Choose an expiry: a date or never."},
		{url.Values{"name": {"no date"}, "type": {"rest"}, "scopes": {"jobs:read"}, "expiry": {"date"}}, "Choose the expiry date."},
		{url.Values{"name": {"no type"}, "expiry": {"never"}}, "Choose the key's access."},
	} {
		r := s.post(t, "/settings/keys", sess, tc.form)
		if r.status != 400 || !strings.Contains(dashVisible(r.body), tc.msg) || len(dashAll(dashParse(t, r.body), "output")) != 0 {
			t.Errorf("key form %v: %s, want 400 %q", tc.form, r, tc.msg)
		}
	}
	if n := len(s.adminKeys(t, w)); n != 2 {
		t.Fatalf("the refused forms made keys: %d keys", n)
	}

	name := "PSA sync"
	r := s.post(t, "/settings/keys", sess, url.Values{"name": {name}, "type": {"rest"}, "expiry": {"never"}, "scopes": {"jobs:read", "alerts:read"}})
	doc := dashParse(t, r.body)
	outs := dashAll(doc, "output", "class", "secret")
	if r.status != 200 || len(outs) != 1 {
		t.Fatalf("create a key: %s, want 200 with output.secret", r)
	}
	secret := dashText(outs[0])
	key := s.checkNewKey(t, w, name, secret)
	slices.Sort(key.Scopes)
	if key.Prefix != secret[:16] || key.Type != "rest" || key.ExpiresAt != nil || !slices.Equal(key.Scopes, []string{"alerts:read", "jobs:read", "workspace:read"}) {
		t.Errorf("the key as the admin API shows it: %+v", key)
	}
	// Shown once: the list shows the first 16 characters, never the rest.
	r = s.page(t, "GET", "/settings/keys", sess, nil)
	doc = dashParse(t, r.body)
	row := dashAll(doc, "tr", "data-row", key.ID)
	if len(row) != 1 || !strings.Contains(dashText(row[0]), name) || !strings.Contains(dashText(row[0]), secret[:16]) || strings.Contains(r.body, secret[:17]) {
		t.Fatalf("the key list: %d rows of the key, want one with %q and %s, and never more of the secret", len(row), name, secret[:16])
	}
	if txt := dashText(row[0]); !strings.Contains(txt, "REST API (read-only): Backup jobs, Alerts") {
		t.Errorf("the key's access reads %q", txt)
	}
	act := s.activity(t, w)
	if es := dashFindActivity(act, "key.created", key.ID); len(es) != 1 || es[0].Actor != "user:"+u.email || es[0].KeyName != name {
		t.Errorf("activity key.created: %+v", es)
	}

	r = s.post(t, "/settings/keys/"+key.ID+"/revoke", sess, url.Values{})
	if r.status != 303 || s.location(r) != "/settings/keys" || !strings.HasPrefix(r.flash(), "Key revoked") {
		t.Errorf("revoke: %s, flash %q", r, r.flash())
	}
	if code, body := s.rest(t, secret, "/jobs"); code != 401 {
		t.Errorf("GET /api/v1/jobs with the revoked key: %d %s, want 401", code, body)
	}
	if es := dashFindActivity(s.activity(t, w), "key.revoked", key.ID); len(es) != 1 || es[0].Actor != "user:"+u.email {
		t.Errorf("activity key.revoked: %+v", es)
	}
	if r := s.page(t, "GET", "/settings/keys", sess, nil); strings.Contains(r.body, secret[:16]) {
		t.Errorf("the revoked key is still listed")
	}

	// A date expiry lasts through that day in the workspace's zone.
	r = s.post(t, "/settings/keys", sess, url.Values{"name": {"until December"}, "type": {"report"}, "expiry": {"date"}, "date": {"2026-12-01"}})
	if r.status != 200 || len(dashAll(dashParse(t, r.body), "output", "class", "secret")) != 1 {
		t.Fatalf("create a report key with an expiry: %s", r)
	}
	for _, k := range s.adminKeys(t, w) {
		if k.Name == "until December" && (k.Type != "report" || !dashSameTime(k.ExpiresAt, time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC))) {
			t.Errorf("key until 2026-12-01: %+v expiresAt %s, want a report key ending 2026-12-02T00:00:00Z", k, dashStr(k.ExpiresAt))
		}
	}
}

// dashHTTPPause: the job page's pause form pauses until a date of the
// workspace's zone, with the note in the activity log; resume undoes it.
func dashHTTPPause(t *testing.T, s *dashServer) {
	w := s.workspace(t, "pause", dashJobs[:1])
	u := w.users["member"]
	sess := s.login(t, u)
	jid := w.jobs["Exchange nightly"]

	r := s.post(t, "/jobs/"+jid+"/pause", sess, url.Values{"until": {"1 June"}})
	if r.status != 303 || r.flash() != "!The date must be a date (YYYY-MM-DD)." {
		t.Errorf("pause with a bad date: %s, flash %q", r, r.flash())
	}
	if j := s.adminJob(t, w, jid); j.Paused {
		t.Fatalf("a bad date paused the job")
	}
	// 1 June is in summer time: midnight BST is 23:00 UTC the day before.
	r = s.post(t, "/jobs/"+jid+"/pause", sess, url.Values{"until": {"2027-06-01"}, "note": {"server being replaced"}})
	if r.status != 303 || s.location(r) != "/jobs/"+jid || r.flash() != "Monitoring paused." {
		t.Fatalf("pause: %s, flash %q", r, r.flash())
	}
	j := s.adminJob(t, w, jid)
	if !j.Paused || j.Status != "paused" || !dashSameTime(j.PausedUntil, time.Date(2027, 5, 31, 23, 0, 0, 0, time.UTC)) {
		t.Errorf("job after pause: %+v pausedUntil %s; want paused until 2027-05-31T23:00:00.000Z", j, dashStr(j.PausedUntil))
	}
	es := dashFindActivity(s.activity(t, w), "job.paused", jid)
	if len(es) != 1 || es[0].Actor != "user:"+u.email || es[0].Note != "server being replaced" {
		t.Errorf("activity job.paused: %+v", es)
	}
	doc := dashParse(t, s.page(t, "GET", "/jobs/"+jid, sess, nil).body)
	if len(dashAll(doc, "form", "action", "/jobs/"+jid+"/resume")) != 1 || len(dashAll(doc, "form", "action", "/jobs/"+jid+"/pause")) != 0 {
		t.Errorf("the paused job's page does not offer resume (and only resume)")
	}
	r = s.post(t, "/jobs/"+jid+"/resume", sess, url.Values{"note": {"done"}})
	if r.status != 303 || r.flash() != "Monitoring resumed." {
		t.Errorf("resume: %s, flash %q", r, r.flash())
	}
	if j := s.adminJob(t, w, jid); j.Paused || j.PausedUntil != nil {
		t.Errorf("job after resume: %+v", j)
	}
	if es := dashFindActivity(s.activity(t, w), "job.resumed", jid); len(es) != 1 || es[0].Actor != "user:"+u.email || es[0].Note != "done" {
		t.Errorf("activity job.resumed: %+v", es)
	}
}

const (
	dashXSSJob     = `<img src=x onerror=alert(1)>`
	dashXSSSummary = `<script>window.pwned=1</script>`
	dashXSSMailJob = `mail job "quoted" & <b>bold</b>`
)

// dashXSSWorkspace makes a workspace whose job name and alert summary are
// markup: a failed report on the job named dashXSSJob, and a report e-mail
// whose message is dashXSSSummary.
func (s *dashServer) dashXSSWorkspace(t testing.TB, slug string) *dashWS {
	t.Helper()
	w := s.workspace(t, slug, []dashJob{{dashXSSJob, "veeam", 0, "failed"}, {dashXSSMailJob, "generic", 1, ""}})
	s.mail(t, w.ingest[dashXSSMailJob], "nightly", dashXSSSummary, s.now.Add(-time.Hour))
	var found bool
	for id, a := range s.adminAlerts(t, w) {
		if a.JobID == w.jobs[dashXSSMailJob] {
			found = true
			w.alerts[dashXSSMailJob] = id
			if a.Summary != dashXSSSummary {
				t.Fatalf("the e-mail's alert has the summary %q, want %q", a.Summary, dashXSSSummary)
			}
		}
	}
	if !found {
		t.Fatalf("the report e-mail opened no alert")
	}
	return w
}

// dashHTTPEscaping: names and summaries are text on every page that shows
// them, never markup.
func dashHTTPEscaping(t *testing.T, s *dashServer) {
	w := s.dashXSSWorkspace(t, "escaping")
	sess := s.login(t, w.users["owner"])
	for _, tc := range []struct {
		path  string
		texts []string
	}{
		{"/", []string{dashXSSJob, dashXSSSummary, dashXSSMailJob}},
		{"/alerts", []string{dashXSSJob, dashXSSSummary, dashXSSMailJob}},
		{"/jobs", []string{dashXSSJob, dashXSSMailJob}},
		{"/jobs/" + w.jobs[dashXSSMailJob], []string{dashXSSSummary, dashXSSMailJob}},
		{"/jobs/" + w.jobs[dashXSSJob], []string{dashXSSJob}},
		{"/clients/" + w.clients[0], []string{dashXSSJob}},
		{"/settings/activity", []string{dashXSSJob}},
	} {
		r := s.page(t, "GET", tc.path, sess, nil)
		if r.status != 200 {
			t.Errorf("GET %s: %s", tc.path, r)
			continue
		}
		doc := dashParse(t, r.body)
		txt := dashText(doc)
		for _, want := range tc.texts {
			if !strings.Contains(txt, want) {
				t.Errorf("%s: the text does not hold %q", tc.path, want)
			}
		}
		if n := len(dashAll(doc, "img")); n != 0 {
			t.Errorf("%s: %d img elements (the job name became markup)", tc.path, n)
		}
		if n := len(dashAll(doc, "b")); n != 0 {
			t.Errorf("%s: %d b elements (the job name became markup)", tc.path, n)
		}
		dashNoInlineScript(t, tc.path, doc)
		for _, raw := range []string{"<img src=x", "<script>window", "<b>bold"} {
			if strings.Contains(r.body, raw) {
				t.Errorf("%s: the page holds %q unescaped", tc.path, raw)
			}
		}
		dashCheckPageHeaders(t, tc.path, r)
	}
}

// dashDSTWorkspace makes a workspace with the daily job "Nightly" whose
// reports came at 2026-10-24T23:30Z (00:30 BST on 25 October),
// 2026-10-25T23:30Z (23:30 GMT the same day; the day has 25 hours) and,
// failed, at 2026-10-26T23:30Z.
func (s *dashServer) dashDSTWorkspace(t testing.TB, slug string) (*dashWS, string) {
	t.Helper()
	w := s.workspace(t, slug, nil)
	jid := w.job(t, s, dashJob{"Nightly", "veeam", 0, ""}, 0)
	s.report(t, w, jid, "ok", time.Date(2026, 10, 24, 23, 30, 0, 0, time.UTC))
	s.report(t, w, jid, "ok", time.Date(2026, 10, 25, 23, 30, 0, 0, time.UTC))
	s.report(t, w, jid, "failed", time.Date(2026, 10, 26, 23, 30, 0, 0, time.UTC))
	return w, jid
}

// dashWantGrid is the day grid of the DST job: 30 days in London ending
// today, 25 October ok with both reports, 26 October failed.
func dashCheckGrid(t testing.TB, days []struct{ date, class, title string }, today time.Time) {
	t.Helper()
	if len(days) != 30 {
		t.Fatalf("the grid has %d days, want 30", len(days))
	}
	london, err := time.LoadLocation(dashTimeZone)
	if err != nil {
		t.Fatal(err)
	}
	y, m, d := today.In(london).Date()
	for i, day := range days {
		want := time.Date(y, m, d-29+i, 12, 0, 0, 0, time.UTC).Format("2006-01-02")
		if day.date != want {
			t.Errorf("grid day %d is %s, want %s (30 consecutive days ending today)", i, day.date, want)
		}
	}
	byDate := map[string]struct{ class, title string }{}
	for _, day := range days {
		byDate[day.date] = struct{ class, title string }{day.class, day.title}
	}
	for _, tc := range []struct{ date, class, title string }{
		{"2026-10-25", "d-ok", "2026-10-25: ok, 2 result(s)"},
		{"2026-10-26", "d-failed", "2026-10-26: failed, 1 result(s)"},
		{"2026-10-24", "d-none", "2026-10-24: not expected"},
		{"2026-10-27", "d-none", "2026-10-27: not expected"},
	} {
		got := byDate[tc.date]
		if !slices.Contains(strings.Fields(got.class), tc.class) || got.title != tc.title {
			t.Errorf("grid day %s: class %q title %q, want %s %q", tc.date, got.class, got.title, tc.class, tc.title)
		}
	}
}

// dashHTTPDayGrid: the job page's day grid across the end of summer time.
func dashHTTPDayGrid(t *testing.T, s *dashServer) {
	w, jid := s.dashDSTWorkspace(t, "grid")
	sess := s.login(t, w.users["viewer"])
	r := s.page(t, "GET", "/jobs/"+jid, sess, nil)
	if r.status != 200 {
		t.Fatalf("GET the job: %s", r)
	}
	doc := dashParse(t, r.body)
	grids := dashAll(doc, "ol", "class", "grid")
	if len(grids) != 1 {
		t.Fatalf("the job page has %d ol.grid", len(grids))
	}
	var days []struct{ date, class, title string }
	for _, li := range dashAll(grids[0], "li", "class", "day") {
		days = append(days, struct{ date, class, title string }{dashAttr(li, "data-date"), dashAttr(li, "class"), dashAttr(li, "title")})
	}
	dashCheckGrid(t, days, s.now)
	if !strings.Contains(dashText(doc), "Last 30 days ("+dashTimeZone+")") {
		t.Errorf("the grid does not name the zone %s", dashTimeZone)
	}
}
