package main

// The admin CLI (`backupmon admin ...`, decisions.md 1) against a real
// engine and transport started in the test, and the flags of `serve`.
// Every name here starts with "cli" so that other test files of the package
// cannot collide with it.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"backupmon/engine"
	"backupmon/internal/testserver"
	"backupmon/mailstore"
	"backupmon/smtpin"
	"backupmon/transport"
)

// cliServer is testserver's in-process server with a mail store whose
// unreadable e-mails the admin API re-reads.
type cliServer struct {
	*testserver.Server
	store *mailstore.Store
}

// startCLIServer opens an engine on dir with a development clock at start
// and serves it; it stops at the end of the test.
func startCLIServer(t *testing.T, dir string, start time.Time) *cliServer {
	t.Helper()
	store, err := mailstore.Open(filepath.Join(dir, "mail"))
	if err != nil {
		t.Fatal(err)
	}
	s := &cliServer{store: store}
	s.Server = testserver.Start(t, testserver.Options{Dir: dir, Start: start, Configure: func(cfg *transport.Config, eng *engine.Engine) {
		cfg.Rules = smtpin.RulesFor(eng, store)
		cfg.Reparse = func(wsID, id string) (engine.MailReply, error) {
			return smtpin.Reparse(eng, store, smtpin.Suggestions, wsID, id)
		}
	}})
	return s
}

// cliResult is what one CLI run gave.
type cliResult struct {
	code           int
	stdout, stderr string
	json           map[string]any // stdout decoded, when it is JSON
}

func (r cliResult) data() map[string]any {
	d, _ := r.json["data"].(map[string]any)
	return d
}

func (r cliResult) list() []map[string]any { return testserver.Objects(r.json["data"]) }

// cliRan records which subcommands the tests ran (group + " " + verb).
var cliRan = map[string]bool{}

// cliRunRaw runs adminCLI with args exactly as given.
func cliRunRaw(t *testing.T, args ...string) cliResult {
	t.Helper()
	var out, errb bytes.Buffer
	code := adminCLI(args, &out, &errb)
	r := cliResult{code: code, stdout: out.String(), stderr: errb.String()}
	if strings.TrimSpace(r.stdout) != "" {
		if err := json.Unmarshal(out.Bytes(), &r.json); err != nil {
			r.json = nil
		}
	}
	if len(args) >= 2 && code != 2 {
		cliRan[args[0]+" "+args[1]] = true
	}
	return r
}

// cli runs `backupmon admin <group> <verb> --admin-url U --admin-token T
// args...` against s.
func (s *cliServer) cli(t *testing.T, group, verb string, args ...string) cliResult {
	t.Helper()
	return cliRunRaw(t, append([]string{group, verb, "--admin-url", s.AdminURL, "--admin-token", testserver.AdminToken}, args...)...)
}

// must runs a subcommand and requires exit 0 and JSON on stdout (unless
// the answer has no body).
func (s *cliServer) must(t *testing.T, group, verb string, args ...string) cliResult {
	t.Helper()
	r := s.cli(t, group, verb, args...)
	if r.code != 0 {
		t.Fatalf("admin %s %s %v: exit %d\nstdout %s\nstderr %s", group, verb, args, r.code, r.stdout, r.stderr)
	}
	if r.stdout != "" && r.json == nil {
		t.Fatalf("admin %s %s: stdout is not JSON: %q", group, verb, r.stdout)
	}
	return r
}

// cliWantError checks an error answer: exit 1, the error JSON on stdout,
// the status on stderr.
func cliWantError(t *testing.T, what string, r cliResult, status int, code string) {
	t.Helper()
	if r.code != 1 {
		t.Errorf("%s: exit %d, want 1 (stdout %s, stderr %s)", what, r.code, r.stdout, r.stderr)
		return
	}
	e, _ := r.json["error"].(map[string]any)
	if e == nil || e["code"] != code {
		t.Errorf("%s: stdout %q, want an error %s", what, r.stdout, code)
	}
	if !strings.Contains(r.stderr, fmt.Sprint(status)) {
		t.Errorf("%s: stderr %q does not give the status %d", what, r.stderr, status)
	}
}

// cliUnsetEnv removes BACKUPMON_* variables for the test (restored after).
func cliUnsetEnv(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		t.Setenv(n, "")
		os.Unsetenv(n)
	}
}

func cliStrings(v any) []string {
	raw, _ := v.([]any)
	out := make([]string, 0, len(raw))
	for _, s := range raw {
		str, _ := s.(string)
		out = append(out, str)
	}
	return out
}

