package main

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/mail"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"

	"backupmon/assistant"
	"backupmon/dashboard"
	"backupmon/engine"
	"backupmon/mailstore"
	"backupmon/notify"
	"backupmon/password"
	"backupmon/smtpin"
	"backupmon/transport"
	"backupmon/tune"
)

// serveConfig holds the flags of `backupmon serve` (decisions.md 1).
type serveConfig struct {
	listen, adminListen, data string
	tlsCert, tlsKey           string
	demo, devClock            bool
	retentionDays             int
	adminToken                string
	logLevel                  string
	snapshotEvery             uint64 // 0: the engine's default

	// The SMTP relay the e-mail notification channels are sent through.
	smtpRelay, smtpFrom        string
	smtpUsername, smtpPassword string
	smtpStartTLS               bool

	// The SMTP ingest listener of report e-mails (decisions.md 10).
	smtpListen, ingestDomain string
	smtpTLSCert, smtpTLSKey  string

	// publicURL is the dashboard's address as users reach it, for links.
	publicURL string

	// allowPrivateWebhooks lets webhook and Slack channels point at
	// internal addresses (notify/dialguard.go).
	allowPrivateWebhooks bool

	// limits bound connections, sessions, read times and memory.
	limits limitsConfig

	// beforeOpen, when set (tests only), runs after the admin listener
	// serves and before the engine's recovery starts, so that a test can
	// hold the server in its starting state.
	beforeOpen func()
}

// envDefault returns BACKUPMON_<FLAG> when set, else def.
func envDefault(flagName, def string) string {
	if v, ok := os.LookupEnv("BACKUPMON_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))); ok {
		return v
	}
	return def
}

func envBool(flagName string) bool {
	v, err := strconv.ParseBool(envDefault(flagName, "false"))
	return err == nil && v
}

