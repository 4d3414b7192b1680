package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"backupmon/cluster"
	"backupmon/internal/testserver"
	"backupmon/localcluster"
)

// testSecret is a NATS secret of 40 characters.
const testSecret = "s3cret-of-the-cluster-0123456789abcdefgh"

// natsSecretFile writes secret to a 0600 file of a test directory and returns
// its path.
func natsSecretFile(t *testing.T, secret string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "nats.secret")
	if err := os.WriteFile(path, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// freePorts returns n loopback ports free a moment ago.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// startNats starts `backupmon nats` with args (and a store of its own)
// and waits until it prints ready; it is stopped at the end of the test.
func startNats(t *testing.T, name string, args ...string) *localcluster.Proc {
	t.Helper()
	dir := t.TempDir()
	p := localcluster.NewProc(name, testserver.Binary(t), filepath.Join(dir, "log"),
		append([]string{"nats", "--name", name, "--store", filepath.Join(dir, "store")}, args...)...)
	if err := p.Start(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Term(10 * time.Second) })
	return p
}

// authJetStream connects to the NATS server at url with testSecret (and
// opts) and returns its JetStream, and a context of 30 s for its calls;
// both end with the test.
func authJetStream(t *testing.T, url string, opts ...nats.Option) (jetstream.JetStream, context.Context) {
	t.Helper()
	nc, err := nats.Connect(url, append(opts, nats.UserInfo(cluster.NATSUser, testSecret))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return jetStreamOf(t, nc)
}

// jetStreamOf returns the JetStream of nc and a context of 30 s for its
// calls, which ends with the test.
func jetStreamOf(t *testing.T, nc *nats.Conn) (jetstream.JetStream, context.Context) {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return js, ctx
}

// connects connects to url with opts and closes the connection: it fails
// the test unless the server took it (ok) or refused it as unauthorized
// (not ok), and returns ok.
func connects(t *testing.T, url string, ok bool, opts ...nats.Option) bool {
	t.Helper()
	nc, err := nats.Connect(url, opts...)
	switch {
	case !ok && !errors.Is(err, nats.ErrAuthorization):
		t.Fatalf("connected (err %v), want nats.ErrAuthorization", err)
	case ok && err != nil:
		t.Fatal(err)
	case ok:
		nc.Close()
	}
	return ok
}

// A `backupmon nats` given --auth-file takes only clients that present its
// secret: nats.go gets an authorization violation without it or with
// another one.
func TestNatsAuthClients(t *testing.T) {
	addr := "127.0.0.1:" + strconv.Itoa(freePorts(t, 1)[0])
	startNats(t, "n1", "--listen", addr, "--auth-file", natsSecretFile(t, testSecret))
	for _, tc := range []struct {
		what string
		opts []nats.Option
		ok   bool
	}{
		{"no credentials", nil, false},
		{"another secret", []nats.Option{nats.UserInfo(cluster.NATSUser, testSecret+"x")}, false},
		{"the secret, another user", []nats.Option{nats.UserInfo("admin", testSecret)}, false},
		{"the secret as a token", []nats.Option{nats.Token(testSecret)}, false},
		{"the secret", []nats.Option{nats.UserInfo(cluster.NATSUser, testSecret)}, true},
	} {
		t.Run(tc.what, func(t *testing.T) {
			if !connects(t, "nats://"+addr, tc.ok, tc.opts...) {
				return
			}
			// The connection works: a request to JetStream answers.
			js, ctx := authJetStream(t, "nats://"+addr)
			if _, err := js.AccountInfo(ctx); err != nil {
				t.Fatalf("JetStream through the authenticated connection: %v", err)
			}
		})
	}
}

// The NATS server's log lines carry the time, in UTC to the microsecond,
// so that they can be set beside the nodes' when a failover is explained
// (a chaos failure could not say when a stream got its new leader).
func TestNatsLogLinesCarryTheTime(t *testing.T) {
	before := time.Now().UTC().Add(-time.Second)
	p := startNats(t, "n1", "--listen", "127.0.0.1:"+strconv.Itoa(freePorts(t, 1)[0]), "--auth-file", natsSecretFile(t, testSecret))
	b, err := os.ReadFile(p.Log)
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`^\[\d+\] (\d{4}/\d\d/\d\d \d\d:\d\d:\d\d\.\d{6}) \[(INF|WRN|ERR)\] `)
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, "[") {
			continue // the lines backupmon itself prints
		}
		n++
		m := line.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("a NATS log line without its time: %q", l)
		}
		at, err := time.Parse("2006/01/02 15:04:05.000000", m[1])
		if err != nil || at.Before(before) || at.After(time.Now().UTC().Add(time.Second)) {
			t.Fatalf("a NATS log line's time %s is not now in UTC (%v): %q", m[1], err, l)
		}
	}
	if n < 5 {
		t.Fatalf("%d NATS log lines:\n%s", n, b)
	}
}

