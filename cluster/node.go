package cluster

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/valyala/fasthttp"

	"backupmon/engine"
	"backupmon/jslog"
)

// Config configures a Node.
type Config struct {
	// URLs are the NATS servers, comma-separated; NodeID names this node
	// (unique in the cluster).
	URLs   string
	NodeID string
	// Shards is the shard count of a new cluster (default 4); a cluster
	// keeps the count it was first set up with.
	Shards int
	// Replicas is the copies each shard's stream keeps (default 3); fewer
	// than 3 only for development.
	Replicas int
	// Dir holds one directory per shard the node hosts.
	Dir    string
	Logger *slog.Logger
	// EngineOptions returns the options of a shard's engine (clock, logger,
	// settings); the node sets its Dir, Log, Snapshots, Stamp, WorkspaceID
	// and KeepClock.
	EngineOptions func(shard int) engine.Options
	// Build makes what a shard serves over its opened engine.
	Build func(shard int, eng *engine.Engine) (*Stack, error)
	// Clock is the development clock the node's engines share, or nil.
	Clock *engine.DevClock
	// Metrics, when set, receives the node's events.
	Metrics *Metrics
	// PeerListen is where the node takes requests other nodes forward to
	// it node to node over TCP (host:port, reachable from the other nodes); empty:
	// requests reach it over NATS only.
	PeerListen string
	// MoveBack is how long a node must have been up before the shards it
	// ranks first for are handed back to it (0: 30 s).
	MoveBack time.Duration
	// LoginGate, when set, sees every dashboard login that arrives at this
	// node before it goes to its shard, and may mark it refused: the
	// dashboard's LoginGate, which counts attempts by client address
	// across the shards.
	LoginGate func(ctx *fasthttp.RequestCtx)
	// Credentials are the NATS secret and the cluster's TLS the node
	// presents, to the NATS servers and to the other nodes.
	Credentials Credentials
}

// Stack is what a node serves for one shard: its engine, and the handlers
// of the public and admin listeners over it.
type Stack struct {
	Public, Admin fasthttp.RequestHandler
	// Close stops what Build started besides the engine; may be nil.
	Close func()
}

// Node is one node of a cluster. Make one with Start; stop it with Stop.
type Node struct {
	cfg    Config
	log    *slog.Logger
	nc     *nats.Conn
	js     jetstream.JetStream
	owners jetstream.KeyValue
	nodes  jetstream.KeyValue
	config jetstream.KeyValue
	marks  jetstream.KeyValue  // shard → the last sequence its owners saw acknowledged (mark.go)
	objJS  jetstream.JetStream // the object stores' (objectJS)
	store  *objects            // the shards' snapshots
	// mailObjects keeps the raw messages of unreadable e-mails.
	mailObjects *objects
	shards      int
	clusterID   string // the cluster's id (identity.go)

	mu     sync.Mutex
	hosted map[int]*hosted
	seen   map[string]time.Time // live nodes, and when each was first seen
	broken map[int]error        // shards served read-only: their history failed its checks
	retry  map[int]retryAfter   // shards that failed to open, and when to try again
	// freeSince: when this node first saw a shard's lease free (freeFor).
	freeSince map[int]time.Time
	// leaving: the node is stopping and takes no shard any more.
	leaving atomic.Bool

	stop    chan struct{}
	stopped sync.WaitGroup
	rr      atomic.Uint32
	// mineServed: at the last assignment, every shard this node ranks
	// first for had an owner.
	mineServed atomic.Bool
	// beatOK: when the last heartbeat that succeeded was sent (the beat
	// loop's alone).
	beatOK time.Time

	dir       *directory      // shards of secrets made before the cluster
	watchCtx  context.Context // the buckets' watches, until Stop
	stopWatch context.CancelFunc

	// Forwarding node to node (peer*.go); nil without PeerListen.
	peers      *peers
	peerAddr   string
	peerServer *peerServer
}

// hosted is a shard the node owns.
type hosted struct {
	shard     int
	epoch     uint64 // the lease's revision when taken
	rev       uint64 // its latest revision
	renewedAt time.Time
	eng       *engine.Engine
	log       *jslog.Log
	snaps     *objectSnapshots
	marked    atomic.Uint64 // the shard's mark as this node last read or wrote it
	stack     *Stack
	subs      []*nats.Subscription
	serving   atomic.Bool
	inflight  sync.WaitGroup // requests forwarded to it being handled
	gate      sync.Mutex     // orders inflight.Add before closeHosted's Wait
	closing   bool           // closeHosted began: forwarded requests are refused
	failed    atomic.Bool    // its log failed (it is dropped, or not hosted at all)
}

