package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"backupmon/assistant"
	"backupmon/cluster"
	"backupmon/dashboard"
	"backupmon/engine"
	"backupmon/notify"
	"backupmon/password"
	"backupmon/smtpin"
	"backupmon/transport"
)

// The cluster mode of serve (--cluster): the node's listeners are a front
// that routes each request to the shard it belongs to, served here or
// forwarded to the node that owns it; each shard this node owns runs its
// own engine on the shard's replicated log, with the handlers a single node
// has (transport, dashboard, assistant server) over it.

// startCluster builds a cluster node's parts in order, as start does a
// single node's.
func (s *server) startCluster() error {
	if err := runSteps(
		s.checkData,
		s.loadCertificates,
		s.bindListeners,
		s.joinCluster,
		s.serveFront,
		s.runNode,
		s.serveMail,
		s.clusterDemo,
	); err != nil {
		return err
	}
	fmt.Fprintln(s.out, "ready")
	return nil
}

// joinCluster connects to the cluster (setting it up when new) and reads
// its shared secrets: the admin token (unless given) and the cursor key,
// the same on every node so that any node answers a cursor another made.
func (s *server) joinCluster() error {
	if s.cfg.devClock {
		s.clock = engine.NewDevClock(time.Now())
	}
	s.metrics = transport.NewMetrics()
	if len(s.cfg.clusterMonitors) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := cluster.CheckSync(ctx, s.cfg.clusterMonitors, s.cfg.clusterTLS.Config(), s.logger)
		cancel()
		if err != nil {
			return err
		}
	}
	s.hasher = password.NewHasher(password.Default, hashSlots(), hashQueue)
	cm := cluster.NewMetrics()
	for _, c := range cm.Collectors() {
		s.metrics.Register(c)
	}
	registerCertificates(s.metrics, s.certs)
	node, err := cluster.Connect(cluster.Config{
		URLs: s.cfg.cluster, NodeID: s.cfg.nodeID, Shards: s.cfg.clusterShards, Replicas: s.cfg.clusterReplicas,
		Dir: filepath.Join(s.cfg.data, "shards"), Logger: s.logger, Clock: s.clock, Metrics: cm,
		EngineOptions: s.shardEngineOptions, Build: s.buildShard, PeerListen: s.cfg.clusterPeerListen, MoveBack: s.cfg.clusterMoveBack,
		LoginGate:   func(ctx *fasthttp.RequestCtx) { s.loginGate.Admit(ctx) }, // set below, before the listeners serve
		Credentials: cluster.Credentials{NATSSecret: s.cfg.clusterSecret, TLS: s.cfg.clusterTLS.Config()},
	})
	if err != nil {
		return err
	}
	s.node = node
	if s.token = s.cfg.adminToken; s.token == "" {
		b, err := node.Secret("admin-token")
		if err != nil {
			return err
		}
		s.token = string(b)
	}
	if s.curKey, err = node.Secret("cursor-key"); err != nil {
		return err
	}
	s.loginGate = dashboard.NewLoginGate(deriveKey(s.curKey, "backupmon device cookies"), false, s.shardClock().Now)
	s.notifier = notify.New(notify.Options{
		Outcome: func(ws, id engine.ID, attempt int, o engine.Outcome) {
			if eng := node.Engine(ws); eng != nil {
				eng.DeliveryOutcome(ws, id, attempt, o)
			}
		},
		DashboardURL: s.cfg.publicURL,
		Observe:      s.metrics.ObserveNotification,
		SMTP: notify.SMTPConfig{
			Relay: s.cfg.smtpRelay, From: s.cfg.smtpFrom,
			Username: s.cfg.smtpUsername, Password: s.cfg.smtpPassword, StartTLS: s.cfg.smtpStartTLS,
		},
		AllowPrivate: s.cfg.allowPrivateWebhooks, AdminListener: s.adminAddr, Logger: s.logger,
	})
	return nil
}

// serveFront serves both listeners with the node's front, which routes
// every request (but /livez, /readyz, /metrics) to its shard.
func (s *server) serveFront() error {
	s.srv = transport.New(transport.Config{
		Logger: s.logger, Metrics: s.metrics, AdminToken: s.token, DevClock: s.cfg.devClock, TLS: s.tls, CursorKey: s.curKey,
		Hasher: s.hasher, PublicURL: s.cfg.publicURL, ReadTimeout: s.cfg.limits.readTimeout,
		PublicConns: s.cfg.limits.public, AdminConns: s.cfg.limits.admin,
		Route: s.node.Route, Ready: s.node.Ready, ClusterStatus: s.node.StatusJSON, Backup: s.node.Backup,
	})
	pub, adm := s.pubLn, s.admLn
	go func() { s.errc <- s.srv.ServeAdmin(adm) }()
	go func() { s.errc <- s.srv.ServePublic(pub) }()
	fmt.Fprintf(s.out, "public listening on %s\n", s.publicURL)
	fmt.Fprintf(s.out, "admin listening on %s\n", s.adminURL)
	fmt.Fprintf(s.out, "cluster node %s on %s (%d shards)\n", s.cfg.nodeID, strings.Split(s.cfg.cluster, ",")[0], s.node.Shards())

	return nil
}

// runNode starts taking the shards this node should own.
func (s *server) runNode() error {
	if err := s.node.Run(); err != nil {
		return err
	}
	if addr := s.node.PeerAddr(); addr != "" {
		fmt.Fprintf(s.out, "peer listening on %s\n", addr)
	}
	return nil
}

