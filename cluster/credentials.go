package cluster

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go"
)

// NATSUser is the one user of a cluster's NATS servers (`backupmon nats
// --auth-file`): its password is the cluster's NATS secret, which clients
// and the servers' routes alike present.
const NATSUser = "backupmon"

// Credentials are what a process of the cluster presents to the others.
type Credentials struct {
	// NATSSecret is the cluster's NATS secret, presented as NATSUser's
	// password; empty: the servers take clients without authentication.
	NATSSecret string
	// TLS is the cluster's TLS (clustertls.Load), on the connections to
	// the NATS servers and the node-to-node peer link; nil: in clear.
	TLS *tls.Config
}

// natsOptions returns the nats.go options that present c: the secret as
// NATSUser's password, and TLS with the member's certificate (nats.go
// checks that the server's names the host of its URL).
func (c Credentials) natsOptions() []nats.Option {
	var o []nats.Option
	if c.NATSSecret != "" {
		o = append(o, nats.UserInfo(NATSUser, c.NATSSecret))
	}
	if c.TLS != nil {
		o = append(o, nats.Secure(c.TLS))
	}
	return o
}

// connectError wraps err, an error of a connection to the NATS servers at
// urls, saying what to change when the servers refused the credentials or
// the two ends do not share the cluster's TLS.
func connectError(urls string, err error) error {
	switch {
	case errors.Is(err, nats.ErrAuthorization):
		// nats.ErrAuthorization itself: the server's wording varies in case.
		return fmt.Errorf("connect to NATS %s: %w: the servers refused this process's credentials (give --cluster-auth-file the file of the cluster's NATS secret, the one `backupmon nats --auth-file` reads)", urls, nats.ErrAuthorization)
	case errors.As(err, new(x509.HostnameError)):
		return fmt.Errorf("connect to NATS %s: %w: the server's certificate does not name the host this process dialled (issue the server's certificate for that name too, `backupmon cluster cert --hosts`, or give --cluster a name or address it has)", urls, err)
	case tlsRefusal(err):
		return fmt.Errorf("connect to NATS %s: %w: this process and the servers do not share the cluster's TLS (give --cluster-tls-ca, --cluster-tls-cert and --cluster-tls-key the cluster's authority and this member's certificate and key, which `backupmon cluster cert` makes; the servers take the same flags)", urls, err)
	}
	return fmt.Errorf("connect to NATS %s: %w", urls, err)
}

// tlsRefusal reports whether err is one end of a connection refusing the
// other's TLS: a certificate that is not the cluster's or does not name
// the host, a TLS alert from the other end, or TLS wanted on one end
// only. Trying again does not mend it.
func tlsRefusal(err error) bool {
	var verify *tls.CertificateVerificationError
	var alert tls.AlertError
	return errors.As(err, &verify) || errors.As(err, &alert) || errors.Is(err, nats.ErrSecureConnWanted) || errors.Is(err, nats.ErrSecureConnRequired)
}

// startGuard closes a connection that keeps trying to connect for ever
// (RetryOnFailedConnect) when its first connection is refused for a cause
// trying again does not mend (tlsRefusal), and keeps that cause: a node
// then stops at start saying why, rather than waiting minutes for
// JetStream. Once connected, the connection's failures are left to its
// reconnects.
type startGuard struct {
	mu        sync.Mutex
	connected bool
	cause     error
}

// options are the nats.go handlers of g.
func (g *startGuard) options() []nats.Option {
	return []nats.Option{
		nats.ConnectHandler(func(*nats.Conn) { g.mu.Lock(); g.connected = true; g.mu.Unlock() }),
		nats.ReconnectErrHandler(func(nc *nats.Conn, err error) {
			g.mu.Lock()
			stop := !g.connected && g.cause == nil && tlsRefusal(err)
			if stop {
				g.cause = err
			}
			g.mu.Unlock()
			if stop {
				go nc.Close() // not from the handler, which nats.go runs in its own order
			}
		}),
	}
}

// refused returns connectError's error when nc's servers refused its
// credentials or its TLS (the connection then closes rather than retries
// for ever); nil otherwise.
func (g *startGuard) refused(nc *nats.Conn, urls string) error {
	if err := nc.LastError(); errors.Is(err, nats.ErrAuthorization) {
		return connectError(urls, err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cause != nil {
		return connectError(urls, g.cause)
	}
	return nil
}
