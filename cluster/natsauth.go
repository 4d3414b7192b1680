package cluster

import (
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
)

// NATSUser is the one user of a cluster's NATS servers (`backupmon nats
// --auth-file`): its password is the cluster's NATS secret, which clients
// and the servers' routes alike present.
const NATSUser = "backupmon"

// natsAuth returns the nats.go options that present secret as NATSUser's
// password; none when secret is empty (servers without authentication).
func natsAuth(secret string) []nats.Option {
	if secret == "" {
		return nil
	}
	return []nats.Option{nats.UserInfo(NATSUser, secret)}
}

// connectError wraps err, an error of a connection to the NATS servers at
// urls, saying what to change when the servers refused the credentials.
func connectError(urls string, err error) error {
	if errors.Is(err, nats.ErrAuthorization) {
		// nats.ErrAuthorization itself: the server's wording varies in case.
		return fmt.Errorf("connect to NATS %s: %w: the servers refused this process's credentials (give --cluster-auth-file the file of the cluster's NATS secret, the one `backupmon nats --auth-file` reads)", urls, nats.ErrAuthorization)
	}
	return fmt.Errorf("connect to NATS %s: %w", urls, err)
}

// refused returns connectError's error when nc's servers refused its
// credentials (the connection then closes rather than retries for ever);
// nil otherwise.
func refused(nc *nats.Conn, urls string) error {
	if err := nc.LastError(); errors.Is(err, nats.ErrAuthorization) {
		return connectError(urls, err)
	}
	return nil
}