// shardClock is the shards' clock: the development clock, else the
// system's.
func (s *server) shardClock() engine.Clock {
	if s.clock != nil {
		return s.clock
	}
	return engine.SystemClock{}
}

// shardEngineOptions are the options of a shard's engine: the node sets
// where its log, snapshots and files are.
func (s *server) shardEngineOptions(shard int) engine.Options {
	return engine.Options{
		Clock: s.shardClock(), Logger: s.logger.With("shard", shard),
		RetentionDays: s.cfg.retentionDays, SnapshotEvery: s.cfg.snapshotEvery, IngestDomain: s.cfg.ingestDomain,
		CheckChannelURL: func(rawURL string) error {
			return notify.CheckChannelURL(rawURL, s.cfg.allowPrivateWebhooks, s.adminAddr)
		},
		RawDropped: func(refs []string) {
			if err := s.node.MailStore().Remove(refs); err != nil {
				s.logger.Warn("delete kept e-mails", "shard", shard, "err", err)
			}
		},
		RawMail: rawMail(s.node.MailStore().Get),
	}
}

// buildShard makes the handlers a shard serves over its engine: the
// transport, the dashboard (its session cookies carry the shard) and the
// assistant server, as a single node has them.
func (s *server) buildShard(shard int, eng *engine.Engine) (*cluster.Stack, error) {
	eng.SetDeliverer(s.notifier)
	srv := transport.New(transport.Config{
		Engine: eng, Logger: s.logger, Metrics: s.metrics, AdminToken: s.token, DevClock: s.cfg.devClock, CursorKey: s.curKey,
		Hasher: s.hasher, PublicURL: s.cfg.publicURL, ReadTimeout: s.cfg.limits.readTimeout,
	})
	rules := smtpin.RulesFor(eng, s.node.MailStore())
	dash := dashboard.New(dashboard.Config{Engine: eng, Hasher: s.hasher, Logger: s.logger,
		DeviceKey: deriveKey(s.curKey, "backupmon device cookies"), SessionPrefix: cluster.SessionPrefix(shard), Mailer: s.inviteMailer(), PublicURL: s.cfg.publicURL, Rules: rules,
		Elsewhere: s.node})
	asst := assistant.New(assistant.Config{Engine: eng, Logger: s.logger})
	srv.AttachParts(transport.Parts{
		Engine:    eng,
		Rules:     rules,
		Dashboard: dash.Handler(),
		Assistant: func(r *http.Request, key engine.AssistantKey, base string) (int, http.Header, []byte) {
			return asst.Serve(r, key, base)
		},
		Reparse: func(wsID, id string) (engine.MailReply, error) {
			return smtpin.Reparse(eng, s.node.MailStore(), smtpin.Suggestions, wsID, id)
		},
	})
	pub, adm := srv.Handlers()
	ai := startAI(s.cfg.ai, eng, s.logger) // the model's questions of this shard's workspaces
	return &cluster.Stack{Public: pub, Admin: adm, Close: ai.close}, nil
}

// clusterDemo, with --demo, has one node create the demo workspace on a
// shard it serves and share its keys; every node writes them into its data
// directory and prints them, as a single node does.
func (s *server) clusterDemo() error {
	if !s.cfg.demo {
		return nil
	}
	keysPath := filepath.Join(s.cfg.data, "demo-keys.txt")
	if _, err := os.Stat(keysPath); err != nil {
		won, err := s.node.ClaimDemo()
		if err != nil {
			return err
		}
		if won {
			eng := waitFor(2*time.Minute, s.node.AnyEngine)
			if eng == nil {
				return errors.New("create demo: this node serves no shard after two minutes")
			}
			if err := createDemo(eng, s.hasher, s.cfg.data, s.logger); err != nil {
				return fmt.Errorf("create demo: %w", err)
			}
			text, err := os.ReadFile(keysPath)
			if err != nil {
				return err
			}
			if err := s.node.PublishDemoKeys(text); err != nil {
				return err
			}
		} else {
			text := waitFor(2*time.Minute, func() string { b, _ := s.node.DemoKeys(); return string(b) })
			if text == "" {
				return errors.New("demo: the node creating it published no keys in two minutes")
			}
			if err := writeDemoFiles(s.cfg.data, text); err != nil {
				return err
			}
		}
	}
	now := time.Now()
	if s.clock != nil {
		now = s.clock.Now()
	}
	printDemo(s.out, now, s.cfg.data, s.publicURL, s.adminURL, s.token, s.mailAddr())
	return nil
}

// waitFor calls get every 100 ms until it returns a non-nil value, for at
// most d; the zero value when it never did.
func waitFor[T comparable](d time.Duration, get func() T) T {
	var zero T
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if v := get(); v != zero {
			return v
		}
	}
	return zero
}

// writeDemoFiles writes the demo's keys file another node made, and its
// assistant key alone, into dataDir.
func writeDemoFiles(dataDir, text string) error {
	if err := os.MkdirAll(dataDir, 0o750); err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(dataDir, "demo-keys.txt"), []byte(text), 0o600); err != nil {
		return fmt.Errorf("write demo keys: %w", err)
	}
	for _, line := range strings.Split(text, "\n") {
		if key, ok := strings.CutPrefix(line, "assistant_key="); ok {
			if err := writeFileAtomic(filepath.Join(dataDir, demoAssistantFile), []byte(key+"\n"), 0o600); err != nil {
				return fmt.Errorf("write demo assistant key: %w", err)
			}
		}
	}
	return nil
}