// Connect connects to the cluster and sets it up if it is new (streams,
// buckets, object store, shard count), and checks that it keeps
// acknowledged records. It returns an error naming what to change when the
// cluster cannot keep acknowledged records. Run starts the node.
func Connect(cfg Config) (*Node, error) {
	if cfg.Shards <= 0 {
		cfg.Shards = 4
	}
	if cfg.Replicas <= 0 {
		cfg.Replicas = 3
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Metrics == nil {
		cfg.Metrics = NewMetrics()
	}
	if cfg.Shards > MaxShards {
		return nil, fmt.Errorf("at most %d shards", MaxShards)
	}
	n := &Node{cfg: cfg, log: cfg.Logger.With("node", cfg.NodeID), hosted: map[int]*hosted{}, seen: map[string]time.Time{},
		broken: map[int]error{}, retry: map[int]retryAfter{}, freeSince: map[int]time.Time{}, stop: make(chan struct{})}
	// RetryOnFailedConnect: a node may start before its NATS servers. A
	// refusal of its credentials is not retried for ever: nats.go closes
	// the connection at the second one from the same server (refused).
	guard := &startGuard{}
	nc, err := nats.Connect(cfg.URLs, append(append(cfg.Credentials.natsOptions(), guard.options()...), nats.Name("backupmon "+cfg.NodeID), nats.MaxReconnects(-1), nats.ReconnectWait(250*time.Millisecond), nats.RetryOnFailedConnect(true),
		// Nothing buffered while disconnected: an append or a forward fails at
		// once rather than going out late.
		nats.ReconnectBufSize(-1),
		// A link that carries nothing and closes nothing (a dead switch, a
		// dropped route) is noticed within 4-6 s, before the lease margin,
		// rather than nats.go's default 4-6 minutes (a ping every 2 minutes,
		// 2 unanswered): the node then says it is cut off and reconnects to
		// another server.
		nats.PingInterval(pingEvery), nats.MaxPingsOutstanding(2),
		// Only the servers given: addresses the servers advertise may not be
		// reachable from here (proxies, NAT).
		nats.IgnoreDiscoveredServers(),
		// The link's changes, for an operator reading why shards moved.
		nats.DisconnectErrHandler(func(nc *nats.Conn, err error) {
			if nc.IsClosed() {
				return // the node's own Stop
			}
			cfg.Metrics.linkLost()
			n.log.Warn("NATS link lost", "err", err)
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) { n.log.Info("NATS link back", "server", nc.ConnectedUrlRedacted()) }))...)
	if err != nil {
		return nil, connectError(cfg.URLs, err)
	}
	n.nc = nc
	cfg.Metrics.watchLink(nc.IsConnected)
	// An acknowledgement lost in a stream's change of leader (the log
	// reads the outcome back instead, jslog/resolve.go) would otherwise
	// stay pending for good, and 4,000 pending stall every publish.
	if n.js, err = jetstream.New(nc, jetstream.WithPublishAsyncTimeout(time.Minute)); err != nil {
		nc.Close()
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), setupWait)
	defer cancel()
	// Which cluster: before anything is made on the servers.
	known, err := knownCluster(cfg.Dir)
	if err != nil {
		nc.Close()
		return nil, err
	}
	var held string
	if known != "" {
		err = ensure(ctx, n.log, "the cluster's id", func(ctx context.Context) error {
			var err error
			held, err = heldCluster(ctx, n.js)
			return err
		}, nil)
		if err == nil {
			err = checkCluster(known, held, cfg.Dir, cfg.URLs)
		}
		if err != nil {
			nc.Close()
			return nil, err
		}
	}
	n.shards, err = setup(ctx, n.log, n.js, cfg.Shards, cfg.Replicas)
	if err != nil {
		nc.Close()
		if err := guard.refused(nc, cfg.URLs); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("set up the cluster: %w (JetStream needs %d servers for %d replicas: run three NATS servers, or give --cluster-replicas 1 for development)", err, cfg.Replicas, cfg.Replicas)
	}
	if err := checkReplicas(ctx, n.js, min(cfg.Replicas, 3)); err != nil {
		nc.Close()
		return nil, err
	}
	for _, b := range []struct {
		name string
		kv   *jetstream.KeyValue
	}{{ownersBucket, &n.owners}, {nodesBucket, &n.nodes}, {clusterBucket, &n.config}, {marksBucket, &n.marks}} {
		if *b.kv, err = n.js.KeyValue(ctx, b.name); err != nil {
			nc.Close()
			return nil, err
		}
	}
	if n.clusterID, err = joinCluster(ctx, n.config, cfg.Dir, known); err != nil {
		nc.Close()
		return nil, err
	}
	if n.objJS, err = objectJS(nc); err != nil {
		nc.Close()
		return nil, err
	}
	if n.store, err = openObjects(ctx, n.objJS, snapshotsStore, n.log); err != nil {
		nc.Close()
		return nil, err
	}
	if n.mailObjects, err = openObjects(ctx, n.objJS, mailStore, n.log); err != nil {
		nc.Close()
		return nil, err
	}
	dirKV, err := n.js.KeyValue(ctx, directoryBucket)
	if err != nil {
		nc.Close()
		return nil, err
	}
	n.dir = newDirectory()
	n.watchCtx, n.stopWatch = context.WithCancel(context.Background())
	// Retried like the set-up: a node (re)starting while JetStream elects
	// leaders gets no answer for a few seconds.
	if err := ensure(ctx, n.log, "the directory's watch", func(context.Context) error { return n.dir.watch(n.watchCtx, dirKV, callWait) }, nil); err != nil {
		n.stopWatch()
		nc.Close()
		return nil, fmt.Errorf("read the directory: %w", err)
	}
	if cfg.Clock != nil {
		if err := n.shareClock(); err != nil {
			nc.Close()
			return nil, err
		}
	}
	return n, nil
}

