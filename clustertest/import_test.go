package clustertest

import (
	"fmt"
	"net/http"
	"net/smtp"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"backupmon/internal/testserver"
	"backupmon/localcluster"
)

// TestImportFromASingleNode: a single node's data directory, with the demo
// and more (a second workspace with an acknowledged alert, a user, a
// channel and an escalation rule), moved into a cluster by `backupmon
// cluster import`: every admin and REST answer through each node of the
// cluster is byte for byte the single node's (but for request ids and
// cursors, signed with each server's own key); the single node's keys (no
// shard in them), its dashboard session and its ingest address keep
// working through every node; a second run moves nothing again. An
// unreadable e-mail kept on the single node is re-read on the cluster (its
// raw text moved with it). Then the cluster's backup, taken through one
// node and restored into a new directory, gives a single node that answers
// every read as the cluster did, and re-reads that e-mail too.
func TestImportFromASingleNode(t *testing.T) {
	if testing.Short() {
		t.Skip("runs seven processes")
	}
	dir := t.TempDir()
	single := testserver.StartChild(t, "single", dir, "--demo", "--dev-clock", "--smtp-listen", "127.0.0.1:0")
	demo := readKeys(t, filepath.Join(dir, "demo-keys.txt"))

	// More than the demo.
	ws := single.NewWorkspace(map[string]any{"name": "More MSP", "plan": "pro", "timeZone": "Europe/Berlin"})
	client := single.NewClient(ws, "Initech")
	job := single.NewJob(ws, client, "exchange", testserver.Daily())
	report, _ := single.NewKey(ws, "report", nil)
	rest, _ := single.NewKey(ws, "rest", nil)
	r := single.Report(job, report, "k1", `{"status":"failed","duration_seconds":30}`)
	alert, _ := r.JSON["alert_id"].(string)
	if r.Status != 200 || alert == "" {
		t.Fatalf("report: %d %s", r.Status, r.Body)
	}
	single.MustAdmin(200, "POST", "/workspaces/"+ws+"/alerts/"+alert+"/acknowledge", nil)
	single.MustAdmin(201, "POST", "/workspaces/"+ws+"/users", map[string]any{"email": "pat@more.test", "name": "Pat", "role": "admin", "password": "correct horse battery"})
	var ch struct{ ID string }
	single.AdminInto(201, "POST", "/workspaces/"+ws+"/channels", map[string]any{"type": "email", "name": "ops", "to": "ops@more.test"}, &ch)
	single.MustAdmin(201, "POST", "/workspaces/"+ws+"/escalations", map[string]any{"channelId": ch.ID, "afterMinutes": 600})
	// An e-mail a script sent to the veeam job: unreadable, kept raw.
	address, _ := single.Job(ws, job)["ingestAddress"].(string)
	unreadable := []byte("From: cron@db01.example\r\nTo: " + address + "\r\nSubject: exchange finished\r\n" +
		"Message-ID: <cron-1@db01.example>\r\nContent-Type: text/plain\r\n\r\nJob: exchange\r\nStatus: OK\r\n")
	if err := smtp.SendMail(single.SMTPAddr, nil, "cron@db01.example", []string{address}, unreadable); err != nil {
		t.Fatal(err)
	}
	var unparsed []struct{ ID string }
	single.AdminInto(200, "GET", "/workspaces/"+ws+"/unparsed", nil, &unparsed)
	if len(unparsed) != 1 {
		t.Fatalf("unparsed on the single node: %+v", unparsed)
	}

	// A fresh minute, the same on both sides; a session on the dashboard.
	at := single.Advance(time.Second).Truncate(time.Minute).Add(2 * time.Minute)
	single.SetClock(at)
	session := login(t, single.Client, "pat@more.test", "correct horse battery")
	keys := map[string]string{demo["workspace"]: demo["rest_key"], ws: rest}
	answers(t, single.Client, keys) // first uses of the REST keys, before the answers are kept
	want := answers(t, single.Client, keys)
	if _, err := single.Term(); err != nil {
		t.Fatal(err)
	}

	cl, nodes := startCluster(t, 4, "--dev-clock")
	nodes[0].SetClock(at)
	bin := testserver.Binary(t)
	urls := strings.Join(cl.NATSURLs, ",")
	importArgs := append([]string{"cluster", "import", "--data", dir, "--cluster", urls, "--cluster-auth-file", cl.AuthFile}, localcluster.TLSArgs(cl.TLS)...)
	out, err := exec.Command(bin, importArgs...).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "2 workspaces moved, 0 already in the cluster") {
		t.Fatalf("cluster import (%v):\n%s", err, out)
	}
	out, err = exec.Command(bin, importArgs...).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "0 workspaces moved, 2 already in the cluster") {
		t.Fatalf("cluster import again (%v):\n%s", err, out)
	}

	for i, c := range nodes {
		got := answers(t, c, keys)
		for path, w := range want {
			if got[path] != w {
				t.Errorf("node %d: %s:\n%s\nthe single node answered:\n%s", i+1, path, got[path], w)
			}
		}
	}

	// The cluster's backup, through node 2, restored into a new directory.
	file := filepath.Join(t.TempDir(), "cluster.backup")
	out, err = exec.Command(bin, "admin", "backup", "--admin-url", nodes[1].AdminURL, "--admin-token", testserver.AdminToken, "--out", file).CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"rawMails": 1,`) || !strings.Contains(string(out), `"workspaces": 2`) {
		t.Fatalf("admin backup of the cluster (%v):\n%s", err, out)
	}
	restored := filepath.Join(t.TempDir(), "restored")
	out, err = exec.Command(bin, "restore", "--backup", file, "--data", restored).CombinedOutput()
	if err != nil || !strings.HasSuffix(string(out), "2 workspaces and 1 kept e-mails restored into "+restored+" (backup of layout 11); start it with: backupmon serve --data "+restored+"\n") {
		t.Fatalf("restore (%v):\n%s", err, out)
	}
	back := testserver.StartChild(t, "restored", restored, "--dev-clock")
	got := answers(t, back.Client, keys)
	for path, w := range want {
		if got[path] != w {
			t.Errorf("restored from the cluster's backup: %s:\n%s\nthe single node answered:\n%s", path, got[path], w)
		}
	}
	back.MustAdmin(200, "PATCH", "/workspaces/"+ws+"/jobs/"+job, map[string]any{"vendor": "generic"})
	if r := back.Admin("POST", "/workspaces/"+ws+"/unparsed/"+unparsed[0].ID+"/reparse", nil); r.Status != 200 || r.Data()["status"] != "ok" {
		t.Errorf("re-read on the restored node: %d %s", r.Status, r.Body)
	}
	// Then what changes state, through each node. The e-mail kept on the
	// single node reads now that its job's vendor is right.
	nodes[2].MustAdmin(200, "PATCH", "/workspaces/"+ws+"/jobs/"+job, map[string]any{"vendor": "generic"})
	if r := nodes[0].Admin("POST", "/workspaces/"+ws+"/unparsed/"+unparsed[0].ID+"/reparse", nil); r.Status != 200 || r.Data()["status"] != "ok" {
		t.Errorf("re-read on the cluster of the single node's e-mail: %d %s", r.Status, r.Body)
	}
	for i, c := range nodes {
		r := c.Do("GET", c.PublicURL+"/jobs", map[string]string{"Cookie": "__Host-session=" + session}, nil)
		if r.Status != 200 || !strings.Contains(string(r.Body), "exchange") {
			t.Errorf("node %d: the single node's session: %d %.200s", i+1, r.Status, r.Body)
		}
		r = c.Report(demo["job"], demo["report_key"], fmt.Sprintf("after-%d", i), `{"status":"ok"}`)
		if r.Status != 200 {
			t.Errorf("node %d: a report with the single node's key: %d %s", i+1, r.Status, r.Body)
		}
		mail, err := os.ReadFile(filepath.Join(dir, "demo-mail.eml"))
		if err != nil {
			t.Fatal(err)
		}
		mail = []byte(strings.Replace(string(mail), "Message-ID: <", fmt.Sprintf("Message-ID: <node%d-", i), 1))
		if err := smtp.SendMail(cl.Nodes[i].SMTPAddr, nil, "backups@fl-db01.example", []string{demo["mail_address"]}, mail); err != nil {
			t.Errorf("node %d: the single node's ingest address: %v", i+1, err)
		}
	}
}

// readKeys reads a demo-keys.txt.
func readKeys(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	kv := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			kv[k] = v
		}
	}
	return kv
}

// login logs in on the dashboard and returns the session cookie's value.
func login(t *testing.T, c *testserver.Client, email, password string) string {
	t.Helper()
	form := url.Values{"email": {email}, "password": {password}}
	r := c.Do("POST", c.PublicURL+"/login", map[string]string{"Content-Type": "application/x-www-form-urlencoded",
		"Sec-Fetch-Site": "same-origin", "Origin": c.PublicURL}, []byte(form.Encode()))
	for _, ck := range (&http.Response{Header: r.Header}).Cookies() {
		if ck.Name == "__Host-session" && r.Status == 303 {
			return ck.Value
		}
	}
	t.Fatalf("log in as %s: %d %q", email, r.Status, r.Header.Values("Set-Cookie"))
	return ""
}

var (
	idRE        = regexp.MustCompile(`"id":"([0-9a-f-]{36})"`)
	requestIDRE = regexp.MustCompile(`"requestId":"[0-9a-f]+"`)
	cursorRE    = regexp.MustCompile(`"nextCursor":"[^"]+"`)
)

