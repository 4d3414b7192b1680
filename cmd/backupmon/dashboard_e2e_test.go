package main

// End-to-end tests of the dashboard in a real headless Chromium, driven
// with chromedp, against the real binary (decisions.md 11): logging in,
// triage with the bulk bar, API keys, what a viewer sees and may do,
// cross-site requests, escaping, the day grid across the end of summer
// time, themes and a phone's width (with screenshots), every form with
// JavaScript off, and the keyboard shortcuts. The whole suite shares one
// browser; each flow runs in a tab of its own, in a browser context of its
// own (its own cookies), on a workspace of its own. dashboard_http_test.go
// holds the fixture and checks the same rules without a browser.
//
// Chromium: $CHROMIUM, else /usr/bin/chromium, else chromium on the PATH;
// without one the suite skips (`make test` installs Debian's). Screenshots
// go to $BACKUPMON_ARTIFACTS, default <repository>/artifacts/.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"backupmon/internal/testserver"
)

// dashChromium returns the browser to drive, or skips the test.
func dashChromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CHROMIUM"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("CHROMIUM=%s: %v; `make test` installs Debian's chromium for the dashboard's browser tests", p, err)
		}
		return p
	}
	if fileExists("/usr/bin/chromium") {
		return "/usr/bin/chromium"
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	t.Skip("no Chromium (set CHROMIUM, or install /usr/bin/chromium): `make test` installs Debian's chromium for the dashboard's browser tests")
	return ""
}

// dashArtifacts returns the directory for screenshots, made if need be:
// $BACKUPMON_ARTIFACTS, else artifacts/ at the repository's root.
func dashArtifacts(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("BACKUPMON_ARTIFACTS")
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			t.Fatal(err)
		}
		root := wd
		for !fileExists(filepath.Join(root, "go.mod")) {
			up := filepath.Dir(root)
			if up == root {
				t.Fatalf("no go.mod above %s", wd)
			}
			root = up
		}
		dir = filepath.Join(root, "artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("artifacts directory: %v", err)
	}
	return dir
}

// TestDashboardBrowser runs the dashboard's flows in Chromium.
func TestDashboardBrowser(t *testing.T) {
	bin := dashChromium(t)
	s := dashStart(t)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	actx, acancel := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("force-color-profile", "srgb"),
		chromedp.WindowSize(1280, 900),
		chromedp.UserDataDir(t.TempDir()),
	)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}

	flows := []struct {
		name string
		noJS bool
		run  func(*dashTab)
	}{
		{"Login", false, dashE2ELogin},
		{"Triage", false, dashE2ETriage},
		{"Keys", false, dashE2EKeys},
		{"KeyFormErrorShown", false, dashE2EKeyFormError},
		{"Viewer", false, dashE2EViewer},
		{"CrossSite", false, dashE2ECrossSite},
		{"XSS", false, dashE2EXSS},
		{"DayGridDST", false, dashE2EDayGrid},
		{"ThemesAndPhone", false, dashE2EScreens},
		{"NoJavaScript", true, dashE2ENoJS},
		{"Keyboard", false, dashE2EKeyboard},
		{"SetUpAndTrends", false, dashE2ESetup}, // dashboard_setup_e2e_test.go
		{"ParsingRules", false, dashE2ERules},
		{"TechnicianDay", false, dashE2EDay}, // dashboard_day_e2e_test.go
	}
	flows = append(flows, dashRoughFlow) // dashboard_rough_e2e_test.go
	for _, f := range flows {
		t.Run(f.name, func(t *testing.T) {
			f.run(dashOpenTab(t, s, bctx, f.noJS))
		})
	}
	t.Run("People", func(t *testing.T) { dashE2EPeople(dashOpenTab(t, s, bctx, false)) }) // dashboard_people_e2e_test.go
}

// dashTab is one tab, in a browser context of its own.
type dashTab struct {
	t    *testing.T
	s    *dashServer
	ctx  context.Context
	noJS bool

	mu      sync.Mutex
	console []chromedp.ConsoleMessage // what the pages wrote to the console
}

// dashOpenTab opens a tab with its own cookies; its actions end after 40
// seconds, and it closes at the end of the test.
func dashOpenTab(t *testing.T, s *dashServer, bctx context.Context, noJS bool) *dashTab {
	t.Helper()
	tctx, cancel := chromedp.NewContext(bctx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	if err := chromedp.Do(tctx); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	fctx, fcancel := context.WithTimeout(tctx, 40*time.Second)
	t.Cleanup(fcancel)
	b := &dashTab{t: t, s: s, ctx: fctx, noJS: noJS}
	// The console: a policy violation or an uncaught exception in any page
	// of the flow fails it (checked when the flow ends, before the tab
	// closes).
	msgs := chromedp.Console(fctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.console = append(b.console, m)
			b.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, m := range b.console {
			if m.IsException() || strings.Contains(m.Text, "Content Security Policy") || strings.Contains(m.Text, "Content-Security-Policy") {
				t.Errorf("console of %s:%d: %s: %s", m.URL, m.Line+1, m.Type, m.Text)
			}
		}
	})
	if noJS {
		if _, err := chromedp.Call(fctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
			t.Fatalf("turn JavaScript off: %v", err)
		}
	}
	return b
}

func (b *dashTab) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v\n%s", what, err, b.snapshot())
	}
}