// Run starts the node's loops: its heartbeat, taking and releasing shards,
// renewing their leases; it answers for the development clock.
func (n *Node) Run() error {
	if _, err := n.nc.Subscribe("bm.clock", n.onClock); err != nil {
		return err
	}
	if n.cfg.PeerListen != "" {
		if err := n.startPeers(); err != nil {
			return err
		}
	}
	n.beatOK = time.Now()
	if err := n.heartbeat(); err != nil {
		return fmt.Errorf("heartbeat: %w", err)
	}
	n.stopped.Add(3)
	go n.every(renewEvery, n.beat)
	go n.every(500*time.Millisecond, n.assign)
	go n.every(renewEvery, n.markAll) // apart from the renewals, which it must not hold up
	n.log.Info("cluster node started", "shards", n.shards, "replicas", n.cfg.Replicas)
	return nil
}

// Shards returns the cluster's shard count.
func (n *Node) Shards() int { return n.shards }

// every runs fn every d until Stop.
func (n *Node) every(d time.Duration, fn func()) {
	defer n.stopped.Done()
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-n.stop:
			return
		case <-t.C:
			fn()
		}
	}
}

// heartbeat writes the node's entry in the nodes bucket (it expires
// leaseTTL after the last write).
func (n *Node) heartbeat() error {
	ctx, cancel := context.WithTimeout(context.Background(), renewEvery)
	defer cancel()
	_, err := n.nodes.Put(ctx, n.cfg.NodeID, heartbeatValue(time.Now(), n.peerAddr))
	return err
}

// beat renews the heartbeat and the leases of the shards the node owns.
// A node whose heartbeats have failed for leaseSafe while its connection
// stays up is on a NATS server cut off from the others' JetStream (its
// routes lost): nats.go keeps such a connection for ever, so the node
// reconnects, to another server, itself (it has lost its shards by then).
func (n *Node) beat() {
	sent := time.Now()
	if err := n.heartbeat(); err != nil {
		n.log.Warn("heartbeat failed", "err", err, "link", n.nc.Status().String(), "link_err", n.nc.LastError())
		if time.Since(n.beatOK) > leaseSafe && n.nc.IsConnected() {
			n.log.Warn("JetStream unreachable through this NATS server: trying another", "server", n.nc.ConnectedServerName(), "since", n.beatOK)
			n.nc.ForceReconnect()
			n.beatOK = sent // the next server gets its leaseSafe too
		}
	} else {
		n.beatOK = sent
	}
	for _, h := range n.hostedList() {
		n.renew(h)
	}
}

