package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"backupmon/localcluster"
)

// clusterCommand runs `backupmon cluster local`: three NATS servers and
// three backupmon nodes on loopback, children of this binary, with the
// demo workspace; it prints the nodes' addresses and curl lines that work
// against any node, and stops them all on Ctrl-C.
func clusterCommand(args []string, out, errOut io.Writer) int {
	if len(args) > 0 && args[0] == "import" {
		return clusterImport(args[1:], out, errOut)
	}
	if len(args) > 0 && args[0] == "cert" {
		return clusterCert(args[1:], out, errOut)
	}
	if len(args) > 0 && args[0] == "accept-loss" {
		return clusterAcceptLoss(args[1:], out, errOut)
	}
	if len(args) == 0 || args[0] != "local" {
		fmt.Fprintln(errOut, "Usage: backupmon cluster local [--dir ./cluster-data] [--shards 4]\n       backupmon cluster import --data ./data --cluster nats://h1:4222,...\n       backupmon cluster cert --dir ./cluster-tls --name n1 --hosts 10.0.0.1,n1.internal\n       backupmon cluster accept-loss --shard 0 --cluster nats://h1:4222,... [--yes]")
		return 2
	}
	fs := flag.NewFlagSet("cluster local", flag.ContinueOnError)
	fs.SetOutput(errOut)
	dir := fs.String("dir", "./cluster-data", "directory of every process's data and log")
	shards := fs.Int("shards", 4, "the cluster's shard count (fixed when it is first set up)")
	ports := fs.String("ports", "8080,8180,4222,2525", "first public, admin, NATS and SMTP ports (node i listens on each plus i); 0: free ports")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	var first [4]int
	if *ports != "0" {
		parts := strings.Split(*ports, ",")
		for i := range first {
			if len(parts) != 4 {
				break
			}
			first[i], _ = strconv.Atoi(strings.TrimSpace(parts[i]))
		}
		if len(parts) != 4 || slices.Contains(first[:], 0) {
			fmt.Fprintln(errOut, "backupmon cluster: --ports takes four ports (public,admin,nats,smtp), or 0")
			return 2
		}
	}
	bin, err := os.Executable()
	if err != nil {
		fmt.Fprintln(errOut, "backupmon cluster:", err)
		return 1
	}
	token, err := localToken(*dir)
	if err != nil {
		fmt.Fprintln(errOut, "backupmon cluster:", err)
		return 1
	}
	fmt.Fprintf(out, "starting three NATS servers and three nodes (data and logs in %s)...\n", *dir)
	c, err := localcluster.Start(localcluster.Config{Binary: bin, Dir: *dir, Shards: *shards, AdminToken: token,
		Serve: []string{"--demo"}, SMTP: true, Ports: first, StartTimeout: 2 * time.Minute})
	if err != nil {
		fmt.Fprintln(errOut, "backupmon cluster:", err)
		return 1
	}
	printLocalCluster(out, c, *dir, token)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	<-stop
	fmt.Fprintln(out, "stopping the nodes, then the NATS servers...")
	if err := c.Close(); err != nil {
		fmt.Fprintln(errOut, "backupmon cluster:", err)
		return 1
	}
	return 0
}

// localToken returns the local cluster's admin token, made on first start
// and kept in <dir>/admin.token.
func localToken(dir string) (string, error) {
	path := filepath.Join(dir, "admin.token")
	if b, err := os.ReadFile(path); err == nil {
		return strings.TrimSpace(string(b)), nil
	}
	var raw [24]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", err
	}
	token := hex.EncodeToString(raw[:])
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return "", err
	}
	return token, writeFileAtomic(path, []byte(token+"\n"), 0o600)
}

// printLocalCluster prints the nodes, the demo's keys, and curl lines, each
// against another node.
func printLocalCluster(out io.Writer, c *localcluster.Cluster, dir, token string) {
	kv := map[string]string{}
	raw, _ := os.ReadFile(filepath.Join(dir, c.Nodes[0].ID, "demo-keys.txt"))
	for _, line := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			kv[k] = v
		}
	}
	fmt.Fprintln(out, "\ncluster ready: any node answers everything.")
	for _, n := range c.Nodes {
		fmt.Fprintf(out, "  node %s: public %s  admin %s  smtp %s  (log %s)\n", n.ID, n.PublicURL, n.AdminURL, n.SMTPAddr, n.Log)
	}
	fmt.Fprintf(out, "admin token: %s (in %s)\n", token, filepath.Join(dir, "admin.token"))
	fmt.Fprintf(out, "NATS secret: in %s (the NATS servers take only clients and routes that present it)\n", c.AuthFile)
	if c.TLS.Given() {
		fmt.Fprintf(out, "TLS: every NATS and node-to-node connection, with certificates of the authority %s (made at this start)\n", c.TLS.CA)
	}
	fmt.Fprintf(out, "demo workspace %s; dashboard on any node's public address, log in as %s, password %s\n",
		kv["workspace"], kv["owner"], kv["owner_password"])
	n := c.Nodes
	fmt.Fprintf(out, "report a backup run (through %s):\n  curl -s -X POST %s/api/v1/jobs/%s/report -H 'Authorization: Bearer %s' -H 'Content-Type: application/json' -d '{\"status\":\"ok\",\"duration_seconds\":1200,\"size_bytes\":5368709120}'\n",
		n[0].ID, n[0].PublicURL, kv["job"], kv["report_key"])
	fmt.Fprintf(out, "read it back (through %s):\n  curl -s %s/api/v1/jobs/%s -H 'Authorization: Bearer %s'\n",
		n[1%len(n)].ID, n[1%len(n)].PublicURL, kv["job"], kv["rest_key"])
	fmt.Fprintf(out, "the job through the admin API (through %s):\n  curl -s %s/admin/v1/workspaces/%s/jobs/%s -H 'Authorization: Bearer %s'\n",
		n[2%len(n)].ID, n[2%len(n)].AdminURL, kv["workspace"], kv["job"], token)
	if mail := filepath.Join(dir, n[2%len(n)].ID, "demo-mail.eml"); kv["mail_address"] != "" && fileExists(mail) {
		fmt.Fprintf(out, "send a report e-mail (through %s's SMTP listener):\n  curl -s smtp://%s --mail-from backups@fl-db01.example --mail-rcpt %s --upload-file %s\n",
			n[2%len(n)].ID, n[2%len(n)].SMTPAddr, kv["mail_address"], mail)
	}
	fmt.Fprintf(out, "who owns which shard:\n  %s admin cluster --admin-url %s --admin-token %s\n", selfName(), n[0].AdminURL, token)
	fmt.Fprintf(out, "kill a node (kill -9 its pid, see `ps`) and the others take its shards over within about 10 s.\nCtrl-C stops the cluster.\n")
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
