package clustertest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"backupmon/cluster"
	"backupmon/clustertls"
	"backupmon/localcluster"
)

// TestRotateTheClusterSecrets: the procedure docs/decisions.md gives to
// change the cluster's authority (to revoke a member's certificate, or
// before the authority expires) and its NATS secret keeps the cluster
// serving, under load:
//
//  1. every member's authority file holds the old authority and the new,
//     and the NATS secret file the old secret then the new; each process is
//     restarted in turn to read them (NATS servers, then nodes): the
//     servers take either secret and both authorities;
//  2. each member's certificate and key are replaced with ones of the new
//     authority, and each process is sent SIGHUP;
//  3. the authority file holds the new authority alone; the secret file the
//     new secret first, and each node is restarted in turn (they present
//     it); then the new secret alone, and each NATS server is restarted in
//     turn.
//
// Every acknowledged report is then there exactly once, reports go through
// every node, and the NATS servers refuse a certificate of the old
// authority (a revoked member's) and the old secret, as they take the new.
func TestRotateTheClusterSecrets(t *testing.T) {
	if testing.Short() {
		t.Skip("runs six processes")
	}
	h := startHarness(t, *shards, 1)
	h.load.start(12, 8)
	files := h.c.TLS
	old := filepath.Join(t.TempDir(), "old")
	for _, f := range []string{files.CA, files.Cert, files.Key} {
		copyFile(t, f, filepath.Join(old, filepath.Base(f)))
	}
	oldFiles := clustertls.Files{CA: filepath.Join(old, filepath.Base(files.CA)), Cert: filepath.Join(old, filepath.Base(files.Cert)), Key: filepath.Join(old, filepath.Base(files.Key))}
	next, err := clustertls.Issue(filepath.Join(t.TempDir(), "next"), "member", []string{"127.0.0.1", "localhost"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	oldSecret, newSecret := h.c.NATSSecret, "the-cluster's-next-nats-secret-0123456789"

	// 1. Both authorities and both secrets, one process at a time.
	writeFile(t, files.CA, readFile(t, oldFiles.CA)+readFile(t, next.CA))
	writeFile(t, h.c.AuthFile, oldSecret+"\n"+newSecret+"\n")
	h.roll("both authorities and both secrets", h.c.NATS, h.c.Nodes)
	// 2. The new certificates, on SIGHUP.
	copyFile(t, next.Cert, files.Cert)
	copyFile(t, next.Key, files.Key)
	for _, p := range h.c.Procs() {
		if err := p.Hangup(); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range h.c.Procs() {
		waitLog(t, p, 0, "cluster TLS reloaded")
	}
	// 3. The new authority alone; the nodes present the new secret, then
	// the servers take it alone.
	copyFile(t, next.CA, files.CA)
	writeFile(t, h.c.AuthFile, newSecret+"\n"+oldSecret+"\n")
	h.roll("the new authority and the new secret first", nil, h.c.Nodes)
	writeFile(t, h.c.AuthFile, newSecret+"\n")
	h.c.NATSSecret = newSecret // the test's own connections
	h.roll("the new authority and the new secret alone", h.c.NATS, nil)

	h.load.halt()
	h.resend()
	h.verify("after the rotation")
	for i, n := range h.nodes {
		if r := n.Report(h.f.targets[i].job, h.f.targets[i].key, fmt.Sprintf("rotated-%d", i), `{"status":"ok"}`); r.Status != 200 {
			t.Fatalf("report through node %d after the rotation: %d %s", i+1, r.Status, r.Body)
		}
	}
	if err := dialNATS(h.c, files, newSecret); err != nil {
		t.Fatalf("the new authority's certificate and the new secret: %v", err)
	}
	if err := dialNATS(h.c, oldFiles, newSecret); err == nil {
		t.Fatal("a certificate of the old authority still connects to NATS")
	}
	if err := dialNATS(h.c, files, oldSecret); !errors.Is(err, nats.ErrAuthorization) {
		t.Fatalf("the old secret: %v, want nats.ErrAuthorization", err)
	}
}

// roll restarts processes in turn, as an operator does: each NATS server
// of servers (SIGTERM), once the one before has caught up and every
// stream has its three replicas current again, then each node of nodes
// (SIGTERM: it hands its shards over), waiting until every shard is
// served.
func (h *harness) roll(what string, servers []*localcluster.Proc, nodes []*localcluster.Node) {
	h.t.Helper()
	start := time.Now()
	for _, p := range servers {
		if err := p.Term(30 * time.Second); err != nil {
			h.t.Fatal(err)
		}
		from := len(readFile(h.t, p.Log))
		if err := p.Start(time.Minute); err != nil {
			h.t.Fatalf("%s with %s: %v", p.Name, what, err)
		}
		// The line the operator waits for, then every stream whole.
		waitLog(h.t, p, from, "caught up: every stream on this server is current")
		h.waitStreamsWhole(p.Name + "'s restart")
	}
	for _, n := range nodes {
		i := slices.Index(h.c.Nodes, n)
		h.load.down[i].Store(true)
		if err := n.TermOrStacks(40*time.Second, "backupmon"); err != nil {
			h.t.Fatal(err)
		}
		if err := n.Start(time.Minute); err != nil {
			h.t.Fatalf("%s with %s: %v", n.ID, what, err)
		}
		h.load.down[i].Store(false)
		h.settle()
	}
	h.t.Logf("%d processes restarted with %s in %v; answers: %v", len(servers)+len(nodes), what, time.Since(start).Round(time.Millisecond), h.load.codesSince(start))
}

// dialNATS connects to the cluster's NATS servers with a member's files
// and a secret.
func dialNATS(c *localcluster.Cluster, f clustertls.Files, secret string) error {
	tlsc, err := clustertls.Load(f, time.Now())
	if err != nil {
		return err
	}
	nc, err := nats.Connect(strings.Join(c.NATSURLs, ","), nats.UserInfo(cluster.NATSUser, secret), nats.Secure(tlsc), nats.Timeout(5*time.Second))
	if err != nil {
		return err
	}
	nc.Close()
	return nil
}

// waitLog waits until p's log has a line with text in it past its first
// from bytes.
func waitLog(t *testing.T, p *localcluster.Proc, from int, text string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if strings.Contains(readFile(t, p.Log)[from:], text) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s logged no %q within 30 s:\n%s", p.Name, text, p.Tail(10))
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// writeFile replaces path with text through a temporary file, as an
// operator's tools do, so that no process reads it half written.
func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".tmp", []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) { t.Helper(); writeFile(t, to, readFile(t, from)) }
