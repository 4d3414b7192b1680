package cluster

import (
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/valyala/fasthttp"
)

// A request forwarded to a shard's owner goes node to node over HTTP when
// the front knows the owner's peer address: then no NATS server carries its
// bytes (a request and its reply routed through the NATS servers cost them
// 46–52 µs of CPU each and most of a forwarded read's latency; see
// bench/RESULTS.md). NATS request/reply stays the way that always works: it
// is used when the owner's address is unknown or refuses the connection, or
// the node there no longer serves the shard.
//
// The peer listener answers only requests that carry the cluster's peer
// secret (made once, kept in the cluster's settings bucket), and only for
// shards its node serves now, with the same checks as a request forwarded
// over NATS.

// peerHeader carries the cluster's peer secret on a request between nodes.
const peerHeader = "X-Backupmon-Peer"

// peerBodyLimit bounds a request or answer forwarded between nodes.
const peerBodyLimit = 64 << 20

// peers is what a node knows of the others for forwarding: the owner of
// each shard (from the leases) and each node's peer address (from its
// heartbeat), both kept current by watching their buckets.
type peers struct {
	self   string
	secret []byte

	mu      sync.Mutex
	owner   map[int]string    // shard → node id
	addr    map[string]string // node id → peer address
	clients map[string]*fasthttp.HostClient
}

// heartbeatValue is a node's entry in the nodes bucket: the time of the
// beat in Unix milliseconds, then its peer address when it listens for one.
func heartbeatValue(at time.Time, peerAddr string) []byte {
	v := strconv.FormatInt(at.UnixMilli(), 10)
	if peerAddr != "" {
		v += " " + peerAddr
	}
	return []byte(v)
}

// parseHeartbeat returns the beat's time and the peer address of a nodes
// bucket entry.
func parseHeartbeat(v []byte) (time.Time, string, bool) {
	ms, addr, _ := strings.Cut(string(v), " ")
	n, err := strconv.ParseInt(ms, 10, 64)
	if err != nil {
		return time.Time{}, "", false
	}
	return time.UnixMilli(n).UTC(), addr, true
}

// startPeers listens on cfg.PeerListen, reads the peer secret and watches
// the leases and the nodes' entries until Stop. It returns the address it
// listens on, or an error when it cannot listen.
func (n *Node) startPeers() error {
	secret, err := n.Secret("peer")
	if err != nil {
		return err
	}
	n.peers = &peers{self: n.cfg.NodeID, secret: secret, owner: map[int]string{}, addr: map[string]string{}, clients: map[string]*fasthttp.HostClient{}}
	ln, err := net.Listen("tcp", n.cfg.PeerListen)
	if err != nil {
		return fmt.Errorf("listen for peers on %s: %w", n.cfg.PeerListen, err)
	}
	n.peerAddr = ln.Addr().String()
	n.peerServer = &fasthttp.Server{Handler: n.onPeer, Name: "backupmon-peer", MaxRequestBodySize: peerBodyLimit,
		IdleTimeout: 5 * time.Minute, NoDefaultDate: true, NoDefaultContentType: true}
	go n.peerServer.Serve(ln)
	if err := n.watchBucket(n.owners, func(key string, value []byte, deleted bool) {
		shard, err := strconv.Atoi(strings.TrimPrefix(key, "s"))
		if err != nil || shard < 0 || shard >= MaxShards {
			return
		}
		n.peers.mu.Lock()
		if deleted {
			delete(n.peers.owner, shard)
		} else {
			owner, _, _ := strings.Cut(string(value), " ")
			n.peers.owner[shard] = owner
		}
		n.peers.mu.Unlock()
	}); err != nil {
		return err
	}
	return n.watchBucket(n.nodes, func(key string, value []byte, deleted bool) {
		n.peers.mu.Lock()
		defer n.peers.mu.Unlock()
		_, addr, ok := parseHeartbeat(value)
		if deleted || !ok || addr == "" {
			delete(n.peers.addr, key)
			return
		}
		if n.peers.addr[key] != addr {
			n.peers.addr[key] = addr
			if c := n.peers.clients[key]; c != nil { // a node that came back elsewhere
				c.CloseIdleConnections()
				delete(n.peers.clients, key)
			}
		}
	})
}

// watchBucket calls fn with every key of kv and then with each change,
// until the node's watches stop.
func (n *Node) watchBucket(kv jetstream.KeyValue, fn func(key string, value []byte, deleted bool)) error {
	ctx, cancel := context.WithTimeout(n.watchCtx, setupWait)
	defer cancel()
	var w jetstream.KeyWatcher
	err := ensure(ctx, n.log, "a watch of "+kv.Bucket(), func(context.Context) (err error) {
		w, err = kv.WatchAll(n.watchCtx)
		return err
	}, nil)
	if err != nil {
		return err
	}
	go func() {
		for e := range w.Updates() {
			if e == nil {
				continue // the end of the initial values
			}
			fn(e.Key(), e.Value(), e.Operation() != jetstream.KeyValuePut)
		}
	}()
	return nil
}

