package clustertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"backupmon/cluster"
	"backupmon/internal/testserver"
	"backupmon/localcluster"
)

// TestLostTailIsReadOnly: the scale-out memo's test 4 (the Jepsen recipe of
// NATS issue 7549). Bits flip in the middle of a shard's stream files, its
// messages and its Raft log, on two of the three NATS servers while all
// three are down. The two come back first: each cuts its files at the
// damage, so between them they hold a stream that ends early, and they
// agree on it. The acknowledged reports of the cut tail are gone from the
// cluster, and a replay finds no gap (the hole is the tail). The shard's
// mark (the last sequence its owner saw acknowledged, kept apart from the
// stream) catches it: the next owner opens the shard read-only, answers
// reads on what is left and refuses every change, says why on `admin
// cluster`, and writes nothing (no takeover marker), also after the third
// server, which held the whole stream, is back. `backupmon cluster
// accept-loss` says what was lost, and with --yes has the shard served
// again on what is left.
//
// Without the mark the shard is served on the shorter stream: the test
// then fails on the first report after the damage, which is acknowledged.
func TestLostTailIsReadOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("runs six processes")
	}
	cl, n := startCluster(t, 1)
	ws := n[0].NewWorkspace(map[string]any{"name": "Acme", "plan": "pro"})
	rest, _ := n[0].NewKey(ws, "rest", nil)
	report, _ := n[0].NewKey(ws, "report", nil)
	client := n[0].NewClient(ws, "Globex")
	var jobs []string
	for i := range 3 {
		jobs = append(jobs, n[1].NewJob(ws, client, fmt.Sprintf("job %d", i), testserver.Daily()))
	}
	for i := 1; i <= 45; i++ {
		if r := n[i%3].Report(jobs[i%3], report, fmt.Sprintf("k%d", i), fmt.Sprintf(`{"status":"ok","size_bytes":%d}`, i)); r.Status != 200 {
			t.Fatalf("report %d: %d %s", i, r.Status, r.Body)
		}
	}

	js := jetStream(t, cl)
	st, err := js.Stream(context.Background(), cluster.StreamName(0))
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	last, group := info.State.LastSeq, info.Cluster.RaftGroup
	// The owner writes the mark with its heartbeat (every 2 s).
	marks, err := js.KeyValue(context.Background(), "bm_marks")
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		e, err := marks.Get(context.Background(), "s000")
		if err == nil && strings.HasPrefix(string(e.Value()), strconv.FormatUint(last, 10)+" ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no mark at %d 10 s after the last report (%v)", last, err)
		}
	}

	for _, p := range cl.NATS {
		p.Kill()
	}
	for _, p := range cl.NATS[:2] {
		flipMiddles(t, p, cluster.StreamName(0), group)
	}
	for _, p := range cl.NATS[:2] {
		if err := p.Start(time.Minute); err != nil {
			t.Fatal(err)
		}
	}

	// The shard comes back read-only; no report after the damage is
	// acknowledged.
	var r testserver.Response
	for i, deadline := 0, time.Now().Add(90*time.Second); ; i++ {
		r, err = n[i%3].ReportSend(jobs[0], report, fmt.Sprintf("after-%d", i), `{"status":"failed"}`)
		if err == nil && r.Status == 503 && strings.Contains(string(r.Body), "read-only") {
			break
		}
		if err == nil && r.Status == 200 {
			t.Fatalf("a report after the tail was lost was acknowledged: %s", r.Body)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no read-only answer within 90 s; last %d %s (%v)", r.Status, r.Body, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if r.Header.Get("Retry-After") != "300" {
		t.Fatalf("read-only answer's Retry-After %q, want 300", r.Header.Get("Retry-After"))
	}
	out, err := exec.Command(testserver.Binary(t), "admin", "cluster", "--admin-url", n[1].AdminURL, "--admin-token", testserver.AdminToken).CombinedOutput()
	want := fmt.Sprintf("but message %d was acknowledged (the shard's mark): acknowledged messages are gone", last)
	if err != nil || !strings.Contains(string(out), "broken") || !strings.Contains(string(out), want) {
		t.Fatalf("admin cluster (%v) does not show the shard broken with %q:\n%s", err, want, out)
	}
	// Reads answer on what is left, the same through every node.
	sameEverywhere(t, n, 200, func(c *testserver.Client) testserver.Response { return c.REST(rest, "/jobs/"+jobs[0]) })

	// The third server is back: still read-only, and nothing was written.
	if err := cl.NATS[2].Start(time.Minute); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	if r := n[2].Report(jobs[1], report, "after-all", `{"status":"ok"}`); r.Status != 503 {
		t.Fatalf("a report once all three servers are back: %d %s", r.Status, r.Body)
	}
	if info, err = st.Info(context.Background()); err != nil {
		t.Fatal(err)
	}
	if info.State.LastSeq >= last {
		t.Fatalf("the stream ends at %d, want before %d (the test's damage cut nothing?)", info.State.LastSeq, last)
	}
	t.Logf("the stream ends at %d; %d was acknowledged", info.State.LastSeq, last)

	// The repair that accepts the loss: backupmon cluster accept-loss says
	// what was lost, and with --yes serves the shard again on what is left.
	args := append([]string{"cluster", "accept-loss", "--shard", "0", "--cluster", strings.Join(cl.NATSURLs, ","),
		"--cluster-auth-file", cl.AuthFile}, localcluster.TLSArgs(cl.TLS)...)
	lost := fmt.Sprintf("shard 0: its stream ends at message %d, but message %d was acknowledged: %d messages are gone.\n"+
		"Back the cluster up first (backupmon admin backup); then give --yes to serve the shard on what its stream holds.\n", info.State.LastSeq, last, last-info.State.LastSeq)
	if out, err := exec.Command(testserver.Binary(t), args...).CombinedOutput(); exitCode(err) != 1 || string(out) != lost {
		t.Fatalf("accept-loss without --yes: exit %d:\n%s\nwant exit 1:\n%s", exitCode(err), out, lost)
	}
	if r := n[0].Report(jobs[2], report, "still-broken", `{"status":"ok"}`); r.Status != 503 {
		t.Fatalf("a report after accept-loss without --yes: %d %s", r.Status, r.Body)
	}
	accepted := fmt.Sprintf("shard 0: the loss of messages %d to %d is accepted; its next owner serves the stream as it is\n", info.State.LastSeq+1, last)
	if out, err := exec.Command(testserver.Binary(t), append(args, "--yes")...).CombinedOutput(); err != nil || string(out) != accepted {
		t.Fatalf("accept-loss --yes (%v):\n%s\nwant:\n%s", err, out, accepted)
	}
	for i, deadline := 0, time.Now().Add(60*time.Second); ; i++ {
		r, err = n[i%3].ReportSend(jobs[2], report, fmt.Sprintf("repaired-%d", i), `{"status":"ok"}`)
		if err == nil && r.Status == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no report acknowledged within 60 s of the repair; last %d %s (%v)", r.Status, r.Body, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	out, err = exec.Command(testserver.Binary(t), args...).CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "shard 0: its stream ends at message ") || !strings.Contains(string(out), "nothing was lost; nothing changed") {
		t.Fatalf("accept-loss on the repaired shard (%v):\n%s", err, out)
	}
}

