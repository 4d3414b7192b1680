package clustertest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"backupmon/internal/testserver"
	"backupmon/localcluster"
)

// TestReshardThroughABackup: a cluster's shard count is fixed at its set-up,
// so a cluster that must grow past it moves to a new cluster of more
// shards: a backup through any node, imported into the new cluster
// (`cluster import --backup`, which refuses a backup cut short). Every admin and REST read through each new node
// then answers as the old cluster did, with the keys the old cluster made
// (whose first hex characters name a shard of the old count: the import's
// directory routes them), an acknowledged report sent again is a
// duplicate, the old report key records a new one, and a key the new
// cluster makes works too.
func TestReshardThroughABackup(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two clusters")
	}
	old, oldNodes := startCluster(t, 2, "--dev-clock")
	at := oldNodes[0].Advance(time.Second).Truncate(time.Minute).Add(2 * time.Minute)
	oldNodes[0].SetClock(at)
	keys := map[string]string{}
	type job struct{ ws, id, report string }
	var jobs []job
	names := []string{"Acme IT", "Globex MSP", "Initech", "Umbrella"}
	for i, name := range names {
		c := oldNodes[i%len(oldNodes)]
		ws := c.NewWorkspace(map[string]any{"name": name, "plan": "pro"})
		client := c.NewClient(ws, "Client of "+name)
		id := c.NewJob(ws, client, "nightly", testserver.Daily())
		report, _ := c.NewKey(ws, "report", nil)
		keys[ws], _ = c.NewKey(ws, "rest", nil)
		if r := c.Report(id, report, "before-"+name, `{"status":"failed","duration_seconds":30}`); r.Status != 200 {
			t.Fatalf("report: %d %s", r.Status, r.Body)
		}
		jobs = append(jobs, job{ws, id, report})
	}
	answers(t, oldNodes[1], keys) // the keys' first uses, before the answers are kept
	want := answers(t, oldNodes[1], keys)

	bin := testserver.Binary(t)
	file := filepath.Join(t.TempDir(), "old.backup")
	if out, err := exec.Command(bin, "admin", "backup", "--admin-url", oldNodes[2].AdminURL, "--admin-token", testserver.AdminToken, "--out", file).CombinedOutput(); err != nil {
		t.Fatalf("admin backup (%v):\n%s", err, out)
	}
	old.Close()

	cl, nodes := startCluster(t, 3, "--dev-clock")
	nodes[0].SetClock(at) // the development clock is a cluster's own: the backup's goes to a single node only
	args := append([]string{"cluster", "import", "--backup", file, "--cluster", strings.Join(cl.NATSURLs, ","), "--cluster-auth-file", cl.AuthFile}, localcluster.TLSArgs(cl.TLS)...)
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil || !strings.Contains(string(out), "4 workspaces moved, 0 already in the cluster, 0 kept e-mails; "+file+" is unchanged\n") {
		t.Fatalf("cluster import --backup (%v):\n%s", err, out)
	}
	// Run again, it moves nothing more; a damaged backup moves nothing.
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil || !strings.Contains(string(out), "0 workspaces moved, 4 already in the cluster") {
		t.Fatalf("cluster import --backup again (%v):\n%s", err, out)
	}
	whole, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.backup")
	os.WriteFile(cut, whole[:len(whole)-10], 0o600)
	args[3] = cut
	if out, err := exec.Command(bin, args...).CombinedOutput(); err == nil || !strings.Contains(string(out), "backupmon cluster import: "+cut+": not a whole backup: ") || !strings.Contains(string(out), "(nothing was moved)") {
		t.Errorf("cluster import of a backup cut short (%v):\n%s", err, out)
	}
	for i, c := range nodes {
		got := answers(t, c, keys)
		for path, w := range want {
			if got[path] != w {
				t.Errorf("new node %d: %s:\n%s\nthe old cluster answered:\n%s", i+1, path, got[path], w)
			}
		}
	}
	for i, j := range jobs {
		c := nodes[i%len(nodes)]
		if r := c.Report(j.id, j.report, "before-"+names[i], `{"status":"failed","duration_seconds":30}`); r.Status != 200 || r.JSON["duplicate"] != true {
			t.Errorf("job %d: the acknowledged report again: %d %s", i, r.Status, r.Body)
		}
		if r := c.Report(j.id, j.report, "after", `{"status":"ok"}`); r.Status != 200 || r.JSON["duplicate"] != false {
			t.Errorf("job %d: a new report with the old cluster's key: %d %s", i, r.Status, r.Body)
		}
		fresh, _ := c.NewKey(j.ws, "rest", nil)
		if r := nodes[(i+1)%len(nodes)].REST(fresh, "/jobs/"+j.id); r.Status != 200 {
			t.Errorf("job %d: a key the new cluster made: %d %s", i, r.Status, r.Body)
		}
	}
}
