package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"backupmon/internal/testserver"
)

// TestNodeKeepsItsCluster: a node keeps the id of the cluster it joined in
// its data directory (shards/cluster.id), and refuses to start, in one
// error line and before it makes anything there, on NATS servers that hold
// no cluster (their state lost, or other servers) or another cluster.
// Without the file it joins the cluster they hold.
func TestNodeKeepsItsCluster(t *testing.T) {
	ports := freePorts(t, 2)
	first, second := "127.0.0.1:"+strconv.Itoa(ports[0]), "127.0.0.1:"+strconv.Itoa(ports[1])
	startNats(t, "n1", "--listen", first)
	node := func(addr string) []string {
		return []string{"--cluster", "nats://" + addr, "--node-id", "b1", "--cluster-replicas", "1"}
	}
	data := t.TempDir()
	idFile := filepath.Join(data, "shards", "cluster.id")
	c := testserver.StartChild(t, "node", data, node(first)...)
	if code, err := c.Term(); err != nil || code != 0 {
		t.Fatalf("stop: %d %v", code, err)
	}
	b, err := os.ReadFile(idFile)
	if err != nil || !regexp.MustCompile(`^[0-9a-f]{32}\n$`).Match(b) {
		t.Fatalf("%s: %q %v, want 32 hex digits and a newline", idFile, b, err)
	}
	id := string(b[:32])
	// The same servers: the same cluster, which GET /admin/v1/cluster and
	// backupmon admin cluster name.
	c = testserver.StartChild(t, "node", data, node(first)...)
	var st struct{ Cluster, Node string }
	if err := c.AdminCall(200, "GET", "/cluster", nil, &st); err != nil || st.Cluster != id || st.Node != "b1" {
		t.Fatalf("GET /admin/v1/cluster: %+v %v, want cluster %s as b1 sees it", st, err, id)
	}
	out, err := exec.Command(testserver.Binary(t), "admin", "cluster", "--admin-url", c.AdminURL, "--admin-token", testserver.AdminToken).CombinedOutput()
	if want := "cluster " + id + ": 4 shards, 1 copies of each shard's log; as node b1 sees it\n"; err != nil || !strings.HasPrefix(string(out), want) {
		t.Fatalf("admin cluster (%v):\n%s\nwant it to begin %q", err, out, want)
	}
	if code, err := c.Term(); err != nil || code != 0 {
		t.Fatalf("stop: %d %v", code, err)
	}

	// Other servers, empty: refused, and nothing made there.
	startNats(t, "n9", "--listen", second)
	nodeInStopsAtStart(t, data, node(second),
		`err="the NATS servers do not hold this node's cluster: this node's data belongs to cluster `+id+`, and the NATS servers at nats://`+second+
			` hold no cluster: their state is gone, or they are other servers; a node does not set up a new cluster over an old one's. Point --cluster at its own servers, or restore them; to have this node join the cluster they hold, remove `+idFile+`"`)
	js, ctx := jetStreamAt(t, "nats://"+second)
	if _, err := js.KeyValue(ctx, "bm_cluster"); !errors.Is(err, jetstream.ErrBucketNotFound) {
		t.Fatalf("the refused node made the cluster's settings on the other servers: %v", err)
	}

	// Another cluster there: refused too.
	other := testserver.StartChild(t, "other", t.TempDir(), append(node(second)[:2], "--node-id", "c1", "--cluster-replicas", "1")...)
	otherID, err := os.ReadFile(filepath.Join(other.DataDir, "shards", "cluster.id"))
	if err != nil {
		t.Fatal(err)
	}
	other.Term()
	nodeInStopsAtStart(t, data, node(second), "and the NATS servers at nats://"+second+" hold cluster "+string(otherID[:32])+"; a node does not set up")

	// Without its file the node joins the cluster there.
	if err := os.Remove(idFile); err != nil {
		t.Fatal(err)
	}
	c = testserver.StartChild(t, "node", data, node(second)...)
	c.Term()
	if b, err := os.ReadFile(idFile); err != nil || string(b) != string(otherID) {
		t.Fatalf("%s after joining the other cluster: %q %v, want %q", idFile, b, err, otherID)
	}
}

// jetStreamAt connects to the NATS server at url without a secret.
func jetStreamAt(t *testing.T, url string) (jetstream.JetStream, context.Context) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return jetStreamOf(t, nc)
}