// open navigates to a dashboard path and returns the document's answer.
func (b *dashTab) open(path string) *network.Response {
	b.t.Helper()
	resp, err := chromedp.Run(b.ctx, chromedp.NavigateResponse(b.s.c.PublicURL+path))
	if err != nil || resp == nil {
		b.t.Fatalf("open %s: %v", path, err)
	}
	b.jsState()
	return resp
}

// submit clicks sel, which sends a form that loads a new page (with
// JavaScript off, or a page without htmx), and returns that page's answer.
func (b *dashTab) submit(sel string) *network.Response {
	b.t.Helper()
	resp, err := chromedp.RunResponse(b.ctx, chromedp.Click(chromedp.CSS(sel)))
	if err != nil || resp == nil {
		b.t.Fatalf("click %s: %v\n%s", sel, err, b.snapshot())
	}
	b.jsState()
	return resp
}

// jsState checks that JavaScript runs in the page exactly when the tab
// wants it: htmx is there, or not.
func (b *dashTab) jsState() {
	b.t.Helper()
	if !dashEval[bool](b, `document.querySelector('script[src*="htmx"]') !== null`) {
		return // a page without scripts
	}
	if running := dashEval[bool](b, `typeof window.htmx === 'object'`); running == b.noJS {
		b.t.Fatalf("JavaScript runs in the page: %v, want %v\n%s", running, !b.noJS, b.snapshot())
	}
}

func (b *dashTab) click(sel string) {
	b.t.Helper()
	b.do("click "+sel, chromedp.Click(chromedp.CSS(sel)))
}

func (b *dashTab) typeIn(sel, text string) {
	b.t.Helper()
	b.do("type into "+sel, chromedp.SendKeys(chromedp.CSS(sel), text))
}

// dashEval evaluates a JavaScript expression in the page.
func dashEval[T any](b *dashTab, expr string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v\n%s", expr, err, b.snapshot())
	}
	return v
}

// dashJS quotes a Go string as a JavaScript string literal.
func dashJS(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}

func (b *dashTab) count(sel string) int {
	b.t.Helper()
	return dashEval[int](b, `document.querySelectorAll(`+dashJS(sel)+`).length`)
}

func (b *dashTab) text() string {
	b.t.Helper()
	return dashEval[string](b, `document.body ? document.body.innerText : ''`)
}

func (b *dashTab) location() string {
	b.t.Helper()
	return dashEval[string](b, `location.href`)
}

// waitFor waits until expr is true in the page (across page loads).
func (b *dashTab) waitFor(what, expr string) {
	b.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	var last error
	for {
		ok, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`!!(`+expr+`)`))
		if err == nil && ok {
			return
		}
		last = err
		if time.Now().After(deadline) || b.ctx.Err() != nil {
			b.t.Fatalf("waited 10 s for %s (%s), in vain (%v)\n%s", what, expr, last, b.snapshot())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitText waits for the page's text to hold text.
func (b *dashTab) waitText(text string) {
	b.t.Helper()
	b.waitFor(fmt.Sprintf("the text %q", text), `document.body && document.body.innerText.includes(`+dashJS(text)+`)`)
}

// snapshot describes the page for a failure message.
func (b *dashTab) snapshot() string {
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`location.href + '\n' + (document.body ? document.body.innerText : '')`))
	if err != nil {
		return "(the page cannot be read: " + err.Error() + ")"
	}
	if len(v) > 1500 {
		v = v[:1500] + "…"
	}
	return "page: " + v
}

// login logs u in through the form at /login and checks that it lands on
// the attention queue.
func (b *dashTab) login(u dashUser) {
	b.t.Helper()
	b.s.advance(b.t, 60) // the logins of the suite all come from 127.0.0.1
	b.open("/login")
	b.do("fill the login form", chromedp.SendKeys(chromedp.CSS("#email"), u.email), chromedp.SendKeys(chromedp.CSS("#password"), u.password))
	resp := b.submit(`form[action="/login"] button[type=submit]`)
	if resp.Status != 200 || b.location() != b.s.c.PublicURL+"/" {
		b.t.Fatalf("log in as %s: %d at %s, want the queue at /\n%s", u.email, resp.Status, b.location(), b.snapshot())
	}
}

// session returns the value of the tab's session cookie.
func (b *dashTab) session() *network.Cookie {
	b.t.Helper()
	res, err := chromedp.Call(b.ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{b.s.c.PublicURL + "/"}})
	if err != nil {
		b.t.Fatalf("read the cookies: %v", err)
	}
	for _, c := range res.Cookies {
		if c.Name == dashCookie {
			return c
		}
	}
	return nil
}

// ---------------------------------------------------------------------------
// The flows

// loginNew makes a workspace named after slug with jobs and logs in as
// its user of role; it returns both.
func (b *dashTab) loginNew(slug string, jobs []dashJob, role string) (*dashWS, dashUser) {
	b.t.Helper()
	w := b.s.workspace(b.t, slug, jobs)
	u := w.users[role]
	b.login(u)
	return w, u
}

