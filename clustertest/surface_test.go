package clustertest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/smtp"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"backupmon/cluster"
	"backupmon/engine"
	"backupmon/internal/testserver"
	"backupmon/localcluster"
)

// startCluster runs a local cluster for the test (SMTP listeners, node 3
// without a peer listener, so that requests are forwarded both node to
// node and over NATS) and returns a client of each node.
func startCluster(t *testing.T, shards int, serve ...string) (*localcluster.Cluster, []*testserver.Client) {
	t.Helper()
	return startClusterOf(t, localcluster.Config{Shards: shards, SMTP: true, NATSOnly: 3, Serve: serve})
}

// startClusterOf runs the local cluster cfg says (with the test binary, a
// test directory unless cfg names one, the test admin token) for the test and returns a client
// of each node.
func startClusterOf(t *testing.T, cfg localcluster.Config) (*localcluster.Cluster, []*testserver.Client) {
	t.Helper()
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	cfg.Binary, cfg.AdminToken, cfg.StartTimeout = testserver.Binary(t), testserver.AdminToken, 90*time.Second
	c, err := localcluster.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	closeAtEnd(t, c)
	var nodes []*testserver.Client
	for _, n := range c.Nodes {
		nodes = append(nodes, &testserver.Client{T: t, HTTP: newClient(), PublicURL: n.PublicURL, AdminURL: n.AdminURL, Token: testserver.AdminToken})
	}
	return c, nodes
}

// sameEverywhere sends one GET to every node and fails unless all answer
// the wanted status with the same body; it returns that body.
func sameEverywhere(t *testing.T, nodes []*testserver.Client, want int, send func(c *testserver.Client) testserver.Response) []byte {
	t.Helper()
	var first []byte
	for i, c := range nodes {
		r := send(c)
		if r.Status != want {
			t.Fatalf("node %d: status %d, want %d: %s", i+1, r.Status, want, r.Body)
		}
		if i == 0 {
			first = r.Body
		} else if !bytes.Equal(r.Body, first) {
			t.Fatalf("node %d answers otherwise than node 1:\n%s\n%s", i+1, r.Body, first)
		}
	}
	return first
}

