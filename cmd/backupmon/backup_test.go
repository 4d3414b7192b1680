package main

// Backups of the service (docs/decisions.md, "Backups") through the real
// binary: `backupmon admin backup` against a running server, `backupmon
// restore` into a new directory, and a server started on it that answers
// as the first did at the backup. Every name here starts with "bk".

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"backupmon/internal/testserver"
)

// bkRun runs the binary with args (no BACKUPMON_* from the environment)
// and returns its exit code and output.
func bkRun(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return bkRunIn(t, nil, args...)
}

// bkRunIn is bkRun with stdin as the standard input.
func bkRunIn(t *testing.T, stdin []byte, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(testserver.Binary(t), args...)
	cmd.Stdin = bytes.NewReader(stdin)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BACKUPMON_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String(), errb.String()
	} else if err != nil {
		t.Fatalf("backupmon %v: %v", args, err)
	}
	return 0, out.String(), errb.String()
}

// bkViews are the admin and REST answers a restore must give back byte for
// byte: path → body.
func bkViews(t *testing.T, c *testserver.Child, ws, job, restKey string) map[string]string {
	t.Helper()
	views := map[string]string{}
	for _, p := range []string{"", "/clients", "/jobs", "/jobs/" + job, "/alerts", "/keys", "/activity", "/unparsed",
		"/users", "/channels", "/escalations", "/deliveries"} {
		r := c.Admin("GET", "/workspaces/"+ws+p, nil)
		if r.Status != 200 {
			t.Fatalf("GET /admin/v1/workspaces/%s%s: %d %s", ws, p, r.Status, r.Body)
		}
		views["admin "+p] = string(r.Body)
	}
	for _, p := range []string{"/jobs", "/jobs/" + job, "/alerts", "/clients"} {
		r := c.REST(restKey, p)
		if r.Status != 200 {
			t.Fatalf("GET /api/v1%s: %d %s", p, r.Status, r.Body)
		}
		views["rest "+p] = string(r.Body)
	}
	return views
}

