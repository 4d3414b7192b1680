// Package natstest starts NATS servers with JetStream inside a test's
// process: one, or a cluster of three routed to each other, each
// fsyncing every write (sync_interval: always), as the cluster mode needs.
package natstest

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Cluster is a set of NATS servers started by Start.
type Cluster struct {
	Servers []*server.Server
	opts    []*server.Options
}

// URLs returns the client URLs of the servers, comma-separated (the form
// nats.Connect and backupmon serve --cluster take).
func (c *Cluster) URLs() string {
	var list []string
	for _, s := range c.Servers {
		list = append(list, s.ClientURL())
	}
	return strings.Join(list, ",")
}

// Connect returns a client connection to the cluster, closed at the end of
// the test.
func (c *Cluster) Connect(t testing.TB, opts ...nats.Option) *nats.Conn {
	t.Helper()
	return connect(t, c.URLs(), opts)
}

// ConnectTo returns a client connection to server s alone, closed at the
// end of the test.
func (c *Cluster) ConnectTo(t testing.TB, s *server.Server, opts ...nats.Option) *nats.Conn {
	t.Helper()
	return connect(t, s.ClientURL(), opts)
}

// connect connects to urls, closing the connection at the end of the test.
func connect(t testing.TB, urls string, opts []nats.Option) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(urls, opts...)
	if err != nil {
		t.Fatalf("connect to %s: %v", urls, err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// Shutdown stops server i (it can be started again with Restart).
func (c *Cluster) Shutdown(i int) {
	c.Servers[i].Shutdown()
	c.Servers[i].WaitForShutdown()
}

// LoseQuorum stops the leader of a stream (of three replicas) and one
// more server, and waits until the one left has not led the stream for a
// second: a server shut down hands its leadership over first, and a leader
// left alone leads until it sees it has lost its quorum. (Its answers are
// no sign: a member of a group without a leader for a while answers the
// stream's information from its own copy, and a wait for its silence
// failed when it began to answer again before the first look.)
func (c *Cluster) LoseQuorum(t testing.TB, js jetstream.JetStream, stream string) {
	t.Helper()
	leader := c.leader(t, js, stream)
	c.Shutdown(leader)
	c.Shutdown((leader + 1) % len(c.Servers))
	left := c.Servers[(leader+2)%len(c.Servers)]
	since := time.Now()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if left.JetStreamIsStreamLeader(server.DEFAULT_GLOBAL_ACCOUNT, stream) {
			since = time.Now()
		} else if time.Since(since) >= time.Second {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server left still leads stream %s a minute after the others stopped", stream)
		}
	}
}

// Survivor returns the index of the server LoseQuorum would leave running
// for stream now: a client connected to it alone keeps its connection
// when the quorum goes.
func (c *Cluster) Survivor(t testing.TB, js jetstream.JetStream, stream string) int {
	t.Helper()
	return (c.leader(t, js, stream) + 2) % len(c.Servers)
}

// leader returns the index of a stream's leader.
func (c *Cluster) leader(t testing.TB, js jetstream.JetStream, stream string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	leader := slices.IndexFunc(c.Servers, func(s *server.Server) bool { return s.Name() == info.Cluster.Leader })
	if leader < 0 {
		t.Fatalf("stream %s's leader %q is none of the servers", stream, info.Cluster.Leader)
	}
	return leader
}

// Restart starts the servers given again on the same ports and stores,
// and waits until JetStream has a leader. (Two servers stopped, as by
// LoseQuorum, are started together: the first alone found no leader
// within 20 s.)
func (c *Cluster) Restart(t testing.TB, servers ...int) {
	t.Helper()
	for _, i := range servers {
		c.Servers[i] = start(t, c.opts[i].Clone())
	}
	c.waitForLeader(t)
}

// Start starts n servers (1 or 3) with JetStream, their stores under the
// test's temporary directory, routed to each other when n > 1; they are
// shut down at the end of the test. It waits until JetStream has a leader.
// A server not ready in 20 s has the whole set started again on other
// ports, up to three times: the ports are found free and let go before the
// servers bind them, and another test's process can take one meanwhile
// (make test on a fresh clone once waited 30 s for a server that did not
// come up).
func Start(t testing.TB, n int) *Cluster {
	t.Helper()
	dir := t.TempDir()
	for attempt := 1; ; attempt++ {
		c, err := tryStart(t, n, filepath.Join(dir, fmt.Sprintf("try%d", attempt)))
		if err == nil {
			t.Cleanup(c.shutdownAll)
			c.waitForLeader(t)
			return c
		}
		if attempt == 3 {
			t.Fatal(err)
		}
		t.Logf("%v; starting the servers again on other ports", err)
	}
}

// pickPorts and tryWait are freePorts and the readiness wait of a first
// start (a test of the retry changes them).
var (
	pickPorts = freePorts
	tryWait   = 20 * time.Second
)

// tryStart starts the n servers on ports free at the moment, or shuts
// down those it started and returns why it could not.
func tryStart(t testing.TB, n int, dir string) (*Cluster, error) {
	clientPorts, clusterPorts := pickPorts(t, n), pickPorts(t, n)
	c := &Cluster{}
	for i := range n {
		o := &server.Options{
			ServerName: fmt.Sprintf("n%d", i+1),
			Host:       "127.0.0.1",
			Port:       clientPorts[i],
			JetStream:  true,
			StoreDir:   filepath.Join(dir, fmt.Sprintf("n%d", i+1)),
			SyncAlways: true,
			NoSigs:     true,
			NoLog:      true,
		}
		if n > 1 {
			o.Cluster = server.ClusterOpts{Name: "bm", Host: "127.0.0.1", Port: clusterPorts[i]}
			for j := range n {
				if j != i {
					o.Routes = append(o.Routes, &url.URL{Scheme: "nats", Host: fmt.Sprintf("127.0.0.1:%d", clusterPorts[j])})
				}
			}
		}
		c.opts = append(c.opts, o.Clone())
		s, err := startWithin(o, tryWait)
		if err != nil {
			c.shutdownAll()
			return nil, err
		}
		c.Servers = append(c.Servers, s)
	}
	return c, nil
}

// shutdownAll stops every server and waits until they have stopped.
func (c *Cluster) shutdownAll() {
	for _, s := range c.Servers {
		s.Shutdown()
	}
	for _, s := range c.Servers {
		s.WaitForShutdown()
	}
}

func start(t testing.TB, o *server.Options) *server.Server {
	t.Helper()
	s, err := startWithin(o, 30*time.Second) // a restart under -race on a busy machine takes its time
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// startWithin starts a server and waits up to d for it to take
// connections; else it shuts it down and returns an error.
func startWithin(o *server.Options, d time.Duration) (*server.Server, error) {
	s, err := server.NewServer(o)
	if err != nil {
		return nil, fmt.Errorf("nats server %s: %w", o.ServerName, err)
	}
	go s.Start()
	if !s.ReadyForConnections(d) {
		s.Shutdown()
		s.WaitForShutdown()
		return nil, fmt.Errorf("nats server %s not ready after %v (client port %d, route port %d)", o.ServerName, d, o.Port, o.Cluster.Port)
	}
	return s, nil
}

// waitForLeader waits until the JetStream meta group has a leader that
// knows every server (so that a stream of three replicas can be placed).
func (c *Cluster) waitForLeader(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		for _, s := range c.Servers {
			if len(c.Servers) == 1 || s.JetStreamIsLeader() && len(s.JetStreamClusterPeers()) == len(c.Servers) {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no JetStream leader after 20 s")
}

// freePorts returns n ports free on 127.0.0.1 at the time of the call.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var ports []int
	var lns []net.Listener
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	for _, ln := range lns {
		ln.Close()
	}
	return ports
}
