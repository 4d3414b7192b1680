package main

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/mail"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"backupmon/cluster"
	"backupmon/clustertls"
	"backupmon/engine"
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

	// cluster, when set, runs the server as a node of a cluster on these
	// NATS servers (cluster.go).
	cluster           string
	nodeID            string
	clusterShards     int
	clusterReplicas   int
	clusterPeerListen string
	clusterMoveBack   time.Duration      // how long a node is up before its shards move back to it
	clusterSecret     string             // the cluster's NATS secret (--cluster-auth-file); "": none
	clusterMonitors   []string           // NATS servers' monitoring, checked for fsync on every write (--cluster-nats-monitor)
	clusterTLS        *clustertls.Member // the cluster's TLS (--cluster-tls-*); nil: in clear

	// ai configures the model's suggestions (ai.go).
	ai aiConfig

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
	addAIFlags(fs, &c.ai)
	fs.StringVar(&c.cluster, "cluster", envDefault("cluster", ""), "run as a node of a cluster on these NATS servers (JetStream), e.g. nats://h1:4222,nats://h2:4222,nats://h3:4222 (default: a single node)")
	fs.StringVar(&c.nodeID, "node-id", envDefault("node-id", ""), "this node's name in the cluster (required with --cluster)")
	clusterShards := envDefault("cluster-shards", "4")
	fs.Func("cluster-shards", "shards of a new cluster (fixed when the cluster is first set up; default "+clusterShards+")", func(v string) error { clusterShards = v; return nil })
	fs.StringVar(&c.clusterPeerListen, "cluster-peer-listen", envDefault("cluster-peer-listen", "127.0.0.1:0"), "where other nodes forward requests to this one (node to node over TCP), host:port reachable from them (on several hosts, an address of this host's private network); empty: over NATS only")
	clusterAuthFile := clusterAuthFlag(fs)
	clusterTLS := clusterTLSFlags(fs)
	clusterInClear := fs.Bool("cluster-insecure-no-tls", envBool("cluster-insecure-no-tls"), "without the cluster's TLS, reach NATS servers and take other nodes on addresses that are not loopback anyway (the NATS secret and the peer secret then cross the network in clear)")
	clusterMoveBack := envDefault("cluster-move-back", "30s")
	fs.Func("cluster-move-back", "how long a node must have been up before the shards it ranks first for are handed back to it, from 1s to 1h (default "+clusterMoveBack+")", func(v string) error { clusterMoveBack = v; return nil })
	clusterMonitors := fs.String("cluster-nats-monitor", envDefault("cluster-nats-monitor", ""), "the NATS servers' monitoring addresses (their http_port), e.g. http://h1:8222,http://h2:8222,http://h3:8222: the node refuses to start when one of them does not fsync every write (sync_interval: always); one that does not answer is logged (default: not checked)")
	clusterReplicas := envDefault("cluster-replicas", "3")
	fs.Func("cluster-replicas", "copies JetStream keeps of each record: 3, or 1 for development only (default "+clusterReplicas+")", func(v string) error { clusterReplicas = v; return nil })
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
	if err := c.ai.check(); err != nil {
		return nil, err
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
	if c.cluster != "" {
		if c.nodeID == "" {
			return nil, errors.New("--cluster needs --node-id")
		}
		n, err := strconv.Atoi(clusterShards)
		if err != nil || n < 1 || n > cluster.MaxShards {
			return nil, fmt.Errorf("--cluster-shards must be an integer from 1 to %d, not %q", cluster.MaxShards, clusterShards)
		}
		c.clusterShards = n
		if clusterReplicas != "1" && clusterReplicas != "3" {
			return nil, fmt.Errorf("--cluster-replicas must be 3, or 1 for development, not %q", clusterReplicas)
		}
		c.clusterReplicas, _ = strconv.Atoi(clusterReplicas)
		if c.clusterMoveBack, err = time.ParseDuration(clusterMoveBack); err != nil || c.clusterMoveBack < time.Second || c.clusterMoveBack > time.Hour {
			return nil, fmt.Errorf("--cluster-move-back must be a duration from 1s to 1h, not %q", clusterMoveBack)
		}
		if c.clusterSecret, err = clusterSecret(*clusterAuthFile); err != nil {
			return nil, err
		}
		if c.clusterMonitors, err = monitorURLs(*clusterMonitors); err != nil {
			return nil, err
		}
		if c.clusterTLS, err = clusterTLS.load(time.Now()); err != nil {
			return nil, err
		}
		if c.clusterTLS == nil && !*clusterInClear {
			if err := inClear("--cluster-insecure-no-tls", [2]string{"--cluster", c.cluster}, [2]string{"--cluster-peer-listen", c.clusterPeerListen}); err != nil {
				return nil, err
			}
		}
	}
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

// monitorURLs parses --cluster-nats-monitor: http or https URLs, comma
// separated.
func monitorURLs(v string) ([]string, error) {
	var out []string
	for _, u := range strings.Split(v, ",") {
		if u = strings.TrimSpace(u); u == "" {
			continue
		}
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return nil, fmt.Errorf("--cluster-nats-monitor must be http:// or https:// addresses of the NATS servers' monitoring, comma separated, not %q", u)
		}
		out = append(out, u)
	}
	return out, nil
}