// hostedList returns the shards the node owns now.
func (n *Node) hostedList() []*hosted {
	n.mu.Lock()
	defer n.mu.Unlock()
	list := make([]*hosted, 0, len(n.hosted))
	for _, h := range n.hosted {
		list = append(list, h)
	}
	return list
}

// renew renews a shard's lease with compare-and-set on its revision; a
// lease another node took, or one not renewed within leaseSafe, makes the
// node stop serving the shard at once.
func (n *Node) renew(h *hosted) {
	sent := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), renewEvery)
	rev, err := n.owners.Update(ctx, shardKey(h.shard), n.leaseValue(h.epoch), h.rev)
	cancel()
	switch {
	case err == nil:
		// The lease is still this node's (the update matched its revision):
		// serve again if a slow renewal had stopped it.
		n.mu.Lock()
		h.rev, h.renewedAt = rev, sent
		if n.hosted[h.shard] == h {
			h.serving.Store(true)
		}
		n.mu.Unlock()
		n.cfg.Metrics.leaseRenewed()
	case errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyNotFound):
		n.log.Warn("lease lost: another node owns the shard", "shard", h.shard, "err", err)
		n.drop(h.shard, false)
	default:
		n.log.Warn("lease renewal failed", "shard", h.shard, "err", err)
		if time.Since(h.renewedAt) > leaseSafe {
			n.drop(h.shard, false)
		}
	}
}

// shardKey names a shard in keys, subjects and paths: "s007". The names
// are made once; forwarding asks for one per request.
func shardKey(shard int) string { return shardKeys[shard] }

var shardKeys = func() (keys [MaxShards]string) {
	for s := range keys {
		keys[s] = fmt.Sprintf("s%03d", s)
	}
	return keys
}()

// subject is the NATS subject of a shard's requests of a kind (http, call,
// mail, import): "bm.http.s007".
func subject(kind string, shard int) string { return "bm." + kind + "." + shardKey(shard) }

func (n *Node) leaseValue(epoch uint64) []byte {
	return []byte(n.cfg.NodeID + " " + strconv.FormatUint(epoch, 10))
}

// assign looks at the live nodes and the leases: it takes the free shards
// this node ranks first for (or second, once a shard has been free for a
// while), and hands back the shards another live node ranks first for,
// once that node has been up for Config.MoveBack (30 s). It also stops serving a shard
// whose lease was not renewed within leaseSafe.
func (n *Node) assign() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	live, err := n.nodes.Keys(ctx)
	if err != nil && !errors.Is(err, jetstream.ErrNoKeysFound) {
		n.log.Warn("list nodes", "err", err)
		return
	}
	now := time.Now()
	n.mu.Lock()
	for _, id := range live {
		if _, ok := n.seen[id]; !ok {
			n.seen[id] = now
		}
	}
	for id := range n.seen {
		if !slices.Contains(live, id) {
			delete(n.seen, id)
		}
	}
	for _, h := range n.hosted {
		if time.Since(h.renewedAt) > leaseSafe && h.serving.Load() {
			h.serving.Store(false)
		}
	}
	n.mu.Unlock()
	if !slices.Contains(live, n.cfg.NodeID) {
		live = append(live, n.cfg.NodeID)
	}
	sort.Strings(live)
	if n.leaving.Load() {
		return
	}
	served := true // every shard this node ranks first for has an owner
	for s := range n.shards {
		order := rank(s, live)
		n.mu.Lock()
		h := n.hosted[s]
		preferredSince := n.seen[order[0]]
		wait := n.retry[s].at.After(now)
		n.mu.Unlock()
		switch {
		case h != nil && order[0] != n.cfg.NodeID && !preferredSince.IsZero() && now.Sub(preferredSince) > cmp.Or(n.cfg.MoveBack, 30*time.Second):
			n.log.Info("handing the shard to its preferred node", "shard", s, "to", order[0])
			n.drop(s, true)
		case h == nil && !wait && (order[0] == n.cfg.NodeID || len(order) > 1 && order[1] == n.cfg.NodeID && n.freeFor(ctx, s) > 3*leaseTTL/2):
			if !n.acquire(ctx, s) && order[0] == n.cfg.NodeID {
				served = false
			}
		case h == nil && order[0] == n.cfg.NodeID && wait:
			served = false
		}
	}
	n.mineServed.Store(served)
}