// dashE2ELogin: the login form, a wrong password, and the session cookie.
func dashE2ELogin(b *dashTab) {
	t, s := b.t, b.s
	w := s.workspace(t, "b-login", dashJobs)
	u := w.users["owner"]

	b.open("/")
	if got := b.location(); got != s.c.PublicURL+"/login?next=%2F" {
		t.Errorf("/ without a session went to %s, want /login?next=%%2F", got)
	}
	s.advance(t, 60)
	b.do("fill the login form", chromedp.SendKeys(chromedp.CSS("#email"), u.email), chromedp.SendKeys(chromedp.CSS("#password"), "not the password"))
	resp := b.submit(`button[type=submit]`)
	if resp.Status != 401 || !strings.Contains(b.text(), dashLoginErr) {
		t.Errorf("wrong password: status %d, page %q; want 401 %q", resp.Status, b.text(), dashLoginErr)
	}
	if v := dashEval[string](b, `document.querySelector('#email').value`); v != u.email {
		t.Errorf("after a wrong password the address reads %q, want %q", v, u.email)
	}
	if b.session() != nil {
		t.Errorf("a wrong password set a session cookie")
	}

	b.do("type the password", chromedp.SendKeys(chromedp.CSS("#password"), u.password))
	resp = b.submit(`button[type=submit]`)
	if resp.Status != 200 || b.location() != s.c.PublicURL+"/" {
		t.Fatalf("login: status %d at %s, want 200 at / (next=/)\n%s", resp.Status, b.location(), b.snapshot())
	}
	if h1 := dashEval[string](b, `document.querySelector('main h1').textContent`); h1 != "Attention" {
		t.Errorf("the page after login is %q, want the attention queue", h1)
	}
	if txt := b.text(); !strings.Contains(txt, u.name) || !strings.Contains(txt, "4 job(s) need attention") {
		t.Errorf("the queue does not show the user %q and 4 jobs needing attention:\n%s", u.name, txt)
	}
	c := b.session()
	if c == nil {
		t.Fatalf("no %s cookie in the browser", dashCookie)
	}
	if !c.HTTPOnly || !c.Secure || c.SameSite != network.CookieSameSiteLax || c.Path != "/" || c.Domain != "127.0.0.1" || c.Session {
		t.Errorf("session cookie %+v, want HttpOnly, Secure, SameSite=Lax, Path=/, host-only, persistent", *c)
	}
	if dashEval[bool](b, `document.cookie.includes('session')`) {
		t.Errorf("the page's script can read the session cookie")
	}
	// The session works on the other pages, and logout ends it.
	b.open("/settings/keys")
	if b.location() != s.c.PublicURL+"/settings/keys" {
		t.Errorf("/settings/keys with the session went to %s", b.location())
	}
	b.click(`form[action="/logout"] button`)
	b.waitFor("the login form after logout", `document.querySelector('#password')`)
	if b.session() != nil {
		t.Errorf("the session cookie is still in the browser after logout")
	}
	// The login form the logout leads to says when a password is wrong.
	boost := dashEval[string](b, `String(document.body.getAttribute('hx-boost'))`)
	s.advance(t, 60)
	b.do("fill the login form", chromedp.SendKeys(chromedp.CSS("#email"), u.email), chromedp.SendKeys(chromedp.CSS("#password"), "still not the password"))
	b.click(`button[type=submit]`)
	deadline := time.Now().Add(2 * time.Second)
	for !strings.Contains(b.text(), dashLoginErr) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(b.text(), dashLoginErr) {
		t.Errorf("a wrong password on the login form reached by \"Log out\" (JavaScript on) shows nothing: the logout answer is swapped into a <body> "+
			"that keeps hx-boost=%q, so the login form is sent by htmx, which does not swap the 401 page in\n%s", boost, b.snapshot())
	}
	b.open("/")
	if got := b.location(); got != s.c.PublicURL+"/login?next=%2F" {
		t.Errorf("/ after logout went to %s, want /login?next=%%2F", got)
	}
}