func parseServeFlags(args []string) (*serveConfig, error) {
	c := &serveConfig{}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.StringVar(&c.listen, "listen", envDefault("listen", "127.0.0.1:8080"), "public listener: REST and Report API under /api/v1")
	fs.StringVar(&c.adminListen, "admin-listen", envDefault("admin-listen", "127.0.0.1:8081"), "admin listener: /admin/v1, /livez, /readyz, /metrics")
	fs.StringVar(&c.data, "data", envDefault("data", "./data"), "directory holding the WAL, snapshots and admin.token")
	fs.StringVar(&c.tlsCert, "tls-cert", envDefault("tls-cert", ""), "certificate file: serve HTTPS on --listen (with --tls-key)")
	fs.StringVar(&c.tlsKey, "tls-key", envDefault("tls-key", ""), "private key file for --tls-cert")
	fs.BoolVar(&c.demo, "demo", envBool("demo"), "on an empty data directory, create the demo workspace")
	fs.BoolVar(&c.devClock, "dev-clock", envBool("dev-clock"), "enable POST /admin/v1/clock (development only)")
	retention := envDefault("retention-days", "400")
	fs.Func("retention-days", "results and resolved alerts older than this many days are dropped (default "+retention+")", func(s string) error {
		retention = s
		return nil
	})
	fs.StringVar(&c.adminToken, "admin-token", envDefault("admin-token", ""), "admin API token (default: read or create <data>/admin.token)")
	fs.StringVar(&c.logLevel, "log-level", envDefault("log-level", "info"), "log level: debug, info, warn, error")
	snapEvery := envDefault("snapshot-every", "")
	fs.Func("snapshot-every", "take a snapshot after this many log records (default 100000; for tests)", func(s string) error {
		snapEvery = s
		return nil
	})
	fs.StringVar(&c.smtpRelay, "smtp-relay", envDefault("smtp-relay", ""), "SMTP relay host:port for e-mail notification channels (default: none, e-mail deliveries fail)")
	fs.StringVar(&c.smtpFrom, "smtp-from", envDefault("smtp-from", ""), "sender address of notification e-mails (required with --smtp-relay)")
	fs.StringVar(&c.smtpUsername, "smtp-username", envDefault("smtp-username", ""), "SMTP relay user name (AUTH PLAIN; only over TLS or to localhost)")
	fs.StringVar(&c.smtpPassword, "smtp-password", envDefault("smtp-password", ""), "SMTP relay password")
	fs.BoolVar(&c.smtpStartTLS, "smtp-starttls", envBool("smtp-starttls"), "require STARTTLS from the SMTP relay (it is used whenever offered)")
	fs.StringVar(&c.smtpListen, "smtp-listen", envDefault("smtp-listen", ""), "SMTP listener for report e-mails, e.g. 127.0.0.1:2525 (default: off)")
	fs.StringVar(&c.ingestDomain, "ingest-domain", envDefault("ingest-domain", engine.DefaultIngestDomain), "domain of the jobs' ingest addresses")
	fs.StringVar(&c.smtpTLSCert, "smtp-tls-cert", envDefault("smtp-tls-cert", ""), "certificate file: offer STARTTLS on --smtp-listen (with --smtp-tls-key)")
	fs.StringVar(&c.publicURL, "public-url", envDefault("public-url", ""), "the dashboard's address as users reach it, e.g. https://backups.example.com, for the links the assistant server gives (default: the address each request was sent to)")
	fs.StringVar(&c.smtpTLSKey, "smtp-tls-key", envDefault("smtp-tls-key", ""), "private key file for --smtp-tls-cert")
	fs.BoolVar(&c.allowPrivateWebhooks, "allow-private-webhooks", envBool("allow-private-webhooks"), "let webhook and Slack channels reach loopback, private, link-local and other internal addresses, for installs inside a private network (cloud metadata addresses and the admin listener stay refused)")
	limitFlags := addLimitFlags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	n, err := strconv.Atoi(retention)
	if err != nil || n < 1 {
		return nil, fmt.Errorf("--retention-days must be a positive integer, not %q", retention)
	}
	c.retentionDays = n
	if snapEvery != "" {
		n, err := strconv.ParseUint(snapEvery, 10, 64)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--snapshot-every must be a positive integer, not %q", snapEvery)
		}
		c.snapshotEvery = n
	}
	if (c.tlsCert == "") != (c.tlsKey == "") {
		return nil, errors.New("--tls-cert and --tls-key go together")
	}
	if (c.smtpTLSCert == "") != (c.smtpTLSKey == "") {
		return nil, errors.New("--smtp-tls-cert and --smtp-tls-key go together")
	}
	if c.smtpListen != "" {
		if _, _, err := net.SplitHostPort(c.smtpListen); err != nil {
			return nil, fmt.Errorf("--smtp-listen must be host:port, not %q", c.smtpListen)
		}
	}
	if !validDomain(c.ingestDomain) {
		return nil, fmt.Errorf("--ingest-domain must be a domain name, not %q", c.ingestDomain)
	}
	if c.smtpRelay != "" {
		if _, _, err := net.SplitHostPort(c.smtpRelay); err != nil {
			return nil, fmt.Errorf("--smtp-relay must be host:port, not %q", c.smtpRelay)
		}
		if c.smtpFrom == "" {
			return nil, errors.New("--smtp-relay needs --smtp-from")
		}
	}
	if c.publicURL != "" {
		u, err := url.Parse(c.publicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return nil, fmt.Errorf("--public-url must be an http or https address such as https://backups.example.com, not %q", c.publicURL)
		}
	}
	if c.smtpFrom != "" {
		if _, err := mail.ParseAddress(c.smtpFrom); err != nil {
			return nil, fmt.Errorf("--smtp-from: %v", err)
		}
	}
	lims, err := limitFlags.parse()
	if err != nil {
		return nil, err
	}
	c.limits = lims
	return c, nil
}

func serve(args []string) int {
	cfg, err := parseServeFlags(args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(os.Stderr, "backupmon serve:", err)
		return 2
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.logLevel)); err != nil {
		fmt.Fprintln(os.Stderr, "backupmon serve: --log-level:", err)
		return 2
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	slog.SetDefault(logger)
	tune.Procs()
	// From here on a signal stops the server cleanly, even one that comes
	// during recovery (it is acted on once the engine is open).
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	if err := run(cfg, logger, os.Stdout, stop); err != nil {
		logger.Error("backupmon stopped", "err", err)
		return 1
	}
	return 0
}