// TestAnyNodeAnswers: on a cluster of three nodes, each surface answers
// through every node as the one node that owns the workspace's shard:
// the admin API (lists gathered from every shard), the Report API, REST,
// the development clock (moved through one node, it moves on all), the
// dashboard (a session made on one node works on another), the assistant
// server and the SMTP listener (an unreadable e-mail kept through one
// node is read again through another).
func TestAnyNodeAnswers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs six processes")
	}
	const shards = 4
	cl, n := startCluster(t, shards, "--dev-clock")
	at := func(i int) *testserver.Client { return n[i%len(n)] }

	// Workspaces made through each node land on several shards.
	var wss []string
	seen := map[int]bool{}
	for i := 0; len(seen) < 3; i++ {
		if i == 24 {
			t.Fatalf("24 workspaces on shards %v only", seen)
		}
		ws := at(i).NewWorkspace(map[string]any{"name": fmt.Sprintf("ws %02d", i), "plan": "pro"})
		k, _ := at(i+1).NewKey(ws, "rest", nil)
		s, ok := cluster.KeyShard(k, shards)
		if !ok {
			t.Fatalf("key %q names no shard", k)
		}
		seen[s] = true
		wss = append(wss, ws)
	}
	list := sameEverywhere(t, n, 200, func(c *testserver.Client) testserver.Response { return c.Admin("GET", "/workspaces", nil) })
	var ids []string
	for _, m := range regexp.MustCompile(`"id":"([^"]+)"`).FindAllStringSubmatch(string(list), -1) {
		ids = append(ids, m[1])
	}
	sorted := slices.Clone(wss)
	slices.Sort(sorted)
	if !slices.Equal(ids, sorted) {
		t.Fatalf("the gathered list holds %v, want %v in id order", ids, sorted)
	}

	for i, c := range n {
		if r := c.Do("GET", c.AdminURL+"/readyz", nil, nil); r.Status != 200 || string(r.Body) != `{"status":"ready"}` {
			t.Fatalf("node %d /readyz: %d %s", i+1, r.Status, r.Body)
		}
	}

	// Nodes 1 and 2 take forwarded requests node to node, node 3 over
	// NATS only; the peer listener closes a connection that does not open
	// with the cluster's secret.
	var status struct {
		Nodes []struct {
			ID, Peer string
			Shards   []int
		}
	}
	at(0).AdminInto(200, "GET", "/cluster", nil, &status)
	peers := map[string]string{}
	peerOwns := false // b1 or b2 owns a shard: the other forwards to it node to node
	for _, nd := range status.Nodes {
		peers[nd.ID] = nd.Peer
		peerOwns = peerOwns || nd.Peer != "" && len(nd.Shards) > 0
	}
	defer func() {
		// Both ways carried the test's forwarded requests.
		const ok = `backupmon_cluster_forwards_total{outcome="ok",via=`
		if v := at(0).Metric(ok+`"peer"}`) + at(1).Metric(ok+`"peer"}`); peerOwns && v == 0 {
			t.Errorf("nodes 1 and 2 forwarded nothing node to node")
		}
		// Node 3 forwards over NATS, or, when it owns every shard, the
		// others forward to it over NATS (it has no peer address).
		if v := at(0).Metric(ok+`"nats"}`) + at(1).Metric(ok+`"nats"}`) + at(2).Metric(ok+`"nats"}`); v == 0 {
			t.Errorf("no node forwarded anything over NATS")
		}
		if v := at(2).Metric(ok + `"peer"}`); v != 0 {
			t.Errorf("node 3, without a peer listener, forwarded %v requests node to node", v)
		}
	}()
	if len(peers) != 3 || peers["b1"] == "" || peers["b2"] == "" || peers["b3"] != "" {
		t.Fatalf("the nodes' peer addresses: %v, want b1 and b2's, none for b3", peers)
	}
	for _, hello := range []string{"", "backupmon-peer 1 ", "backupmon-peer 1 wrong", "POST /forward/s000 HTTP/1.1\r\nHost: x\r\n\r\n"} {
		if got := peerGreeting(t, peers["b1"], hello); got != "" {
			t.Fatalf("a peer connection opening with %q was answered %q; want it closed unanswered", hello, got)
		}
	}

	ws := wss[0]
	client := at(1).NewClient(ws, "Acme")
	var job struct{ ID, IngestAddress string }
	at(2).AdminInto(201, "POST", "/workspaces/"+ws+"/jobs", testserver.JobBody(client, "nightly", testserver.Daily(), nil), &job)
	report, _ := at(0).NewKey(ws, "report", nil)
	rest, _ := at(1).NewKey(ws, "rest", nil)
	asst, _ := at(2).NewKey(ws, "assistant", map[string]any{"access": "read-write"})

	t.Run("Report", func(t *testing.T) {
		r := at(0).For(t).Report(job.ID, report, "idem-1", `{"status":"failed","duration_seconds":60}`)
		alert, _ := r.JSON["alert_id"].(string)
		if r.Status != 200 || alert == "" || string(r.Body) != `{"ok":true,"status":"failed","alert_id":"`+alert+`","duplicate":false,"superseded":false}` {
			t.Fatalf("report through node 1: %d %s", r.Status, r.Body)
		}
		for i := 1; i < 3; i++ {
			r := at(i).For(t).Report(job.ID, report, "idem-1", `{"status":"failed","duration_seconds":60}`)
			if r.Status != 200 || string(r.Body) != `{"ok":true,"status":"failed","alert_id":null,"duplicate":true,"superseded":false}` {
				t.Fatalf("the same report through node %d: %d %s", i+1, r.Status, r.Body)
			}
		}
		body := sameEverywhere(t, n, 200, func(c *testserver.Client) testserver.Response { return c.For(t).REST(rest, "/jobs/"+job.ID) })
		if !strings.Contains(string(body), `"status":"failed"`) || !strings.Contains(string(body), `"durationSeconds":60`) {
			t.Fatalf("the job after a failed report: %s", body)
		}
		r = at(2).For(t).Report(job.ID, "svc_live_"+strings.Repeat("0", 48), "", `{"status":"ok"}`)
		if r.Status != 401 || string(r.Body) != `{"error":"Invalid API key"}` {
			t.Fatalf("an unknown key: %d %s", r.Status, r.Body)
		}
	})

	t.Run("Clock", func(t *testing.T) {
		// Two days on through node 2: the job is overdue on its owner, and
		// every node's shards stand at the same time.
		now := at(1).For(t).Advance(48 * time.Hour)
		body := sameEverywhere(t, n, 200, func(c *testserver.Client) testserver.Response { return c.For(t).REST(rest, "/jobs/"+job.ID) })
		if !strings.Contains(string(body), `"status":"missing"`) {
			t.Fatalf("the job two days after its report: %s", body)
		}
		stamp := `"createdAt":"` + now.UTC().Format("2006-01-02T15:04:05.000Z") + `"`
		for i := range 6 {
			r := at(i).For(t).MustAdmin(201, "POST", "/workspaces", map[string]any{"name": fmt.Sprintf("later %d", i), "plan": "pro"})
			if !strings.Contains(string(r.Body), stamp) {
				t.Fatalf("a workspace made through node %d after the clock moved: %s, want %s", i%3+1, r.Body, stamp)
			}
		}
	})

	t.Run("Dashboard", func(t *testing.T) {
		at(0).For(t).MustAdmin(201, "POST", "/workspaces/"+ws+"/users", map[string]any{"email": "owner@acme.test", "name": "Owner", "role": "owner", "password": "correct horse battery"})
		form := url.Values{"email": {"owner@acme.test"}, "password": {"correct horse battery"}}
		r := at(1).For(t).Do("POST", at(1).PublicURL+"/login", map[string]string{"Content-Type": "application/x-www-form-urlencoded",
			"Sec-Fetch-Site": "same-origin", "Origin": at(1).PublicURL}, []byte(form.Encode()))
		var session string
		for _, c := range (&http.Response{Header: r.Header}).Cookies() {
			if c.Name == "__Host-session" {
				session = c.Value
			}
		}
		if r.Status != 303 || session == "" {
			t.Fatalf("log in through node 2: %d %q %s", r.Status, r.Header.Values("Set-Cookie"), r.Body)
		}
		for i := range 3 {
			r := at(i).For(t).Do("GET", at(i).PublicURL+"/jobs", map[string]string{"Cookie": "__Host-session=" + session}, nil)
			if r.Status != 200 || !strings.Contains(string(r.Body), "nightly") {
				t.Fatalf("the jobs page through node %d with node 2's session: %d %.300s", i+1, r.Status, r.Body)
			}
		}
		// An invitation made through node 1: its link, which names the
		// workspace, works through every node, and once.
		post := map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "same-origin",
			"Origin": at(0).PublicURL, "Cookie": "__Host-session=" + session}
		r = at(0).For(t).Do("POST", at(0).PublicURL+"/settings/invites", post, []byte(url.Values{"email": {"tech@acme.test"}, "role": {"member"}}.Encode()))
		m := regexp.MustCompile(`/invite/[0-9a-f-]+/[A-Za-z0-9_-]{43}`).FindString(string(r.Body))
		if r.Status != 200 || m == "" {
			t.Fatalf("invite through node 1: %d %.300s", r.Status, r.Body)
		}
		for i := range 3 {
			r := at(i).For(t).Do("GET", at(i).PublicURL+m, nil, nil)
			if r.Status != 200 || !strings.Contains(string(r.Body), "tech@acme.test") {
				t.Fatalf("the invitation's link through node %d: %d %.300s", i+1, r.Status, r.Body)
			}
		}
		accept := []byte(url.Values{"name": {"Tech"}, "password": {"a long password 1"}, "confirm": {"a long password 1"}}.Encode())
		hdr := map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "same-origin", "Origin": at(2).PublicURL}
		if r := at(2).For(t).Do("POST", at(2).PublicURL+m, hdr, accept); r.Status != 303 {
			t.Fatalf("accept through node 3: %d %.300s", r.Status, r.Body)
		}
		if r := at(1).For(t).Do("GET", at(1).PublicURL+m, nil, nil); r.Status != 404 {
			t.Fatalf("the used link through node 2: %d, want 404", r.Status)
		}

		// The technician is also a user of a workspace on another shard: the
		// switcher lists both through every node, and moves between the two
		// sessions the browser holds without a new login.
		idOf := func(s string) engine.ID { id, _ := engine.ParseID(s); return id }
		var other string
		for _, w := range wss[1:] {
			if cluster.WorkspaceShard(idOf(w), shards) != cluster.WorkspaceShard(idOf(ws), shards) {
				other = w
				break
			}
		}
		if other == "" {
			t.Fatalf("no workspace of %v on another shard than %s", wss, ws)
		}
		at(2).For(t).MustAdmin(201, "POST", "/workspaces/"+other+"/users", map[string]any{"email": "tech@acme.test", "name": "Tech elsewhere", "role": "admin", "password": "the other password 1"})
		send := func(v url.Values, cookie string, i int) testserver.Response {
			h := map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "same-origin", "Origin": at(i).PublicURL}
			if cookie != "" {
				h["Cookie"] = cookie
			}
			return at(i).For(t).Do("POST", at(i).PublicURL+v.Get("path"), h, []byte(v.Encode()))
		}
		cookies := func(r testserver.Response) map[string]string {
			out := map[string]string{}
			for _, c := range (&http.Response{Header: r.Header}).Cookies() {
				out[c.Name] = c.Value
			}
			return out
		}
		r = send(url.Values{"path": {"/login"}, "email": {"tech@acme.test"}, "password": {"a long password 1"}, "workspace": {ws}}, "", 0)
		sessA := cookies(r)["__Host-session"]
		if r.Status != 303 || sessA == "" {
			t.Fatalf("the technician's login to %s: %d %s", ws, r.Status, r.Body)
		}
		options := regexp.MustCompile(`<option value="([0-9a-f-]+)"`)
		for i := range 3 {
			r := at(i).For(t).Do("GET", at(i).PublicURL+"/", map[string]string{"Cookie": "__Host-session=" + sessA}, nil)
			var listed []string
			for _, m := range options.FindAllStringSubmatch(string(r.Body), -1) {
				listed = append(listed, m[1])
			}
			slices.Sort(listed)
			want := []string{ws, other}
			slices.Sort(want)
			if r.Status != 200 || !slices.Equal(listed, want) {
				t.Fatalf("the switcher through node %d lists %v, want %v: %d %.300s", i+1, listed, want, r.Status, r.Body)
			}
		}
		r = send(url.Values{"path": {"/switch"}, "workspace": {other}}, "__Host-session="+sessA, 1)
		if loc := r.Header.Get("Location"); r.Status != 303 || !strings.HasPrefix(loc, at(1).PublicURL+"/login?") || !strings.Contains(loc, "workspace="+other) {
			t.Fatalf("switch to a workspace not logged in to: %d %q, want its login", r.Status, loc)
		}
		r = send(url.Values{"path": {"/login"}, "email": {"tech@acme.test"}, "password": {"the other password 1"}, "workspace": {other}, "next": {"/"}}, "__Host-session="+sessA, 2)
		sessB, others := cookies(r)["__Host-session"], cookies(r)["__Host-others"]
		if r.Status != 303 || sessB == "" || others != sessA {
			t.Fatalf("the technician's login to %s: %d, others cookie %q, want the first session kept", other, r.Status, others)
		}
		for i := range 3 {
			r = send(url.Values{"path": {"/switch"}, "workspace": {ws}}, "__Host-session="+sessB+"; __Host-others="+sessA, i)
			got := cookies(r)
			if r.Status != 303 || r.Header.Get("Location") != at(i).PublicURL+"/" || got["__Host-session"] != sessA || got["__Host-others"] != sessB ||
				got["flash"] != url.QueryEscape("Switched to ws 00.") {
				t.Fatalf("switch back to %s through node %d: %d %q, cookies %v; want the first session in use and the second kept", ws, i+1, r.Status, r.Header.Get("Location"), got)
			}
		}
	})

	// Login attempts count by client address across the shards, on the
	// node they arrive at: guesses spread over users of three shards are
	// refused once the address's bucket of that node is spent (10, one
	// every 6 s; each shard alone saw fewer than its own 10). A browser
	// holding a device cookie for a user still logs in as that user.
	t.Run("LoginThrottle", func(t *testing.T) {
		idOf := func(s string) engine.ID { id, _ := engine.ParseID(s); return id }
		var users []string
		byShard := map[int]bool{}
		for _, w := range wss {
			if sh := cluster.WorkspaceShard(idOf(w), shards); !byShard[sh] {
				byShard[sh] = true
				email := fmt.Sprintf("guess%d@acme.test", len(users))
				at(0).For(t).MustAdmin(201, "POST", "/workspaces/"+w+"/users", map[string]any{"email": email, "name": "Guess", "role": "member", "password": "the right password 1"})
				users = append(users, email)
			}
		}
		if len(users) < 3 {
			t.Fatalf("users on %d shards only", len(users))
		}
		login := func(i int, email, password, cookie string) testserver.Response {
			h := map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "same-origin", "Origin": at(i).PublicURL}
			if cookie != "" {
				h["Cookie"] = cookie
			}
			return at(i).For(t).Do("POST", at(i).PublicURL+"/login", h, []byte(url.Values{"email": {email}, "password": {password}}.Encode()))
		}
		// The first user's browser logs in through node 2: a device cookie.
		r := login(1, users[0], "the right password 1", "")
		var device string
		for _, c := range (&http.Response{Header: r.Header}).Cookies() {
			if c.Name == "__Host-device" {
				device = c.Value
			}
		}
		if r.Status != 303 || device == "" {
			t.Fatalf("log in through node 2: %d %q", r.Status, r.Header.Values("Set-Cookie"))
		}
		// Node 1 has seen one login (the Dashboard test's): its bucket
		// holds 9 and refills one every 6 s. Four guesses a user at most,
		// so no user's bucket (5) and no shard's (10) runs out.
		refused := 0
		for i := range 12 {
			r := login(0, users[i%3], "a wrong guess", "")
			if r.Status == 429 {
				refused = i + 1
				if r.Header.Get("Retry-After") != "60" || !strings.Contains(string(r.Body), "Too many login attempts. Try again in a minute.") {
					t.Fatalf("guess %d refused: Retry-After %q %.500s", i+1, r.Header.Get("Retry-After"), r.Body)
				}
				break
			}
			if r.Status != 401 || !strings.Contains(string(r.Body), "Wrong e-mail address or password.") {
				t.Fatalf("guess %d through node 1: %d %.300s", i+1, r.Status, r.Body)
			}
		}
		if refused < 10 {
			t.Fatalf("guesses over three shards' users through node 1: refused at guess %d of 12 (0: none), want the 10th or later (the node's address bucket)", refused)
		}
		if r := login(0, users[1], "the right password 1", ""); r.Status != 429 {
			t.Fatalf("the right password through node 1 once the address is refused: %d, want 429", r.Status)
		}
		if r := login(0, users[0], "the right password 1", "__Host-device="+device); r.Status != 303 {
			t.Fatalf("the first user's browser through node 1: %d %.300s, want 303 (its device cookie)", r.Status, r.Body)
		}
		if r := login(2, users[1], "a wrong guess", ""); r.Status != 401 {
			t.Fatalf("a guess through node 3: %d, want 401 (each node counts its own)", r.Status)
		}
	})

	t.Run("Assistant", func(t *testing.T) {
		init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
		for i := range 3 {
			h := testserver.Bearer(asst)
			h["Content-Type"], h["Accept"] = "application/json", "application/json, text/event-stream"
			r := at(i).For(t).Do("POST", at(i).PublicURL+"/mcp", h, []byte(init))
			if r.Status != 200 || !strings.Contains(string(r.Body), `"serverInfo"`) {
				t.Fatalf("initialize through node %d: %d %s", i+1, r.Status, r.Body)
			}
		}
	})

	t.Run("Mail", func(t *testing.T) {
		c := n[0].For(t)
		var mailJob struct{ ID, IngestAddress string }
		c.AdminInto(201, "POST", "/workspaces/"+ws+"/jobs", testserver.JobBody(client, "dump", testserver.Daily(), nil), &mailJob)
		raw := "From: cron@db01.example\r\nTo: " + mailJob.IngestAddress + "\r\nSubject: dump finished\r\n" +
			"Message-ID: <cron-1@db01.example>\r\nContent-Type: text/plain\r\n\r\n" +
			"Job: dump\r\nStatus: OK\r\nStarted: 2026-03-16 08:57:30 +0000\r\nFinished: 2026-03-16 08:59:00 +0000\r\n"
		// A script's mail to a Veeam job: unreadable, kept through node 1.
		if err := smtp.SendMail(cl.Nodes[0].SMTPAddr, nil, "cron@db01.example", []string{mailJob.IngestAddress}, []byte(raw)); err != nil {
			t.Fatalf("send through node 1: %v", err)
		}
		var unparsed []struct{ ID, JobID string }
		n[1].For(t).AdminInto(200, "GET", "/workspaces/"+ws+"/unparsed", nil, &unparsed)
		if len(unparsed) != 1 || unparsed[0].JobID != mailJob.ID {
			t.Fatalf("unparsed list through node 2: %+v", unparsed)
		}
		// The job's vendor fixed through node 3, the e-mail read again
		// through node 2 from the cluster's store.
		n[2].For(t).MustAdmin(200, "PATCH", "/workspaces/"+ws+"/jobs/"+mailJob.ID, map[string]any{"vendor": "generic"})
		r := n[1].For(t).MustAdmin(200, "POST", "/workspaces/"+ws+"/unparsed/"+unparsed[0].ID+"/reparse", nil)
		if r.Data()["status"] != "ok" {
			t.Fatalf("reparse through node 2: %s", r.Body)
		}
		// A readable one through node 3, and an address no job has.
		good := strings.Replace(raw, "cron-1@", "cron-2@", 1)
		if err := smtp.SendMail(cl.Nodes[2].SMTPAddr, nil, "cron@db01.example", []string{mailJob.IngestAddress}, []byte(good)); err != nil {
			t.Fatalf("send through node 3: %v", err)
		}
		body := sameEverywhere(t, n, 200, func(c *testserver.Client) testserver.Response { return c.For(t).REST(rest, "/jobs/"+mailJob.ID) })
		if strings.Count(string(body), `"completedAt"`) < 2 {
			t.Fatalf("the job after two e-mails: %s", body)
		}
		unknown := "aaaaaaaaaaaaaaaaaaaa@" + strings.SplitN(mailJob.IngestAddress, "@", 2)[1]
		err := smtp.SendMail(cl.Nodes[1].SMTPAddr, nil, "cron@db01.example", []string{unknown}, []byte(good))
		if err == nil || !strings.Contains(err.Error(), "550") || !strings.Contains(err.Error(), "5.1.1 No such ingest address") {
			t.Fatalf("an unknown address through node 2: %v, want 550 5.1.1", err)
		}
	})
}

// peerGreeting opens a connection to a node's peer listener, sends hello
// (as the first frame, or as raw bytes when it is an HTTP request) and a
// request frame for shard 0, and returns what the node answered before it
// closed the connection.
func peerGreeting(t *testing.T, addr, hello string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var b []byte
	if strings.HasPrefix(hello, "POST ") {
		b = []byte(hello)
	} else {
		b = binary.BigEndian.AppendUint32(b, uint32(len(hello)))
		b = append(b, hello...)
	}
	b = binary.BigEndian.AppendUint32(b, 11)
	b = append(b, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 'x')
	if _, err := c.Write(b); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	got, err := io.ReadAll(c)
	if err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("reading the peer's answer to %q: %v", hello, err)
	}
	return string(got)
}