// dashE2ETriage: tick two alerts, acknowledge them with a note; tick
// another, snooze it 4 hours; the REST API and the activity log agree.
func dashE2ETriage(b *dashTab) {
	t, s := b.t, b.s
	w, u := b.loginNew("b-triage", dashJobs, "member")
	now := s.now
	a1, a2, a3 := w.alerts["Exchange nightly"], w.alerts["SQL backup"], w.alerts["NAS sync"]

	if n := b.count(`input[name=alert]`); n != 4 {
		t.Fatalf("the queue has %d alert checkboxes, want 4\n%s", n, b.snapshot())
	}
	if f := dashEval[string](b, `document.querySelector('input[name=alert]').form && document.querySelector('input[name=alert]').form.id`); f != "bulk" {
		t.Errorf("the alert checkboxes belong to form %q, want #bulk", f)
	}
	b.click(`input[name=alert][value="` + a1 + `"]`)
	b.click(`input[name=alert][value="` + a2 + `"]`)
	b.typeIn(`#bulk input[name=note]`, "vendor ticket 4711")
	b.click(`#bulk button[value=acknowledge]`)
	b.waitText("Acknowledged 2 alert(s).")

	b.click(`input[name=alert][value="` + a3 + `"]`)
	b.do("choose 4 hours", chromedp.SetValue(chromedp.CSS(`#bulk select[name=snooze]`), "4h"))
	b.typeIn(`#bulk input[name=note]`, "maintenance window")
	b.click(`#bulk button[value=snooze]`)
	b.waitText("Snoozed 1 alert(s).")
	if n := b.count(`input[name=alert][value="` + a3 + `"]`); n != 0 {
		t.Errorf("the snoozed alert is still in the queue")
	}
	if !strings.Contains(b.text(), "1 snoozed and hidden") {
		t.Errorf("the queue does not say one alert is snoozed:\n%s", b.text())
	}
	if n := b.count(`tr.dim input[name=alert]`); n != 2 {
		t.Errorf("%d acknowledged rows shown dimmed, want 2", n)
	}

	// The REST API, with a key that reads alerts only.
	var key struct{ Key string }
	s.admin(t, "POST", w.path("/keys"), map[string]any{"name": "alert reader", "type": "rest", "scopes": []string{"alerts:read"}}, 201, &key)
	got := s.restAlerts(t, key.Key)
	for _, id := range []string{a1, a2} {
		if a := got[id]; a.Status != "acknowledged" || !dashSameTime(a.AcknowledgedAt, now) || a.SnoozedUntil != nil || a.ResolvedAt != nil {
			t.Errorf("alert %s (%s): status %q acknowledgedAt %s snoozedUntil %s, want acknowledged at %s", id, a.JobName, a.Status, dashStr(a.AcknowledgedAt), dashStr(a.SnoozedUntil), testserver.TS(now))
		}
	}
	if a := got[a3]; a.Status != "snoozed" || !dashSameTime(a.SnoozedUntil, now.Add(4*time.Hour)) {
		t.Errorf("alert %s (%s): status %q snoozedUntil %s, want snoozed until %s", a3, a.JobName, a.Status, dashStr(a.SnoozedUntil), testserver.TS(now.Add(4*time.Hour)))
	}
	if a := got[w.alerts["File server"]]; a.Status != "open" {
		t.Errorf("the untouched alert is %q, want open", a.Status)
	}
	act := s.activity(t, w)
	for _, tc := range []struct{ typ, id, note string }{
		{"alert.acknowledged", a1, "vendor ticket 4711"},
		{"alert.acknowledged", a2, "vendor ticket 4711"},
		{"alert.snoozed", a3, "maintenance window"},
	} {
		es := dashFindActivity(act, tc.typ, tc.id)
		if len(es) != 1 || es[0].Actor != "user:"+u.email || es[0].Note != tc.note {
			t.Errorf("activity %s of %s: %+v, want one by user:%s with note %q", tc.typ, tc.id, es, u.email, tc.note)
		}
	}
	// The activity page shows the same.
	b.open("/settings/activity")
	if txt := b.text(); !strings.Contains(txt, "user:"+u.email) || !strings.Contains(txt, "vendor ticket 4711") || !strings.Contains(txt, "maintenance window") {
		t.Errorf("the activity page does not show the user and the notes:\n%s", txt)
	}
}

// dashE2EKeys: create a REST key with two areas on /settings/keys, use it,
// find it in the list, revoke it.
func dashE2EKeys(b *dashTab) {
	t, s := b.t, b.s
	w, u := b.loginNew("b-keys", dashJobs[:2], "admin")
	b.open("/settings/keys")
	name := "PSA sync"
	b.typeIn(`#key-name`, name)
	b.click(`input[name=expiry][value=never]`)
	b.click(`input[name=type][value=rest]`)
	b.click(`input[name=scopes][value="jobs:read"]`)
	b.click(`input[name=scopes][value="alerts:read"]`)
	b.click(`#key-form button.primary`)
	b.waitFor("the new key", `document.querySelector('output.secret')`)
	secret := strings.TrimSpace(dashEval[string](b, `document.querySelector('output.secret').textContent`))
	kid := s.checkNewKey(t, w, name, secret).ID
	row := `tr[data-row="` + kid + `"]`
	if kid == "" || b.count(row) != 1 {
		t.Fatalf("the key %q is not in the list\n%s", name, b.snapshot())
	}
	rowText := dashEval[string](b, `document.querySelector(`+dashJS(row)+`).innerText`)
	if !strings.Contains(rowText, name) || !strings.Contains(rowText, secret[:16]) || strings.Contains(rowText, secret[:17]) {
		t.Errorf("the key's row reads %q, want the name and the first 16 characters %s", rowText, secret[:16])
	}
	// Reload: the secret is never shown again.
	b.open("/settings/keys")
	if b.count(`output.secret`) != 0 || strings.Contains(dashEval[string](b, `document.documentElement.outerHTML`), secret) {
		t.Errorf("the keys page shows the secret again")
	}
	b.click(`button[aria-label="Revoke ` + name + `"]`)
	b.waitText("Key revoked")
	if b.count(row) != 0 {
		t.Errorf("the revoked key is still listed")
	}
	if code, body := s.rest(t, secret, "/jobs"); code != 401 {
		t.Errorf("GET /api/v1/jobs with the revoked key: %d %s, want 401", code, body)
	}
	act := s.activity(t, w)
	for _, typ := range []string{"key.created", "key.revoked"} {
		if es := dashFindActivity(act, typ, kid); len(es) != 1 || es[0].Actor != "user:"+u.email {
			t.Errorf("activity %s: %+v, want one by user:%s", typ, es, u.email)
		}
	}
}