// openWait bounds one attempt to open a shard's stream. A stream whose
// leader is being elected answers nothing until it has one (a few
// seconds); a longer wait was all lost to the failover (15 s in a chaos
// round), while a new attempt a second later finds the new leader.
const openWait = 4 * time.Second

// retryAfter is the back-off of a shard that failed to open: 1 s after the
// first failure, doubling to at most 5 s. Failures to open are mostly
// passing (a stream or the key-value store between leaders after a NATS
// server's loss), and a longer wait went straight into the failover time
// (a minute in one chaos round); a shard whose history fails its checks
// opens read-only rather than failing.
type retryAfter struct {
	at   time.Time
	wait time.Duration
}

func (r retryAfter) next(now time.Time) retryAfter {
	r.wait = min(max(2*r.wait, time.Second), 5*time.Second)
	r.at = now.Add(r.wait)
	return r
}

// freeFor returns how long this node has seen a shard's lease free: 0
// while it is owned, or when the node sees it free for the first time. The
// key-value store cannot tell how long a deleted key has been gone (Get
// answers "not found" for it), so the node keeps the time it first saw
// the lease free.
func (n *Node) freeFor(ctx context.Context, shard int) time.Duration {
	_, err := n.owners.Get(ctx, shardKey(shard))
	n.mu.Lock()
	defer n.mu.Unlock()
	if !errors.Is(err, jetstream.ErrKeyNotFound) {
		delete(n.freeSince, shard)
		return 0
	}
	since, ok := n.freeSince[shard]
	if !ok {
		n.freeSince[shard] = time.Now()
		return 0
	}
	return time.Since(since)
}

// acquire takes a free shard's lease and opens its engine: the snapshot
// and the stream are replayed, and the log's takeover marker fences every
// older owner. The shard is served once that is durable.
//
// It reports whether the shard has an owner now: this node, or another
// whose lease it found.
func (n *Node) acquire(ctx context.Context, shard int) bool {
	rev, err := n.owners.Create(ctx, shardKey(shard), n.leaseValue(0))
	if err != nil {
		if !errors.Is(err, jetstream.ErrKeyExists) {
			n.log.Warn("take the shard's lease", "shard", shard, "err", err)
			return false
		}
		return true
	}
	taken := time.Now()
	h := &hosted{shard: shard, epoch: rev, rev: rev, renewedAt: taken}
	n.log.Info("shard lease taken", "shard", shard, "epoch", rev)
	if err := n.open(h); err != nil {
		n.log.Error("open the shard", "shard", shard, "err", err)
		n.mu.Lock()
		n.retry[shard] = n.retry[shard].next(time.Now())
		n.mu.Unlock()
		n.release(shard, rev)
		return false
	}
	n.mu.Lock()
	delete(n.retry, shard)
	n.mu.Unlock()
	n.cfg.Metrics.shardTaken(time.Since(taken))
	return true
}