// An auth file of two lines, while the secret changes: the server takes
// clients that present either, and no other; its route to a server whose
// file holds the new secret alone is made (it presents the first line,
// which that server takes, and that server's route presents the new one),
// so servers restarted one at a time with the new file stay one cluster.
func TestNatsAuthTwoSecrets(t *testing.T) {
	const next = "the-next-secret-of-the-cluster-0123456789"
	clients, _ := startRoutedNats(t, [2][]string{{"--auth-file", natsSecretFile(t, testSecret+"\n"+next)}, {"--auth-file", natsSecretFile(t, next)}})
	addr := func(i int) string { return "nats://" + clients[i] }
	for _, tc := range []struct {
		what   string
		secret string
		ok     bool
	}{
		{"the first secret", testSecret, true},
		{"the second secret", next, true},
		{"another secret", next + "x", false},
	} {
		t.Run(tc.what, func(t *testing.T) { connects(t, addr(0), tc.ok, nats.UserInfo(cluster.NATSUser, tc.secret)) })
	}
	// One cluster: a message published on the second server reaches a
	// subscriber of the first.
	sub, err := nats.Connect(addr(0), nats.UserInfo(cluster.NATSUser, next))
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	inbox, err := sub.SubscribeSync("bm.test")
	if err != nil {
		t.Fatal(err)
	}
	sub.Flush()
	pub, err := nats.Connect(addr(1), nats.UserInfo(cluster.NATSUser, next))
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	for deadline := time.Now().Add(20 * time.Second); ; {
		pub.Publish("bm.test", []byte("over the route"))
		if m, err := inbox.NextMsg(500 * time.Millisecond); err == nil && string(m.Data) == "over the route" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no message over the route between a server of two secrets and one of the new secret alone")
		}
	}
}

