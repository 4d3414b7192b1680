package cluster

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/valyala/fasthttp"
)

// A request forwarded to a shard's owner goes node to node over TCP
// (peerwire.go) when the front knows the owner's peer address: then no NATS server carries its
// bytes (a request and its reply routed through the NATS servers cost them
// 46–52 µs of CPU each and most of a forwarded read's latency; see
// bench/RESULTS.md). NATS request/reply stays the way that always works: it
// is used when the owner's address is unknown or refuses the connection, or
// the node there no longer serves the shard.
//
// The peer listener takes only connections that open with the cluster's
// peer secret (made once, kept in the cluster's settings bucket), and runs
// requests only for shards its node serves now, with the same checks as a
// request forwarded over NATS.

// peerBodyLimit bounds a request or answer forwarded between nodes.
const peerBodyLimit = 64 << 20

// peers is what a node knows of the others for forwarding: the owner of
// each shard (from the leases) and each node's peer address (from its
// heartbeat), both kept current by watching their buckets.
type peers struct {
	self   string
	secret []byte
	tls    *tls.Config // the cluster's TLS on links; nil: in clear

	mu    sync.Mutex
	owner map[int]string    // shard → node id
	addr  map[string]string // node id → peer address
	links map[string]*link  // node id → the connection to it
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
	n.peers = &peers{self: n.cfg.NodeID, secret: secret, tls: n.cfg.Credentials.TLS, owner: map[int]string{}, addr: map[string]string{}, links: map[string]*link{}}
	if err := n.listenPeers(n.cfg.PeerListen); err != nil {
		return err
	}
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
			if l := n.peers.links[key]; l != nil { // a node that came back elsewhere
				l.close()
				delete(n.peers.links, key)
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

// link returns the connection to the node that owns shard, or nil when
// this node does not know its address (or owns it itself).
func (p *peers) link(shard int) *link {
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
	l := p.links[id]
	if l == nil {
		l = newLink(addr, p.secret, p.tls)
		p.links[id] = l
	}
	return l
}

// errPeerTimeout is a forward to a peer that got no answer in time: the
// request may have run there, so it is not sent again another way.
var errPeerTimeout = errors.New("the owner did not answer in time")

// viaPeer sends the request message req to the owner of shard over the
// peer connection and writes its answer into ctx. It returns true once it
// has; false and no error when the request did not reach a node serving
// the shard (no address known, the connection refused or lost, the node
// there no longer serving it: the caller tries NATS); an error when the
// owner took longer than forwardTimeout (errPeerTimeout) or its answer
// does not read.
func (n *Node) viaPeer(shard int, req []byte, ctx *fasthttp.RequestCtx) (bool, error) {
	if n.peers == nil {
		return false, nil
	}
	l := n.peers.link(shard)
	if l == nil {
		return false, nil
	}
	served := false
	err := l.do(shard, req, forwardTimeout, func(answer []byte) error {
		if bytes.Equal(answer, notServing) {
			return nil
		}
		served = true
		return answerInto(answer, ctx)
	})
	switch {
	case errors.Is(err, errUnreached):
		return false, nil
	case errors.Is(err, errPeerTimeout):
		return false, err
	case err != nil:
		n.log.Warn("a forwarded answer that does not read", "shard", shard, "err", err)
		return false, err
	}
	return served, nil
}

// PeerAddr returns the address the node takes forwarded requests on over
// HTTP, or "" when it takes them over NATS only (or Run has not started).
func (n *Node) PeerAddr() string { return n.peerAddr }
