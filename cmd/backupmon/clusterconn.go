package main

import (
	"errors"
	"flag"
	"time"

	"backupmon/cluster"
)

// clusterConn are the flags of a command that reaches a cluster's NATS
// servers from outside it (cluster import, cluster accept-loss): their
// addresses, the NATS secret and the cluster's TLS.
type clusterConn struct {
	urls, authFile *string
	tls            tlsFlags
	inClearOK      *bool
}

func clusterConnFlags(fs *flag.FlagSet) clusterConn {
	return clusterConn{
		urls:      fs.String("cluster", envDefault("cluster", ""), "the cluster's NATS servers, comma-separated"),
		authFile:  clusterAuthFlag(fs),
		tls:       clusterTLSFlags(fs),
		inClearOK: fs.Bool("cluster-insecure-no-tls", envBool("cluster-insecure-no-tls"), "without the cluster's TLS, reach NATS servers that are not on loopback anyway (the NATS secret and what the command reads or moves cross the network in clear)"),
	}
}

// credentials checks the flags and returns the servers' addresses and the
// credentials to present; an error names the flag to give or mend.
func (c clusterConn) credentials() (string, cluster.Credentials, error) {
	if *c.urls == "" {
		return "", cluster.Credentials{}, errors.New("--cluster is required")
	}
	secret, err := clusterSecret(*c.authFile)
	if err != nil {
		return "", cluster.Credentials{}, err
	}
	member, err := c.tls.load(time.Now())
	if err == nil && member == nil && !*c.inClearOK {
		err = inClear("--cluster-insecure-no-tls", [2]string{"--cluster", *c.urls})
	}
	if err != nil {
		return "", cluster.Credentials{}, err
	}
	return *c.urls, cluster.Credentials{NATSSecret: secret, TLS: member.Config()}, nil
}
