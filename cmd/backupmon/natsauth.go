package main

import (
	"crypto/subtle"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"

	natsserver "github.com/nats-io/nats-server/v2/server"

	"backupmon/cluster"
)

// minNATSSecret is the shortest NATS secret an auth file may hold.
const minNATSSecret = 32

// readNATSSecrets returns the secrets of the NATS auth file at path: each
// non-empty line, trimmed. The first is the cluster's NATS secret, the one
// a process presents; a NATS server takes the others too, so that the
// secret can change without a stop (docs/decisions.md). It returns an
// error naming the file and the line when the file cannot be read, holds
// no secret, or a secret is shorter than minNATSSecret or looks like a
// bcrypt hash (nats-server would take it as the hash of the password, and
// the routes, which present the secret itself, would be refused).
func readNATSSecrets(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("the NATS secret: %w", err)
	}
	var secrets []string
	for i, line := range strings.Split(string(b), "\n") {
		secret := strings.TrimSpace(line)
		switch {
		case secret == "" && i > 0:
			continue
		case len(secret) < minNATSSecret && i == 0:
			return nil, fmt.Errorf("the NATS secret in %s is %d characters: it takes %d or more on its first line", path, len(secret), minNATSSecret)
		case len(secret) < minNATSSecret:
			return nil, fmt.Errorf("line %d of %s is %d characters: a NATS secret takes %d or more", i+1, path, len(secret), minNATSSecret)
		case strings.HasPrefix(secret, "$2"):
			return nil, fmt.Errorf("the NATS secret on line %d of %s looks like a bcrypt hash: the file holds the secret itself", i+1, path)
		}
		secrets = append(secrets, secret)
	}
	return secrets, nil
}

// natsAccepted checks the credentials of a NATS server's clients and
// routes: user cluster.NATSUser with any of the secrets of its auth file,
// compared in constant time.
type natsAccepted [][]byte

// Check reports whether c presented cluster.NATSUser and one of the
// secrets.
func (a natsAccepted) Check(c natsserver.ClientAuthentication) bool {
	o := c.GetOpts()
	if o == nil || o.Username != cluster.NATSUser {
		return false
	}
	ok := false
	for _, secret := range a {
		ok = subtle.ConstantTimeCompare([]byte(o.Password), secret) == 1 || ok
	}
	return ok
}

// loopback reports whether the host of addr (host:port) is a loopback
// address or localhost; an empty host (every interface) is not.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// clusterAuthFlag defines --cluster-auth-file on fs: the file of the
// cluster's NATS secret, which the process's NATS connections present.
func clusterAuthFlag(fs *flag.FlagSet) *string {
	return fs.String("cluster-auth-file", envDefault("cluster-auth-file", ""), "file whose first line is the cluster's NATS secret (the file `backupmon nats --auth-file` reads); empty: NATS servers without authentication")
}

// clusterSecret returns the secret of the --cluster-auth-file path, "" for
// no path, or an error naming the flag and the file.
func clusterSecret(path string) (string, error) { return flagSecret("--cluster-auth-file", path) }

// flagSecret returns the NATS secret of the file path that flag names, ""
// for no path, or an error naming the flag and the file.
func flagSecret(flag, path string) (string, error) {
	if path == "" {
		return "", nil
	}
	secrets, err := readNATSSecrets(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", flag, err)
	}
	return secrets[0], nil
}