// run serves until a signal arrives on stop. It binds both listeners and
// serves the admin listener first, so that /livez and /readyz answer while
// the engine recovers; then it opens the engine, attaches it and serves the
// public listener. The lines it prints to out (each listener's address,
// then ready) keep that order.
func run(cfg *serveConfig, logger *slog.Logger, out io.Writer, stop <-chan os.Signal) error {
	if err := applyRuntimeLimits(&cfg.limits, cfg.smtpListen != "", logger); err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.data, 0o750); err != nil {
		return fmt.Errorf("create data directory: %w", err)
	}
	fresh, err := isFresh(cfg.data)
	if err != nil {
		return err
	}
	token, err := adminToken(cfg)
	if err != nil {
		return err
	}
	var tlsConf *tls.Config
	if cfg.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(cfg.tlsCert, cfg.tlsKey)
		if err != nil {
			return fmt.Errorf("load TLS certificate: %w", err)
		}
		tlsConf = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	curKey, err := secretFile(filepath.Join(cfg.data, "cursor.key"))
	if err != nil {
		return err
	}
	var smtpTLS *tls.Config
	if cfg.smtpTLSCert != "" {
		cert, err := tls.LoadX509KeyPair(cfg.smtpTLSCert, cfg.smtpTLSKey)
		if err != nil {
			return fmt.Errorf("load SMTP TLS certificate: %w", err)
		}
		smtpTLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	// Unreadable report e-mails are kept here for a re-read, whether or
	// not this run listens for e-mail: the admin API re-reads them.
	store, err := mailstore.Open(filepath.Join(cfg.data, "mail"))
	if err != nil {
		return err
	}
	var eng *engine.Engine // set before the admin API is attached to it
	metrics := transport.NewMetrics()
	hasher := password.NewHasher(password.Default, hashSlots(), hashQueue)
	var dash *dashboard.Server // built once the engine is there
	var asst *assistant.Server // likewise
	srv := transport.New(transport.Config{
		Logger: logger, Metrics: metrics, AdminToken: token, DevClock: cfg.devClock, TLS: tlsConf, CursorKey: curKey,
		Reparse: func(wsID, id string) (engine.MailReply, error) {
			return smtpin.Reparse(eng, store, smtpin.Suggestions, wsID, id)
		},
		Hasher:    hasher,
		Dashboard: func(ctx *fasthttp.RequestCtx) { dash.Handler()(ctx) },
		Assistant: func(r *http.Request, key engine.AssistantKey, base string) (int, http.Header, []byte) {
			return asst.Serve(r, key, base)
		},
		PublicURL:   cfg.publicURL,
		ReadTimeout: cfg.limits.readTimeout,
		PublicConns: cfg.limits.public,
		AdminConns:  cfg.limits.admin,
	})

	pubLn, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return fmt.Errorf("listen %s: %w", cfg.listen, err)
	}
	admLn, err := net.Listen("tcp", cfg.adminListen)
	if err != nil {
		pubLn.Close()
		return fmt.Errorf("listen %s: %w", cfg.adminListen, err)
	}
	scheme := "http"
	if tlsConf != nil {
		scheme = "https"
	}
	publicURL := scheme + "://" + pubLn.Addr().String()
	adminURL := "http://" + admLn.Addr().String()
	// Deliveries never reach the admin listener, whatever
	// --allow-private-webhooks says.
	adminAddr := admLn.Addr().(*net.TCPAddr).AddrPort()

	// The admin listener answers from now on: /livez 200, /readyz 503 and
	// 503 UNAVAILABLE elsewhere until the engine is attached. The public
	// listener is bound: connections wait in its backlog until it serves.
	errc := make(chan error, 2)
	go func() { errc <- srv.ServeAdmin(admLn) }()
	fmt.Fprintf(out, "public listening on %s\n", publicURL)
	fmt.Fprintf(out, "admin listening on %s\n", adminURL)
	if cfg.beforeOpen != nil {
		cfg.beforeOpen()
	}

	var clock engine.Clock = engine.SystemClock{}
	if cfg.devClock {
		clock = engine.NewDevClock(time.Now())
	}
	eng, err = engine.Open(engine.Options{
		Dir:           cfg.data,
		Clock:         clock,
		Logger:        logger,
		WAL:           walOptions(logger, metrics),
		RetentionDays: cfg.retentionDays,
		SnapshotEvery: cfg.snapshotEvery,
		IngestDomain:  cfg.ingestDomain,
		CheckChannelURL: func(rawURL string) error {
			return notify.CheckChannelURL(rawURL, cfg.allowPrivateWebhooks, adminAddr)
		},
		RawDropped: func(refs []string) {
			if err := store.Remove(refs); err != nil {
				logger.Warn("delete kept e-mails", "err", err)
			}
		},
	})
	if err != nil {
		stopListeners(srv, pubLn, logger)
		return err
	}
	// Recovery's garbage (snapshot buffers, the replayed log's segments) is
	// returned to the system now rather than over the next minutes, so
	// that resident memory is the state's from the start.
	debug.FreeOSMemory()
	dash = dashboard.New(dashboard.Config{Engine: eng, Hasher: hasher, Logger: logger, DeviceKey: deriveKey(curKey, "backupmon device cookies")})
	asst = assistant.New(assistant.Config{Engine: eng, Logger: logger})
	if cfg.demo && fresh {
		if err := createDemo(eng, hasher, cfg.data, logger); err != nil {
			stopListeners(srv, pubLn, logger)
			eng.Close()
			return fmt.Errorf("create demo: %w", err)
		}
	}
	// Notifications: the notifier sends what the engine's outbox hands it
	// and reports each attempt's outcome back to the engine.
	notifier := notify.New(notify.Options{
		Done: func(ws, id engine.ID, attempt int, failure string) {
			if err := eng.DeliveryDone(ws, id, attempt, failure); err != nil {
				logger.Warn("delivery outcome for an unknown workspace", "workspace", ws, "delivery", id, "err", err)
			}
		},
		Observe: metrics.ObserveNotification,
		Now:     eng.Now,
		SMTP: notify.SMTPConfig{
			Relay: cfg.smtpRelay, From: cfg.smtpFrom,
			Username: cfg.smtpUsername, Password: cfg.smtpPassword,
			StartTLS: cfg.smtpStartTLS,
		},
		AllowPrivate:  cfg.allowPrivateWebhooks,
		AdminListener: adminAddr,
		Logger:        logger,
	})
	eng.SetDeliverer(notifier)
	metrics.ObserveOutbox(eng.PendingDeliveries)
	srv.Attach(eng)
	go func() { errc <- srv.ServePublic(pubLn) }()
	var mailSrv *smtpin.Server
	smtpAddr := ""
	if cfg.smtpListen != "" {
		mailLn, err := net.Listen("tcp", cfg.smtpListen)
		if err != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			srv.Shutdown(ctx)
			cancel()
			notifier.Close()
			eng.Close()
			return fmt.Errorf("listen %s: %w", cfg.smtpListen, err)
		}
		mailSrv = smtpin.New(eng, store, smtpin.Config{
			Domain: cfg.ingestDomain, TLS: smtpTLS, Suggest: smtpin.Suggestions,
			Observe: metrics.ObserveMail, Logger: logger,
			Timeout: cfg.limits.smtpTimeout, SessionLifetime: cfg.limits.smtpLifetime, MessageMemory: cfg.limits.smtpMemory,
			MaxSessions: cfg.limits.smtpSessions, MaxSessionsPerAddress: cfg.limits.smtpPerAddr,
			Refused: func(reason string) { metrics.ObserveRefused("smtp", reason) },
		})
		go func() {
			if err := mailSrv.Serve(mailLn); err != nil && !errors.Is(err, smtpin.ErrServerClosed) {
				errc <- err
			}
		}()
		smtpAddr = mailLn.Addr().String()
		fmt.Fprintf(out, "smtp listening on %s\n", smtpAddr)
	}
	sweepDone := make(chan struct{})
	go sweepMail(store, logger, sweepDone)
	if cfg.demo {
		printDemo(out, eng, cfg.data, publicURL, adminURL, token, smtpAddr)
	}
	fmt.Fprintln(out, "ready")

	var serveErr error
	select {
	case s := <-stop:
		logger.Info("stopping", "signal", s.String())
	case serveErr = <-errc:
		logger.Error("listener failed", "err", serveErr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	close(sweepDone)
	// Both listeners stop accepting at once. An SMTP session waits for its
	// client, idle or not, so sessions get a few seconds to finish (a mail
	// being recorded gets its answer), then are closed.
	mailDone := make(chan struct{})
	go func() {
		defer close(mailDone)
		if mailSrv == nil {
			return
		}
		mctx, mcancel := context.WithTimeout(ctx, 5*time.Second)
		defer mcancel()
		if err := mailSrv.Shutdown(mctx); err != nil {
			logger.Info("smtp sessions still open at shutdown: closed", "err", err)
			mailSrv.Close()
		}
	}()
	if err := srv.Shutdown(ctx); err != nil {
		logger.Warn("shutdown", "err", err)
	}
	<-mailDone
	// The attempts in flight finish (each within the notifier's timeout)
	// and their outcomes reach the engine before it closes; a notice still
	// queued counts as a failed attempt and stays pending in the outbox, to
	// be retried after the restart.
	notifier.Close()
	if err := eng.Close(); err != nil {
		return fmt.Errorf("close engine: %w", err)
	}
	logger.Info("stopped cleanly")
	return serveErr
}

// stopListeners stops the admin listener and closes the public one, which
// was never served, when start-up fails.
func stopListeners(srv *transport.Server, pubLn net.Listener, logger *slog.Logger) {
	pubLn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		logger.Warn("shutdown", "err", err)
	}
}