// startRoutedNats starts two `backupmon nats` routed to each other, server
// i given extra[i] besides its listeners, waits until both say ready, and
// returns their client and route addresses (host:port); they are stopped
// at the end of the test.
func startRoutedNats(t *testing.T, extra [2][]string) (clients, routes [2]string) {
	t.Helper()
	ports := freePorts(t, 4)
	for i := range 2 {
		clients[i], routes[i] = "127.0.0.1:"+strconv.Itoa(ports[i]), "127.0.0.1:"+strconv.Itoa(ports[2+i])
	}
	errs := make(chan error, 2)
	for i := range 2 {
		dir := t.TempDir()
		name := fmt.Sprintf("n%d", i+1)
		args := append([]string{"nats", "--name", name, "--store", filepath.Join(dir, "store"), "--listen", clients[i],
			"--cluster-listen", routes[i], "--routes", "nats://" + routes[1-i]}, extra[i]...)
		p := localcluster.NewProc(name, testserver.Binary(t), filepath.Join(dir, "log"), args...)
		t.Cleanup(func() { p.Term(10 * time.Second) })
		go func() { errs <- p.Start(time.Minute) }()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	return clients, routes
}

// Three `backupmon nats` with --auth-file, the cluster's TLS and --routes
// form their JetStream cluster (each says ready once JetStream has a
// leader; a stream of three replicas is placed), the routes
// authenticating with the secret the program puts on their URLs, over
// TLS; a server that routes to them without the secret, in clear, or with
// the secret and another authority's certificate, is refused and receives
// nothing of theirs.
func TestNatsAuthRoutes(t *testing.T) {
	file := natsSecretFile(t, testSecret)
	tlsDir := t.TempDir()
	ports := freePorts(t, 6)
	route := func(i int) string { return "nats://127.0.0.1:" + strconv.Itoa(ports[3+i]) }
	procs := make([]*localcluster.Proc, 3)
	errs := make(chan error, 3)
	for i := range 3 {
		var routes []string
		for j := range 3 {
			if j != i {
				routes = append(routes, route(j))
			}
		}
		dir := t.TempDir()
		name := fmt.Sprintf("n%d", i+1)
		args := append([]string{"nats", "--name", name, "--store", filepath.Join(dir, "store"), "--listen", "127.0.0.1:" + strconv.Itoa(ports[i]),
			"--cluster-listen", strings.TrimPrefix(route(i), "nats://"), "--routes", strings.Join(routes, ","), "--auth-file", file},
			localcluster.TLSArgs(issueMember(t, tlsDir, name, "127.0.0.1"))...)
		procs[i] = localcluster.NewProc(name, testserver.Binary(t), filepath.Join(dir, "log"), args...)
		t.Cleanup(func() { procs[i].Term(10 * time.Second) })
		go func() { errs <- procs[i].Start(time.Minute) }()
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range procs {
		if log, _ := os.ReadFile(p.Log); strings.Contains(string(log), testSecret) {
			t.Errorf("%s's log shows the secret:\n%s", p.Name, log)
		}
	}
	js, ctx := authJetStream(t, "nats://127.0.0.1:"+strconv.Itoa(ports[0]), nats.Secure(loadTLS(t, issueMember(t, tlsDir, "b1", "127.0.0.1"))))
	nc := js.Conn()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "R3", Subjects: []string{"r3"}, Replicas: 3}); err != nil {
		t.Fatalf("a stream of three replicas: %v", err)
	}
	sub, err := nc.SubscribeSync("bm.>")
	if err != nil {
		t.Fatal(err)
	}
	nc.Flush()
	withSecret, _ := url.Parse(route(0))
	withSecret.User = url.UserPassword(cluster.NATSUser, testSecret)
	t.Run("in clear without the secret", func(t *testing.T) {
		u, _ := url.Parse(route(0))
		intrude(t, sub, natsserver.ClusterOpts{Name: "backupmon", Host: "127.0.0.1", Port: -1}, u)
	})
	t.Run("in clear with the secret", func(t *testing.T) {
		intrude(t, sub, natsserver.ClusterOpts{Name: "backupmon", Host: "127.0.0.1", Port: -1}, withSecret)
	})
	t.Run("another authority with the secret", func(t *testing.T) {
		other := loadTLS(t, issueMember(t, t.TempDir(), "n9", "127.0.0.1"))
		intrude(t, sub, natsserver.ClusterOpts{Name: "backupmon", Host: "127.0.0.1", Port: -1, TLSConfig: other}, withSecret)
	})
}

// intrude starts a NATS server with cluster options co routing to u, and
// fails the test if it gets a route or if what it publishes reaches sub.
func intrude(t *testing.T, sub *nats.Subscription, co natsserver.ClusterOpts, u *url.URL) {
	t.Helper()
	intruder, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, NoSigs: true, NoLog: true,
		Cluster: co, Routes: []*url.URL{u}})
	if err != nil {
		t.Fatal(err)
	}
	go intruder.Start()
	defer intruder.Shutdown()
	if !intruder.ReadyForConnections(10 * time.Second) {
		t.Fatal("the intruder did not start")
	}
	in, err := nats.Connect(intruder.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		in.Publish("bm.s000", []byte("forged"))
		if n := intruder.NumRoutes(); n != 0 {
			t.Fatalf("the intruder has %d routes to the cluster", n)
		}
	}
	in.Flush()
	if m, err := sub.NextMsg(500 * time.Millisecond); err == nil {
		t.Fatalf("the cluster received the intruder's %q on %s", m.Data, m.Subject)
	}
}

