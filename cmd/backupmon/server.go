package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"backupmon/assistant"
	"backupmon/cluster"
	"backupmon/dashboard"
	"backupmon/engine"
	"backupmon/mailstore"
	"backupmon/notify"
	"backupmon/password"
	"backupmon/smtpin"
	"backupmon/transport"
)

// server is one run of backupmon serve. start builds its parts in order,
// each from the ones before it; close takes down whatever was built, in the
// one order that loses nothing, whether start finished or failed halfway.
type server struct {
	cfg    *serveConfig
	logger *slog.Logger
	out    io.Writer

	// Read before anything is written: a start-up that fails here, or at
	// binding a listener, leaves the data directory as it was.
	tls, smtpTLS         *tls.Config
	certs                []reloadable // every certificate served, read again on SIGHUP
	pubLn, admLn, mailLn net.Listener
	adminAddr            netip.AddrPort // deliveries never reach it

	// The data directory's secrets and the mail store.
	token  string
	curKey []byte
	// loginGate counts a cluster's dashboard logins by client address
	// across its shards (nil on a single node).
	loginGate *dashboard.LoginGate
	fresh     bool // no state yet: the demo may be created
	store     *mailstore.Store

	metrics  *transport.Metrics
	hasher   *password.Hasher
	srv      *transport.Server
	eng      *engine.Engine
	notifier *notify.Notifier
	mail     *smtpin.Server
	ai       *aiAsker // the model's questions; nil: off

	// A cluster's node (cluster.go), and the development clock its shards
	// share.
	node  *cluster.Node
	clock *engine.DevClock

	errc      chan error    // a listener that stopped for good
	sweepDone chan struct{} // stops the kept mails' sweep
	publicURL string
	adminURL  string
}

// run serves until a signal arrives on stop. It binds every listener before
// anything is written to the data directory, serves the admin listener
// first, so that /livez and /readyz answer while the engine recovers, then
// opens the engine, attaches it and serves the rest. The lines it prints
// to out (each listener's address, then ready) keep that order.
func run(cfg *serveConfig, logger *slog.Logger, out io.Writer, stop <-chan os.Signal) error {
	s := &server{cfg: cfg, logger: logger, out: out, errc: make(chan error, 3)}
	start := s.start
	if cfg.cluster != "" {
		start = s.startCluster
	}
	if err := start(); err != nil {
		s.close()
		return err
	}
	var serveErr error
	select {
	case sig := <-stop:
		logger.Info("stopping", "signal", sig.String())
	case serveErr = <-s.errc:
		logger.Error("listener failed", "err", serveErr)
	}
	if err := s.close(); err != nil {
		return err
	}
	logger.Info("stopped cleanly")
	return serveErr
}

// start builds the server's parts in order; on an error, close takes down
// those built.
func (s *server) start() error {
	if err := runSteps(
		s.checkData,
		s.loadCertificates,
		s.bindListeners,
		s.openDataDir,
		s.serveAdmin,
		s.openEngine,
		s.servePublic,
		s.serveMail,
	); err != nil {
		return err
	}
	s.sweepDone = make(chan struct{})
	go sweepMail(s.store, s.logger, s.sweepDone)
	if s.cfg.demo {
		if err := completeDemoKeys(s.eng, s.cfg.data); err != nil {
			s.logger.Warn("complete demo-keys.txt", "err", err)
		}
		printDemo(s.out, s.eng.Now(), s.cfg.data, s.publicURL, s.adminURL, s.token, s.mailAddr())
	}
	fmt.Fprintln(s.out, "ready")
	return nil
}