func TestCLISubcommands(t *testing.T) {
	cliUnsetEnv(t, "BACKUPMON_ADMIN_URL", "BACKUPMON_ADMIN_TOKEN")
	s := startCLIServer(t, t.TempDir(), testserver.T0)

	// workspace create / list / get / update.
	r := s.must(t, "workspace", "create", "--name", "Acme", "--plan", "pro", "--time-zone", "Europe/Berlin")
	ws := r.data()
	if ws["name"] != "Acme" || ws["plan"] != "pro" || ws["timeZone"] != "Europe/Berlin" || ws["status"] != "active" || ws["createdAt"] != testserver.TS(testserver.T0) {
		t.Errorf("workspace create: %v", ws)
	}
	if !strings.HasPrefix(r.stdout, "{\n  \"data\": {") || r.stderr != "" {
		t.Errorf("workspace create printed %q / %q", r.stdout, r.stderr)
	}
	wid := ws["id"].(string)
	trial := s.must(t, "workspace", "create", "--name", "Trial Co", "--plan", "trial", "--status", "suspended", "--trial-ends-at", "2026-04-01T00:00:00Z").data()
	if trial["trialEndsAt"] != "2026-04-01T00:00:00.000Z" || trial["status"] != "suspended" {
		t.Errorf("trial workspace: %v", trial)
	}
	if l := s.must(t, "workspace", "list").list(); len(l) != 2 || l[0]["id"] != wid {
		t.Errorf("workspace list: %v", l)
	}
	if g := s.must(t, "workspace", "get", "--workspace", wid).data(); g["id"] != wid || g["name"] != "Acme" {
		t.Errorf("workspace get: %v", g)
	}
	if u := s.must(t, "workspace", "update", "--workspace", trial["id"].(string), "--trial-ends-at", "null", "--name", "Trial Two").data(); u["trialEndsAt"] != nil || u["name"] != "Trial Two" {
		t.Errorf("workspace update with null: %v", u)
	}

	// client create / list / update.
	c := s.must(t, "client", "create", "--workspace", wid, "--name", "Globex", "--status", "paused").data()
	if c["name"] != "Globex" || c["status"] != "paused" {
		t.Errorf("client create: %v", c)
	}
	cid := c["id"].(string)
	if u := s.must(t, "client", "update", "--workspace", wid, "--client", cid, "--status", "active", "--name", "Globex Corp").data(); u["status"] != "active" || u["name"] != "Globex Corp" {
		t.Errorf("client update: %v", u)
	}
	if l := s.must(t, "client", "list", "--workspace", wid).list(); len(l) != 1 || l[0]["id"] != cid {
		t.Errorf("client list: %v", l)
	}

	// job create (every field flag, a list flag) / list / get / update / delete.
	j := s.must(t, "job", "create", "--workspace", wid, "--client-id", cid, "--name", "Nightly", "--vendor", "veeam",
		"--device-name", "File server", "--device-type", "server", "--hostname", "fs01",
		"--interval-minutes", "1440", "--expected-days", "mon,fri", "--grace-minutes", "30", "--sla-target", "99.5").data()
	sched, _ := j["schedule"].(map[string]any)
	dev, _ := j["device"].(map[string]any)
	sla, _ := j["sla"].(map[string]any)
	if j["name"] != "Nightly" || j["vendor"] != "veeam" || j["clientId"] != cid || dev["name"] != "File server" || dev["type"] != "server" ||
		dev["hostname"] != "fs01" || sched["intervalMinutes"] != float64(1440) || !slices.Equal(cliStrings(sched["expectedDays"]), []string{"mon", "fri"}) ||
		sched["graceMinutes"] != float64(30) || sla["target"] != 99.5 || sched["nextExpectedAt"] != testserver.TS(testserver.T0.Add(48*time.Hour)) {
		t.Errorf("job create: %v", j)
	}
	jid := j["id"].(string)
	if l := s.must(t, "job", "list", "--workspace", wid).list(); len(l) != 1 || l[0]["id"] != jid {
		t.Errorf("job list: %v", l)
	}
	u := s.must(t, "job", "update", "--workspace", wid, "--job", jid, "--interval-minutes", "60", "--expected-days", "mon,tue,wed,thu,fri,sat,sun").data()
	if sched, _ := u["schedule"].(map[string]any); sched["intervalMinutes"] != float64(60) || sched["graceMinutes"] != float64(30) || sched["nextExpectedAt"] != testserver.TS(testserver.T0.Add(time.Hour)) {
		t.Errorf("job update schedule: %v", u["schedule"])
	}
	if u := s.must(t, "job", "update", "--workspace", wid, "--job", jid, "--paused", "true").data(); u["paused"] != true || u["status"] != "paused" {
		t.Errorf("job update --paused true: %v", u)
	}
	if u := s.must(t, "job", "update", "--workspace", wid, "--job", jid, "--paused", "false").data(); u["paused"] != false || u["status"] != "waiting" {
		t.Errorf("job update --paused false: %v", u)
	}
	until := testserver.T0.Add(5 * time.Hour)
	if u := s.must(t, "job", "update", "--workspace", wid, "--job", jid, "--paused-until", until.Format(time.RFC3339)).data(); u["pausedUntil"] != testserver.TS(until) {
		t.Errorf("job update --paused-until: %v", u)
	}
	if u := s.must(t, "job", "update", "--workspace", wid, "--job", jid, "--paused", "false", "--name", "Nightly FS", "--sla-target", "90").data(); u["paused"] != false || u["name"] != "Nightly FS" {
		t.Errorf("job update resume and rename: %v", u)
	}

	// key create (rest with a list of scopes, report) / list / revoke.
	k := s.must(t, "key", "create", "--workspace", wid, "--name", "psa", "--type", "rest", "--scopes", "jobs:read,alerts:read").data()
	scopes := cliStrings(k["scopes"])
	slices.Sort(scopes)
	if k["type"] != "rest" || !slices.Equal(scopes, []string{"alerts:read", "jobs:read", "workspace:read"}) {
		t.Errorf("key create rest: %v", k)
	}
	if !testserver.SecretRe.MatchString(fmt.Sprint(k["key"])) {
		t.Errorf("key secret %v", k["key"])
	}
	rk := s.must(t, "key", "create", "--workspace", wid, "--name", "agent", "--type", "report", "--expires-at", "2027-01-01T00:00:00Z").data()
	if rk["expiresAt"] != "2027-01-01T00:00:00.000Z" {
		t.Errorf("key create report: %v", rk)
	}
	ak := s.must(t, "key", "create", "--workspace", wid, "--name", "bot", "--type", "assistant", "--access", "read-write").data()
	if ak["access"] != "read-write" {
		t.Errorf("key create assistant: %v", ak)
	}
	kl := s.must(t, "key", "list", "--workspace", wid)
	if len(kl.list()) != 3 || strings.Contains(kl.stdout, k["key"].(string)) || strings.Contains(kl.stdout, `"key"`) {
		t.Errorf("key list: %s", kl.stdout)
	}
	if r := s.must(t, "key", "revoke", "--workspace", wid, "--key", ak["id"].(string)); r.stdout != "" {
		t.Errorf("key revoke printed %q", r.stdout)
	}
	if l := s.must(t, "key", "list", "--workspace", wid).list(); len(l) != 2 {
		t.Errorf("keys after revoke: %v", l)
	}

	// A failed report opens an alert: alert list / acknowledge / snooze / resolve.
	s.MustReport(jid, rk["key"].(string), `{"status":"failed"}`)
	al := s.must(t, "alert", "list", "--workspace", wid).list()
	if len(al) != 1 || al[0]["status"] != "open" || al[0]["jobId"] != jid {
		t.Fatalf("alert list: %v", al)
	}
	aid := al[0]["id"].(string)
	if a := s.must(t, "alert", "acknowledge", "--workspace", wid, "--alert", aid, "--note", "on it").data(); a["status"] != "acknowledged" {
		t.Errorf("alert acknowledge: %v", a)
	}
	if a := s.must(t, "alert", "snooze", "--workspace", wid, "--alert", aid, "--until", "2026-03-05T10:00:00Z").data(); a["status"] != "snoozed" || a["snoozedUntil"] != "2026-03-05T10:00:00.000Z" {
		t.Errorf("alert snooze: %v", a)
	}
	// clock set: advance, then set.
	if c := s.must(t, "clock", "set", "--advance-seconds", "3600").data(); c["now"] != testserver.TS(testserver.T0.Add(time.Hour)) {
		t.Errorf("clock set --advance-seconds: %v", c)
	}
	if c := s.must(t, "clock", "set", "--set", "2026-03-04T12:00:00+01:00").data(); c["now"] != testserver.TS(testserver.T0.Add(time.Hour)) {
		t.Errorf("clock set --set: %v", c)
	}
	if c := s.must(t, "clock", "set", "--set", "2026-03-04T12:00:00Z", "--advance-seconds", "7").data(); c["now"] != testserver.TS(testserver.T0.Add(2*time.Hour+7*time.Second)) {
		t.Errorf("clock set --set --advance-seconds: %v", c)
	}
	if a := s.must(t, "alert", "resolve", "--workspace", wid, "--alert", aid, "--note", "fixed").data(); a["status"] != "resolved" || a["recoverySeconds"] != float64(2*3600+7) {
		t.Errorf("alert resolve: %v", a)
	}
	// activity list: newest first.
	acts := s.must(t, "activity", "list", "--workspace", wid).list()
	var types []string
	for _, a := range acts {
		types = append(types, fmt.Sprint(a["type"]))
	}
	want := []string{"alert.resolved", "alert.snoozed", "alert.acknowledged", "key.revoked", "key.created", "key.created", "key.created",
		"job.updated", "job.paused", "job.resumed", "job.paused", "job.updated", "job.created", "client.resumed", "client.created"}
	if !slices.Equal(types, want) {
		t.Errorf("activity list: %v, want %v", types, want)
	}
	if acts[0]["note"] != "fixed" || acts[2]["note"] != "on it" {
		t.Errorf("notes in the activity: %v", acts[:3])
	}

	// job get with --limit (a query parameter), then job delete.
	s.must(t, "clock", "set", "--advance-seconds", "60")
	s.MustReport(jid, rk["key"].(string), `{"status":"ok"}`)
	g := s.must(t, "job", "get", "--workspace", wid, "--job", jid, "--limit", "1").data()
	if h, _ := g["history"].([]any); len(h) != 1 || g["id"] != jid {
		t.Errorf("job get --limit 1: %v", g)
	}
	if g := s.must(t, "job", "get", "--workspace", wid, "--job", jid).data(); len(g["history"].([]any)) != 2 {
		t.Errorf("job get: %v", g)
	}
	cliWantError(t, "job get --limit 0", s.cli(t, "job", "get", "--workspace", wid, "--job", jid, "--limit", "0"), 400, "INVALID_REQUEST")
	if r := s.must(t, "job", "delete", "--workspace", wid, "--job", jid); r.stdout != "" {
		t.Errorf("job delete printed %q", r.stdout)
	}
	cliWantError(t, "job get after delete", s.cli(t, "job", "get", "--workspace", wid, "--job", jid), 404, "NOT_FOUND")

	// channel create / list / delete, escalation create / list / delete,
	// delivery list.
	ch := s.must(t, "channel", "create", "--workspace", wid, "--type", "webhook", "--name", "ops", "--url", "https://hooks.example.com/x", "--min-severity", "critical").data()
	if ch["type"] != "webhook" || ch["name"] != "ops" || ch["url"] != "https://hooks.example.com/x" || ch["minSeverity"] != "critical" || !strings.HasPrefix(fmt.Sprint(ch["secret"]), "whsec_") {
		t.Errorf("channel create: %v", ch)
	}
	chid := ch["id"].(string)
	if m := s.must(t, "channel", "create", "--workspace", wid, "--type", "email", "--name", "mail", "--to", "ops@example.com").data(); m["to"] != "ops@example.com" || m["minSeverity"] != "warning" {
		t.Errorf("channel create email: %v", m)
	}
	if l := s.must(t, "channel", "list", "--workspace", wid); len(l.list()) != 2 || strings.Contains(l.stdout, "whsec_") {
		t.Errorf("channel list: %s", l.stdout)
	}
	esc := s.must(t, "escalation", "create", "--workspace", wid, "--channel-id", chid, "--after-minutes", "15").data()
	if esc["channelId"] != chid || esc["afterMinutes"] != float64(15) {
		t.Errorf("escalation create: %v", esc)
	}
	if l := s.must(t, "escalation", "list", "--workspace", wid).list(); len(l) != 1 || l[0]["id"] != esc["id"] {
		t.Errorf("escalation list: %v", l)
	}
	s.must(t, "escalation", "delete", "--workspace", wid, "--escalation", esc["id"].(string))
	s.must(t, "channel", "delete", "--workspace", wid, "--channel", chid)
	if l := s.must(t, "channel", "list", "--workspace", wid).list(); len(l) != 1 || l[0]["name"] != "mail" {
		t.Errorf("channel list after delete: %v", l)
	}
	if r := s.must(t, "delivery", "list", "--workspace", wid); r.json == nil || len(r.list()) != 0 {
		t.Errorf("delivery list: %s", r.stdout)
	}
	psaCLI(t, s, wid, cid) // the PSA channels' subcommands (psa_cli_test.go)

	// job rotate-ingest-address; unparsed list / reparse / delete, with
	// two unreadable e-mails put in as the SMTP listener would.
	mj := s.must(t, "job", "create", "--workspace", wid, "--client-id", cid, "--name", "Dump", "--vendor", "veeam",
		"--device-name", "DB", "--device-type", "database", "--hostname", "db01", "--interval-minutes", "1440").data()
	mjid, oldAddr := mj["id"].(string), mj["ingestAddress"].(string)
	rot := s.must(t, "job", "rotate-ingest-address", "--workspace", wid, "--job", mjid).data()
	addr, _ := rot["ingestAddress"].(string)
	if addr == "" || addr == oldAddr || rot["id"] != mjid {
		t.Errorf("job rotate-ingest-address: %v (was %s)", rot, oldAddr)
	}
	token := addr[:strings.IndexByte(addr, '@')]
	raw := []byte("Subject: dump done\r\nMessage-ID: <d1@db01>\r\n\r\nJob: Dump\r\nStatus: OK\r\n")
	for _, id := range []string{"d1", "d2"} {
		ref, err := s.store.Put(raw)
		if err != nil {
			t.Fatal(err)
		}
		if r := s.Eng.Mail(token, &engine.MailInput{MessageID: id, Reason: "not a Veeam report", RawRef: ref, Size: int64(len(raw))}); r.Outcome != engine.MailKeptUnparsed {
			t.Fatalf("unreadable mail: %+v", r)
		}
	}
	ul := s.must(t, "unparsed", "list", "--workspace", wid).list()
	if len(ul) != 2 || ul[0]["messageId"] != "d2" || ul[0]["reason"] != "not a Veeam report" {
		t.Fatalf("unparsed list: %v", ul)
	}
	cliWantError(t, "unparsed reparse, still unreadable", s.cli(t, "unparsed", "reparse", "--workspace", wid, "--unparsed", ul[0]["id"].(string)), 409, "CONFLICT")
	s.must(t, "job", "update", "--workspace", wid, "--job", mjid, "--vendor", "generic")
	if r := s.must(t, "unparsed", "reparse", "--workspace", wid, "--unparsed", ul[0]["id"].(string)).data(); r["status"] != "ok" || r["resultId"] == nil {
		t.Errorf("unparsed reparse: %v", r)
	}
	s.must(t, "unparsed", "delete", "--workspace", wid, "--unparsed", ul[1]["id"].(string))
	if l := s.must(t, "unparsed", "list", "--workspace", wid).list(); len(l) != 0 {
		t.Errorf("unparsed list after reparse and delete: %v", l)
	}
	cliWantError(t, "unparsed delete, gone", s.cli(t, "unparsed", "delete", "--workspace", wid, "--unparsed", ul[1]["id"].(string)), 404, "NOT_FOUND")

	// Parsing rules: made, tried on a kept mail, listed, changed,
	// ordered, used to re-read the mail, deleted.
	cjob := s.must(t, "job", "create", "--workspace", wid, "--client-id", cid, "--name", "Nightly dump", "--vendor", "custom",
		"--device-name", "db", "--device-type", "database", "--hostname", "db02", "--interval-minutes", "1440").data()
	caddr := cjob["ingestAddress"].(string)
	cref, err := s.store.Put([]byte("Subject: nightly dump\r\nMessage-ID: <c1@db02>\r\n\r\nDump result: done\r\nSize: 12 MB\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	if r := s.Eng.Mail(caddr[:strings.IndexByte(caddr, '@')], &engine.MailInput{MessageID: "c1", Reason: "no parsing rule of the workspace matches the mail", RawRef: cref}); r.Outcome != engine.MailKeptUnparsed {
		t.Fatalf("custom job's mail: %+v", r)
	}
	cu := s.must(t, "unparsed", "list", "--workspace", wid).list()[0]["id"].(string)
	ruleJSON := `{"name":"dump","match":{"subject":{"contains":"nightly dump"}},"status":{"in":{"after":"Dump result"},"ok":["done"],"failed":["failed"]},"size":{"after":"Size"}}`
	cliWantError(t, "rule create, bad regexp", s.cli(t, "rule", "create", "--workspace", wid, "--body", `{"name":"x","match":{"body":{"regexp":"(a"}},"status":{"ok":["ok"],"failed":["f"]}}`), 400, "INVALID_REQUEST")
	tried := s.must(t, "rule", "try", "--workspace", wid, "--body", `{"rule":`+ruleJSON+`,"unparsedId":"`+cu+`"}`).data()
	if tried["matched"] != true || tried["result"].(map[string]any)["sizeBytes"] != float64(12<<20) {
		t.Errorf("rule try: %v", tried)
	}
	rule := s.must(t, "rule", "create", "--workspace", wid, "--body", ruleJSON).data()
	rid := rule["id"].(string)
	rule2 := s.must(t, "rule", "create", "--workspace", wid, "--body", `{"name":"other","match":{"from":{"contains":"nobody"}},"status":{"ok":["ok"],"failed":["f"]}}`).data()
	if g := s.must(t, "rule", "update", "--workspace", wid, "--rule", rid, "--body", strings.Replace(ruleJSON, `"dump"`, `"dump v2"`, 1)).data(); g["name"] != "dump v2" || g["position"] != float64(1) {
		t.Errorf("rule update: %v", g)
	}
	if l := s.must(t, "rule", "order", "--workspace", wid, "--ids", rule2["id"].(string)+","+rid).list(); len(l) != 2 || l[0]["id"] != rule2["id"] {
		t.Errorf("rule order: %v", l)
	}
	if g := s.must(t, "rule", "get", "--workspace", wid, "--rule", rid).data(); g["position"] != float64(2) {
		t.Errorf("rule get: %v", g)
	}
	if l := s.must(t, "rule", "list", "--workspace", wid).list(); len(l) != 2 {
		t.Errorf("rule list: %v", l)
	}
	if r := s.must(t, "rule", "reread", "--workspace", wid, "--rule", rid).data(); len(r["reread"].([]any)) != 1 {
		t.Errorf("rule reread: %v", r)
	}
	s.must(t, "rule", "delete", "--workspace", wid, "--rule", rid)
	cliWantError(t, "rule get, deleted", s.cli(t, "rule", "get", "--workspace", wid, "--rule", rid), 404, "NOT_FOUND")

	// The model's prompt: the default until set, back to it with "".
	if g := s.must(t, "ai-prompt", "get", "--workspace", wid).data(); g["default"] != true || !strings.Contains(g["prompt"].(string), "untrusted") {
		t.Errorf("ai-prompt get: %v", g)
	}
	if g := s.must(t, "ai-prompt", "set", "--workspace", wid, "--prompt", "Be brief.").data(); g["prompt"] != "Be brief." || g["default"] != false {
		t.Errorf("ai-prompt set: %v", g)
	}
	cliWantError(t, "ai-prompt set, too long", s.cli(t, "ai-prompt", "set", "--workspace", wid, "--prompt", strings.Repeat("x", 4001)), 400, "INVALID_REQUEST")

	// Dashboard users: the password is hashed, never shown.
	usr := s.must(t, "user", "create", "--workspace", wid, "--email", "Ann@Example.test", "--name", "Ann", "--role", "owner", "--password", "correct horse battery").data()
	if usr["email"] != "ann@example.test" || usr["role"] != "owner" || usr["password"] != nil || len(usr) != 5 {
		t.Errorf("user create: %v", usr)
	}
	uid := usr["id"].(string)
	cliWantError(t, "user create, short password", s.cli(t, "user", "create", "--workspace", wid, "--email", "b@example.test", "--name", "B", "--role", "viewer", "--password", "short"), 400, "INVALID_REQUEST")
	if g := s.must(t, "user", "update", "--workspace", wid, "--user", uid, "--name", "Ann B").data(); g["name"] != "Ann B" {
		t.Errorf("user update: %v", g)
	}
	if g := s.must(t, "user", "get", "--workspace", wid, "--user", uid).data(); g["name"] != "Ann B" || g["email"] != "ann@example.test" {
		t.Errorf("user get: %v", g)
	}
	if l := s.must(t, "user", "list", "--workspace", wid).list(); len(l) != 1 || l[0]["id"] != uid {
		t.Errorf("user list: %v", l)
	}
	cliWantError(t, "user delete, last owner", s.cli(t, "user", "delete", "--workspace", wid, "--user", uid), 409, "CONFLICT")
	cliWantError(t, "user update, last owner demoted", s.cli(t, "user", "update", "--workspace", wid, "--user", uid, "--role", "member"), 409, "CONFLICT")
	s.must(t, "user", "create", "--workspace", wid, "--email", "c@example.test", "--name", "C", "--role", "owner", "--password", "another good one")
	s.must(t, "user", "delete", "--workspace", wid, "--user", uid)
	cliWantError(t, "user get, deleted", s.cli(t, "user", "get", "--workspace", wid, "--user", uid), 404, "NOT_FOUND")

	// A single node is no cluster: its status is 404, whichever way asked.
	cliWantError(t, "cluster status on a single node", s.cli(t, "cluster", "status"), 404, "NOT_FOUND")
	cliWantError(t, "admin cluster on a single node", cliRunRaw(t, "cluster", "--admin-url", s.AdminURL, "--admin-token", testserver.AdminToken), 404, "NOT_FOUND")

	// Every subcommand ran.
	for _, c := range cliCommands {
		if !cliRan[c.group+" "+c.verb] {
			t.Errorf("subcommand %s %s was not run", c.group, c.verb)
		}
	}
}

func TestCLIBodyNullAndErrors(t *testing.T) {
	cliUnsetEnv(t, "BACKUPMON_ADMIN_URL", "BACKUPMON_ADMIN_TOKEN")
	s := startCLIServer(t, t.TempDir(), testserver.T0)
	wid := s.must(t, "workspace", "create", "--body", `{"name":"Raw","plan":"growth","timeZone":"Asia/Tokyo"}`).data()["id"].(string)
	if g := s.must(t, "workspace", "get", "--workspace", wid).data(); g["name"] != "Raw" || g["plan"] != "growth" || g["timeZone"] != "Asia/Tokyo" {
		t.Errorf("--body create: %v", g)
	}
	cid := s.must(t, "client", "create", "--workspace", wid, "--name", "C").data()["id"].(string)
	jid := s.must(t, "job", "create", "--workspace", wid, "--body",
		`{"clientId":"`+cid+`","name":"J","vendor":"generic","device":{"name":"D","type":"nas","hostname":"nas1"},"schedule":{"intervalMinutes":5}}`).data()["id"].(string)
	if u := s.must(t, "job", "update", "--workspace", wid, "--job", jid, "--body", `{"paused":true}`).data(); u["status"] != "paused" {
		t.Errorf("--body update: %v", u)
	}
	// null sends JSON null: allowed for pausedUntil (no end), refused for slaTarget.
	if u := s.must(t, "job", "update", "--workspace", wid, "--job", jid, "--paused-until", "null").data(); u["paused"] != true || u["pausedUntil"] != nil {
		t.Errorf("--paused-until null: %v", u)
	}
	r := s.cli(t, "job", "update", "--workspace", wid, "--job", jid, "--sla-target", "null")
	cliWantError(t, "--sla-target null", r, 400, "INVALID_REQUEST")
	if !strings.Contains(r.stdout, "slaTarget") {
		t.Errorf("--sla-target null: the message does not name slaTarget: %s", r.stdout)
	}
	// An empty list flag sends [].
	k := s.must(t, "key", "create", "--workspace", wid, "--name", "min", "--type", "rest", "--scopes", "").data()
	if !slices.Equal(cliStrings(k["scopes"]), []string{"workspace:read"}) {
		t.Errorf("--scopes '': %v", k["scopes"])
	}

	// Error answers: exit 1, the error printed.
	cliWantError(t, "unknown workspace", s.cli(t, "workspace", "get", "--workspace", "0190b4c8-1111-7000-8000-000000000000"), 404, "NOT_FOUND")
	cliWantError(t, "bad plan", s.cli(t, "workspace", "create", "--name", "X", "--plan", "gold"), 400, "INVALID_REQUEST")
	cliWantError(t, "--body not an object", s.cli(t, "workspace", "create", "--body", `[1]`), 400, "INVALID_REQUEST")
	cliWantError(t, "wrong token", cliRunRaw(t, "workspace", "list", "--admin-url", s.AdminURL, "--admin-token", "nope"), 401, "UNAUTHORIZED")

	// Usage errors: exit 2, nothing sent.
	before := s.must(t, "job", "list", "--workspace", wid).stdout
	for _, args := range [][]string{
		{"workspace", "get"}, // --workspace missing
		{"job", "update", "--workspace", wid, "--name", "X"},    // --job missing
		{"job", "delete", "--workspace", wid},                   // --job missing
		{"job", "delete", "--job", jid},                         // --workspace missing
		{"alert", "resolve", "--workspace", wid},                // --alert missing
		{"key", "revoke", "--workspace", wid},                   // --key missing
		{"client", "update", "--workspace", wid, "--name", "Y"}, // --client missing
		{"job", "update", "--workspace", wid, "--job", jid, "--interval-minutes", "often"},
		{"job", "update", "--workspace", wid, "--job", jid, "--paused", "maybe"},
		{"job", "update", "--workspace", wid, "--job", jid, "--sla-target", "high"},
		{"job", "update", "--workspace", wid, "--job", jid, "--body", `{"paused":`},
		{"job", "update", "--workspace", wid, "--job", jid, "--colour", "red"},
		{"job", "update", "--workspace", wid, "--job", jid, "extra"},
		{"job", "frobnicate"},
		{"nothing", "here"},
	} {
		r := s.cli(t, args[0], args[1], args[2:]...)
		if r.code != 2 {
			t.Errorf("%v: exit %d, want 2 (stdout %q stderr %q)", args, r.code, r.stdout, r.stderr)
		}
		if r.stderr == "" {
			t.Errorf("%v: nothing on stderr", args)
		}
	}
	if r := s.cli(t, "workspace", "get"); !strings.Contains(r.stderr, "--workspace") {
		t.Errorf("missing --workspace: stderr %q does not name it", r.stderr)
	}
	if after := s.must(t, "job", "list", "--workspace", wid).stdout; after != before {
		t.Errorf("usage errors changed the jobs:\n%s\n%s", before, after)
	}
	// No arguments is a usage error; help is not.
	var out, errb bytes.Buffer
	if code := adminCLI(nil, &out, &errb); code != 2 || !strings.Contains(out.String()+errb.String(), "workspace") {
		t.Errorf("no arguments: exit %d", code)
	}
	out.Reset()
	if code := adminCLI([]string{"help"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "clock") {
		t.Errorf("help: exit %d, %q", code, out.String())
	}
	// A server that does not answer: exit 1.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := "http://" + ln.Addr().String()
	ln.Close()
	if r := cliRunRaw(t, "workspace", "list", "--admin-url", dead, "--admin-token", testserver.AdminToken); r.code != 1 || r.stderr == "" {
		t.Errorf("dead server: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestCLITokenAndURLDefaults(t *testing.T) {
	cliUnsetEnv(t, "BACKUPMON_ADMIN_URL", "BACKUPMON_ADMIN_TOKEN")
	s := startCLIServer(t, t.TempDir(), testserver.T0)
	s.must(t, "workspace", "create", "--name", "W", "--plan", "pro")
	dir := t.TempDir()
	t.Chdir(dir)

	// No token anywhere: a usage error, nothing sent.
	r := cliRunRaw(t, "workspace", "list", "--admin-url", s.AdminURL)
	if r.code != 2 || !strings.Contains(r.stderr, "admin.token") {
		t.Errorf("no token: exit %d, stderr %q", r.code, r.stderr)
	}
	// ./data/admin.token, as serve writes it (with a newline).
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "data", "admin.token"), []byte(testserver.AdminToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = cliRunRaw(t, "workspace", "list", "--admin-url", s.AdminURL)
	if r.code != 0 || len(r.list()) != 1 {
		t.Errorf("token from ./data/admin.token: exit %d, %s %s", r.code, r.stdout, r.stderr)
	}
	// The flag wins over the file.
	cliWantError(t, "--admin-token over the file", cliRunRaw(t, "workspace", "list", "--admin-url", s.AdminURL, "--admin-token", "other"), 401, "UNAUTHORIZED")
	// BACKUPMON_ADMIN_TOKEN wins over the file.
	t.Setenv("BACKUPMON_ADMIN_TOKEN", "from-env")
	cliWantError(t, "BACKUPMON_ADMIN_TOKEN over the file", cliRunRaw(t, "workspace", "list", "--admin-url", s.AdminURL), 401, "UNAUTHORIZED")
	t.Setenv("BACKUPMON_ADMIN_TOKEN", testserver.AdminToken)
	os.Remove(filepath.Join(dir, "data", "admin.token"))
	if r := cliRunRaw(t, "workspace", "list", "--admin-url", s.AdminURL); r.code != 0 {
		t.Errorf("token from BACKUPMON_ADMIN_TOKEN: exit %d %s", r.code, r.stderr)
	}
	// BACKUPMON_ADMIN_URL gives the address; a trailing slash is fine.
	t.Setenv("BACKUPMON_ADMIN_URL", s.AdminURL+"/")
	if r := cliRunRaw(t, "workspace", "list"); r.code != 0 || len(r.list()) != 1 {
		t.Errorf("address from BACKUPMON_ADMIN_URL: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
}

// cliServeEnv lists the environment variables of the serve flags.
var cliServeEnv = []string{"BACKUPMON_LISTEN", "BACKUPMON_ADMIN_LISTEN", "BACKUPMON_DATA", "BACKUPMON_TLS_CERT", "BACKUPMON_TLS_KEY",
	"BACKUPMON_DEMO", "BACKUPMON_DEV_CLOCK", "BACKUPMON_RETENTION_DAYS", "BACKUPMON_ADMIN_TOKEN", "BACKUPMON_LOG_LEVEL", "BACKUPMON_SNAPSHOT_EVERY",
	"BACKUPMON_SMTP_RELAY", "BACKUPMON_SMTP_FROM", "BACKUPMON_SMTP_USERNAME", "BACKUPMON_SMTP_PASSWORD", "BACKUPMON_SMTP_STARTTLS"}

func TestServeFlags(t *testing.T) {
	cliUnsetEnv(t, cliServeEnv...)
	c, err := parseServeFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.listen != "127.0.0.1:8080" || c.adminListen != "127.0.0.1:8081" || c.data != "./data" || c.tlsCert != "" || c.tlsKey != "" ||
		c.demo || c.devClock || c.retentionDays != 400 || c.adminToken != "" {
		t.Errorf("defaults: %+v", *c)
	}

	// Flags.
	c, err = parseServeFlags([]string{"--listen", ":9000", "--admin-listen", "127.0.0.1:9001", "--data", "/tmp/d", "--tls-cert", "c.pem",
		"--tls-key", "k.pem", "--demo", "--dev-clock", "--retention-days", "30", "--admin-token", "tok"})
	if err != nil {
		t.Fatal(err)
	}
	if c.listen != ":9000" || c.adminListen != "127.0.0.1:9001" || c.data != "/tmp/d" || c.tlsCert != "c.pem" || c.tlsKey != "k.pem" ||
		!c.demo || !c.devClock || c.retentionDays != 30 || c.adminToken != "tok" {
		t.Errorf("flags: %+v", *c)
	}

	// Environment variables, BACKUPMON_<FLAG> with dashes as underscores.
	env := map[string]string{"BACKUPMON_LISTEN": "0.0.0.0:80", "BACKUPMON_ADMIN_LISTEN": "127.0.0.1:81", "BACKUPMON_DATA": "/var/lib/bm",
		"BACKUPMON_TLS_CERT": "/etc/c.pem", "BACKUPMON_TLS_KEY": "/etc/k.pem", "BACKUPMON_DEMO": "true", "BACKUPMON_DEV_CLOCK": "1",
		"BACKUPMON_RETENTION_DAYS": "90", "BACKUPMON_ADMIN_TOKEN": "envtok"}
	for k, v := range env {
		t.Setenv(k, v)
	}
	c, err = parseServeFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.listen != "0.0.0.0:80" || c.adminListen != "127.0.0.1:81" || c.data != "/var/lib/bm" || c.tlsCert != "/etc/c.pem" ||
		c.tlsKey != "/etc/k.pem" || !c.demo || !c.devClock || c.retentionDays != 90 || c.adminToken != "envtok" {
		t.Errorf("environment: %+v", *c)
	}
	// A flag wins over its variable.
	c, err = parseServeFlags([]string{"--data", "./mine", "--demo=false", "--dev-clock=false", "--retention-days", "7"})
	if err != nil {
		t.Fatal(err)
	}
	if c.data != "./mine" || c.demo || c.devClock || c.retentionDays != 7 || c.listen != "0.0.0.0:80" {
		t.Errorf("flags over environment: %+v", *c)
	}
	cliUnsetEnv(t, cliServeEnv...)

	// Refused: TLS half configured, bad retention, stray arguments.
	for _, args := range [][]string{
		{"--tls-cert", "c.pem"},
		{"--tls-key", "k.pem"},
		{"--retention-days", "0"},
		{"--retention-days", "-1"},
		{"--retention-days", "abc"},
		{"--retention-days", ""},
		{"--retention-days", "1.5"},
		{"--listen", ":1", "extra"},
	} {
		if c, err := parseServeFlags(args); err == nil {
			t.Errorf("%v accepted: %+v", args, *c)
		}
	}
	for k, v := range map[string]string{"BACKUPMON_TLS_CERT": "c.pem", "BACKUPMON_TLS_KEY": "k.pem", "BACKUPMON_RETENTION_DAYS": "none"} {
		t.Run(k, func(t *testing.T) {
			t.Setenv(k, v)
			if c, err := parseServeFlags(nil); err == nil {
				t.Errorf("%s=%s accepted: %+v", k, v, *c)
			}
		})
	}
	// The SMTP relay of e-mail notifications: flags or environment; a relay
	// needs a sender.
	c, err = parseServeFlags([]string{"--smtp-relay", "127.0.0.1:25", "--smtp-from", "Backupmon <alerts@example.com>", "--smtp-username", "u", "--smtp-password", "p", "--smtp-starttls"})
	if err != nil || c.smtpRelay != "127.0.0.1:25" || c.smtpFrom != "Backupmon <alerts@example.com>" || c.smtpUsername != "u" || c.smtpPassword != "p" || !c.smtpStartTLS {
		t.Errorf("smtp flags: %v %+v", err, c)
	}
	t.Setenv("BACKUPMON_SMTP_RELAY", "relay.example.com:587")
	t.Setenv("BACKUPMON_SMTP_FROM", "alerts@example.com")
	t.Setenv("BACKUPMON_SMTP_STARTTLS", "true")
	if c, err := parseServeFlags(nil); err != nil || c.smtpRelay != "relay.example.com:587" || c.smtpFrom != "alerts@example.com" || !c.smtpStartTLS {
		t.Errorf("smtp environment: %v %+v", err, c)
	}
	for _, args := range [][]string{{"--smtp-from", ""}, {"--smtp-relay", "no-port"}, {"--smtp-from", "not an address"}} {
		if c, err := parseServeFlags(args); err == nil {
			t.Errorf("%v accepted: %+v", args, *c)
		}
	}
	cliUnsetEnv(t, "BACKUPMON_SMTP_RELAY", "BACKUPMON_SMTP_FROM", "BACKUPMON_SMTP_STARTTLS")

	// The certificate pair from the environment and the flag together.
	t.Setenv("BACKUPMON_TLS_CERT", "c.pem")
	if c, err := parseServeFlags([]string{"--tls-key", "k.pem"}); err != nil || c.tlsCert != "c.pem" || c.tlsKey != "k.pem" {
		t.Errorf("cert from env, key from flag: %v %+v", err, c)
	}
}

// -h marks every flag the command cannot do without, and only those.
func TestCLIHelpMarksRequired(t *testing.T) {
	for _, tc := range []struct {
		cmd      []string
		required []string
		optional []string
	}{
		{[]string{"job", "create"}, []string{"workspace", "client-id", "name", "vendor", "device-name", "device-type", "hostname", "interval-minutes"},
			[]string{"expected-days", "grace-minutes", "sla-target"}},
		{[]string{"job", "update"}, []string{"workspace", "job"}, []string{"hostname", "name", "vendor", "paused"}},
		{[]string{"user", "create"}, []string{"workspace", "email", "name", "role", "password"}, nil},
		{[]string{"workspace", "create"}, []string{"name", "plan"}, []string{"time-zone", "status"}},
	} {
		t.Run(strings.Join(tc.cmd, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := adminCLI(append(tc.cmd, "-h"), &out, &errb); code != 0 {
				t.Fatalf("exit %d", code)
			}
			help := cliFlagHelp(errb.String())
			for _, f := range tc.required {
				if h, ok := help[f]; !ok || !strings.HasSuffix(h, " (required)") {
					t.Errorf("-%s: help %q, want it marked (required)", f, h)
				}
			}
			for _, f := range tc.optional {
				if h, ok := help[f]; !ok || strings.Contains(h, "required") {
					t.Errorf("-%s: help %q, want it present and not required", f, h)
				}
			}
		})
	}
}

// cliFlagHelp reads the flag package's defaults listing: flag name →
// its help line.
func cliFlagHelp(s string) map[string]string {
	m := map[string]string{}
	lines := strings.Split(s, "\n")
	for i := 0; i+1 < len(lines); i++ {
		name, ok := strings.CutPrefix(lines[i], "  -")
		if !ok {
			continue
		}
		name, _, _ = strings.Cut(name, " ")
		m[name] = strings.TrimSpace(lines[i+1])
	}
	return m
}

// Words of a fixed set are taken whatever their case and surrounding
// spaces: "Veeam", "Server", "Mon, Tue", "Pro".
func TestCLIWordsIgnoreCaseAndSpaces(t *testing.T) {
	cliUnsetEnv(t, "BACKUPMON_ADMIN_URL", "BACKUPMON_ADMIN_TOKEN")
	s := startCLIServer(t, t.TempDir(), testserver.T0)
	ws := s.must(t, "workspace", "create", "--name", "Acme", "--plan", "Pro").data()
	if ws["plan"] != "pro" {
		t.Fatalf("--plan Pro: %v", ws)
	}
	wid := ws["id"].(string)
	cid := s.must(t, "client", "create", "--workspace", wid, "--name", "Globex", "--status", " Active ").data()["id"].(string)
	j := s.must(t, "job", "create", "--workspace", wid, "--client-id", cid, "--name", "Nightly Server", "--vendor", " Veeam",
		"--device-name", "File Server", "--device-type", "Server", "--hostname", "FS01", "--interval-minutes", "1440",
		"--expected-days", "Mon, Tue ,FRI").data()
	dev, _ := j["device"].(map[string]any)
	sched, _ := j["schedule"].(map[string]any)
	if j["vendor"] != "veeam" || dev["type"] != "server" || !slices.Equal(cliStrings(sched["expectedDays"]), []string{"mon", "tue", "fri"}) {
		t.Errorf("job create: %v", j)
	}
	// Free text keeps its case.
	if j["name"] != "Nightly Server" || dev["name"] != "File Server" || dev["hostname"] != "FS01" {
		t.Errorf("free text changed: %v", j)
	}
	// A word that is not one of the set is still refused by the server.
	cliWantError(t, "--device-type Sever", s.cli(t, "job", "update", "--workspace", wid, "--job", j["id"].(string), "--device-type", "Sever"), 400, "INVALID_REQUEST")
}

// A mistyped command gets one line naming the nearest command, on stderr,
// exit 2, nothing sent.
func TestCLIMistypedCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"job", "creat"}, `backupmon admin: unknown command "job creat"; did you mean "job create"? (backupmon admin help lists every command)` + "\n"},
		{[]string{"jobs", "list", "--workspace", "w"}, `backupmon admin: unknown command "jobs list"; did you mean "job list"? (backupmon admin help lists every command)` + "\n"},
		{[]string{"alert", "acknowlege"}, `backupmon admin: unknown command "alert acknowlege"; did you mean "alert acknowledge"? (backupmon admin help lists every command)` + "\n"},
		{[]string{"wrokspace"}, `backupmon admin: unknown command "wrokspace"; did you mean "workspace"? (backupmon admin help lists every command)` + "\n"},
		{[]string{"key"}, "backupmon admin key: a verb is needed: create, list, revoke\n"},
		{[]string{"help", "job", "craete"}, `backupmon admin: unknown command "job craete"; did you mean "job create"? (backupmon admin help lists every command)` + "\n"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			code := adminCLI(tc.args, &out, &errb)
			if code != 2 || errb.String() != tc.want || out.Len() != 0 {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and %q", code, out.String(), errb.String(), tc.want)
			}
		})
	}
	if got := nearestWord("serv", commands); got != "serve" {
		t.Errorf("backupmon serv: nearest %q, want serve", got)
	}
	if got := nearestWord("admn", commands); got != "admin" {
		t.Errorf("backupmon admn: nearest %q, want admin", got)
	}
}

// admin help lists every command with its flags; admin help <group> <verb>
// says what each flag means.
func TestCLIHelpListsFlags(t *testing.T) {
	var out, errb bytes.Buffer
	if code := adminCLI([]string{"help"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d", code)
	}
	help := out.String()
	for _, want := range []string{
		"\n  job create                create a job\n                              --workspace ID --client-id CLIENT_ID --name NAME --vendor VENDOR --device-name DEVICE_NAME --device-type DEVICE_TYPE --hostname HOSTNAME --interval-minutes N [--expected-days A,B] [--grace-minutes N] [--sla-target X]\n",
		"\n  alert snooze              snooze an alert\n                              --workspace ID --alert ID --until UNTIL [--note NOTE]\n",
		"\n  workspace list            list workspaces\n  workspace get ",
	} {
		if !strings.Contains(help, want) {
			t.Errorf("admin help lacks %q:\n%s", want, help)
		}
	}
	for i := range cliCommands {
		c := &cliCommands[i]
		if !strings.Contains(help, "\n  "+c.group+" "+c.verb+" ") {
			t.Errorf("admin help lacks %s %s", c.group, c.verb)
		}
	}
	out.Reset()
	if code := adminCLI([]string{"help", "job", "create"}, &out, &errb); code != 0 {
		t.Fatalf("help job create: exit %d", code)
	}
	for _, want := range []string{
		"Usage: backupmon admin job create --workspace ID --client-id CLIENT_ID ",
		"\n  --hostname           device hostname (required)\n",
		"\n  --grace-minutes      minutes of grace before missing (0..10080)\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help job create lacks %q:\n%s", want, out.String())
		}
	}
}