// open opens the engine of a shard whose lease h holds, builds its stack
// and subscribes to its requests.
func (n *Node) open(h *hosted) error {
	lctx, cancel := context.WithTimeout(context.Background(), openWait)
	defer cancel()
	shard := h.shard
	mark, err := n.readMark(lctx, shard)
	if err != nil {
		return err
	}
	h.marked.Store(mark)
	l, err := jslog.Open(lctx, jslog.Options{
		JS: n.js, Stream: StreamName(shard), Subject: Subject(shard), Epoch: h.epoch, Logger: n.log, Mark: mark,
		OnFatal: func(err error) {
			n.log.Error("shard log failed: the shard is rebuilt from its stream", "shard", shard, "err", err)
			h.failed.Store(true) // before it is hosted, open sees it
			go n.drop(shard, false)
		},
		Observe: n.cfg.Metrics.appended,
	})
	if err != nil {
		return err
	}
	opts := n.cfg.EngineOptions(shard)
	opts.Dir = filepath.Join(n.cfg.Dir, shardKey(shard))
	if err := os.MkdirAll(opts.Dir, 0o750); err != nil {
		return err
	}
	opts.Log = l
	h.snaps = newObjectSnapshots(n.store, shard, n.log)
	opts.Snapshots = h.snaps
	opts.Stamp = func(text []byte) {
		if len(text) == 20 {
			stampBase32(text, shard) // an ingest token
		} else {
			stampHex(text, shard) // a key's hex
		}
	}
	shards := n.shards
	opts.WorkspaceID = func(id engine.ID) bool { return WorkspaceShard(id, shards) == shard }
	opts.KeepClock = true
	// A history that fails its checks opens read-only (reads answer,
	// changes get 503) rather than not at all, or silently with holes.
	opts.Broken = func(err error) bool { return errors.Is(err, jslog.ErrBroken) }
	if n.cfg.Clock != nil {
		opts.Clock = n.cfg.Clock
	}
	eng, err := engine.Open(opts)
	if err != nil {
		l.Close()
		return err
	}
	// Served only once the takeover marker is durable: a replay that read
	// less than the stream holds (a replica answers for a stream without a
	// leader with its own end, as after a partition) is fenced there, and
	// nothing is answered from that state.
	if eng.ReadOnly() == nil {
		done := make(chan error, 1)
		l.Submit(nil, func(_ uint64, err error) { done <- err })
		if err := <-done; err != nil {
			eng.Abandon()
			return fmt.Errorf("the takeover: %w", err)
		}
	}
	n.noteBroken(shard, eng.ReadOnly())
	stack, err := n.cfg.Build(shard, eng)
	if err != nil {
		eng.Abandon()
		return err
	}
	h.eng, h.log, h.stack = eng, l, stack
	for _, sub := range []struct {
		subject string
		fn      func(*hosted, *nats.Msg)
	}{
		{subject("http", shard), n.onForwarded},
		{subject("call", shard), n.onCall},
		{subject("mail", shard), n.onMail},
		{subject("import", shard), n.onImport},
	} {
		s, err := n.nc.Subscribe(sub.subject, func(m *nats.Msg) { n.handle(h, m, sub.fn) })
		if err != nil {
			n.closeHosted(h, false)
			return err
		}
		h.subs = append(h.subs, s)
	}
	{
		// Not through handle: a backup is not waited for by a hand-over.
		s, err := n.nc.Subscribe(subject("backup", shard), func(m *nats.Msg) { n.onBackup(h, m) })
		if err != nil {
			n.closeHosted(h, false)
			return err
		}
		h.subs = append(h.subs, s)
	}
	n.mu.Lock()
	if h.failed.Load() {
		// Its log failed since the takeover: OnFatal's drop found nothing
		// to drop.
		n.mu.Unlock()
		n.closeHosted(h, false)
		return errors.New("its log failed while it opened")
	}
	h.serving.Store(true)
	n.hosted[shard] = h
	n.mu.Unlock()
	n.cfg.Metrics.owned(n.ownedCount())
	n.log.Info("shard served", "shard", shard, "epoch", h.epoch)
	return nil
}

// forwardSlots bounds the requests forwarded to this node that run at once
// (NATS runs a subscription's callbacks one after another; each forwarded
// request gets a goroutine of its own instead).
var forwardSlots = make(chan struct{}, 512)

// handle runs fn on a message forwarded to a shard h serves, in a goroutine
// of its own (at most forwardSlots at once); closeHosted waits for them.
func (n *Node) handle(h *hosted, m *nats.Msg, fn func(*hosted, *nats.Msg)) {
	if !h.enter() {
		m.Respond(notServing)
		return
	}
	forwardSlots <- struct{}{}
	go func() {
		defer func() { <-forwardSlots; h.inflight.Done() }()
		fn(h, m)
	}()
}

// enter counts a forwarded request in h's inflight, unless closeHosted
// began (it then returns false); the caller calls inflight.Done.
func (h *hosted) enter() bool {
	h.gate.Lock()
	defer h.gate.Unlock()
	if h.closing {
		return false
	}
	h.inflight.Add(1)
	return true
}