// jetStream connects to the cluster's NATS servers as its nodes do, until
// the end of the test.
func jetStream(t *testing.T, cl *localcluster.Cluster) jetstream.JetStream {
	t.Helper()
	js, err := cl.JetStream()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(js.Conn().Close)
	return js
}

// flipMiddles flips one bit in the middle of every block file of a stream
// and of its Raft group in a stopped NATS server's store.
func flipMiddles(t *testing.T, p *localcluster.Proc, stream, group string) {
	t.Helper()
	store := strings.TrimSuffix(p.Log, ".log") // localcluster: <dir>/<name>.log, store <dir>/<name>
	var flipped []string
	err := filepath.Walk(store, func(path string, fi os.FileInfo, err error) error {
		if err != nil || !strings.HasSuffix(path, ".blk") || fi.Size() < 2 {
			return err
		}
		if !strings.Contains(path, "/streams/"+stream+"/") && !strings.Contains(path, "/_js_/"+group+"/") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		b[len(b)/2] ^= 0x40
		flipped = append(flipped, strings.TrimPrefix(path, store))
		return os.WriteFile(path, b, 0o600)
	})
	if err != nil || len(flipped) < 2 {
		t.Fatalf("%s: flipped %v (%v), want the stream's and its Raft group's blocks", p.Name, flipped, err)
	}
	t.Logf("%s: flipped a bit in %v", p.Name, flipped)
}

// exitCode returns the exit code of a command's error: 0 for none, -1 when
// the command did not run to its end.
func exitCode(err error) int {
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.ExitCode()
	}
	return -1
}