// dashE2EKeyFormError: a key form the server refuses (no readable area)
// says why, with JavaScript on as without.
func dashE2EKeyFormError(b *dashTab) {
	t, s := b.t, b.s
	w, _ := b.loginNew("b-keyerr", nil, "owner")
	b.open("/settings/keys")
	b.typeIn(`#key-name`, "no areas")
	b.click(`#key-form button.primary`)
	msg := "Choose at least one readable area."
	deadline := time.Now().Add(2 * time.Second)
	for !strings.Contains(b.text(), msg) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(b.text(), msg) {
		t.Errorf("with JavaScript on, submitting the key form without a readable area shows nothing: the server answers 400 with %q, "+
			"but htmx (hx-boost on <body>) does not swap a 4xx answer in, so the page stays as it was", msg)
	}
	if n := len(s.adminKeys(t, w)); n != 2 {
		t.Errorf("the refused form made a key: %d keys", n)
	}
}

// dashE2EViewer: a viewer's pages offer no change, and a forged POST with
// the viewer's session is refused and changes nothing.
func dashE2EViewer(b *dashTab) {
	t, s := b.t, b.s
	w, _ := b.loginNew("b-viewer", dashJobs, "viewer")
	jid := w.jobs["Exchange nightly"]
	keys := s.adminKeys(t, w)

	if n := b.count(`section.group tr[data-row]`); n != 4 {
		t.Errorf("the viewer's queue has %d rows, want 4", n)
	}
	for _, sel := range []string{`form#bulk`, `input[type=checkbox]`, `button[value=acknowledge]`} {
		if n := b.count(sel); n != 0 {
			t.Errorf("the viewer's queue has %d %s", n, sel)
		}
	}
	b.open("/jobs/" + jid)
	for _, sel := range []string{`form[action$="/pause"]`, `form[action$="/resume"]`, `form#bulk`, `input[name=alert]`} {
		if n := b.count(sel); n != 0 {
			t.Errorf("the viewer's job page has %d %s", n, sel)
		}
	}
	b.open("/settings/keys")
	for _, sel := range []string{`form#key-form`, `form[action$="/revoke"]`, `button.danger`} {
		if n := b.count(sel); n != 0 {
			t.Errorf("the viewer's keys page has %d %s", n, sel)
		}
	}
	if !strings.Contains(b.text(), keys[0].Prefix) {
		t.Errorf("the viewer's keys page does not list the keys")
	}

	c := b.session()
	if c == nil {
		t.Fatalf("no session cookie in the viewer's browser")
	}
	before := s.state(t, w)
	for _, tc := range []struct {
		path string
		form url.Values
	}{
		{"/alerts/bulk", url.Values{"alert": {w.alerts["Exchange nightly"]}, "action": {"acknowledge"}, "note": {"forged"}}},
		{"/jobs/" + jid + "/pause", url.Values{"until": {"2026-12-01"}, "note": {"forged"}}},
		{"/settings/keys", url.Values{"name": {"forged"}, "type": {"rest"}, "scopes": {"jobs:read"}, "expiry": {"never"}}},
		{"/settings/keys/" + keys[0].ID + "/revoke", url.Values{}},
	} {
		r := s.post(t, tc.path, c.Value, tc.form)
		if r.status != 403 || !strings.Contains(dashVisible(r.body), dashNoRole) {
			t.Errorf("the viewer's forged POST %s: %s, want 403", tc.path, r)
		}
	}
	if after := s.state(t, w); after != before {
		t.Errorf("the viewer's forged POSTs changed the workspace:\nbefore %s\nafter %s", before, after)
	}
}

// dashE2ECrossSite: a form on another site posting to the dashboard, in
// the owner's logged-in browser, is refused; so is a forged request with
// the owner's session and another Origin.
func dashE2ECrossSite(b *dashTab) {
	t, s := b.t, b.s
	w, owner := b.loginNew("b-cross", dashJobs[:2], "owner")
	aid := w.alerts["Exchange nightly"]

	evil := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(rw, `<!doctype html><title>win a prize</title>
<form id="ack" method="post" action="%[1]s/alerts/bulk"><input type="hidden" name="alert" value="%[2]s"><input type="hidden" name="action" value="acknowledge"><input type="hidden" name="note" value="evil"><button id="go-ack">Claim</button></form>
<form id="login" method="post" action="%[1]s/login"><input type="hidden" name="email" value="%[3]s"><input type="hidden" name="password" value="%[4]s"><button id="go-login">Log in</button></form>`,
			s.c.PublicURL, aid, owner.email, owner.password)
	}))
	defer evil.Close()
	// localhost is another site than 127.0.0.1.
	evilURL := strings.Replace(evil.URL, "127.0.0.1", "localhost", 1)

	before := s.state(t, w)
	for _, button := range []string{"#go-ack", "#go-login"} {
		if _, err := chromedp.Run(b.ctx, chromedp.NavigateResponse(evilURL+"/")); err != nil {
			t.Fatalf("open the other site: %v", err)
		}
		resp := b.submit(button)
		if resp.Status != 403 || !strings.Contains(b.text(), dashNoCross) {
			t.Errorf("the other site's form %s: %d %q, want 403 %q", button, resp.Status, b.text(), dashNoCross)
		}
	}
	c := b.session()
	if c == nil {
		t.Fatalf("the owner's session cookie is gone")
	}
	for _, hdr := range [][]string{{"Origin", "http://evil.example"}, {"Sec-Fetch-Site", "cross-site"}} {
		r := s.page(t, "POST", "/alerts/bulk", c.Value, url.Values{"alert": {aid}, "action": {"acknowledge"}}, hdr...)
		if r.status != 403 {
			t.Errorf("POST /alerts/bulk with the owner's session and %s: %s, want 403", hdr, r)
		}
		r = s.page(t, "POST", "/login", "", url.Values{"email": {owner.email}, "password": {owner.password}}, hdr...)
		if r.status != 403 || r.cookie(dashCookie) != nil {
			t.Errorf("POST /login with %s: %s, want 403 and no session", hdr, r)
		}
	}
	if after := s.state(t, w); after != before {
		t.Errorf("the cross-site requests changed the workspace:\nbefore %s\nafter %s", before, after)
	}
	// The owner's own session still works on the dashboard.
	b.open("/")
	if b.location() != s.c.PublicURL+"/" || b.count(`input[name=alert][value="`+aid+`"]`) != 1 {
		t.Errorf("after the cross-site requests the owner's queue is not there\n%s", b.snapshot())
	}
}

