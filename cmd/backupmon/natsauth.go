package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
)

// minNATSSecret is the shortest NATS secret an auth file may hold.
const minNATSSecret = 32

// readNATSSecret returns the cluster's NATS secret: the first line of the
// file at path, trimmed. It returns an error naming the file when the file
// cannot be read, or the secret is shorter than minNATSSecret or looks like
// a bcrypt hash (nats-server would take it as the hash of the password, and
// the routes, which present the secret itself, would be refused).
func readNATSSecret(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("the NATS secret: %w", err)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	secret := strings.TrimSpace(first)
	if len(secret) < minNATSSecret {
		return "", fmt.Errorf("the NATS secret in %s is %d characters: it takes %d or more on its first line", path, len(secret), minNATSSecret)
	}
	if strings.HasPrefix(secret, "$2") {
		return "", fmt.Errorf("the NATS secret in %s looks like a bcrypt hash: the file holds the secret itself", path)
	}
	return secret, nil
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
	secret, err := readNATSSecret(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", flag, err)
	}
	return secret, nil
}