// runSteps runs steps in order and returns the first error.
func runSteps(steps ...func() error) error {
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// checkData applies the runtime limits and checks that the data directory
// is of a format this build reads, before anything touches it.
func (s *server) checkData() error {
	if err := applyRuntimeLimits(&s.cfg.limits, s.cfg.smtpListen != "", s.logger); err != nil {
		return err
	}
	if _, err := engine.CheckFormat(s.cfg.data); err != nil {
		return err
	}
	fresh, err := isFresh(s.cfg.data)
	s.fresh = fresh
	return err
}

// loadCertificates reads the TLS certificates of the public and the SMTP
// listeners, and has SIGHUP read them again, with the cluster's.
func (s *server) loadCertificates() error {
	web, err := loadServedCert(s.cfg.tlsCert, s.cfg.tlsKey, "TLS", "public")
	if err != nil {
		return err
	}
	mail, err := loadServedCert(s.cfg.smtpTLSCert, s.cfg.smtpTLSKey, "SMTP TLS", "smtp")
	if err != nil {
		return err
	}
	s.tls, s.smtpTLS = web.config(), mail.config()
	var certs []reloadable
	for _, c := range []*servedCert{web, mail} {
		if c != nil {
			certs = append(certs, c.reloadable())
		}
	}
	if m := s.cfg.clusterTLS; m != nil {
		certs = append(certs, memberReloadable(m))
	}
	for _, c := range certs {
		logCertificate(s.logger, c.name, c.leaf())
	}
	reloadOnHangup(s.logger, certs)
	s.certs = certs
	return nil
}

// bindListeners binds the public, admin and SMTP listeners. Connections
// wait in each one's backlog until it serves.
func (s *server) bindListeners() error {
	var err error
	if s.pubLn, err = net.Listen("tcp", s.cfg.listen); err != nil {
		return fmt.Errorf("listen %s: %w", s.cfg.listen, err)
	}
	if s.admLn, err = net.Listen("tcp", s.cfg.adminListen); err != nil {
		return fmt.Errorf("listen %s: %w", s.cfg.adminListen, err)
	}
	if s.cfg.smtpListen != "" {
		if s.mailLn, err = net.Listen("tcp", s.cfg.smtpListen); err != nil {
			return fmt.Errorf("listen %s: %w", s.cfg.smtpListen, err)
		}
	}
	scheme := "http"
	if s.tls != nil {
		scheme = "https"
	}
	s.publicURL = scheme + "://" + s.pubLn.Addr().String()
	s.adminURL = "http://" + s.admLn.Addr().String()
	s.adminAddr = s.admLn.Addr().(*net.TCPAddr).AddrPort()
	return nil
}

// openDataDir makes the data directory and its secrets (the admin token,
// the cursor key) on first start, and opens the mail store: unreadable
// report e-mails are kept there for a re-read, whether or not this run
// listens for e-mail, since the admin API re-reads them.
func (s *server) openDataDir() error {
	if err := os.MkdirAll(s.cfg.data, 0o750); err != nil {
		return fmt.Errorf("create data directory: %w", err)
	}
	token, err := adminToken(s.cfg)
	if err != nil {
		return err
	}
	s.token = token
	if s.curKey, err = secretFile(filepath.Join(s.cfg.data, "cursor.key")); err != nil {
		return err
	}
	s.store, err = mailstore.Open(filepath.Join(s.cfg.data, "mail"))
	return err
}

// serveAdmin builds the HTTP server and serves the admin listener: /livez
// 200, /readyz 503 and 503 UNAVAILABLE elsewhere until the engine is
// attached.
func (s *server) serveAdmin() error {
	s.metrics = transport.NewMetrics()
	registerCertificates(s.metrics, s.certs)
	s.hasher = password.NewHasher(password.Default, hashSlots(), hashQueue)
	s.srv = transport.New(transport.Config{
		Logger: s.logger, Metrics: s.metrics, AdminToken: s.token, DevClock: s.cfg.devClock, TLS: s.tls, CursorKey: s.curKey,
		Hasher: s.hasher, PublicURL: s.cfg.publicURL, ReadTimeout: s.cfg.limits.readTimeout,
		PublicConns: s.cfg.limits.public, AdminConns: s.cfg.limits.admin,
	})
	ln := s.admLn
	go func() { s.errc <- s.srv.ServeAdmin(ln) }()
	fmt.Fprintf(s.out, "public listening on %s\n", s.publicURL)
	fmt.Fprintf(s.out, "admin listening on %s\n", s.adminURL)
	return nil
}

// openEngine recovers the engine from the data directory, creates the
// demo on a fresh one, and starts the notifier that sends what the
// engine's outbox hands it.
func (s *server) openEngine() error {
	if s.cfg.beforeOpen != nil {
		s.cfg.beforeOpen()
	}
	var clock engine.Clock = engine.SystemClock{}
	if s.cfg.devClock {
		clock = engine.NewDevClock(time.Now())
	}
	var err error
	s.eng, err = engine.Open(engine.Options{
		Dir:           s.cfg.data,
		Clock:         clock,
		Logger:        s.logger,
		WAL:           walOptions(s.logger, s.metrics),
		RetentionDays: s.cfg.retentionDays,
		SnapshotEvery: s.cfg.snapshotEvery,
		IngestDomain:  s.cfg.ingestDomain,
		CheckChannelURL: func(rawURL string) error {
			return notify.CheckChannelURL(rawURL, s.cfg.allowPrivateWebhooks, s.adminAddr)
		},
		RawDropped: func(refs []string) {
			if err := s.store.Remove(refs); err != nil {
				s.logger.Warn("delete kept e-mails", "err", err)
			}
		},
		RawMail: rawMail(s.store.Get),
	})
	if err != nil {
		return err
	}
	// Recovery's garbage (snapshot buffers, the replayed log's segments) is
	// returned to the system now rather than over the next minutes, so
	// that resident memory is the state's from the start.
	debug.FreeOSMemory()
	if s.cfg.demo && s.fresh {
		if err := createDemo(s.eng, s.hasher, s.cfg.data, s.logger); err != nil {
			return fmt.Errorf("create demo: %w", err)
		}
	}
	eng := s.eng
	dashboard := s.cfg.publicURL
	if dashboard == "" {
		dashboard = s.publicURL
	}
	s.notifier = notify.New(notify.Options{
		Outcome: func(ws, id engine.ID, attempt int, o engine.Outcome) {
			if err := eng.DeliveryOutcome(ws, id, attempt, o); err != nil {
				s.logger.Warn("delivery outcome for an unknown workspace", "workspace", ws, "delivery", id, "err", err)
			}
		},
		DashboardURL: dashboard,
		Observe:      s.metrics.ObserveNotification,
		Now:          eng.Now,
		SMTP: notify.SMTPConfig{
			Relay: s.cfg.smtpRelay, From: s.cfg.smtpFrom,
			Username: s.cfg.smtpUsername, Password: s.cfg.smtpPassword,
			StartTLS: s.cfg.smtpStartTLS,
		},
		AllowPrivate:  s.cfg.allowPrivateWebhooks,
		AdminListener: s.adminAddr,
		Logger:        s.logger,
	})
	eng.SetDeliverer(s.notifier)
	s.metrics.ObserveOutbox(eng.PendingDeliveries)
	s.ai = startAI(s.cfg.ai, eng, s.logger)
	return nil
}

// servePublic attaches the engine, with the dashboard and the assistant
// server built on it, and serves the public listener.
func (s *server) servePublic() error {
	eng, store := s.eng, s.store
	rules := smtpin.RulesFor(eng, store)
	dash := dashboard.New(dashboard.Config{Engine: eng, Hasher: s.hasher, Logger: s.logger, DeviceKey: deriveKey(s.curKey, "backupmon device cookies"),
		Mailer: s.inviteMailer(), PublicURL: s.cfg.publicURL, Rules: rules, TestChannel: s.testChannel})
	asst := assistant.New(assistant.Config{Engine: eng, Logger: s.logger})
	s.srv.AttachParts(transport.Parts{
		Engine: eng,
		Rules:  rules,
		Reparse: func(wsID, id string) (engine.MailReply, error) {
			return smtpin.Reparse(eng, store, smtpin.Suggestions, wsID, id)
		},
		Dashboard: dash.Handler(),
		Assistant: func(r *http.Request, key engine.AssistantKey, base string) (int, http.Header, []byte) {
			return asst.Serve(r, key, base)
		},
		TestChannel: s.testChannel,
	})
	ln := s.pubLn
	go func() { s.errc <- s.srv.ServePublic(ln) }()
	return nil
}

// testChannel sends a channel's test now through the notifier.
func (s *server) testChannel(n engine.Notice) (bool, string) {
	r := s.notifier.Test(n)
	return r.OK, r.Answer
}

// serveMail serves the SMTP listener of report e-mails, when there is one.
func (s *server) serveMail() error {
	if s.mailLn == nil {
		return nil
	}
	l := s.cfg.limits
	var ingest smtpin.Ingest = s.eng
	var store smtpin.RawStore = s.store
	if s.node != nil {
		// A cluster node: each ingest token names its shard.
		ingest, store = s.node, s.node.MailStore()
	}
	s.mail = smtpin.New(ingest, store, smtpin.Config{
		Domain: s.cfg.ingestDomain, TLS: s.smtpTLS, Suggest: smtpin.Suggestions,
		Observe: s.metrics.ObserveMail, Logger: s.logger,
		Timeout: l.smtpTimeout, SessionLifetime: l.smtpLifetime, MessageMemory: l.smtpMemory,
		MaxSessions: l.smtpSessions, MaxSessionsPerAddress: l.smtpPerAddr,
		Refused: func(reason string) { s.metrics.ObserveRefused("smtp", reason) },
	})
	mail, ln := s.mail, s.mailLn
	go func() {
		if err := mail.Serve(ln); err != nil && !errors.Is(err, smtpin.ErrServerClosed) {
			s.errc <- err
		}
	}()
	fmt.Fprintf(s.out, "smtp listening on %s\n", s.mailAddr())
	return nil
}

func (s *server) mailAddr() string {
	if s.mailLn == nil {
		return ""
	}
	return s.mailLn.Addr().String()
}

// close takes down every part start built, in the one order that loses
// nothing: the listeners stop accepting together (HTTP requests in flight
// finish; an SMTP session waits for its client, so sessions get a few
// seconds, a mail being recorded gets its answer, then they are closed);
// the notifier's attempts in flight finish and their outcomes reach the
// engine (a notice still queued counts as a failed attempt and stays
// pending in the outbox, to be retried after the restart); then the engine
// closes with a snapshot. It returns the engine's error.
func (s *server) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if s.node != nil {
		s.node.Leave() // no shard taken while the listeners drain
	}
	if s.sweepDone != nil {
		close(s.sweepDone)
	}
	mailDone := make(chan struct{})
	go func() {
		defer close(mailDone)
		switch {
		case s.mail != nil:
			mctx, mcancel := context.WithTimeout(ctx, 5*time.Second)
			defer mcancel()
			if err := s.mail.Shutdown(mctx); err != nil {
				s.logger.Info("smtp sessions still open at shutdown: closed", "err", err)
				s.mail.Close()
			}
		case s.mailLn != nil:
			s.mailLn.Close()
		}
	}()
	if s.srv != nil {
		if s.node == nil && (s.eng == nil || !s.srv.Attached()) {
			s.pubLn.Close() // bound, never served
		}
		if err := s.srv.Shutdown(ctx); err != nil {
			s.logger.Warn("shutdown", "err", err)
		}
	} else {
		for _, ln := range []net.Listener{s.pubLn, s.admLn} {
			if ln != nil {
				ln.Close()
			}
		}
	}
	<-mailDone
	if s.notifier != nil {
		s.notifier.Close()
	}
	s.ai.close()
	if s.node != nil {
		s.node.Stop() // each shard closes with a snapshot; its lease goes to the next owner
	}
	if s.eng != nil {
		if err := s.eng.Close(); err != nil {
			return fmt.Errorf("close engine: %w", err)
		}
	}
	return nil
}

// inviteMailer is how the dashboard sends an invitation's link: through the
// notifier's relay with --smtp-relay, else not at all (nil).
func (s *server) inviteMailer() func(ctx context.Context, to, subject, body string) error {
	if s.cfg.smtpRelay == "" || s.notifier == nil {
		return nil
	}
	return s.notifier.SendText
}