// dashE2EXSS: a job name and an alert summary that are markup show as
// text, run nothing, and the page's policy allows no inline script.
func dashE2EXSS(b *dashTab) {
	t, s := b.t, b.s
	w := s.dashXSSWorkspace(t, "b-xss")
	var dialogs atomic.Int32
	events := chromedp.Events(b.ctx, page.JavascriptDialogOpening)
	go func() {
		for _, err := range events {
			if err != nil {
				return
			}
			dialogs.Add(1)
			chromedp.Call(b.ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		}
	}()
	b.login(w.users["member"])
	for _, path := range []string{"/", "/alerts", "/jobs/" + w.jobs[dashXSSMailJob], "/jobs/" + w.jobs[dashXSSJob]} {
		resp := b.open(path)
		var csp string
		for k, v := range resp.Headers {
			if strings.EqualFold(k, "Content-Security-Policy") {
				csp, _ = v.(string)
			}
		}
		if !strings.HasPrefix(csp, "default-src 'self'") {
			t.Errorf("%s: Content-Security-Policy %q, want one starting with default-src 'self'", path, csp)
		}
		txt := b.text()
		wants := []string{dashXSSJob, dashXSSSummary}
		switch path {
		case "/jobs/" + w.jobs[dashXSSMailJob]:
			wants = []string{dashXSSSummary, dashXSSMailJob}
		case "/jobs/" + w.jobs[dashXSSJob]:
			wants = []string{dashXSSJob}
		}
		for _, want := range wants {
			if !strings.Contains(txt, want) {
				t.Errorf("%s: the page's text does not hold %q", path, want)
			}
		}
		if n := b.count(`script:not([src])`); n != 0 {
			t.Errorf("%s: %d inline scripts", path, n)
		}
		if n := b.count(`img, b`); n != 0 {
			t.Errorf("%s: %d img or b elements made of a name", path, n)
		}
		if v := dashEval[string](b, `typeof window.pwned`); v != "undefined" {
			t.Errorf("%s: window.pwned is %s: the summary ran as script", path, v)
		}
	}
	if n := dialogs.Load(); n != 0 {
		t.Errorf("%d JavaScript dialogs opened: the job name ran as script", n)
	}
}

// dashE2EDayGrid: the job page's 30-day grid in Europe/London across the
// day summer time ended.
func dashE2EDayGrid(b *dashTab) {
	t, s := b.t, b.s
	w, jid := s.dashDSTWorkspace(t, "b-grid")
	b.login(w.users["viewer"])
	b.open("/jobs/" + jid)
	if n := b.count(`ol.grid li.day`); n != 30 {
		t.Errorf("ol.grid has %d li.day, want 30", n)
	}
	raw := dashEval[string](b, `JSON.stringify(Array.from(document.querySelectorAll('ol.grid li.day')).map(li => [li.dataset.date, li.className, li.title]))`)
	var list [][3]string
	if err := json.Unmarshal([]byte(raw), &list); err != nil {
		t.Fatalf("the grid: %v: %s", err, raw)
	}
	var days []struct{ date, class, title string }
	for _, d := range list {
		days = append(days, struct{ date, class, title string }{d[0], d[1], d[2]})
	}
	dashCheckGrid(t, days, s.now)
	if !dashEval[bool](b, `document.querySelector('li.day[data-date="2026-10-25"]').classList.contains('d-ok') && document.querySelector('li.day[data-date="2026-10-26"]').classList.contains('d-failed')`) {
		t.Errorf("li.day 2026-10-25 is not d-ok or 2026-10-26 is not d-failed")
	}
	if last := dashEval[string](b, `Array.from(document.querySelectorAll('ol.grid li.day')).pop().dataset.date`); last != "2026-11-05" {
		t.Errorf("the grid ends on %s, want today 2026-11-05", last)
	}
	// The colours differ: a failed day is not drawn as an ok one.
	ok := dashEval[string](b, `getComputedStyle(document.querySelector('li.day[data-date="2026-10-25"]')).backgroundColor`)
	bad := dashEval[string](b, `getComputedStyle(document.querySelector('li.day[data-date="2026-10-26"]')).backgroundColor`)
	if ok == bad {
		t.Errorf("ok and failed days have the same colour %s", ok)
	}
}

// dashLuminance returns the relative luminance of an element's computed
// background colour.
func (b *dashTab) luminance(sel string) (float64, string) {
	b.t.Helper()
	c := dashEval[string](b, `getComputedStyle(document.querySelector(`+dashJS(sel)+`)).backgroundColor`)
	var r, g, bl float64
	if _, err := fmt.Sscanf(c, "rgb(%f, %f, %f)", &r, &g, &bl); err != nil {
		if _, err := fmt.Sscanf(c, "rgba(%f, %f, %f", &r, &g, &bl); err != nil {
			b.t.Fatalf("background colour %q of %s", c, sel)
		}
	}
	lin := func(v float64) float64 {
		v /= 255
		if v <= 0.03928 {
			return v / 12.92
		}
		return math.Pow((v+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(r) + 0.7152*lin(g) + 0.0722*lin(bl), c
}

// screenshot saves a full-page PNG of the tab as name in the artifacts
// directory and returns its width.
func (b *dashTab) screenshot(dir, name string) int {
	b.t.Helper()
	buf, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		b.t.Fatal(err)
	}
	saved, err := os.ReadFile(path)
	if err != nil || len(saved) == 0 || !bytes.HasPrefix(saved, []byte("\x89PNG\r\n\x1a\n")) {
		b.t.Fatalf("%s: %d bytes, not a PNG (%v)", path, len(saved), err)
	}
	img, err := png.Decode(bytes.NewReader(saved))
	if err != nil {
		b.t.Fatalf("%s: %v", path, err)
	}
	b.t.Logf("screenshot %s (%dx%d)", path, img.Bounds().Dx(), img.Bounds().Dy())
	return img.Bounds().Dx()
}

// dashE2EScreens: the queue in the light theme, in the dark theme after a
// click on the theme toggle, and on a phone; screenshots of each.
func dashE2EScreens(b *dashTab) {
	t := b.t
	dir := dashArtifacts(t)
	b.loginNew("b-screens", dashJobs, "owner")
	b.do("prefer the light scheme", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "light"}}})
		return err
	}))
	b.open("/")
	if lum, c := b.luminance("body"); lum < 0.5 {
		t.Errorf("light theme: body background %s (luminance %.3f), want a light one", c, lum)
	}
	if got := b.screenshot(dir, "dashboard-queue-light.png"); got != 1280 {
		t.Errorf("the light screenshot is %d pixels wide, want 1280", got)
	}

	// The toggle cycles system → dark → light.
	if v := dashEval[string](b, `document.documentElement.dataset.theme || ''`); v != "" {
		t.Errorf("before the toggle html[data-theme] is %q, want none (the system's)", v)
	}
	b.click(`#theme-toggle`)
	b.waitFor("the toggle's answer", `document.querySelector('#theme-toggle') && document.querySelector('#theme-toggle').title.includes('dark')`)
	if v := dashEval[string](b, `document.documentElement.dataset.theme || ''`); v != "dark" {
		t.Errorf("after clicking #theme-toggle (JavaScript on) html[data-theme] is %q and the page stays light: "+
			"the POST /theme answer is swapped into <body> by htmx (hx-boost), which leaves the <html> element's data-theme as it was; "+
			"the theme applies only after a full page load", v)
	}
	b.open("/")
	if b.count(`html[data-theme=dark]`) != 1 {
		t.Fatalf("after the toggle and a reload html[data-theme=dark] is missing\n%s", b.snapshot())
	}
	if lum, c := b.luminance("body"); lum > 0.1 {
		t.Errorf("dark theme: body background %s (luminance %.3f), want a dark one", c, lum)
	}
	if got := b.screenshot(dir, "dashboard-queue-dark.png"); got != 1280 {
		t.Errorf("the dark screenshot is %d pixels wide, want 1280", got)
	}
	b.click(`#theme-toggle`)
	b.waitFor("the second toggle's answer", `document.querySelector('#theme-toggle').title.includes('light')`)
	b.open("/")
	if v := dashEval[string](b, `document.documentElement.dataset.theme || ''`); v != "light" {
		t.Errorf("after the second toggle html[data-theme] is %q, want light", v)
	}

	// A phone.
	b.do("emulate a phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateTouch))
	b.open("/")
	if sw := dashEval[int](b, `document.documentElement.scrollWidth`); sw > 390 {
		t.Errorf("on a 390 px phone the queue is %d px wide: it scrolls sideways", sw)
	}
	if got := b.screenshot(dir, "dashboard-queue-phone.png"); got != 390 {
		t.Errorf("the phone screenshot is %d pixels wide, want 390", got)
	}
}