// isFresh reports whether the data directory holds no state yet.
func isFresh(dir string) (bool, error) {
	for _, sub := range []string{"wal", "snapshots"} {
		entries, err := os.ReadDir(filepath.Join(dir, sub))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return false, fmt.Errorf("read %s: %w", sub, err)
		}
		for _, e := range entries {
			if info, err := e.Info(); err == nil && info.Size() > 0 {
				return false, nil
			}
		}
	}
	return true, nil
}

// adminToken returns the admin token: the flag or environment, else the one
// in <data>/admin.token, made on first start (mode 0600).
func adminToken(cfg *serveConfig) (string, error) {
	if cfg.adminToken != "" {
		return cfg.adminToken, nil
	}
	b, err := secretFile(filepath.Join(cfg.data, "admin.token"))
	return string(b), err
}

// secretFile returns the secret kept in path, making one (32 random bytes,
// hex, mode 0600) on first use: the admin token, and the key that signs
// pagination cursors (so cursors stay valid across restarts).
func secretFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		if t := strings.TrimSpace(string(b)); t != "" {
			return []byte(t), nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return nil, fmt.Errorf("make %s: %w", path, err)
	}
	secret := hex.EncodeToString(raw[:])
	if err := writeFileAtomic(path, []byte(secret+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return []byte(secret), nil
}

// writeFileAtomic writes data to a temp file, syncs it and renames it over
// path, so a crash leaves the old file or the new one.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

// Password hashing for logins (decisions.md 11): at most hashSlots argon2id
// hashes at once, half the cores (at least one), so a flood of logins
// leaves the rest to report ingest; hashQueue more wait, beyond that a login
// is answered "busy". One hash costs about 30 ms of one core and 19 MiB
// (bench/RESULTS.md).
const hashQueue = 32

func hashSlots() int { return max(1, runtime.NumCPU()/2) }

// deriveKey returns a key for one purpose from a kept secret (HMAC-SHA256
// of the purpose's label), so that one file on disk serves several keys
// that cannot stand in for each other.
func deriveKey(secret []byte, label string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(label))
	return m.Sum(nil)
}
