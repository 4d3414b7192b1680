package cluster

import (
	"bufio"
	"bytes"
	"crypto/subtle"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"backupmon/transport/connlimit"
)

// peerServer takes the connections of other nodes' fronts (peerwire.go)
// and runs the requests they forward to the shards this node serves.
type peerServer struct {
	ln net.Listener
	// refusedLog bounds the lines of connections refused for their hello,
	// which anyone who reaches the port causes as fast as it connects.
	refusedLog connlimit.RateLog

	mu      sync.Mutex
	conns   map[*sender]struct{}
	stopped bool
	running sync.WaitGroup // requests being run
}

// peerHelloWait bounds how long a new connection may take to say hello
// (with the cluster's TLS, the handshake included).
const peerHelloWait = 5 * time.Second

// The peer listener's connection limits. A node keeps one connection to
// each peer, so a cluster needs a few; the port is reachable before anyone
// shows the secret, and without a bound connections held open for their
// hello would take the process's every descriptor (the public, admin and
// SMTP listeners', the log's and the snapshots'). Past a limit a
// connection is closed unanswered, and a front refused goes over NATS.
const (
	maxPeerConns           = 256
	maxPeerConnsPerAddress = 32
)

// listenPeers listens on addr within the peer listener's connection
// limits and serves the connections that come until stopPeers.
func (n *Node) listenPeers(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen for peers on %s: %w", addr, err)
	}
	lim := connlimit.New(ln, connlimit.Options{Name: "peer", Logger: n.log,
		Limits: connlimit.Limits{Total: maxPeerConns, PerAddress: maxPeerConnsPerAddress}})
	n.peerAddr = lim.Addr().String()
	n.peerServer = &peerServer{ln: lim, conns: map[*sender]struct{}{}}
	go n.acceptPeers()
	return nil
}

// acceptPeers serves the connections that come on the node's peer
// listener until stopPeers.
func (n *Node) acceptPeers() {
	p := n.peerServer
	backoff := 5 * time.Millisecond
	for {
		c, err := p.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			n.log.Warn("accepting a peer connection failed", "err", err)
			time.Sleep(backoff)
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = 5 * time.Millisecond
		go n.servePeer(c)
	}
}

// servePeer checks a connection's hello (the cluster's peer secret) and
// then runs each request that comes on it, each in its own goroutine, as
// a request over NATS is run: a forwarded report waits for its append to
// be acknowledged, and the requests behind it do not wait for that.
func (n *Node) servePeer(c net.Conn) {
	p := n.peerServer
	c.SetDeadline(time.Now().Add(peerHelloWait)) // the handshake's and the hello's
	if cfg := n.cfg.Credentials.TLS; cfg != nil {
		// Before the hello, the other end shows a certificate of the
		// cluster's authority (clustertls): the secret then travels
		// encrypted, to a member only.
		tc := tls.Server(c, cfg)
		if err := tc.Handshake(); err != nil {
			if more, ok := p.refusedLog.Allow(); ok {
				n.log.Warn("a peer connection without a certificate of the cluster", "from", c.RemoteAddr().String(), "err", err, "more_since_last_log", more)
			}
			c.Close()
			return
		}
		c = tc
	}
	// The hello is read straight from the connection, bounded by the
	// length of the one hello that passes: whoever reaches the port sets
	// nothing aside (no frame's worth, no reader) before it shows the secret.
	hello, err := readFrameWithin(c, nil, len(peerHello), len(peerHello)+len(n.peers.secret))
	secret, ok := bytes.CutPrefix(hello, []byte(peerHello))
	if err != nil || !ok || subtle.ConstantTimeCompare(secret, n.peers.secret) != 1 {
		if more, ok := p.refusedLog.Allow(); ok {
			n.log.Warn("a peer connection without the cluster's peer secret", "from", c.RemoteAddr().String(), "err", err, "more_since_last_log", more)
		}
		c.Close()
		return
	}
	c.SetDeadline(time.Time{})
	r := bufio.NewReaderSize(c, 64<<10)
	out := newSender(c)
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		out.close(nil)
		return
	}
	p.conns[out] = struct{}{}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.conns, out)
		p.mu.Unlock()
	}()
	var frame []byte
	for {
		frame, err = readFrame(r, frame, requestHead)
		if err != nil {
			out.close(err)
			return
		}
		id := binary.BigEndian.Uint64(frame)
		shard := int(binary.BigEndian.Uint16(frame[8:]))
		p.mu.Lock()
		if p.stopped {
			p.mu.Unlock()
			out.send(func(b []byte) []byte { return appendAnswerFrame(b, id, notServing) })
			continue
		}
		p.running.Add(1) // before stopPeers waits: it sets stopped first
		p.mu.Unlock()
		req, done := envelope()
		*req = append(*req, frame[requestHead:]...)
		go func() {
			defer p.running.Done()
			defer done()
			n.answerPeer(out, id, shard, *req)
		}()
	}
}

// answerPeer runs request id for shard and sends its answer: "not
// serving" when this node does not serve the shard now.
func (n *Node) answerPeer(out *sender, id uint64, shard int, req []byte) {
	var h *hosted
	if shard < MaxShards {
		n.mu.Lock()
		h = n.hosted[shard]
		n.mu.Unlock()
	}
	if h == nil || !h.enter() {
		out.send(func(b []byte) []byte { return appendAnswerFrame(b, id, notServing) })
		return
	}
	defer h.inflight.Done()
	buf, done := envelope()
	defer done()
	*buf = n.answerForwarded(h, *buf, req, 0)
	out.send(func(b []byte) []byte { return appendAnswerFrame(b, id, *buf) })
}

// stopPeers stops taking peer connections, gives the requests being run
// up to 5 s to answer, then closes every peer connection, taken and made.
func (n *Node) stopPeers() {
	p := n.peerServer
	if p == nil {
		return
	}
	p.ln.Close()
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
	finished := make(chan struct{})
	go func() { p.running.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(5 * time.Second):
	}
	p.mu.Lock()
	for out := range p.conns {
		out.close(nil)
	}
	p.mu.Unlock()
	n.peers.mu.Lock()
	for _, l := range n.peers.links {
		l.close()
	}
	n.peers.mu.Unlock()
}