// client returns the HTTP client of the node that owns shard, or nil when
// this node does not know its address (or owns it itself).
func (p *peers) client(shard int) *fasthttp.HostClient {
	p.mu.Lock()
	defer p.mu.Unlock()
	id, ok := p.owner[shard]
	if !ok || id == p.self {
		return nil
	}
	addr, ok := p.addr[id]
	if !ok {
		return nil
	}
	c := p.clients[id]
	if c == nil {
		c = &fasthttp.HostClient{Addr: addr, Name: "backupmon-peer", MaxConns: 1024,
			MaxIdleConnDuration: time.Minute, MaxResponseBodySize: peerBodyLimit,
			NoDefaultUserAgentHeader: true, DisablePathNormalizing: true}
		p.clients[id] = c
	}
	return c
}

// errPeerTimeout is a forward to a peer that got no answer in time: the
// request may have run there, so it is not sent again another way.
var errPeerTimeout = errors.New("the owner did not answer in time")

// viaPeer sends the request message req to the owner of shard over HTTP
// and writes its answer into ctx. It returns true once it has; false and
// no error when the request did not reach a node serving the shard (no
// address known, the connection refused or lost, the node there no longer
// serving it: the caller tries NATS); an error when the owner took longer
// than forwardTimeout (errPeerTimeout) or its answer does not read.
func (n *Node) viaPeer(shard int, req []byte, ctx *fasthttp.RequestCtx) (bool, error) {
	if n.peers == nil {
		return false, nil
	}
	c := n.peers.client(shard)
	if c == nil {
		return false, nil
	}
	out, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(out)
	defer fasthttp.ReleaseResponse(resp)
	out.Header.SetMethod(fasthttp.MethodPost)
	out.SetRequestURI(peerPath(shard))
	out.Header.SetHost(c.Addr)
	out.Header.SetBytesV(peerHeader, n.peers.secret)
	out.SetBodyRaw(req)
	if err := c.DoTimeout(out, resp, forwardTimeout); err != nil {
		if errors.Is(err, fasthttp.ErrTimeout) {
			return false, errPeerTimeout
		}
		return false, nil
	}
	if resp.StatusCode() != fasthttp.StatusOK || string(resp.Body()) == string(notServing) {
		return false, nil
	}
	if err := answerInto(resp.Body(), ctx); err != nil {
		n.log.Warn("a forwarded answer that does not read", "shard", shard, "err", err)
		return false, err
	}
	return true, nil
}

func peerPath(shard int) string { return "/forward/" + shardKey(shard) }

// peerShard reads the shard of a peer path, "/forward/s007".
func peerShard(path []byte) (int, bool) {
	key, ok := bytes.CutPrefix(path, []byte("/forward/s"))
	if !ok {
		return 0, false
	}
	shard, err := strconv.Atoi(string(key))
	return shard, err == nil && shard >= 0 && shard < MaxShards && shardKey(shard) == "s"+string(key)
}

// onPeer answers a request another node forwarded over HTTP to a shard
// this node serves: 403 without the cluster's peer secret, "not serving"
// for a shard it does not serve now.
func (n *Node) onPeer(ctx *fasthttp.RequestCtx) {
	if subtle.ConstantTimeCompare(ctx.Request.Header.Peek(peerHeader), n.peers.secret) != 1 {
		ctx.SetStatusCode(fasthttp.StatusForbidden)
		return
	}
	shard, ok := peerShard(ctx.Path())
	if !ok || !ctx.IsPost() {
		ctx.SetStatusCode(fasthttp.StatusNotFound)
		return
	}
	n.mu.Lock()
	h := n.hosted[shard]
	n.mu.Unlock()
	if h == nil || !h.enter() {
		ctx.SetBody(notServing)
		return
	}
	defer h.inflight.Done()
	buf, done := envelope()
	defer done()
	*buf = n.answerForwarded(h, *buf, ctx.Request.Body(), 0)
	ctx.SetBody(*buf)
}

// stopPeers stops the peer listener and closes the connections to peers.
func (n *Node) stopPeers() {
	if n.peerServer == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n.peerServer.ShutdownWithContext(ctx)
	n.peers.mu.Lock()
	for _, c := range n.peers.clients {
		c.CloseIdleConnections()
	}
	n.peers.mu.Unlock()
}

// PeerAddr returns the address the node takes forwarded requests on over
// HTTP, or "" when it takes them over NATS only (or Run has not started).
func (n *Node) PeerAddr() string { return n.peerAddr }
