package localcluster

import (
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"backupmon/cluster"
)

// JetStream connects to the cluster's NATS servers as its members do (the
// secret, the cluster's TLS) and returns their JetStream; js.Conn().Close()
// ends the connection. It returns the connection's error.
func (c *Cluster) JetStream() (jetstream.JetStream, error) {
	tlsc, err := c.TLSConfig()
	if err != nil {
		return nil, err
	}
	opts := []nats.Option{nats.UserInfo(cluster.NATSUser, c.NATSSecret)}
	if tlsc != nil {
		opts = append(opts, nats.Secure(tlsc))
	}
	nc, err := nats.Connect(strings.Join(c.NATSURLs, ","), opts...)
	if err != nil {
		return nil, fmt.Errorf("localcluster: connect to NATS: %w", err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("localcluster: %w", err)
	}
	return js, nil
}