// answers returns every admin GET of the workspaces in keys, and every REST
// GET with their REST keys, by path: status and body.
func answers(t *testing.T, c *testserver.Client, keys map[string]string) map[string]string {
	t.Helper()
	out := map[string]string{}
	get := func(path string, r testserver.Response) string {
		// Request ids are per request, and cursors are signed with the
		// key of the server that made them (the single node's and the
		// cluster's differ; docs/decisions.md).
		body := requestIDRE.ReplaceAll(r.Body, []byte(`"requestId":"…"`))
		body = cursorRE.ReplaceAll(body, []byte(`"nextCursor":"…"`))
		s := fmt.Sprintf("%d %s", r.Status, body)
		out[path] = s
		return s
	}
	get("admin /workspaces", c.Admin("GET", "/workspaces", nil))
	for ws, key := range keys {
		p := "/workspaces/" + ws
		get("admin "+p, c.Admin("GET", p, nil))
		for _, sub := range []string{"/clients", "/keys", "/alerts", "/activity", "/channels", "/escalations", "/deliveries", "/users", "/unparsed"} {
			get("admin "+p+sub, c.Admin("GET", p+sub, nil))
		}
		jobs := get("admin "+p+"/jobs", c.Admin("GET", p+"/jobs", nil))
		for _, m := range idRE.FindAllStringSubmatch(jobs, -1) {
			get("admin "+p+"/jobs/"+m[1], c.Admin("GET", p+"/jobs/"+m[1], nil))
			get("rest "+ws+" /jobs/"+m[1], c.REST(key, "/jobs/"+m[1]))
		}
		for _, path := range []string{"/workspace", "/clients", "/jobs", "/reports?limit=100", "/alerts", "/health"} {
			get("rest "+ws+" "+path, c.REST(key, path))
		}
	}
	return out
}