// drop stops serving a shard. graceful: its engine closes with a snapshot,
// its log drained, and its lease is released for the next owner at once;
// else the engine is abandoned (the lease is lost, or its log failed) and
// the lease, if still this node's, released so that the shard is rebuilt.
func (n *Node) drop(shard int, graceful bool) {
	n.mu.Lock()
	h := n.hosted[shard]
	delete(n.hosted, shard)
	delete(n.broken, shard) // its next owner reports it
	n.cfg.Metrics.shardBroken(len(n.broken))
	n.mu.Unlock()
	if h == nil {
		return
	}
	h.serving.Store(false)
	n.closeHosted(h, graceful)
	n.release(shard, h.rev)
	n.cfg.Metrics.owned(n.ownedCount())
	n.log.Info("shard dropped", "shard", shard, "graceful", graceful)
}

func (n *Node) closeHosted(h *hosted, graceful bool) {
	h.gate.Lock()
	h.closing = true
	h.gate.Unlock()
	for _, s := range h.subs {
		s.Unsubscribe()
	}
	h.inflight.Wait() // the requests forwarded before are answered first
	if h.stack != nil && h.stack.Close != nil {
		h.stack.Close()
	}
	if h.eng == nil {
		return
	}
	if h.snaps != nil {
		// A hand-over's snapshot, and one in progress, give up after
		// handOverWait; an abandoned shard's, at once (the engine's close
		// waits for a snapshot in progress, and a drop for a lost lease
		// runs in the loop that renews the node's other leases).
		until := time.Now()
		if graceful {
			until = until.Add(handOverWait)
		}
		h.snaps.hurry(until)
	}
	var err error
	if graceful {
		// The last snapshot, then the minute's rate counts for the next owner.
		err = h.eng.HandOver()
	} else {
		err = h.eng.Abandon()
	}
	if err != nil && graceful {
		n.log.Warn("close the shard's engine", "shard", h.shard, "err", err)
	}
	if graceful {
		n.mark(h) // the drained log's last message, for the next owner
	}
}

// release deletes a shard's lease if it is still at revision rev (this
// node's).
func (n *Node) release(shard int, rev uint64) {
	ctx, cancel := context.WithTimeout(context.Background(), renewEvery)
	defer cancel()
	if err := n.owners.Delete(ctx, shardKey(shard), jetstream.LastRevision(rev)); err != nil && !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		n.log.Debug("release the shard's lease", "shard", shard, "err", err)
	}
}

func (n *Node) ownedCount() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.hosted)
}

// local returns the stack of a shard this node serves now, or nil.
func (n *Node) local(shard int) *hosted {
	n.mu.Lock()
	h := n.hosted[shard]
	n.mu.Unlock()
	if h == nil || !h.serving.Load() || time.Since(h.renewedAt) > leaseSafe {
		return nil
	}
	return h
}

// Ready reports whether the node is ready for traffic (/readyz): it
// reaches NATS, and every shard it ranks first for has an owner (itself,
// or another node until the hand-over). A node that took none of its
// shards (they failed to open) is not ready; a node that
// owns none yet but forwards to their owners is.
func (n *Node) Ready() bool { return n.nc.IsConnected() && n.mineServed.Load() }

// Leave makes the node take no more shards (it keeps those it owns until
// Stop): the first step of a shutdown, so that a node stopping does not
// pick up the shards others hand over meanwhile.
func (n *Node) Leave() { n.leaving.Store(true) }

// stopWait bounds Stop's hand-over of the node's shards.
const stopWait = 30 * time.Second

// Stop hands back every shard the node owns (a snapshot each, leases
// released for the next owners at once) and leaves the cluster.
func (n *Node) Stop() {
	n.Leave()
	defer n.stopWatch()
	close(n.stop)
	n.stopped.Wait()
	n.mu.Lock()
	var shards []int
	for s := range n.hosted {
		shards = append(shards, s)
	}
	n.mu.Unlock()
	// Each shard hands over with a snapshot, all at once; past stopWait the
	// node leaves the rest to expire (their next owner replays the log).
	done := make(chan struct{})
	go func() {
		var wg sync.WaitGroup
		for _, s := range shards {
			wg.Go(func() { n.drop(s, true) })
		}
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(stopWait):
		n.log.Warn("shards not handed over in time: their leases expire", "after", stopWait)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), renewEvery)
	n.nodes.Delete(ctx, n.cfg.NodeID)
	cancel()
	n.stopPeers()
	n.nc.Drain()
}
