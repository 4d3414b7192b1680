package clustertest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"backupmon/internal/testserver"
	"backupmon/localcluster"
)

// TestNATSServerLosesItsStore: the scale-out memo's test 4, its first
// half. One NATS server's store is a tmpfs, unmounted while reports come
// in (the server goes on writing to what it holds open, and makes new files
// on the directory below), then the server is killed, which frees the
// tmpfs: it comes back on a store that has lost what it held, as on a new
// disk. It must catch up from the other two, and nothing acknowledged is
// lost: every acknowledged report is read back after the shard's log is
// replayed from that server and one other, twice over, no shard is ever
// read-only, and reports go on being acknowledged.
func TestNATSServerLosesItsStore(t *testing.T) {
	if testing.Short() {
		t.Skip("runs six processes")
	}
	dir := t.TempDir()
	store := filepath.Join(dir, "n3") // localcluster: NATS server 3's store
	if err := os.Mkdir(store, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=512m", "tmpfs", store).CombinedOutput(); err != nil {
		t.Skipf("mounting a tmpfs needs root and mount(8): %v %s", err, out)
	}
	mounted := true
	t.Cleanup(func() {
		if mounted {
			exec.Command("umount", "-l", store).Run()
		}
	})
	cl, n := startClusterOf(t, localcluster.Config{Dir: dir, Shards: 1})
	ws := n[0].NewWorkspace(map[string]any{"name": "Acme", "plan": "pro"})
	rest, _ := n[0].NewKey(ws, "rest", nil)
	client := n[0].NewClient(ws, "Globex")
	// A key and a job each for a sixth of the reports: a key takes 60 a
	// minute.
	var jobs, keys []string
	for i := range 6 {
		jobs = append(jobs, n[1].NewJob(ws, client, fmt.Sprintf("job %d", i), testserver.Daily()))
		k, _ := n[0].NewKey(ws, "report", nil)
		keys = append(keys, k)
	}
	acked := map[string]int{} // job: reports acknowledged
	sent := 0
	send := func(count int) {
		t.Helper()
		for range count {
			sent++
			job, key := jobs[sent%len(jobs)], keys[sent%len(jobs)]
			for i, deadline := 0, time.Now().Add(60*time.Second); ; i++ {
				r, err := n[(sent+i)%3].ReportSend(job, key, fmt.Sprintf("k%d", sent), fmt.Sprintf(`{"status":"ok","size_bytes":%d}`, sent))
				if err == nil && r.Status == 200 {
					acked[job]++
					break
				}
				if err == nil && r.Status != 503 && r.Status != 500 {
					t.Fatalf("report %d: %d %s", sent, r.Status, r.Body)
				}
				if time.Now().After(deadline) {
					t.Fatalf("report %d not acknowledged within 60 s: %v", sent, err)
				}
				time.Sleep(100 * time.Millisecond) // retried with its key
			}
		}
	}
	// check reads every job's history through each node once the shard's
	// owner has replayed it: every acknowledged report is there once.
	check := func(when string) {
		t.Helper()
		for _, job := range jobs {
			var v struct {
				History []struct{} `json:"history"`
			}
			for i, deadline := 0, time.Now().Add(60*time.Second); ; i++ {
				err := n[i%3].AdminCall(200, "GET", "/workspaces/"+ws+"/jobs/"+job+"?limit=1000", nil, &v)
				if err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s: job %s: %v", when, job, err)
				}
				time.Sleep(200 * time.Millisecond)
			}
			if len(v.History) != acked[job] {
				t.Fatalf("%s: job %s holds %d results, %d were acknowledged", when, job, len(v.History), acked[job])
			}
		}
		if r := n[0].REST(rest, "/jobs/"+jobs[0]); r.Status != 200 {
			t.Fatalf("%s: a read: %d %s", when, r.Status, r.Body)
		}
	}
	// replayFrom kills the shard's owner with one NATS server down: the
	// node that takes the shard over replays its log from the other two.
	replayFrom := func(down int) {
		t.Helper()
		cl.NATS[down].Kill()
		owner := ownerIndex(t, n, 0)
		cl.Nodes[owner].Kill()
		if err := cl.Nodes[owner].Start(time.Minute); err != nil {
			t.Fatal(err)
		}
		if err := cl.WaitServed(time.Minute); err != nil {
			t.Fatal(err)
		}
		send(10)
		check(fmt.Sprintf("replayed without %s", cl.NATS[down].Name))
		if err := cl.NATS[down].Start(time.Minute); err != nil {
			t.Fatal(err)
		}
	}

	send(40)
	from := len(readFile(t, cl.NATS[2].Log))
	if out, err := exec.Command("umount", "-l", store).CombinedOutput(); err != nil {
		t.Fatalf("umount: %v %s", err, out)
	}
	mounted = false
	send(40) // while the server writes to a store no longer mounted
	cl.NATS[2].Kill()
	left, _ := os.ReadDir(store)
	t.Logf("%s's store after the unmount and the kill: %d entries", cl.NATS[2].Name, len(left))
	send(20)
	if err := cl.NATS[2].Start(time.Minute); err != nil {
		t.Fatal(err)
	}
	waitLog(t, cl.NATS[2], from, "caught up: every stream on this server is current")
	send(20)
	check("after the store was lost")
	replayFrom(0) // from n2 and the server that lost its store
	waitLog(t, cl.NATS[0], 0, "caught up: every stream on this server is current")
	replayFrom(1) // from n1 and that server
	out, err := exec.Command(testserver.Binary(t), "admin", "cluster", "--admin-url", n[0].AdminURL, "--admin-token", testserver.AdminToken).CombinedOutput()
	if err != nil || strings.Contains(string(out), "broken") {
		t.Fatalf("admin cluster (%v):\n%s", err, out)
	}
}

// ownerIndex returns the index of the node that serves shard, as the
// nodes say.
func ownerIndex(t *testing.T, n []*testserver.Client, shard int) int {
	t.Helper()
	var st struct{ Owners []shardOwner }
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if err := n[0].AdminCall(200, "GET", "/cluster", nil, &st); err == nil {
			for _, o := range st.Owners {
				var i int
				if _, err := fmt.Sscanf(o.Owner, "b%d", &i); err == nil && o.Shard == shard && o.State == "served" {
					return i - 1
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("shard %d has no owner: %+v", shard, st.Owners)
		}
	}
}
