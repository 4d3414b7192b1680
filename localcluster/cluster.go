package localcluster

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"backupmon/clustertls"
)

// Config says what cluster to run.
type Config struct {
	// Binary is the backupmon binary; Dir holds every process's data and
	// log.
	Binary, Dir string
	// Nodes is the number of backupmon nodes (default 3); NATS the number
	// of NATS servers (default 3; 1 runs the shards with one replica).
	Nodes, NATS int
	// Shards is the cluster's shard count (default 4).
	Shards int
	// AdminToken is every node's admin token (required).
	AdminToken string
	// Serve are flags every node gets besides those of the cluster.
	Serve []string
	// SMTP gives every node an SMTP listener of report e-mails.
	SMTP bool
	// NoProxies connects the nodes to NATS directly, without the proxies
	// that Node.Cut needs (a benchmark's figures are then the cluster's
	// own, without the proxies' copies).
	NoProxies bool
	// NATSOnly, when from 1 to Nodes, starts that node without a peer
	// listener: requests forwarded to it and from it go over NATS, the
	// others' node to node over TCP (a test of both ways).
	NATSOnly int
	// RouteProxies routes each NATS server's route to each other through
	// a proxy of its own (Cluster.Route), so that a test can cut, blackhole
	// or delay the link between two servers, one way or both; each server
	// advertises a route address that nothing listens on, so that a server
	// that learns of another by gossip finds no direct path. It needs the
	// proxies (not NoProxies).
	RouteProxies bool
	// Ports, when set, are the first public, admin, NATS client and SMTP
	// ports: node i listens on Ports[0]+i, Ports[1]+i and Ports[3]+i, NATS
	// server i on Ports[2]+i (its routes on Ports[2]+100+i). Zero: free
	// ports.
	Ports [4]int
	// StartTimeout bounds each process's start (default a minute).
	StartTimeout time.Duration
	// InClear runs the cluster without its TLS (to measure what TLS
	// costs); by default every process has a certificate of an authority
	// made at each Start.
	InClear bool
	// MemberHosts puts each NATS server (its client and route listeners)
	// and each node's peer listener on a loopback address of its own,
	// 127.0.0.11 and on for the servers, 127.0.0.21 and on for the
	// nodes, each with a certificate that names only its address, as
	// members on separate hosts have: every connection then checks the
	// host it dialled. It needs NoProxies (a proxy's address is not the
	// server's) and TLS.
	MemberHosts bool
}

// memberHost is the loopback address of NATS server i (first 11) or node
// i (first 21) with Config.MemberHosts, else 127.0.0.1.
func (cfg Config) memberHost(first, i int) string {
	if !cfg.MemberHosts {
		return "127.0.0.1"
	}
	return "127.0.0." + strconv.Itoa(first+i)
}

// Cluster is a running local cluster.
type Cluster struct {
	cfg   Config
	NATS  []*Proc
	Nodes []*Node
	// NATSURLs are the NATS servers' client addresses (nats://host:port),
	// for a client that talks to JetStream itself.
	NATSURLs []string
	// routes[i][j] carries NATS server i's route to server j, with
	// Config.RouteProxies.
	routes [][]*Proxy
	// AuthFile holds NATSSecret, the cluster's NATS secret (made at each
	// Start): every NATS server and node is given the file; a client
	// presents the secret as cluster.NATSUser's password.
	AuthFile, NATSSecret string
	// TLS are the files of the cluster's TLS (made at each Start, one
	// certificate for every process, for 127.0.0.1 and localhost); empty
	// with Config.InClear.
	TLS clustertls.Files
}

// TLSConfig returns the cluster's TLS configuration for a client of its
// NATS servers (nats.Secure); nil when it runs in clear.
func (c *Cluster) TLSConfig() (*tls.Config, error) {
	if !c.TLS.Given() {
		return nil, nil
	}
	return clustertls.Load(c.TLS, time.Now())
}

// TLSArgs are the flags that give a process of the cluster the TLS files
// f; none for no files (in clear).
func TLSArgs(f clustertls.Files) []string {
	if !f.Given() {
		return nil
	}
	return []string{"--cluster-tls-ca", f.CA, "--cluster-tls-cert", f.Cert, "--cluster-tls-key", f.Key}
}

// Node is a backupmon node of the cluster.
type Node struct {
	*Proc
	ID                  string
	PublicURL, AdminURL string
	SMTPAddr            string // host:port, when Config.SMTP
	proxies             []*Proxy
}

// Cut closes the node's connections to NATS and refuses new ones: the node
// keeps running, cut off from the cluster (not with Config.NoProxies).
func (n *Node) Cut() {
	for _, p := range n.proxies {
		p.Cut()
	}
}

