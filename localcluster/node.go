package localcluster

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"backupmon/clustertls"
)

// nodePorts are a node's public, admin and SMTP ports (SMTP 0: none).
type nodePorts struct{ public, admin, smtp int }

// portAt returns ports[i], or 0 when there is none (no SMTP listeners).
func portAt(ports []int, i int) int {
	if i < len(ports) {
		return ports[i]
	}
	return 0
}

// memberTLS returns the TLS flags of the process named name on host: with
// MemberHosts a certificate of its own, else the one every process shares
// (none in clear).
func (c *Cluster) memberTLS(name, host string) ([]string, error) {
	if !c.cfg.MemberHosts {
		return TLSArgs(c.TLS), nil
	}
	f, err := clustertls.Issue(filepath.Join(c.cfg.Dir, "tls"), name, []string{host}, time.Now())
	if err != nil {
		return nil, fmt.Errorf("localcluster: %w", err)
	}
	return TLSArgs(f), nil
}

// newNode returns node i of the cluster (b1 for 0), not started, with its
// proxies to the NATS servers (none with NoProxies) and the flags of the
// cluster: its NATS servers, shard count, auth file, TLS and Config.Serve.
// It returns the error of a proxy or a certificate, having closed the
// proxies it made.
func (c *Cluster) newNode(i int, ports nodePorts) (*Node, error) {
	cfg := c.cfg
	id := fmt.Sprintf("b%d", i+1)
	n := &Node{ID: id,
		PublicURL: "http://127.0.0.1:" + strconv.Itoa(ports.public),
		AdminURL:  "http://127.0.0.1:" + strconv.Itoa(ports.admin)}
	var urls []string
	for _, u := range c.NATSURLs {
		if cfg.NoProxies {
			urls = append(urls, u)
			continue
		}
		p, err := NewProxy(strings.TrimPrefix(u, "nats://"))
		if err != nil {
			n.closeProxies()
			return nil, err
		}
		n.proxies = append(n.proxies, p)
		urls = append(urls, "nats://"+p.Addr())
	}
	args := []string{"serve", "--cluster", strings.Join(urls, ","), "--node-id", id,
		"--cluster-shards", strconv.Itoa(cfg.Shards), "--data", filepath.Join(cfg.Dir, id),
		"--listen", strings.TrimPrefix(n.PublicURL, "http://"), "--admin-listen", strings.TrimPrefix(n.AdminURL, "http://"),
		"--admin-token", cfg.AdminToken, "--cluster-auth-file", c.AuthFile}
	tlsArgs, err := c.memberTLS(id, cfg.memberHost(21, i))
	if err != nil {
		n.closeProxies()
		return nil, err
	}
	args = append(args, tlsArgs...)
	if cfg.MemberHosts {
		args = append(args, "--cluster-peer-listen", cfg.memberHost(21, i)+":0")
	}
	if cfg.SMTP {
		n.SMTPAddr = "127.0.0.1:" + strconv.Itoa(ports.smtp)
		args = append(args, "--smtp-listen", n.SMTPAddr)
	}
	if cfg.NATS < 3 {
		args = append(args, "--cluster-replicas", strconv.Itoa(cfg.NATS))
	}
	if cfg.NATSOnly == i+1 {
		args = append(args, "--cluster-peer-listen=")
	}
	args = append(args, cfg.Serve...)
	n.Proc = NewProc(id, cfg.Binary, filepath.Join(cfg.Dir, id+".log"), args...)
	return n, nil
}

// closeProxies closes the node's proxies to the NATS servers.
func (n *Node) closeProxies() {
	for _, p := range n.proxies {
		p.Close()
	}
}

// AddNode starts one more node in the running cluster, the next of the
// names (b4 after three), with the flags, proxies, TLS and auth file the
// others have, and waits until it is ready and every running node
// answers (WaitServed). The cluster's shards move to it as it ranks first
// for them, 30 s after it joined; Close stops it with the others. Not to
// be called at the same time as another method of the cluster. It
// returns an error (the node's log tail quoted) when the node does not
// start; the cluster then runs as before.
func (c *Cluster) AddNode() (*Node, error) {
	i := len(c.Nodes)
	ports, release, err := c.nodePorts(i)
	if err != nil {
		return nil, fmt.Errorf("localcluster: ports of a new node: %w", err)
	}
	n, err := c.newNode(i, ports)
	release()
	if err != nil {
		return nil, err
	}
	if err := n.Start(c.cfg.StartTimeout); err != nil {
		n.closeProxies()
		return nil, err
	}
	c.Nodes = append(c.Nodes, n)
	if err := c.WaitServed(c.cfg.StartTimeout); err != nil {
		return n, err
	}
	return n, nil
}

// nodePorts returns the ports of node i: Config.Ports plus i where given,
// else free ones, held until release (which the caller calls before the
// node starts).
func (c *Cluster) nodePorts(i int) (nodePorts, func(), error) {
	var held []net.Listener
	release := func() {
		for _, ln := range held {
			ln.Close()
		}
	}
	port := func(base int) (int, error) {
		if base != 0 {
			return base + i, nil
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		held = append(held, ln)
		return ln.Addr().(*net.TCPAddr).Port, nil
	}
	var p nodePorts
	var err error
	if p.public, err = port(c.cfg.Ports[0]); err == nil {
		p.admin, err = port(c.cfg.Ports[1])
	}
	if err == nil && c.cfg.SMTP {
		p.smtp, err = port(c.cfg.Ports[3])
	}
	if err != nil {
		release()
		return p, nil, err
	}
	return p, release, nil
}