// `backupmon nats` with a listener that is not loopback and no --auth-file
// refuses to start (exit 2, naming the listener, --auth-file and
// --insecure-no-auth) and makes no store; so does one whose auth file is
// missing or short, naming the file. Loopback listeners need no file, and
// --insecure-no-auth lets an open listener start.
func TestNatsAuthRequired(t *testing.T) {
	short := natsSecretFile(t, "too-short")
	shortNext := natsSecretFile(t, testSecret+"\n\ntoo-short")
	hashed := natsSecretFile(t, testSecret+"\n$2a$11$"+testSecret)
	missing := filepath.Join(t.TempDir(), "no-such-file")
	// Free ports: a server that starts when it should not listens on them
	// (port 0 is NATS's 4222), and is stopped after 10 s.
	ports := freePorts(t, 4)
	open, openRoute := "0.0.0.0:"+strconv.Itoa(ports[0]), ":"+strconv.Itoa(ports[1])
	for _, tc := range []struct {
		what string
		args []string
		want []string
	}{
		{"client listener on every interface", []string{"--listen", open},
			[]string{"backupmon nats: --listen " + open + " is not a loopback address and there is no --auth-file", "give --auth-file FILE", "--insecure-no-auth"}},
		{"route listener on every interface", []string{"--listen", "127.0.0.1:" + strconv.Itoa(ports[2]), "--cluster-listen", openRoute},
			[]string{"backupmon nats: --cluster-listen " + openRoute + " is not a loopback address and there is no --auth-file", "give --auth-file FILE", "--insecure-no-auth"}},
		{"missing auth file", []string{"--auth-file", missing},
			[]string{"backupmon nats: --auth-file: the NATS secret: open " + missing + ": no such file or directory"}},
		{"short secret", []string{"--listen", open, "--auth-file", short},
			[]string{"backupmon nats: --auth-file: the NATS secret in " + short + " is 9 characters: it takes 32 or more on its first line"}},
		{"short second secret", []string{"--listen", open, "--auth-file", shortNext},
			[]string{"backupmon nats: --auth-file: line 3 of " + shortNext + " is 9 characters: a NATS secret takes 32 or more"}},
		{"a hash for a second secret", []string{"--listen", open, "--auth-file", hashed},
			[]string{"backupmon nats: --auth-file: the NATS secret on line 2 of " + hashed + " looks like a bcrypt hash: the file holds the secret itself"}},
	} {
		t.Run(tc.what, func(t *testing.T) {
			store := filepath.Join(t.TempDir(), "store")
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, testserver.Binary(t), append([]string{"nats", "--store", store}, tc.args...)...)
			cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 2 {
				t.Fatalf("exit %v, want 2; said:\n%s", err, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("said %q; want %q in it", out, w)
				}
			}
			if _, err := os.Stat(store); !os.IsNotExist(err) {
				t.Errorf("the refused start made %s (%v)", store, err)
			}
		})
	}
	t.Run("open listener with --insecure-no-auth", func(t *testing.T) {
		startNats(t, "open", "--listen", open, "--insecure-no-auth", "--insecure-no-tls")
	})
	t.Run("loopback without a file", func(t *testing.T) {
		startNats(t, "local", "--listen", "127.0.0.1:"+strconv.Itoa(ports[3]))
	})
}

// nodeStopsAtStart starts a node with args and fails the test unless it
// exits 1 within 10 s with one error line, which holds each of want.
func nodeStopsAtStart(t *testing.T, args []string, want ...string) {
	t.Helper()
	nodeInStopsAtStart(t, t.TempDir(), args, want...)
}

// nodeInStopsAtStart is nodeStopsAtStart with the node's data directory.
func nodeInStopsAtStart(t *testing.T, data string, args []string, want ...string) {
	t.Helper()
	start := time.Now()
	_, err := testserver.LaunchChild(t, "node", data, nil, args...)
	var exit *testserver.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("the node did not exit: %v", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the node took %v to give up", took)
	}
	var errLines []string
	for _, l := range strings.Split(exit.Stderr, "\n") {
		if strings.Contains(l, "level=ERROR") {
			errLines = append(errLines, l)
		}
	}
	ok := len(errLines) == 1 && exit.ExitCode() == 1
	for _, w := range want {
		ok = ok && strings.Contains(errLines[0], w)
	}
	if !ok {
		t.Fatalf("exit %d, error lines %q; want one with %q", exit.ExitCode(), errLines, want)
	}
}