// TestBackupRestore: a backup taken from a running server, restored into
// a new directory, gives a server that answers every admin and REST read as
// the first did at the backup; a report acknowledged before the backup is
// a duplicate there, one after it is not in it; the unparsed e-mail can be
// re-read (its raw text came along); the development clock goes on at the
// backup's time.
func TestBackupRestore(t *testing.T) {
	s := mlStart(t)
	c := s.c
	jobID, addr := s.job("nightly-dump", "veeam") // the wrong vendor: the mail below is a script's
	raw := []byte("From: cron@db01.example\r\nTo: " + addr + "\r\nSubject: nightly-dump finished\r\n" +
		"Date: Mon, 16 Mar 2026 08:59:00 +0000\r\nMessage-ID: <cron-77@db01.example>\r\nContent-Type: text/plain\r\n\r\n" +
		"Job: nightly-dump\r\nStatus: OK\r\nStarted: 2026-03-16 08:57:30 +0000\r\nFinished: 2026-03-16 08:59:00 +0000\r\n")
	s.mustSend(addr, raw)
	report, _ := c.NewKey(s.ws, "report", map[string]any{"name": "agent"})
	const body = `{"status":"failed","message":"disk full"}`
	if r := c.Report(jobID, report, "before-backup", body); r.Status != 200 || r.JSON["duplicate"] != false {
		t.Fatalf("report before the backup: %d %s", r.Status, r.Body)
	}
	c.Advance(3600)            // timers run: the job has a failed alert and is late for nothing yet
	c.REST(s.restKey, "/jobs") // the key's first use is in the state before the views are taken
	before := bkViews(t, c, s.ws, jobID, s.restKey)
	clockAt := c.Clock(map[string]any{})

	dir := t.TempDir()
	file := filepath.Join(dir, "nightly.backup")
	code, out, errOut := bkRun(t, "admin", "backup", "--admin-url", c.AdminURL, "--admin-token", testserver.AdminToken, "--out", file)
	if code != 0 {
		t.Fatalf("admin backup: exit %d\n%s%s", code, out, errOut)
	}
	st, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("{\n  \"data\": {\n    \"bytes\": %d,\n    \"file\": %q,\n    \"layout\": 11,\n    \"rawMails\": 1,\n    \"workspaces\": 1\n  }\n}\n", st.Size(), file)
	if out != want || errOut != "" {
		t.Errorf("admin backup printed\n%s\nstderr %q; want\n%s", out, errOut, want)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("the backup file's mode is %v, want 0600", st.Mode().Perm())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	// What came after the backup is not in it.
	if r := c.Report(jobID, report, "after-backup", `{"status":"ok"}`); r.Status != 200 {
		t.Fatalf("report after the backup: %d %s", r.Status, r.Body)
	}

	data := filepath.Join(t.TempDir(), "restored")
	code, out, errOut = bkRun(t, "restore", "--backup", file, "--data", data)
	wantOut := fmt.Sprintf("workspace %s \"Mail MSP\" restored\n1 workspaces and 1 kept e-mails restored into %s (backup of layout 11); start it with: backupmon serve --data %s\n", s.ws, data, data)
	if code != 0 || out != wantOut {
		t.Fatalf("restore: exit %d\nstdout %q\nwant   %q\nstderr %s", code, out, wantOut, errOut)
	}
	c2 := testserver.StartChild(t, "restored", data, mlFlags()...)
	if now := c2.Clock(map[string]any{}); !now.Equal(clockAt) {
		t.Errorf("the restored server's development clock is at %v, want the backup's %v", now, clockAt)
	}
	after := bkViews(t, c2, s.ws, jobID, s.restKey)
	for k, b := range before {
		if after[k] != b {
			t.Errorf("%s differs after the restore:\nbefore %s\nafter  %s", k, b, after[k])
		}
	}

	if r := c2.Report(jobID, report, "before-backup", body); r.Status != 200 || r.JSON["duplicate"] != true {
		t.Errorf("the report acknowledged before the backup, sent again: %d %s (want a duplicate)", r.Status, r.Body)
	}
	if r := c2.Report(jobID, report, "after-backup", `{"status":"ok"}`); r.Status != 200 || r.JSON["duplicate"] != false {
		t.Errorf("the report made after the backup: %d %s (want a new result)", r.Status, r.Body)
	}
	var list []struct{ ID string }
	c2.AdminInto(200, "GET", "/workspaces/"+s.ws+"/unparsed", nil, &list)
	if len(list) != 1 {
		t.Fatalf("unparsed after the restore: %+v", list)
	}
	c2.AdminInto(200, "PATCH", "/workspaces/"+s.ws+"/jobs/"+jobID, map[string]any{"vendor": "generic"}, nil)
	var ans struct {
		Status string `json:"status"`
	}
	c2.AdminInto(200, "POST", "/workspaces/"+s.ws+"/unparsed/"+list[0].ID+"/reparse", nil, &ans)
	if ans.Status != "ok" {
		t.Errorf("re-reading the restored e-mail: %+v", ans)
	}
}

// TestBackupRefusals: what the endpoint and both commands answer to bad
// input, and that each leaves what was there unchanged.
func TestBackupRefusals(t *testing.T) {
	c := testserver.StartChild(t, "server", t.TempDir())
	c.NewWorkspace(map[string]any{"name": "Acme IT", "plan": "pro"})
	dir := t.TempDir()
	good := filepath.Join(dir, "good.backup")
	if code, out, errOut := bkRun(t, "admin", "backup", "--admin-url", c.AdminURL, "--admin-token", testserver.AdminToken, "--out", good); code != 0 {
		t.Fatalf("admin backup: exit %d %s %s", code, out, errOut)
	}
	whole, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("endpoint", func(t *testing.T) {
		r := c.Do("GET", c.AdminURL+"/admin/v1/backup", testserver.Bearer(testserver.AdminToken), nil)
		if r.Status != 200 || r.Header.Get("Content-Type") != "application/octet-stream" || !bytes.HasPrefix(r.Body, []byte("BMSNAP01")) {
			t.Errorf("GET: %d %q %q", r.Status, r.Header.Get("Content-Type"), r.Body[:min(len(r.Body), 8)])
		}
		r = c.Do("GET", c.AdminURL+"/admin/v1/backup", testserver.Bearer("wrong"), nil)
		if want := `{"error":{"code":"UNAUTHORIZED","message":"Missing or invalid admin token"}}`; r.Status != 401 || string(r.Body) != want {
			t.Errorf("a wrong token: %d %s", r.Status, r.Body)
		}
		r = c.Do("POST", c.AdminURL+"/admin/v1/backup", testserver.Bearer(testserver.AdminToken), nil)
		if want := `{"error":{"code":"METHOD_NOT_ALLOWED","message":"Method not allowed"}}`; r.Status != 405 || string(r.Body) != want {
			t.Errorf("POST: %d %s", r.Status, r.Body)
		}
	})

	t.Run("admin backup", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "kept.backup")
		os.WriteFile(out, []byte("the previous backup"), 0o600)
		code, stdout, stderr := bkRun(t, "admin", "backup", "--admin-url", c.AdminURL, "--admin-token", "wrong", "--out", out)
		if code != 1 || !strings.Contains(stdout, `"code": "UNAUTHORIZED"`) || stderr != "backupmon admin backup: 401 Unauthorized\n" {
			t.Errorf("a wrong token: exit %d\n%s%s", code, stdout, stderr)
		}
		if code, _, stderr := bkRun(t, "admin", "backup", "--admin-url", c.AdminURL, "--admin-token", "x"); code != 2 || stderr != "backupmon admin backup: --out is required\n" {
			t.Errorf("no --out: exit %d %q", code, stderr)
		}
		// A server whose answer is cut short: the file is refused, the
		// previous one kept, nothing left behind.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Write(whole[:len(whole)-30])
		})}
		go srv.Serve(ln)
		defer srv.Close()
		code, stdout, stderr = bkRun(t, "admin", "backup", "--admin-url", "http://"+ln.Addr().String(), "--admin-token", "x", "--out", out)
		if code != 1 || stdout != "" || !strings.HasPrefix(stderr, "backupmon admin backup: the backup received does not read back: not a whole backup: ") ||
			!strings.HasSuffix(stderr, "("+out+" was not changed)\n") {
			t.Errorf("a backup cut short: exit %d\nstdout %q\nstderr %q", code, stdout, stderr)
		}
		if b, _ := os.ReadFile(out); string(b) != "the previous backup" {
			t.Errorf("the previous backup became %q", b)
		}
		if left, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".*.tmp")); len(left) > 0 {
			t.Errorf("temporary files left: %v", left)
		}
	})

	t.Run("through pipes", func(t *testing.T) {
		// --out -: the backup on standard output, its summary on standard
		// error; restore --backup - takes it from standard input.
		code, stdout, stderr := bkRun(t, "admin", "backup", "--admin-url", c.AdminURL, "--admin-token", testserver.AdminToken, "--out", "-")
		want := fmt.Sprintf("{\n  \"data\": {\n    \"bytes\": %d,\n    \"file\": \"-\",\n    \"layout\": 11,\n    \"rawMails\": 0,\n    \"workspaces\": 1\n  }\n}\n", len(stdout))
		if code != 0 || !strings.HasPrefix(stdout, "BMSNAP01") || stderr != want {
			t.Fatalf("admin backup --out -: exit %d, %d bytes, stderr %q", code, len(stdout), stderr)
		}
		data := filepath.Join(t.TempDir(), "data")
		code, out, errOut := bkRunIn(t, []byte(stdout), "restore", "--backup", "-", "--data", data)
		if code != 0 || !strings.HasSuffix(out, "1 workspaces and 0 kept e-mails restored into "+data+" (backup of layout 11); start it with: backupmon serve --data "+data+"\n") {
			t.Fatalf("restore --backup -: exit %d\n%s%s", code, out, errOut)
		}
		if left, _ := filepath.Glob(filepath.Join(os.TempDir(), "backupmon-restore-*.backup")); len(left) > 0 {
			t.Errorf("spooled copies left: %v", left)
		}
		r := testserver.StartChild(t, "restored from a pipe", data).Admin("GET", "/workspaces", nil)
		if r.Status != 200 || !strings.Contains(string(r.Body), `"name":"Acme IT"`) {
			t.Errorf("the restored server lists %d %s", r.Status, r.Body)
		}
		// A refusal: its answer on standard error, nothing on standard
		// output, which is the backup's.
		code, stdout, stderr = bkRun(t, "admin", "backup", "--admin-url", c.AdminURL, "--admin-token", "wrong", "--out", "-")
		if code != 1 || stdout != "" || !strings.Contains(stderr, `"code": "UNAUTHORIZED"`) || !strings.HasSuffix(stderr, "backupmon admin backup: 401 Unauthorized\n") {
			t.Errorf("a wrong token, to standard output: exit %d\nstdout %q\nstderr %q", code, stdout, stderr)
		}
		// Cut short on the way: exit 1, after what it wrote.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(whole[:len(whole)-30]) })}
		go srv.Serve(ln)
		defer srv.Close()
		code, stdout, stderr = bkRun(t, "admin", "backup", "--admin-url", "http://"+ln.Addr().String(), "--admin-token", "x", "--out", "-")
		if code != 1 || !strings.HasPrefix(stderr, "backupmon admin backup: the backup received does not read back: not a whole backup: ") ||
			!strings.HasSuffix(stderr, " (what went to standard output is not a backup)\n") || stdout != string(whole[:len(whole)-30]) {
			t.Errorf("a backup cut short, to standard output: exit %d, %d bytes out, stderr %q", code, len(stdout), stderr)
		}
		code, _, stderr = bkRunIn(t, whole[:len(whole)-30], "restore", "--backup", "-", "--data", filepath.Join(t.TempDir(), "data"))
		if code != 1 || !strings.Contains(stderr, ": not a whole backup: ") {
			t.Errorf("a backup cut short, from standard input: exit %d, stderr %q", code, stderr)
		}
	})

	t.Run("restore", func(t *testing.T) {
		flipped := bytes.Clone(whole)
		flipped[len(flipped)/2] ^= 0x40
		damaged := map[string][]byte{"flipped": flipped, "cut": whole[:len(whole)-1], "empty": nil, "longer": append(bytes.Clone(whole), 0)}
		for name, b := range damaged {
			file := filepath.Join(t.TempDir(), name+".backup")
			os.WriteFile(file, b, 0o600)
			data := filepath.Join(t.TempDir(), "data")
			code, stdout, stderr := bkRun(t, "restore", "--backup", file, "--data", data)
			if code != 1 || stdout != "" || !strings.HasPrefix(stderr, "backupmon restore: "+file+": not a whole backup: ") ||
				!strings.HasSuffix(stderr, " (nothing was changed)\n") {
				t.Errorf("%s: exit %d\nstdout %q\nstderr %q", name, code, stdout, stderr)
			}
			if _, err := os.Stat(data); !os.IsNotExist(err) {
				t.Errorf("%s: the data directory was made (%v)", name, err)
			}
		}
		data := filepath.Join(t.TempDir(), "data")
		if code, _, stderr := bkRun(t, "restore", "--backup", good, "--data", data); code != 0 {
			t.Fatalf("restore: exit %d %s", code, stderr)
		}
		code, stdout, stderr := bkRun(t, "restore", "--backup", good, "--data", data)
		if want := "backupmon restore: " + data + " holds a log or snapshots already; restore into a new directory (nothing was changed)\n"; code != 2 || stdout != "" || stderr != want {
			t.Errorf("into a directory in use: exit %d\nstdout %q\nstderr %q", code, stdout, stderr)
		}
		if code, _, stderr := bkRun(t, "restore", "--data", data); code != 2 || stderr != "backupmon restore: --backup is required\n" {
			t.Errorf("no --backup: exit %d %q", code, stderr)
		}
		code, _, stderr = bkRun(t, "cluster", "import", "--backup", good, "--data", data, "--cluster", "nats://127.0.0.1:1")
		if code != 2 || stderr != "backupmon cluster import: give --data or --backup, not both\n" {
			t.Errorf("cluster import of a backup and a directory: exit %d %q", code, stderr)
		}
	})
}
