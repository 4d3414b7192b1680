package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

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
	routes := fs.String("routes", envDefault("nats-routes", ""), "the other servers' route addresses, comma-separated: nats://h2:6222,nats://h3:6222")
	store := fs.String("store", envDefault("nats-store", "./nats"), "directory of the server's JetStream data")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	opts, err := natsOptions(*name, *listen, *clusterListen, *routes, *store)
	if err != nil {
		fmt.Fprintln(errOut, "backupmon nats:", err)
		return 2
	}
	// A port in use fails here, before the server makes its store (it would
	// make it, then wait half a minute for a listener it cannot have).
	if err := portsFree(*listen, *clusterListen); err != nil {
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
	if *clusterListen != "" {
		fmt.Fprintf(out, "nats routes on %s\n", *clusterListen)
		// JetStream drops API requests until its servers have elected a
		// leader: say ready once they have.
		for !s.JetStreamIsCurrent() {
			time.Sleep(50 * time.Millisecond)
		}
	}
	fmt.Fprintln(out, "ready")
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	<-stop
	s.Shutdown()
	s.WaitForShutdown()
	return 0
}

// natsOptions are the server's options: JetStream on, every write fsynced.
func natsOptions(name, listen, clusterListen, routes, store string) (*natsserver.Options, error) {
	host, port, err := splitHostPort(listen)
	if err != nil {
		return nil, fmt.Errorf("--listen: %w", err)
	}
	// max_payload 8 MiB (NATS's default is 1 MiB): a forwarded answer (an
	// admin list of a large workspace) travels as one message.
	o := &natsserver.Options{ServerName: name, Host: host, Port: port, JetStream: true, StoreDir: store, SyncAlways: true, NoSigs: true,
		MaxPayload: 8 << 20}
	if clusterListen != "" {
		ch, cp, err := splitHostPort(clusterListen)
		if err != nil {
			return nil, fmt.Errorf("--cluster-listen: %w", err)
		}
		o.Cluster = natsserver.ClusterOpts{Name: "backupmon", Host: ch, Port: cp}
		for _, r := range strings.Split(routes, ",") {
			if r = strings.TrimSpace(r); r == "" {
				continue
			}
			u, err := url.Parse(r)
			if err != nil || u.Host == "" {
				return nil, fmt.Errorf("--routes: %q is not a route address such as nats://h2:6222", r)
			}
			o.Routes = append(o.Routes, u)
		}
	}
	return o, nil
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