// dashE2ENoJS: with JavaScript off every action is a plain form: log in,
// acknowledge, pause a job until a date with a reason, create and revoke a
// key.
func dashE2ENoJS(b *dashTab) {
	t, s := b.t, b.s
	w, u := b.loginNew("b-nojs", dashJobs, "owner")
	aid, jid := w.alerts["SQL backup"], w.jobs["NAS sync"]

	b.click(`input[name=alert][value="` + aid + `"]`)
	b.typeIn(`#bulk input[name=note]`, "no script needed")
	resp := b.submit(`#bulk button[value=acknowledge]`)
	if resp.Status != 200 || b.location() != s.c.PublicURL+"/" || !strings.Contains(b.text(), "Acknowledged 1 alert(s).") {
		t.Errorf("acknowledge without JavaScript: %d at %s\n%s", resp.Status, b.location(), b.snapshot())
	}
	if a := s.adminAlerts(t, w)[aid]; a.Status != "acknowledged" {
		t.Errorf("the alert is %q after the form, want acknowledged", a.Status)
	}
	if es := dashFindActivity(s.activity(t, w), "alert.acknowledged", aid); len(es) != 1 || es[0].Actor != "user:"+u.email || es[0].Note != "no script needed" {
		t.Errorf("activity alert.acknowledged: %+v", es)
	}

	b.open("/jobs/" + jid)
	b.do("choose the date", chromedp.SetAttributeValue(chromedp.CSS(`form[action$="/pause"] input[name=until]`), "value", "2026-11-20"))
	b.typeIn(`form[action$="/pause"] input[name=note]`, "server being replaced")
	resp = b.submit(`form[action$="/pause"] button`)
	if resp.Status != 200 || b.location() != s.c.PublicURL+"/jobs/"+jid || !strings.Contains(b.text(), "Monitoring paused.") {
		t.Errorf("pause without JavaScript: %d at %s\n%s", resp.Status, b.location(), b.snapshot())
	}
	if b.count(`form[action$="/resume"]`) != 1 {
		t.Errorf("the paused job's page offers no resume form")
	}
	j := s.adminJob(t, w, jid)
	if !j.Paused || j.Status != "paused" || !dashSameTime(j.PausedUntil, time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("the job after the form: %+v pausedUntil %s, want paused until 2026-11-20T00:00:00.000Z", j, dashStr(j.PausedUntil))
	}
	if es := dashFindActivity(s.activity(t, w), "job.paused", jid); len(es) != 1 || es[0].Actor != "user:"+u.email || es[0].Note != "server being replaced" {
		t.Errorf("activity job.paused: %+v", es)
	}

	b.open("/settings/keys")
	b.typeIn(`#key-name`, "no-js key")
	b.click(`input[name=scopes][value="health:read"]`)
	resp = b.submit(`#key-form button.primary`)
	secret := ""
	if b.count(`output.secret`) == 1 {
		secret = strings.TrimSpace(dashEval[string](b, `document.querySelector('output.secret').textContent`))
	}
	if resp.Status != 200 || !testserver.SecretRe.MatchString(secret) {
		t.Fatalf("create a key without JavaScript: %d, secret %q\n%s", resp.Status, secret, b.snapshot())
	}
	if code, body := s.rest(t, secret, "/health"); code != 200 {
		t.Errorf("GET /api/v1/health with the new key: %d %s", code, body)
	}
	resp = b.submit(`button[aria-label="Revoke no-js key"]`)
	if resp.Status != 200 || b.location() != s.c.PublicURL+"/settings/keys" || !strings.Contains(b.text(), "Key revoked") {
		t.Errorf("revoke without JavaScript: %d at %s\n%s", resp.Status, b.location(), b.snapshot())
	}
	if code, body := s.rest(t, secret, "/health"); code != 401 {
		t.Errorf("GET /api/v1/health with the revoked key: %d %s, want 401", code, body)
	}
}