// Blackhole lets no byte through between the node and NATS, either way,
// and closes nothing: the node keeps its connections and learns only from
// its own timeouts, as behind a dead switch (not with Config.NoProxies).
func (n *Node) Blackhole() {
	for _, p := range n.proxies {
		p.Blackhole()
	}
}

// Delay holds every byte between the node and NATS d longer (0: none).
func (n *Node) Delay(d time.Duration) {
	for _, p := range n.proxies {
		p.Delay(d)
	}
}

// Heal lets the node reach NATS again, without delay.
func (n *Node) Heal() {
	for _, p := range n.proxies {
		p.Heal()
	}
}

// Link returns the proxy that carries the node's connections to NATS
// server j (nil with Config.NoProxies).
func (n *Node) Link(j int) *Proxy {
	if j >= len(n.proxies) {
		return nil
	}
	return n.proxies[j]
}

// Route returns the proxy that carries NATS server i's route to server j
// (nil without Config.RouteProxies): faults on it and on Route(j, i) part
// the two servers.
func (c *Cluster) Route(i, j int) *Proxy {
	if i >= len(c.routes) || j >= len(c.routes[i]) {
		return nil
	}
	return c.routes[i][j]
}

// deadEnd is the route address every server advertises with
// Config.RouteProxies: port 1 (tcpmux), which nothing listens on here, so
// that an implicit route (nats-server dials the address a server
// advertises when it learns of it from a third and has no route to it)
// is refused at once and tried no more; the routes go only through the
// proxies.
const deadEnd = "127.0.0.1:1"

// Start starts the NATS servers, waits until JetStream has a leader, then
// the nodes, and waits until every shard is served. On error it stops
// what it started.
func Start(cfg Config) (*Cluster, error) {
	if cfg.Nodes <= 0 {
		cfg.Nodes = 3
	}
	if cfg.NATS <= 0 {
		cfg.NATS = 3
	}
	if cfg.Shards <= 0 {
		cfg.Shards = 4
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = time.Minute
	}
	if cfg.AdminToken == "" {
		return nil, errors.New("localcluster: an admin token is required")
	}
	if err := os.MkdirAll(cfg.Dir, 0o750); err != nil {
		return nil, err
	}
	c := &Cluster{cfg: cfg, AuthFile: filepath.Join(cfg.Dir, "nats.secret")}
	var err error
	if c.NATSSecret, err = writeSecret(c.AuthFile); err != nil {
		return nil, err
	}
	if cfg.MemberHosts && (cfg.InClear || !cfg.NoProxies) {
		return nil, errors.New("localcluster: MemberHosts needs TLS and NoProxies")
	}
	if cfg.RouteProxies && cfg.NoProxies {
		return nil, errors.New("localcluster: RouteProxies needs the proxies")
	}
	tlsDir := filepath.Join(cfg.Dir, "tls")
	if !cfg.InClear {
		// A new authority each start, as the secret: nothing of an earlier
		// run is trusted.
		if err := os.RemoveAll(tlsDir); err != nil {
			return nil, err
		}
		if c.TLS, err = clustertls.Issue(tlsDir, "member", []string{"127.0.0.1", "localhost"}, time.Now()); err != nil {
			return nil, fmt.Errorf("localcluster: %w", err)
		}
	}
	memberTLS := c.memberTLS
	ports, release, err := c.ports()
	if err != nil {
		return nil, err
	}
	defer release()
	natsURLs := make([]string, cfg.NATS)
	for i := range cfg.NATS {
		name, host := fmt.Sprintf("n%d", i+1), cfg.memberHost(11, i)
		args := []string{"nats", "--name", name, "--listen", host + ":" + strconv.Itoa(ports[2][i]),
			"--store", filepath.Join(cfg.Dir, name), "--auth-file", c.AuthFile}
		tlsArgs, err := memberTLS(name, host)
		if err != nil {
			return nil, err
		}
		args = append(args, tlsArgs...)
		if cfg.NATS > 1 {
			routes, err := c.routesOf(i, ports[3])
			if err != nil {
				c.Close()
				return nil, err
			}
			args = append(args, "--cluster-listen", host+":"+strconv.Itoa(ports[3][i]), "--routes", strings.Join(routes, ","))
			if cfg.RouteProxies {
				args = append(args, "--cluster-advertise", deadEnd)
			}
		}
		natsURLs[i] = host + ":" + strconv.Itoa(ports[2][i])
		c.NATSURLs = append(c.NATSURLs, "nats://"+natsURLs[i])
		c.NATS = append(c.NATS, NewProc(name, cfg.Binary, filepath.Join(cfg.Dir, name+".log"), args...))
	}
	for i := range cfg.Nodes {
		n, err := c.newNode(i, nodePorts{public: ports[0][i], admin: ports[1][i], smtp: portAt(ports[4], i)})
		if err != nil {
			c.Close()
			return nil, err
		}
		c.Nodes = append(c.Nodes, n)
	}
	// The ports were held until the proxies had theirs.
	release()
	if err := c.startAll(c.NATS); err != nil {
		c.Close()
		return nil, err
	}
	if err := c.startAll(nodeProcs(c.Nodes)); err != nil {
		c.Close()
		return nil, err
	}
	if err := c.WaitServed(cfg.StartTimeout); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// routesOf returns the route URLs of NATS server i, given every server's
// route port: the other servers' listeners, or with Config.RouteProxies
// the proxies it gets to them (c.routes[i]).
func (c *Cluster) routesOf(i int, routePorts []int) ([]string, error) {
	var routes []string
	if c.cfg.RouteProxies {
		c.routes = append(c.routes, make([]*Proxy, c.cfg.NATS))
	}
	for j := range c.cfg.NATS {
		if j == i {
			continue
		}
		addr := c.cfg.memberHost(11, j) + ":" + strconv.Itoa(routePorts[j])
		if c.cfg.RouteProxies {
			p, err := NewProxy(addr)
			if err != nil {
				return nil, err
			}
			c.routes[i][j] = p
			addr = p.Addr()
		}
		routes = append(routes, "nats://"+addr)
	}
	return routes, nil
}

// ports returns the public, admin, NATS client, NATS route and SMTP ports, and
// a func that releases the free ones it holds (so that nothing else takes
// them before).
func (c *Cluster) ports() ([5][]int, func(), error) {
	var out [5][]int
	var held []net.Listener
	release := func() {
		for _, ln := range held {
			ln.Close()
		}
	}
	smtp := 0
	if c.cfg.SMTP {
		smtp = c.cfg.Nodes
	}
	counts := [5]int{c.cfg.Nodes, c.cfg.Nodes, c.cfg.NATS, c.cfg.NATS, smtp}
	for k := range out {
		for i := range counts[k] {
			switch {
			case k < 3 && c.cfg.Ports[k] != 0:
				out[k] = append(out[k], c.cfg.Ports[k]+i)
			case k == 3 && c.cfg.Ports[2] != 0:
				out[k] = append(out[k], c.cfg.Ports[2]+100+i)
			case k == 4 && c.cfg.Ports[3] != 0:
				out[k] = append(out[k], c.cfg.Ports[3]+i)
			default:
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					release()
					return out, nil, err
				}
				held = append(held, ln)
				out[k] = append(out[k], ln.Addr().(*net.TCPAddr).Port)
			}
		}
	}
	return out, release, nil
}