// A node whose NATS servers refuse its credentials (another secret, or
// none) stops at start with one error line saying so, rather than a
// misleading one about JetStream's replicas; with the secret it starts.
// cluster import likewise.
func TestNodeNATSAuth(t *testing.T) {
	addr := "127.0.0.1:" + strconv.Itoa(freePorts(t, 1)[0])
	startNats(t, "n1", "--listen", addr, "--auth-file", natsSecretFile(t, testSecret))
	node := []string{"--cluster", "nats://" + addr, "--node-id", "b1", "--cluster-replicas", "1"}
	for _, tc := range []struct {
		what string
		args []string
	}{
		{"another secret", []string{"--cluster-auth-file", natsSecretFile(t, strings.ToUpper(testSecret))}},
		{"no secret", nil},
	} {
		t.Run(tc.what, func(t *testing.T) {
			nodeStopsAtStart(t, append(node, tc.args...),
				`err="connect to NATS nats://`+addr+`: nats: authorization violation: the servers refused this process's credentials (give --cluster-auth-file the file of the cluster's NATS secret`)
		})
	}
	// cluster import presents the secret too: refused without it; with it,
	// it reaches JetStream and finds no cluster set up (no node ran yet).
	secret := natsSecretFile(t, testSecret)
	for _, tc := range []struct{ what, flags, want string }{
		{"import without the secret", "", "backupmon cluster import: connect to NATS nats://" + addr + ": nats: authorization violation: the servers refused this process's credentials"},
		{"import with the secret", secret, "backupmon cluster import: the cluster is not set up: start its nodes first"},
	} {
		t.Run(tc.what, func(t *testing.T) {
			cmd := exec.Command(testserver.Binary(t), "cluster", "import", "--data", t.TempDir(), "--cluster", "nats://"+addr, "--cluster-auth-file", tc.flags)
			cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
			out, err := cmd.CombinedOutput()
			if cmd.ProcessState.ExitCode() != 1 || !strings.HasPrefix(string(out), tc.want) {
				t.Fatalf("exit %v, said %q; want 1 and %q", err, out, tc.want)
			}
		})
	}
	t.Run("the secret", func(t *testing.T) {
		testserver.StartChild(t, "node", t.TempDir(), append(node, "--cluster-auth-file", natsSecretFile(t, testSecret))...)
	})
}

// `backupmon nats --monitor-listen` serves nats-server's monitoring on
// loopback: /healthz answers ok once the server is up, /jsz shows
// JetStream; an address off loopback is refused at start (exit 2), since
// the monitoring has no authentication.
func TestNatsMonitoring(t *testing.T) {
	ports := freePorts(t, 2)
	monitor := "127.0.0.1:" + strconv.Itoa(ports[1])
	startNats(t, "n1", "--listen", "127.0.0.1:"+strconv.Itoa(ports[0]), "--monitor-listen", monitor)
	for path, want := range map[string]string{"/healthz": `"status":"ok"`, "/jsz": `"config":`} {
		resp, err := http.Get("http://" + monitor + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Fatalf("GET %s: %d %s, want 200 with %s", path, resp.StatusCode, body, want)
		}
	}
	open := "0.0.0.0:" + strconv.Itoa(freePorts(t, 1)[0])
	cmd := exec.Command(testserver.Binary(t), "nats", "--store", filepath.Join(t.TempDir(), "s"), "--monitor-listen", open)
	out, _ := cmd.CombinedOutput()
	want := "backupmon nats: --monitor-listen " + open + " is not a loopback address: nats-server's monitoring has no authentication"
	if cmd.ProcessState.ExitCode() != 2 || !strings.HasPrefix(string(out), want) {
		t.Fatalf("exit %d, said %q; want 2 and %q", cmd.ProcessState.ExitCode(), out, want)
	}
}