// dashE2EKeyboard: j moves the cursor, x ticks the row's box, a
// acknowledges the ticked alerts, ? opens the shortcuts.
func dashE2EKeyboard(b *dashTab) {
	t, s := b.t, b.s
	w, _ := b.loginNew("b-keys-kb", dashJobs, "member")
	if n := b.count(`[data-row]`); n != 4 {
		t.Fatalf("the queue has %d rows, want 4", n)
	}
	b.do("press j j x", chromedp.KeyEvent("j"), chromedp.KeyEvent("j"), chromedp.KeyEvent("x"))
	if !dashEval[bool](b, `document.querySelectorAll('[data-row]')[1].classList.contains('current')`) {
		t.Errorf("after j j the cursor is not on the second row")
	}
	second := dashEval[string](b, `document.querySelectorAll('[data-row]')[1].querySelector('input[name=alert]').value`)
	checked := dashEval[string](b, `Array.from(document.querySelectorAll('input[name=alert]:checked')).map(c => c.value).join(',')`)
	if checked != second {
		t.Errorf("after j j x the ticked boxes are %q, want the second row's %q", checked, second)
	}
	b.do("press ?", chromedp.KeyEvent("?"))
	if !dashEval[bool](b, `document.querySelector('dialog#shortcuts').open`) {
		t.Errorf("? did not open dialog#shortcuts")
	}
	b.do("press Escape", chromedp.KeyEvent(kb.Escape))
	b.waitFor("the dialog to close", `!document.querySelector('dialog#shortcuts').open`)
	b.do("press a", chromedp.KeyEvent("a"))
	b.waitText("Acknowledged 1 alert(s).")
	if a := s.adminAlerts(t, w)[second]; a.Status != "acknowledged" {
		t.Errorf("the alert ticked with x is %q after a, want acknowledged", a.Status)
	}
	open := 0
	for _, a := range s.adminAlerts(t, w) {
		if a.Status == "open" {
			open++
		}
	}
	if open != 3 {
		t.Errorf("%d alerts open after acknowledging one of four", open)
	}
}
