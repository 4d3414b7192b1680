package clustertest

import (
	"fmt"
	"strings"
	"testing"

	"backupmon/localcluster"
)

// TestMemberCertificates: a cluster whose members are on addresses of
// their own, each with a certificate that names only its address, as on
// separate hosts: the NATS servers form their JetStream cluster over TLS
// routes (the shards' streams keep three copies), the nodes reach NATS
// over TLS, and every report sent through a node that does not own its
// workspace is forwarded node to node over the TLS peer link (none over
// NATS), recorded once, and read back through another node.
func TestMemberCertificates(t *testing.T) {
	if testing.Short() {
		t.Skip("runs six processes")
	}
	const shards = 4
	cl, n := startClusterOf(t, localcluster.Config{Shards: shards, NoProxies: true, MemberHosts: true})
	for i, u := range cl.NATSURLs {
		if want := fmt.Sprintf("nats://127.0.0.%d:", 11+i); !strings.HasPrefix(u, want) {
			t.Fatalf("NATS server %d listens at %s, want %s…", i+1, u, want)
		}
	}
	var status struct {
		Nodes []struct{ ID, Peer string }
	}
	n[0].AdminInto(200, "GET", "/cluster", nil, &status)
	peers := map[string]string{}
	for _, s := range status.Nodes {
		peers[s.ID] = s.Peer
	}
	for i := range cl.Nodes {
		id, want := fmt.Sprintf("b%d", i+1), fmt.Sprintf("127.0.0.%d:", 21+i)
		if !strings.HasPrefix(peers[id], want) {
			t.Fatalf("node %s's peer address %q, want %s… (cluster status %+v)", id, peers[id], want, status.Nodes)
		}
	}

	f := newFixture(t, n[0], shards, 1)
	for i, tg := range f.targets {
		for j := range n {
			body := fmt.Sprintf(`{"status":"ok","size_bytes":%d}`, 1000*i+j+1)
			if r := n[j].Report(tg.job, tg.key, fmt.Sprintf("k-%d-%d", i, j), body); r.Status != 200 || r.JSON["ok"] != true {
				t.Fatalf("report to workspace %s through node %d: %d %s", tg.ws, j+1, r.Status, r.Body)
			}
		}
		r := n[(i+1)%len(n)].REST(f.rest[tg.ws], "/jobs/"+tg.job)
		job, _ := r.JSON["data"].(map[string]any)
		results, _ := job["recentResults"].([]any)
		var sizes []string
		for _, res := range results {
			sizes = append(sizes, fmt.Sprint(res.(map[string]any)["sizeBytes"]))
		}
		if want := fmt.Sprintf("[%d %d %d]", 1000*i+3, 1000*i+2, 1000*i+1); r.Status != 200 || fmt.Sprint(sizes) != want {
			t.Fatalf("the job through another node: %d, sizes %v, want %s: %s", r.Status, sizes, want, r.Body)
		}
	}
	var viaPeer, viaNATS float64
	for _, c := range n {
		viaPeer += c.Metric(`backupmon_cluster_forwards_total{outcome="ok",via="peer"}`)
		viaNATS += c.Metric(`backupmon_cluster_forwards_total{outcome="ok",via="nats"}`)
	}
	if viaPeer == 0 || viaNATS != 0 {
		t.Fatalf("requests forwarded node to node %v, over NATS %v; want some node to node and none over NATS", viaPeer, viaNATS)
	}
}
