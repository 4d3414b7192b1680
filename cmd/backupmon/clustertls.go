package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"time"

	"backupmon/clustertls"
)

// tlsFlags are the three files of the cluster's TLS a process of it
// reads (clustertls.Files), from --cluster-tls-ca, -cert and -key.
type tlsFlags struct{ ca, cert, key *string }

// clusterTLSFlags defines --cluster-tls-ca, --cluster-tls-cert and
// --cluster-tls-key on fs.
func clusterTLSFlags(fs *flag.FlagSet) tlsFlags {
	return tlsFlags{
		ca:   fs.String("cluster-tls-ca", envDefault("cluster-tls-ca", ""), "the cluster's certificate authority (ca.pem of `backupmon cluster cert`): NATS and the other nodes are taken only with a certificate it signed"),
		cert: fs.String("cluster-tls-cert", envDefault("cluster-tls-cert", ""), "this member's certificate (NAME.pem of `backupmon cluster cert`), presented to NATS and the other nodes"),
		key:  fs.String("cluster-tls-key", envDefault("cluster-tls-key", ""), "this member's private key (NAME.key of `backupmon cluster cert`)"),
	}
}

// load returns the member of the cluster's TLS the files make, nil when
// no file is given, or an error naming the flags when only some are or a
// file does not do.
func (f tlsFlags) load(now time.Time) (*clustertls.Member, error) {
	files := clustertls.Files{CA: *f.ca, Cert: *f.cert, Key: *f.key}
	if !files.Given() {
		return nil, nil
	}
	if files.CA == "" || files.Cert == "" || files.Key == "" {
		return nil, errors.New("--cluster-tls-ca, --cluster-tls-cert and --cluster-tls-key go together: give all three")
	}
	m, err := clustertls.Open(files, now)
	if err != nil {
		return nil, fmt.Errorf("the cluster's TLS: %w", err)
	}
	return m, nil
}

// inClear returns an error naming the first of addrs that is not on
// loopback (offLoopback), for a process told to run without the
// cluster's TLS: its secrets would cross the network in clear.
// insecureFlag is the flag that allows it anyway.
func inClear(insecureFlag string, addrs ...[2]string) error {
	if flagName, addr, ok := offLoopback(addrs...); ok {
		return fmt.Errorf("%s %s is not a loopback address and there is no --cluster-tls-ca/-cert/-key: the cluster's secrets would cross the network in clear; give the cluster's TLS files (`backupmon cluster cert` makes them), or %s to run in clear anyway on a network only the cluster reaches", flagName, addr, insecureFlag)
	}
	return nil
}

// offLoopback returns the first address of addrs (each a flag and its
// value: host:port, or nats:// URLs, comma-separated) whose host is not
// loopback, with its flag; ok is false when there is none.
func offLoopback(addrs ...[2]string) (flagName, addr string, ok bool) {
	for _, a := range addrs {
		for _, one := range strings.Split(a[1], ",") {
			if one = strings.TrimSpace(one); one == "" {
				continue
			}
			hostPort := one
			if u, err := url.Parse(one); err == nil && u.Host != "" {
				hostPort = u.Host
				if u.Port() == "" {
					hostPort = net.JoinHostPort(u.Hostname(), "4222")
				}
			}
			if !loopback(hostPort) {
				return a[0], one, true
			}
		}
	}
	return "", "", false
}

// clusterCert runs `backupmon cluster cert`: it issues one member's
// certificate from the cluster's authority in --dir, making the
// authority first when the directory has none.
func clusterCert(args []string, out, errOut io.Writer) int {
	fs := flag.NewFlagSet("cluster cert", flag.ContinueOnError)
	fs.SetOutput(errOut)
	dir := fs.String("dir", "./cluster-tls", "directory of the cluster's authority (ca.pem, ca.key: made when missing) and of the certificates it issues")
	name := fs.String("name", "", "the member's name: its files are NAME.pem and NAME.key (required)")
	hosts := fs.String("hosts", "", "the DNS names and IP addresses the other members reach this one by, comma-separated (required)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *name == "" || *hosts == "" {
		fmt.Fprintln(errOut, "backupmon cluster cert: --name and --hosts are required, e.g. --name n1 --hosts 10.0.0.1,n1.internal")
		return 2
	}
	var hs []string
	for _, h := range strings.Split(*hosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			hs = append(hs, h)
		}
	}
	f, err := clustertls.Issue(*dir, *name, hs, time.Now())
	if err != nil {
		fmt.Fprintln(errOut, "backupmon cluster cert:", err)
		return 1
	}
	fmt.Fprintf(out, "%s: certificate of %s for %s, valid until %s\n", f.Cert, *name, strings.Join(hs, ", "), time.Now().Add(clustertls.MemberValidity).UTC().Format("2006-01-02"))
	fmt.Fprintf(out, "%s: its private key (copy it to %s only)\n", f.Key, *name)
	fmt.Fprintf(out, "%s: the cluster's authority (copy it to every member; ca.key stays here)\n", f.CA)
	fmt.Fprintf(out, "flags: --cluster-tls-ca %s --cluster-tls-cert %s --cluster-tls-key %s\n", f.CA, f.Cert, f.Key)
	return 0
}
