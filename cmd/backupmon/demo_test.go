package main

// `backupmon serve --demo` (decisions.md 9): what createDemo builds, and
// the curl lines printDemo prints, run against a server.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"backupmon/internal/testserver"
	"backupmon/password"
)

// cliDemoKeys reads <dir>/demo-keys.txt.
func cliDemoKeys(t *testing.T, dir string) map[string]string {
	t.Helper()
	path := filepath.Join(dir, "demo-keys.txt")
	info, err := os.Stat(path)
	if err != nil {
		t.Fatalf("demo-keys.txt: %v", err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("demo-keys.txt mode %v, want 0600", info.Mode().Perm())
	}
	raw, _ := os.ReadFile(path)
	kv := map[string]string{}
	for _, line := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			kv[k] = v
		}
	}
	return kv
}

func TestDemoContent(t *testing.T) {
	// The demo is built from the clock's time: check it at several times of
	// day (before and after the demo's 01:30 UTC report time, in winter and
	// in summer time).
	for _, start := range []time.Time{
		time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC),
		time.Date(2026, 3, 4, 1, 45, 0, 0, time.UTC),
		time.Date(2026, 3, 4, 3, 0, 0, 0, time.UTC),
		time.Date(2026, 7, 1, 0, 30, 0, 0, time.UTC),
		time.Date(2026, 10, 25, 23, 59, 0, 0, time.UTC),
	} {
		t.Run(start.Format("2006-01-02T15:04Z"), func(t *testing.T) {
			dir := t.TempDir()
			s := startCLIServer(t, dir, start)
			if err := createDemo(s.Eng, password.NewHasher(password.Params{Time: 1, Memory: 64, Threads: 1}, 1, 0), dir, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
				t.Fatalf("createDemo: %v", err)
			}
			cliCheckDemo(t, s, start)
		})
	}
}

func cliCheckDemo(t *testing.T, s *cliServer, now time.Time) {
	t.Helper()
	wss := s.For(t).MustAdmin(200, "GET", "/workspaces", nil).List()
	if len(wss) != 1 {
		t.Fatalf("%d workspaces, want 1", len(wss))
	}
	ws := wss[0]
	if ws["name"] != "Demo MSP" || ws["plan"] != "pro" || ws["timeZone"] != "Europe/London" || ws["status"] != "active" {
		t.Errorf("demo workspace: %v", ws)
	}
	wid := ws["id"].(string)
	base := "/workspaces/" + wid
	if n := len(s.For(t).MustAdmin(200, "GET", base+"/clients", nil).List()); n != 3 {
		t.Errorf("%d clients, want 3", n)
	}
	jobs := s.For(t).MustAdmin(200, "GET", base+"/jobs", nil).List()
	if len(jobs) != 12 {
		t.Errorf("%d jobs, want 12", len(jobs))
	}
	vendors := map[string]bool{}
	var missing []string
	days := map[string]bool{}
	oldest, newest := now, time.Time{}
	for _, j := range jobs {
		vendors[j["vendor"].(string)] = true
		if j["status"] == "missing" {
			missing = append(missing, j["name"].(string))
		}
		d := s.For(t).MustAdmin(200, "GET", base+"/jobs/"+j["id"].(string)+"?limit=1000", nil).Data()
		for _, h := range d["history"].([]any) {
			at, err := time.Parse(time.RFC3339, h.(map[string]any)["receivedAt"].(string))
			if err != nil {
				t.Fatal(err)
			}
			days[at.Format("2006-01-02")] = true
			if at.Before(oldest) {
				oldest = at
			}
			if at.After(newest) {
				newest = at
			}
		}
	}
	if len(vendors) < 5 {
		t.Errorf("jobs use %d vendors, want several: %v", len(vendors), vendors)
	}
	// 14 days of results: one a day on 14 days, the latest within the last
	// day, none received after now.
	if len(days) != 14 || oldest.Before(now.Add(-15*24*time.Hour)) || newest.Before(now.Add(-25*time.Hour)) {
		t.Errorf("results on %d days, from %v to %v (now %v)", len(days), oldest, newest, now)
	}
	if newest.After(now) {
		t.Errorf("results received in the future: the latest at %v, now %v", newest, now)
	}
	// Exactly one missing job.
	slices.Sort(missing)
	if len(missing) != 1 {
		t.Errorf("%d missing jobs %v, want exactly one (decisions.md 9)", len(missing), missing)
	}
	// Exactly one open failed alert; no other unresolved failed alert. The
	// missing job has its missing alert; no missing alert was ever opened
	// for another job (the history holds no missed due time), and none was
	// resolved before it opened.
	var openFailed, unresolvedFailed int
	var missingAlerts []string
	for _, a := range s.For(t).MustAdmin(200, "GET", base+"/alerts", nil).List() {
		if a["type"] == "failed" && a["status"] == "open" {
			openFailed++
		}
		if a["type"] == "failed" && a["status"] != "resolved" {
			unresolvedFailed++
		}
		if a["type"] == "missing" {
			missingAlerts = append(missingAlerts, fmt.Sprint(a["jobName"], " ", a["status"]))
		}
		if r, ok := a["recoverySeconds"].(float64); ok && r < 0 {
			t.Errorf("alert resolved before it opened: %v", a)
		}
	}
	if openFailed != 1 || unresolvedFailed != 1 {
		t.Errorf("%d open failed alerts (%d unresolved), want exactly one", openFailed, unresolvedFailed)
	}
	if len(missing) == 1 && (len(missingAlerts) != 1 || missingAlerts[0] != missing[0]+" open") {
		t.Errorf("missing alerts %v, want one open for %s", missingAlerts, missing[0])
	}

	// Keys: a REST key with every scope and a report key, both in
	// demo-keys.txt, whose prefixes are the listed keys'.
	kv := cliDemoKeys(t, s.Dir)
	if kv["workspace"] != wid {
		t.Errorf("demo-keys.txt workspace %q, want %s", kv["workspace"], wid)
	}
	for _, k := range []string{"rest_key", "report_key"} {
		if !testserver.SecretRe.MatchString(kv[k]) {
			t.Errorf("demo-keys.txt %s = %q", k, kv[k])
		}
	}
	prefixes := map[string]map[string]any{}
	for _, k := range s.For(t).MustAdmin(200, "GET", base+"/keys", nil).List() {
		prefixes[k["prefix"].(string)] = k
	}
	all := []string{"alerts:read", "clients:read", "health:read", "jobs:read", "reports:read", "workspace:read"}
	if rk := prefixes[cliPrefix(kv["rest_key"])]; rk == nil || rk["type"] != "rest" || !slices.Equal(cliSorted(cliStrings(rk["scopes"])), all) {
		t.Errorf("REST key of the demo: %v", rk)
	}
	if pk := prefixes[cliPrefix(kv["report_key"])]; pk == nil || pk["type"] != "report" {
		t.Errorf("report key of the demo: %v", pk)
	}
	// A read-write assistant key, also alone in demo-assistant.key for
	// `backupmon mcp --key-file`.
	if ak := prefixes[cliPrefix(kv["assistant_key"])]; !testserver.SecretRe.MatchString(kv["assistant_key"]) || ak == nil || ak["type"] != "assistant" || ak["access"] != "read-write" {
		t.Errorf("assistant key of the demo: %q %v", kv["assistant_key"], ak)
	}
	keyFile := filepath.Join(s.Dir, "demo-assistant.key")
	if raw, err := os.ReadFile(keyFile); err != nil || string(raw) != kv["assistant_key"]+"\n" {
		t.Errorf("demo-assistant.key = %q, %v; want the assistant key", raw, err)
	}
	if info, err := os.Stat(keyFile); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("demo-assistant.key mode: %v %v", info, err)
	}
}

