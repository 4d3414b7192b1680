package clustertest

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"backupmon/cluster"
	"backupmon/internal/testserver"
)

// TestBrokenShardIsReadOnly: a message that is not the shard writer's lands
// in a shard's stream (as a damaged or foreign write would). The owner's
// next append is fenced by it; the shard is rebuilt from its stream, whose
// replay finds the damage: the shard then serves read-only on the history
// before it. Reads answer as before through every node; a report answers
// 503 with Retry-After and the read-only message, an admin change 503
// UNAVAILABLE; backupmon admin cluster shows the shard broken with the
// problem, and the owner's /metrics counts it. No node writes past the
// damage.
func TestBrokenShardIsReadOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("runs six processes")
	}
	const shards = 2
	cl, n := startCluster(t, shards)
	ws := n[0].NewWorkspace(map[string]any{"name": "Acme", "plan": "pro"})
	rest, _ := n[0].NewKey(ws, "rest", nil)
	report, _ := n[0].NewKey(ws, "report", nil)
	job := n[1].NewJob(ws, n[2].NewClient(ws, "Globex"), "nightly", testserver.Daily())
	if r := n[2].Report(job, report, "k1", `{"status":"ok","size_bytes":777}`); r.Status != 200 {
		t.Fatalf("report: %d %s", r.Status, r.Body)
	}
	before := sameEverywhere(t, n, 200, func(c *testserver.Client) testserver.Response { return c.REST(rest, "/jobs/"+job) })
	shard, _ := cluster.KeyShard(rest, shards)

	// A foreign message in the shard's stream.
	js := jetStream(t, cl)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := js.Publish(ctx, cluster.Subject(shard), []byte("not a log message")); err != nil {
		t.Fatal(err)
	}

	// The next change fails (fenced), then the shard comes back read-only.
	var last testserver.Response
	deadline := time.Now().Add(60 * time.Second)
	for i := 0; ; i++ {
		last = n[i%3].Report(job, report, fmt.Sprintf("after-%d", i), `{"status":"failed"}`)
		if last.Status == 503 && strings.Contains(string(last.Body), "read-only") {
			break
		}
		if last.Status == 200 && i > 0 {
			t.Fatalf("a report after the damage was recorded: %s", last.Body)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no read-only answer within 60 s; last %d %s", last.Status, last.Body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	want := `{"error":"This workspace is read-only for now: its log failed an integrity check and awaits repair; nothing was changed, retry later"}`
	if string(last.Body) != want || last.Header.Get("Retry-After") != "300" {
		t.Fatalf("report on a read-only shard: %s (Retry-After %q), want %s with Retry-After 300", last.Body, last.Header.Get("Retry-After"), want)
	}
	after := sameEverywhere(t, n, 200, func(c *testserver.Client) testserver.Response { return c.REST(rest, "/jobs/"+job) })
	if string(after) != string(before) {
		t.Fatalf("the job read-only is not the job before the damage:\n%s\n%s", after, before)
	}
	r := n[1].Admin("PATCH", "/workspaces/"+ws+"/jobs/"+job, map[string]any{"name": "renamed"})
	if r.Status != 503 || !strings.Contains(string(r.Body), `"code":"UNAVAILABLE"`) {
		t.Fatalf("admin change on a read-only shard: %d %s", r.Status, r.Body)
	}
	out, err := exec.Command(testserver.Binary(t), "admin", "cluster", "--admin-url", n[2].AdminURL, "--admin-token", testserver.AdminToken).CombinedOutput()
	if err != nil || !strings.Contains(string(out), fmt.Sprintf("%-6d %-8s", shard, "broken")) || !strings.Contains(string(out), "problem: ") {
		t.Fatalf("admin cluster (%v):\n%s", err, out)
	}
	// The nodes' table names each one's peer address (node 3 has none).
	for _, line := range []string{`(?m)^NODE +LAST HEARTBEAT +PEER +SHARDS$`, `(?m)^b1 +\S+ +127\.0\.0\.1:\d+ `, `(?m)^b3 +\S+ +- `} {
		if !regexp.MustCompile(line).Match(out) {
			t.Fatalf("admin cluster: no line like %s:\n%s", line, out)
		}
	}
	var broken float64
	for _, c := range n {
		broken += c.Metric("backupmon_cluster_shards_broken")
	}
	if broken != 1 {
		t.Fatalf("the nodes' metrics count %v broken shards, want 1", broken)
	}
}
