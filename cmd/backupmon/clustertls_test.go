package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"backupmon/cluster"
	"backupmon/clustertls"
	"backupmon/internal/testserver"
	"backupmon/localcluster"
)

// issueMember runs `backupmon cluster cert` for name in dir and returns its
// files.
func issueMember(t *testing.T, dir, name, hosts string) clustertls.Files {
	t.Helper()
	out, err := exec.Command(testserver.Binary(t), "cluster", "cert", "--dir", dir, "--name", name, "--hosts", hosts).CombinedOutput()
	if err != nil {
		t.Fatalf("cluster cert: %v\n%s", err, out)
	}
	return clustertls.Files{CA: filepath.Join(dir, "ca.pem"), Cert: filepath.Join(dir, name+".pem"), Key: filepath.Join(dir, name+".key")}
}

func loadTLS(t *testing.T, f clustertls.Files) *tls.Config {
	t.Helper()
	c, err := clustertls.Load(f, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// `backupmon cluster cert` makes the cluster's authority once and issues
// each member's certificate from it, says which file goes where, and
// keeps private keys to their owner; bad input gets its message.
func TestClusterCertCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	bin := testserver.Binary(t)
	out, err := exec.Command(bin, "cluster", "cert", "--dir", dir, "--name", "n1", "--hosts", "10.0.0.1, n1.internal").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	until := time.Now().Add(clustertls.MemberValidity).UTC().Format("2006-01-02")
	want := dir + "/n1.pem: certificate of n1 for 10.0.0.1, n1.internal, valid until " + until + "\n" +
		dir + "/n1.key: its private key (copy it to n1 only)\n" +
		dir + "/ca.pem: the cluster's authority (copy it to every member; ca.key stays here)\n" +
		"flags: --cluster-tls-ca " + dir + "/ca.pem --cluster-tls-cert " + dir + "/n1.pem --cluster-tls-key " + dir + "/n1.key\n"
	if string(out) != want {
		t.Fatalf("said\n%s\nwant\n%s", out, want)
	}
	ca, _ := os.ReadFile(filepath.Join(dir, "ca.pem"))
	n2 := issueMember(t, dir, "n2", "10.0.0.2")
	if again, _ := os.ReadFile(filepath.Join(dir, "ca.pem")); string(again) != string(ca) {
		t.Fatal("a second member made a new authority")
	}
	for name, mode := range map[string]os.FileMode{"ca.key": 0o600, "n1.key": 0o600, "n2.key": 0o600, "ca.pem": 0o644, "n1.pem": 0o644} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil || st.Mode().Perm() != mode {
			t.Errorf("%s: %v, mode %v; want %v", name, err, st.Mode().Perm(), mode)
		}
	}
	m, err := clustertls.Open(n2, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	leaf := m.Certificate()
	if leaf.Subject.CommonName != "n2" || len(leaf.IPAddresses) != 1 || leaf.IPAddresses[0].String() != "10.0.0.2" {
		t.Errorf("n2's certificate: %s %v", leaf.Subject.CommonName, leaf.IPAddresses)
	}
	for _, tc := range []struct {
		what string
		args []string
		exit int
		want string
	}{
		{"no name", []string{"--dir", dir, "--hosts", "10.0.0.3"}, 2, "backupmon cluster cert: --name and --hosts are required, e.g. --name n1 --hosts 10.0.0.1,n1.internal\n"},
		{"no hosts", []string{"--dir", dir, "--name", "n3"}, 2, "backupmon cluster cert: --name and --hosts are required, e.g. --name n1 --hosts 10.0.0.1,n1.internal\n"},
		{"bad host", []string{"--dir", dir, "--name", "n3", "--hosts", "a_b!"}, 1, "backupmon cluster cert: host \"a_b!\" is neither an IP address nor a DNS name\n"},
		{"bad name", []string{"--dir", dir, "--name", "../n3", "--hosts", "10.0.0.3"}, 1, "backupmon cluster cert: member name \"../n3\": use letters, digits, '.', '_' and '-' (up to 63)\n"},
	} {
		t.Run(tc.what, func(t *testing.T) {
			cmd := exec.Command(bin, append([]string{"cluster", "cert"}, tc.args...)...)
			out, _ := cmd.CombinedOutput()
			if cmd.ProcessState.ExitCode() != tc.exit || string(out) != tc.want {
				t.Fatalf("exit %d, said %q; want %d, %q", cmd.ProcessState.ExitCode(), out, tc.exit, tc.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "n3.pem")); !os.IsNotExist(err) {
		t.Errorf("a refused issue wrote n3.pem (%v)", err)
	}
}

// A `backupmon nats` with the cluster's TLS takes only clients that show
// a certificate of the cluster's authority (and then its secret): in
// clear, with another authority's certificate, or with none, a client
// does not connect; its first words on the wire require TLS.
func TestNatsTLSClients(t *testing.T) {
	ours, theirs := t.TempDir(), t.TempDir()
	server := issueMember(t, ours, "n1", "127.0.0.1")
	client := loadTLS(t, issueMember(t, ours, "b1", "127.0.0.2"))
	other := loadTLS(t, issueMember(t, theirs, "b1", "127.0.0.2"))
	addr := "127.0.0.1:" + strconv.Itoa(freePorts(t, 1)[0])
	startNats(t, "n1", append([]string{"--listen", addr, "--auth-file", natsSecretFile(t, testSecret)}, localcluster.TLSArgs(server)...)...)

	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	info, err := bufio.NewReader(c).ReadString('\n')
	c.Close()
	if err != nil || !strings.HasPrefix(info, "INFO ") || !strings.Contains(info, `"tls_required":true`) || !strings.Contains(info, `"tls_verify":true`) {
		t.Fatalf("the server's first line %q (%v), want an INFO requiring TLS with a verified certificate", info, err)
	}

	secret := nats.UserInfo(cluster.NATSUser, testSecret)
	noCert := &tls.Config{RootCAs: client.RootCAs, MinVersion: tls.VersionTLS13}
	for _, tc := range []struct {
		what string
		opts []nats.Option
		want string
	}{
		{"the secret in clear", []nats.Option{secret}, "certificate signed by unknown authority"},
		{"another authority's certificate", []nats.Option{secret, nats.Secure(other)}, "certificate signed by unknown authority"},
		// The server's alert can lose the race with the client's first
		// write, which then finds the connection closed.
		{"no certificate", []nats.Option{secret, nats.Secure(noCert)}, "certificate required|connection closed by remote after TLS handshake"},
		{"the cluster's certificate without the secret", []nats.Option{nats.Secure(client)}, "Authorization Violation"},
		{"the cluster's certificate and the secret", []nats.Option{secret, nats.Secure(client)}, ""},
	} {
		t.Run(tc.what, func(t *testing.T) {
			nc, err := nats.Connect("nats://"+addr, tc.opts...)
			if tc.want != "" {
				if err == nil {
					// A refusal of the client's certificate can come after
					// the handshake, on the first exchange.
					err = nc.Flush()
					nc.Close()
				}
				if err == nil || !containsAny(strings.ToLower(err.Error()), strings.Split(strings.ToLower(tc.want), "|")) {
					t.Fatalf("err %v, want %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			if !nc.TLSRequired() {
				t.Error("the connection is not over TLS")
			}
			js, ctx := jetStreamOf(t, nc)
			if _, err := js.AccountInfo(ctx); err != nil {
				t.Fatalf("JetStream over TLS: %v", err)
			}
		})
	}
}

// Without the cluster's TLS a process refuses to start where its secrets
// would cross the network in clear (exit 2, naming the flag, the address
// and the flag that allows it): `nats` listening, `serve` reaching NATS or
// listening for peers, and `cluster import` reaching NATS, on addresses
// that are not loopback. Half the TLS flags, or a certificate of another
// authority, are refused too.
func TestClusterInClearRefused(t *testing.T) {
	ours, theirs := t.TempDir(), t.TempDir()
	good := issueMember(t, ours, "n1", "127.0.0.1")
	other := issueMember(t, theirs, "n1", "127.0.0.1")
	mixed := clustertls.Files{CA: good.CA, Cert: other.Cert, Key: other.Key}
	secret := natsSecretFile(t, testSecret)
	ports := freePorts(t, 3)
	open := "0.0.0.0:" + strconv.Itoa(ports[0])
	local := "nats://127.0.0.1:" + strconv.Itoa(ports[1])
	const hint = "is not a loopback address and there is no --cluster-tls-ca/-cert/-key: the cluster's secrets would cross the network in clear; give the cluster's TLS files (`backupmon cluster cert` makes them), or "
	node := func(args ...string) []string {
		return append([]string{"serve", "--node-id", "b1", "--data", t.TempDir(), "--cluster-auth-file", secret}, args...)
	}
	for _, tc := range []struct {
		what string
		args []string
		want string
	}{
		{"nats on every interface", []string{"nats", "--store", filepath.Join(t.TempDir(), "s"), "--listen", open, "--auth-file", secret},
			"backupmon nats: --listen " + open + " " + hint + "--insecure-no-tls to run in clear anyway on a network only the cluster reaches\n"},
		{"nats routes to another host", []string{"nats", "--store", filepath.Join(t.TempDir(), "s"), "--listen", "127.0.0.1:" + strconv.Itoa(ports[2]), "--cluster-listen", "127.0.0.1:" + strconv.Itoa(ports[0]), "--routes", "nats://10.0.0.2:6222", "--auth-file", secret},
			"backupmon nats: --routes nats://10.0.0.2:6222 " + hint + "--insecure-no-tls to run in clear anyway on a network only the cluster reaches\n"},
		{"nats with half the files", []string{"nats", "--store", filepath.Join(t.TempDir(), "s"), "--cluster-tls-ca", good.CA, "--cluster-tls-cert", good.Cert},
			"backupmon nats: --cluster-tls-ca, --cluster-tls-cert and --cluster-tls-key go together: give all three\n"},
		{"nats with another authority's certificate", append([]string{"nats", "--store", filepath.Join(t.TempDir(), "s")}, localcluster.TLSArgs(mixed)...),
			"backupmon nats: the cluster's TLS: " + other.Cert + " is not a member certificate of the authority in " + good.CA},
		{"node reaching NATS on another host", node("--cluster", local+",nats://10.0.0.2:4222"),
			"backupmon serve: --cluster nats://10.0.0.2:4222 " + hint + "--cluster-insecure-no-tls to run in clear anyway on a network only the cluster reaches\n"},
		{"node taking peers on every interface", node("--cluster", local, "--cluster-peer-listen", ":8280"),
			"backupmon serve: --cluster-peer-listen :8280 " + hint + "--cluster-insecure-no-tls to run in clear anyway on a network only the cluster reaches\n"},
		{"node with half the files", node("--cluster", local, "--cluster-tls-key", good.Key),
			"backupmon serve: --cluster-tls-ca, --cluster-tls-cert and --cluster-tls-key go together: give all three\n"},
		{"import from another host", []string{"cluster", "import", "--data", t.TempDir(), "--cluster", "nats://nats.example:4222"},
			"backupmon cluster import: --cluster nats://nats.example:4222 " + hint + "--cluster-insecure-no-tls to run in clear anyway on a network only the cluster reaches\n"},
		{"accept-loss from another host", []string{"cluster", "accept-loss", "--shard", "0", "--cluster", "nats://nats.example:4222"},
			"backupmon cluster accept-loss: --cluster nats://nats.example:4222 " + hint + "--cluster-insecure-no-tls to run in clear anyway on a network only the cluster reaches\n"},
		{"accept-loss without a shard", []string{"cluster", "accept-loss", "--cluster", local},
			"backupmon cluster accept-loss: --shard is required\n"},
		{"accept-loss without a cluster", []string{"cluster", "accept-loss", "--shard", "0"},
			"backupmon cluster accept-loss: --cluster is required\n"},
		{"import without a cluster", []string{"cluster", "import", "--data", t.TempDir()},
			"backupmon cluster import: --cluster is required\n"},
	} {
		t.Run(tc.what, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, testserver.Binary(t), tc.args...)
			cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.HasPrefix(string(out), tc.want) {
				t.Fatalf("exit %v, said %q; want 2 and %q", err, out, tc.want)
			}
		})
	}
	t.Run("nats in clear with --insecure-no-tls", func(t *testing.T) {
		startNats(t, "open", "--listen", open, "--auth-file", secret, "--insecure-no-tls")
	})
}

// A node with the cluster's TLS joins NATS servers that have it, and logs
// when its certificate expires; a node whose certificate is of another
// authority, or that has none, stops at start with one error line saying
// what to give, instead of waiting for JetStream.
func TestNodeClusterTLS(t *testing.T) {
	ours, theirs := t.TempDir(), t.TempDir()
	addr := "127.0.0.1:" + strconv.Itoa(freePorts(t, 1)[0])
	startNats(t, "n1", append([]string{"--listen", addr, "--auth-file", natsSecretFile(t, testSecret)}, localcluster.TLSArgs(issueMember(t, ours, "n1", "127.0.0.1"))...)...)
	node := []string{"--cluster", "nats://" + addr, "--node-id", "b1", "--cluster-replicas", "1", "--cluster-auth-file", natsSecretFile(t, testSecret)}
	for _, tc := range []struct {
		what string
		args []string
	}{
		{"another authority", localcluster.TLSArgs(issueMember(t, theirs, "b1", "127.0.0.1"))},
		{"in clear", nil},
	} {
		t.Run(tc.what, func(t *testing.T) {
			nodeStopsAtStart(t, append(node, tc.args...),
				`err="connect to NATS nats://`+addr+`: nats: tls error: tls: failed to verify certificate: x509: certificate signed by unknown authority`,
				"this process and the servers do not share the cluster's TLS (give --cluster-tls-ca, --cluster-tls-cert and --cluster-tls-key")
		})
	}
	t.Run("a host the server's certificate does not name", func(t *testing.T) {
		_, port, _ := net.SplitHostPort(addr)
		byName := append([]string{"--cluster", "nats://localhost:" + port}, node[2:]...)
		nodeStopsAtStart(t, append(byName, localcluster.TLSArgs(issueMember(t, ours, "b1", "127.0.0.1"))...),
			`err="connect to NATS nats://localhost:`+port+`: nats: tls error: tls: failed to verify certificate: x509: certificate is not valid for any names, but wanted to match localhost`,
			"the server's certificate does not name the host this process dialled")
	})
	t.Run("the cluster's certificate", func(t *testing.T) {
		c := testserver.StartChild(t, "node", t.TempDir(), append(node, localcluster.TLSArgs(issueMember(t, ours, "b1", "127.0.0.1"))...)...)
		until := time.Now().Add(clustertls.MemberValidity).UTC().Format("2006-01-02")
		if log := c.Stderr.String(); !strings.Contains(log, `msg="cluster TLS" certificate_expires=`+until) {
			t.Errorf("the node's log does not give its certificate's expiry %s:\n%s", until, log)
		}
		exp := time.Unix(int64(c.Metric(`backupmon_tls_certificate_expiry_timestamp_seconds{listener="cluster"}`)), 0)
		if d := time.Until(exp) - clustertls.MemberValidity; d > 0 || d < -time.Minute {
			t.Errorf("/metrics gives the certificate's expiry as %v, want about %v", exp, time.Now().Add(clustertls.MemberValidity))
		}
	})
}

// containsAny reports whether s holds one of subs.
func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// waitLog waits up to 10 s for the text want in what log returns.
func waitLog(t *testing.T, what string, log func() string, want string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(log(), want); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s's log has no %q:\n%s", what, want, log())
		}
	}
}

// SIGHUP makes `backupmon nats` and a node read their certificate again:
// new connections get the reissued one (those open keep theirs and go
// on), the node's /metrics gives its expiry; files that do not do are
// logged and the previous certificate stays.
func TestClusterTLSReload(t *testing.T) {
	dir := t.TempDir()
	server := issueMember(t, dir, "n1", "127.0.0.1")
	client := loadTLS(t, issueMember(t, dir, "c1", "127.0.0.1"))
	addr := "127.0.0.1:" + strconv.Itoa(freePorts(t, 1)[0])
	nats1 := startNats(t, "n1", append([]string{"--listen", addr, "--auth-file", natsSecretFile(t, testSecret)}, localcluster.TLSArgs(server)...)...)
	natsLog := func() string { b, _ := os.ReadFile(nats1.Log); return string(b) }
	natsSerial := func() (*nats.Conn, string) {
		t.Helper()
		nc, err := nats.Connect("nats://"+addr, nats.UserInfo(cluster.NATSUser, testSecret), nats.Secure(client))
		if err != nil {
			t.Fatal(err)
		}
		st, err := nc.TLSConnectionState()
		if err != nil {
			t.Fatal(err)
		}
		return nc, st.PeerCertificates[0].SerialNumber.String()
	}
	old, first := natsSerial()
	defer old.Close()
	issueMember(t, dir, "n1", "127.0.0.1")
	if err := nats1.Hangup(); err != nil {
		t.Fatal(err)
	}
	waitLog(t, "nats", natsLog, `msg="cluster TLS reloaded" certificate_expires=`)
	nc, second := natsSerial()
	nc.Close()
	if second == first {
		t.Fatalf("after SIGHUP a new connection gets the certificate of serial %s again", first)
	}
	if err := old.Flush(); err != nil {
		t.Fatalf("the connection opened before the reload: %v", err)
	}
	if err := os.WriteFile(server.Cert, []byte("not a certificate"), 0o644); err != nil {
		t.Fatal(err)
	}
	nats1.Hangup()
	waitLog(t, "nats", natsLog, `msg="cluster TLS not reloaded: the previous certificate stays" err="read `+server.Cert)
	if nc, third := natsSerial(); third != second {
		t.Fatalf("a failed reload changed the certificate: serial %s, want %s", third, second)
	} else {
		nc.Close()
	}

	// A node: its peer listener's certificate and /metrics.
	b1 := issueMember(t, dir, "b1", "127.0.0.1")
	node := testserver.StartChild(t, "node", t.TempDir(), append([]string{"--cluster", "nats://" + addr, "--node-id", "b1", "--cluster-replicas", "1",
		"--cluster-auth-file", natsSecretFile(t, testSecret)}, localcluster.TLSArgs(b1)...)...)
	peer := ""
	for _, l := range strings.Split(node.Stdout.String(), "\n") {
		if a, ok := strings.CutPrefix(l, "peer listening on "); ok {
			peer = a
		}
	}
	peerSerial := func() string {
		t.Helper()
		c, err := tls.Dial("tcp", peer, clustertls.Dialling(client, peer))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return c.ConnectionState().PeerCertificates[0].SerialNumber.String()
	}
	expiry := func() float64 {
		return node.Metric(`backupmon_tls_certificate_expiry_timestamp_seconds{listener="cluster"}`)
	}
	firstPeer, firstExpiry := peerSerial(), expiry()
	time.Sleep(1100 * time.Millisecond) // a later expiry, to the second
	issueMember(t, dir, "b1", "127.0.0.1")
	if err := node.Cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitLog(t, "node", node.Stderr.String, `msg="cluster TLS reloaded" certificate_expires=`)
	if got := peerSerial(); got == firstPeer {
		t.Fatalf("after SIGHUP the node's peer listener shows serial %s again", got)
	}
	if got := expiry(); got <= firstExpiry {
		t.Fatalf("/metrics gives the expiry %v after the reload, %v before", got, firstExpiry)
	}
	if r := node.Do("GET", node.AdminURL+"/readyz", nil, nil); r.Status != 200 {
		t.Fatalf("the node after SIGHUP: /readyz %d %s", r.Status, r.Body)
	}
}
