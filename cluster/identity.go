package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"backupmon/vfs"
)

// A cluster's identity: a random id its first node keeps in the cluster's
// settings (bm_cluster, key "id"), and every node in its data directory
// (<Config.Dir>/cluster.id) once it has joined. A node whose directory
// names a cluster that the NATS servers do not hold refuses to start,
// before it makes anything there: their state is gone, or they are other
// servers (a mistyped --cluster), and a node that set up a new, empty
// cluster there would answer every workspace as unknown.
const (
	clusterIDKey  = "id"
	clusterIDFile = "cluster.id"
)

// ErrOtherCluster is returned (wrapped) by Connect for a node whose data
// directory belongs to a cluster the NATS servers do not hold.
var ErrOtherCluster = errors.New("the NATS servers do not hold this node's cluster")

// knownCluster returns the cluster id the node's directory keeps ("" for
// none, or without a directory).
func knownCluster(dir string) (string, error) {
	if dir == "" {
		return "", nil
	}
	b, err := os.ReadFile(filepath.Join(dir, clusterIDFile))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read the cluster's id: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// heldCluster returns the id of the cluster the NATS servers hold: "" when
// they hold no cluster's settings, or settings without an id (a cluster
// set up before ids).
func heldCluster(ctx context.Context, js jetstream.JetStream) (string, error) {
	settings, err := js.KeyValue(ctx, clusterBucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	e, err := settings.Get(ctx, clusterIDKey)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return string(e.Value()), nil
}

// checkCluster refuses, before set-up, a node whose directory names a
// cluster other than the one the servers at urls hold.
func checkCluster(known, held, dir, urls string) error {
	if known == "" || known == held {
		return nil
	}
	holds := "no cluster: their state is gone, or they are other servers"
	if held != "" {
		holds = "cluster " + held
	}
	return fmt.Errorf("%w: this node's data belongs to cluster %s, and the NATS servers at %s hold %s; a node does not set up a new cluster over an old one's. Point --cluster at its own servers, or restore them; to have this node join the cluster they hold, remove %s",
		ErrOtherCluster, known, urls, holds, filepath.Join(dir, clusterIDFile))
}

// joinCluster gives a cluster set up without an id one (the first node to
// get here makes it), keeps it in the node's directory, and returns it.
func joinCluster(ctx context.Context, settings jetstream.KeyValue, dir, known string) (string, error) {
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return "", err
	}
	e, err := createOnce(ctx, settings, clusterIDKey, []byte(hex.EncodeToString(id)))
	if err != nil {
		return "", fmt.Errorf("set the cluster's id: %w", err)
	}
	held := string(e.Value())
	if dir == "" || known == held {
		return held, nil
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return "", err
	}
	return held, vfs.WriteFile(vfs.OS, filepath.Join(dir, clusterIDFile), append(e.Value(), '\n'), 0o640)
}
