package main

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"backupmon/cluster"

	natsserver "github.com/nats-io/nats-server/v2/server"
)

// natsCommand runs `backupmon nats`: a NATS server with JetStream, from this
// binary, for a small cluster that needs nothing else. Every write is
// fsynced before it is acknowledged (sync_interval: always): without it,
// JetStream acknowledges records a power cut can lose.
func natsCommand(args []string, out, errOut io.Writer) int {
	fs := flag.NewFlagSet("nats", flag.ContinueOnError)
	fs.SetOutput(errOut)
	name := fs.String("name", envDefault("nats-name", "n1"), "the server's name (unique in the cluster)")
	listen := fs.String("listen", envDefault("nats-listen", "127.0.0.1:4222"), "client listener host:port")
	clusterListen := fs.String("cluster-listen", envDefault("nats-cluster-listen", ""), "route listener host:port for the other servers (default: a single server)")
	advertise := fs.String("cluster-advertise", envDefault("nats-cluster-advertise", ""), "route address host:port the server gives the other servers, which they dial when they learn of it from a third (default: --cluster-listen's); behind NAT or a proxy, the address they reach it at")
	routes := fs.String("routes", envDefault("nats-routes", ""), "the other servers' route addresses, comma-separated: nats://h2:6222,nats://h3:6222")
	store := fs.String("store", envDefault("nats-store", "./nats"), "directory of the server's JetStream data")
	authFile := fs.String("auth-file", envDefault("nats-auth-file", ""), "file whose first line is the cluster's NATS secret (32 characters or more): clients and the other servers' routes must present it, or the secret of any further line (while the secret changes); required unless both listeners are on loopback")
	insecure := fs.Bool("insecure-no-auth", envBool("nats-insecure-no-auth"), "take clients and routes without authentication on a listener that is not loopback (anyone who reaches it reads the cluster's secrets and forges its state)")
	monitor := fs.String("monitor-listen", envDefault("nats-monitor-listen", ""), "loopback host:port of nats-server's monitoring (/healthz, /varz, /jsz, for a probe or a scraper on the same host; it has no authentication); empty: none")
	tlsFiles := clusterTLSFlags(fs)
	inClearOK := fs.Bool("insecure-no-tls", envBool("nats-insecure-no-tls"), "without the cluster's TLS, listen on addresses that are not loopback anyway (the NATS secret and everything the cluster stores then cross the network in clear)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	secrets, err := natsSecrets(*authFile, *insecure, *listen, *clusterListen)
	if err != nil {
		fmt.Fprintln(errOut, "backupmon nats:", err)
		return 2
	}
	member, err := tlsFiles.load(time.Now())
	if err == nil && member == nil && !*inClearOK {
		err = inClear("--insecure-no-tls", [2]string{"--listen", *listen}, [2]string{"--cluster-listen", *clusterListen}, [2]string{"--cluster-advertise", *advertise}, [2]string{"--routes", *routes})
	}
	if err != nil {
		fmt.Fprintln(errOut, "backupmon nats:", err)
		return 2
	}
	opts, err := natsOptions(*name, *listen, *clusterListen, *routes, *store, secrets, member.Config())
	if err == nil {
		err = advertiseRoutes(opts, *advertise)
	}
	if err == nil {
		err = monitorOn(opts, *monitor)
	}
	if err != nil {
		fmt.Fprintln(errOut, "backupmon nats:", err)
		return 2
	}
	// A port in use fails here, before the server makes its store (it would
	// make it, then wait half a minute for a listener it cannot have).
	if err := portsFree(*listen, *clusterListen, *monitor); err != nil {
		fmt.Fprintln(errOut, "backupmon nats:", err)
		return 1
	}
	s, err := natsserver.NewServer(opts)
	if err != nil {
		fmt.Fprintln(errOut, "backupmon nats:", err)
		return 1
	}
	s.ConfigureLogger()
	go s.Start()
	if !s.ReadyForConnections(30 * time.Second) {
		fmt.Fprintln(errOut, "backupmon nats: the server did not start")
		return 1
	}
	fmt.Fprintf(out, "nats listening on nats://%s\n", *listen)
	if *monitor != "" {
		fmt.Fprintf(out, "nats monitoring on http://%s (/healthz, /varz, /jsz)\n", *monitor)
	}
	switch len(secrets) {
	case 0:
	case 1:
		fmt.Fprintf(out, "nats clients and routes authenticate with the secret of %s\n", *authFile)
	default:
		fmt.Fprintf(out, "nats clients and routes authenticate with the secret of %s, or any of its %d other lines\n", *authFile, len(secrets)-1)
	}
	if member != nil {
		fmt.Fprintf(out, "nats clients and routes use TLS with a certificate of %s\n", *tlsFiles.ca)
		log := slog.New(slog.NewTextHandler(errOut, nil))
		r := memberReloadable(member)
		logCertificate(log, r.name, r.leaf())
		reloadOnHangup(log, []reloadable{r})
	}
	if *clusterListen != "" {
		fmt.Fprintf(out, "nats routes on %s\n", *clusterListen)
		// JetStream drops API requests until its servers have elected a
		// leader: say ready once they have.
		for !s.JetStreamIsCurrent() {
			time.Sleep(50 * time.Millisecond)
		}
	}
	fmt.Fprintln(out, "ready")
	if *clusterListen != "" {
		go sayCaughtUp(s, out)
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	<-stop
	s.Shutdown()
	s.WaitForShutdown()
	return 0
}

// sayCaughtUp prints one line once every stream and consumer this server
// holds a replica of is current (nats-server's health check): the moment
// an operator rolling the NATS servers goes on to the next one, which can
// then go without a stream losing a current copy. The check is read from
// the server itself, which has no monitoring listener.
func sayCaughtUp(s *natsserver.Server, out io.Writer) {
	start := time.Now()
	for {
		if h := s.Healthz(&natsserver.HealthzOptions{}); h.Status == "ok" {
			fmt.Fprintf(out, "caught up: every stream on this server is current (%v after ready)\n", time.Since(start).Round(time.Millisecond))
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// natsSecrets returns the secrets of authFile (readNATSSecrets), or none
// without one, which only loopback listeners or insecure allow; the error
// says which flag to give.
func natsSecrets(authFile string, insecure bool, listen, clusterListen string) ([]string, error) {
	if authFile != "" {
		secrets, err := readNATSSecrets(authFile)
		if err != nil {
			return nil, fmt.Errorf("--auth-file: %w", err)
		}
		return secrets, nil
	}
	if flagName, addr, ok := offLoopback([2]string{"--listen", listen}, [2]string{"--cluster-listen", clusterListen}); ok && !insecure {
		return nil, fmt.Errorf("%s %s is not a loopback address and there is no --auth-file: anyone who reaches it could read the cluster's secrets and forge its state; give --auth-file FILE (the cluster's NATS secret on its first line, %d characters or more), or --insecure-no-auth to run without authentication anyway", flagName, addr, minNATSSecret)
	}
	return nil, nil
}

// linkPing is how often a NATS server pings its clients and routes.
const linkPing = 2 * time.Second

// natsOptions are the server's options: JetStream on, every write fsynced;
// with secrets, clients and routes (both ways) authenticate as
// cluster.NATSUser with one of them as the password, and the server's own
// routes present the first; with tlsc (the cluster's TLS),
// clients and routes connect over TLS with a certificate of the cluster's
// authority, and a route checks that the other server's names the host
// of its URL.
func natsOptions(name, listen, clusterListen, routes, store string, secrets []string, tlsc *tls.Config) (*natsserver.Options, error) {
	host, port, err := splitHostPort(listen)
	if err != nil {
		return nil, fmt.Errorf("--listen: %w", err)
	}
	// max_payload 8 MiB (NATS's default is 1 MiB): a forwarded answer (an
	// admin list of a large workspace) travels as one message.
	// Log lines carry the time (UTC, to the microsecond), to set them
	// beside the nodes' when a failover is explained.
	o := &natsserver.Options{ServerName: name, Host: host, Port: port, JetStream: true, StoreDir: store, SyncAlways: true, NoSigs: true,
		MaxPayload: 8 << 20, Logtime: true, LogtimeUTC: true}
	var secret string // the one presented
	if len(secrets) > 0 {
		secret = secrets[0]
		accepted := make(natsAccepted, len(secrets))
		for i, s := range secrets {
			accepted[i] = []byte(s)
		}
		o.CustomClientAuthentication, o.CustomRouterAuthentication = accepted, accepted
	}
	if tlsc != nil {
		o.TLSConfig, o.TLSVerify = tlsc.Clone(), true
	}
	// A link that carries nothing and closes nothing (a dead switch, a
	// blackholed route) is given up 4-6 s after its last answer (a ping
	// every 2 s, two unanswered), not after nats-server's defaults (2
	// minutes for clients, 30 s for routes, two unanswered): until then
	// the server sends a dead route its share of the requests to a queue
	// group (the direct gets of KV entries, which any replica answers),
	// and they time out.
	o.PingInterval, o.MaxPingsOut = linkPing, 2
	if clusterListen != "" {
		ch, cp, err := splitHostPort(clusterListen)
		if err != nil {
			return nil, fmt.Errorf("--cluster-listen: %w", err)
		}
		o.Cluster = natsserver.ClusterOpts{Name: "backupmon", Host: ch, Port: cp, PingInterval: linkPing, MaxPingsOut: 2}
		if secret != "" {
			o.Cluster.Username, o.Cluster.Password = cluster.NATSUser, secret
		}
		if tlsc != nil {
			o.Cluster.TLSConfig = tlsc.Clone()
		}
		for _, r := range strings.Split(routes, ",") {
			if r = strings.TrimSpace(r); r == "" {
				continue
			}
			u, err := url.Parse(r)
			if err != nil || u.Host == "" {
				return nil, fmt.Errorf("--routes: %q is not a route address such as nats://h2:6222", r)
			}
			// Explicit routes present the credentials of their URL only.
			if secret != "" {
				u.User = url.UserPassword(cluster.NATSUser, secret)
			}
			o.Routes = append(o.Routes, u)
		}
	}
	return o, nil
}

// advertiseRoutes makes the server give the other servers advertise
// (host:port, none when empty) as its route address rather than its route
// listener's: a server that learns of it from a third dials that address
// (nats-server's implicit routes). It returns an error naming the flag
// when advertise is not host:port or the server has no route listener.
func advertiseRoutes(o *natsserver.Options, advertise string) error {
	if advertise == "" {
		return nil
	}
	if _, _, err := splitHostPort(advertise); err != nil {
		return fmt.Errorf("--cluster-advertise %q: want host:port: %w", advertise, err)
	}
	if o.Cluster.Port == 0 {
		return errors.New("--cluster-advertise needs --cluster-listen")
	}
	o.Cluster.Advertise = advertise
	return nil
}

// monitorOn serves nats-server's monitoring on monitor (host:port, none
// when empty). It returns an error naming the flag when monitor is not on
// loopback (the monitoring has no authentication) or not host:port.
func monitorOn(o *natsserver.Options, monitor string) error {
	if monitor == "" {
		return nil
	}
	if !loopback(monitor) {
		return fmt.Errorf("--monitor-listen %s is not a loopback address: nats-server's monitoring has no authentication and shows the cluster's connections and streams; listen on 127.0.0.1 and scrape it from the same host", monitor)
	}
	var err error
	if o.HTTPHost, o.HTTPPort, err = splitHostPort(monitor); err != nil {
		return fmt.Errorf("--monitor-listen: %w", err)
	}
	return nil
}

func splitHostPort(s string) (string, int, error) {
	host, p, err := net.SplitHostPort(s)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return "", 0, fmt.Errorf("port %q", p)
	}
	return host, port, nil
}

// portsFree returns an error naming the first of addrs (host:port; empty
// ones skipped) that cannot be listened on now.
func portsFree(addrs ...string) error {
	for _, a := range addrs {
		if a == "" {
			continue
		}
		ln, err := net.Listen("tcp", a)
		if err != nil {
			return fmt.Errorf("listen %s: %w", a, err)
		}
		ln.Close()
	}
	return nil
}