// startAll starts procs at once and waits until each is ready.
func (c *Cluster) startAll(procs []*Proc) error {
	errs := make([]error, len(procs))
	var wg sync.WaitGroup
	for i, p := range procs {
		wg.Go(func() { errs[i] = p.Start(c.cfg.StartTimeout) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// WaitServed waits until every running node answers the admin list of
// workspaces, which needs every shard served by some node, and says it is
// ready (/readyz).
func (c *Cluster) WaitServed(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for _, n := range c.Nodes {
		if !n.Running() {
			continue
		}
		for {
			status, err := c.adminStatus(n, "/admin/v1/workspaces")
			if err == nil && status == http.StatusOK {
				status, err = c.adminStatus(n, "/readyz")
			}
			if err == nil && status == http.StatusOK {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("node %s: not every shard served after %v (last: %d %v):\n%s", n.ID, timeout, status, err, n.Tail(20))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return nil
}

func (c *Cluster) adminStatus(n *Node, path string) (int, error) {
	req, err := http.NewRequest(http.MethodGet, n.AdminURL+path, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+c.cfg.AdminToken)
	client := http.Client{Timeout: 5 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// Close stops the nodes (SIGTERM, so that each hands its shards over with
// a snapshot), then the NATS servers, then the proxies.
func (c *Cluster) Close() error {
	err := termAll(nodeProcs(c.Nodes))
	err = errors.Join(err, termAll(c.NATS))
	for _, n := range c.Nodes {
		for _, p := range n.proxies {
			p.Close()
		}
	}
	for _, row := range c.routes {
		for _, p := range row {
			if p != nil {
				p.Close()
			}
		}
	}
	return err
}

// termAll stops procs at once (SIGTERM, then SIGKILL after 30 s) and
// returns what went wrong.
func termAll(procs []*Proc) error {
	errs := make([]error, len(procs))
	var wg sync.WaitGroup
	for i, p := range procs {
		wg.Go(func() { errs[i] = p.Term(30 * time.Second) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Procs returns every process of the cluster: the NATS servers, then the
// nodes.
func (c *Cluster) Procs() []*Proc { return append(append([]*Proc{}, c.NATS...), nodeProcs(c.Nodes)...) }

// nodeProcs returns the processes of nodes.
func nodeProcs(nodes []*Node) []*Proc {
	out := make([]*Proc, len(nodes))
	for i, n := range nodes {
		out[i] = n.Proc
	}
	return out
}