func cliPrefix(secret string) string {
	if len(secret) < 16 {
		return secret
	}
	return secret[:16]
}

func cliSorted(l []string) []string {
	l = slices.Clone(l)
	slices.Sort(l)
	return l
}

func TestDemoCurlLines(t *testing.T) {
	dir := t.TempDir()
	s := startCLIServer(t, dir, time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC))
	if err := createDemo(s.Eng, password.NewHasher(password.Params{Time: 1, Memory: 64, Threads: 1}, 1, 0), dir, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatalf("createDemo: %v", err)
	}
	kv := cliDemoKeys(t, dir)
	var buf bytes.Buffer
	printDemo(&buf, s.Eng.Now(), dir, s.PublicURL, s.AdminURL, testserver.AdminToken, "")
	out := buf.String()
	if !strings.Contains(out, kv["rest_key"]) || !strings.Contains(out, kv["report_key"]) || !strings.Contains(out, kv["workspace"]) {
		t.Errorf("printDemo does not show the workspace and both keys:\n%s", out)
	}
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); strings.HasPrefix(l, "curl ") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 3 {
		t.Fatalf("printDemo printed %d curl lines, want 3:\n%s", len(lines), out)
	}
	_, curlErr := exec.LookPath("curl")
	run := func(line string) []byte {
		t.Helper()
		if curlErr == nil {
			b, err := exec.Command("sh", "-c", line).Output()
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return b
		}
		r, err := testserver.Curl(http.DefaultClient, line)
		if err != nil {
			t.Fatal(err)
		}
		return r.Body
	}
	// The report line records a run on the demo's job.
	got := run(lines[0])
	if string(got) != `{"ok":true,"status":"ok","alert_id":null,"duplicate":false,"superseded":false}` {
		t.Errorf("report curl line answered %s", got)
	}
	// The admin line shows that job, the new run first.
	var job struct {
		Data struct {
			ID      string `json:"id"`
			History []struct {
				Status          string `json:"status"`
				DurationSeconds int64  `json:"durationSeconds"`
				SizeBytes       int64  `json:"sizeBytes"`
				Source          string `json:"source"`
			} `json:"history"`
		} `json:"data"`
	}
	got = run(lines[1])
	if err := json.Unmarshal(got, &job); err != nil {
		t.Fatalf("admin curl line answered %s: %v", got, err)
	}
	if job.Data.ID != kv["job"] || len(job.Data.History) == 0 {
		t.Fatalf("admin curl line: %s", got)
	}
	h := job.Data.History[0]
	if h.Status != "ok" || h.DurationSeconds != 1200 || h.SizeBytes != 5368709120 || h.Source != "api:"+cliPrefix(kv["report_key"]) {
		t.Errorf("the curl report in the history: %+v", h)
	}
	// The REST line lists the demo's failed job (its open failed alert).
	var jobs struct {
		Data []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		} `json:"data"`
		Pagination struct {
			HasMore bool `json:"hasMore"`
		} `json:"pagination"`
	}
	got = run(lines[2])
	if err := json.Unmarshal(got, &jobs); err != nil {
		t.Fatalf("REST curl line answered %s: %v", got, err)
	}
	if len(jobs.Data) != 1 || jobs.Data[0].ID != kv["failed_job"] || jobs.Data[0].Status != "failed" {
		t.Errorf("REST curl line: %s", got)
	}
}
