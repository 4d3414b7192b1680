// Package cluster runs a node of a backupmon cluster on NATS JetStream: it
// leases the shards it should own, opens an engine on each one's replicated
// log, and routes every request to the owner of its shard.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"backupmon/jslog"
)

// Names in JetStream.
const (
	ownersBucket    = "bm_owners"    // shard → its owner's lease
	nodesBucket     = "bm_nodes"     // node → its heartbeat
	clusterBucket   = "bm_cluster"   // the cluster's settings (shard count, development clock)
	directoryBucket = "bm_directory" // secrets and tokens made before the cluster → their shard
	marksBucket     = "bm_marks"     // shard → the last sequence its owners saw acknowledged
	snapshotsStore  = "bm_snapshots" // shard snapshots
	mailStore       = "bm_mail"      // raw messages of unreadable e-mails
)

// Lease timing: an owner renews every renewEvery; it stops serving a shard
// once leaseSafe has passed since it sent its last renewal that succeeded;
// the lease itself (the bucket's MaxAge) lasts leaseTTL.
const (
	leaseTTL   = 10 * time.Second
	leaseSafe  = 7 * time.Second
	renewEvery = 2 * time.Second
	// pingEvery: the connection to NATS is given up as dead after two
	// pings unanswered, that is 4-6 s after the last answer, within
	// leaseSafe.
	pingEvery = 2 * time.Second
)

// setupWait bounds how long a node waits for JetStream at start-up.
// JetStream drops API requests until its servers have elected a leader,
// and answers only one of several identical creates sent at once (the
// others get no answer at all), so each call gets callWait and is tried
// again, after a lookup, until setupWait has passed.
const (
	setupWait = 2 * time.Minute
	callWait  = 2 * time.Second
)

// ensure finds a stream, bucket or store with lookup, or makes it with
// create, retrying calls that got no answer (logged at most every 10
// seconds) until ctx ends. It returns the last error, naming what.
func ensure(ctx context.Context, log *slog.Logger, what string, lookup, create func(context.Context) error) error {
	var logged time.Time
	for {
		err := withWait(ctx, lookup)
		if isNotFound(err) && create != nil {
			err = withWait(ctx, create)
		}
		if err == nil {
			return nil
		}
		if !retryable(err) || ctx.Err() != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if time.Since(logged) >= 10*time.Second {
			log.Warn("waiting for JetStream", "making", what, "err", err)
			logged = time.Now()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", what, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// retryable reports whether err is JetStream not ready yet rather than a
// refusal: no answer (no leader, no connection yet), or a replicated
// stream that cannot be placed because a server of the cluster is offline
// for the moment (one starting, or one the meta leader has not heard from
// under load: a fresh cluster's set-up met it on a busy machine).
func retryable(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrNoResponders) ||
		errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrReconnectBufExceeded) ||
		errors.Is(err, nats.ErrTimeout) {
		return true
	}
	var api *jetstream.APIError
	return errors.As(err, &api) && api.ErrorCode == jsNoPeers && strings.Contains(api.Description, "peer offline")
}

// jsNoPeers is JetStream's error code for a stream it cannot place on
// enough servers (JSClusterNoPeersErrF); its description says why.
const jsNoPeers jetstream.ErrorCode = 10005

// withWait calls fn with callWait.
func withWait(ctx context.Context, fn func(context.Context) error) error {
	cctx, cancel := context.WithTimeout(ctx, callWait)
	defer cancel()
	return fn(cctx)
}

func isNotFound(err error) bool {
	return errors.Is(err, jetstream.ErrBucketNotFound) || errors.Is(err, jetstream.ErrStreamNotFound)
}

// StreamName returns the name of a shard's stream, and Subject its subject.
func StreamName(shard int) string { return fmt.Sprintf("BM_S%03d", shard) }

// Subject returns the subject of a shard's log messages.
func Subject(shard int) string { return fmt.Sprintf("bm.s%03d", shard) }

// ErrReplicas is returned (wrapped) by Setup for a cluster that would not
// keep acknowledged records.
var ErrReplicas = errors.New("too few replicas")

// setup makes (or finds) the cluster's streams, buckets and store, and
// returns the shard count: the one the cluster was first set up with, or
// shards for a new cluster.
func setup(ctx context.Context, log *slog.Logger, js jetstream.JetStream, shards, replicas int) (int, error) {
	kvs := []jetstream.KeyValueConfig{
		{Bucket: ownersBucket, TTL: leaseTTL, Replicas: replicas, Storage: jetstream.FileStorage, LimitMarkerTTL: 3 * leaseTTL},
		{Bucket: nodesBucket, TTL: leaseTTL, Replicas: replicas, Storage: jetstream.FileStorage},
		{Bucket: clusterBucket, Replicas: replicas, Storage: jetstream.FileStorage},
		{Bucket: directoryBucket, Replicas: replicas, Storage: jetstream.FileStorage},
		{Bucket: marksBucket, Replicas: replicas, Storage: jetstream.FileStorage},
	}
	for _, cfg := range kvs {
		err := ensure(ctx, log, "key-value bucket "+cfg.Bucket,
			func(ctx context.Context) error { _, err := js.KeyValue(ctx, cfg.Bucket); return err },
			func(ctx context.Context) error { _, err := js.CreateKeyValue(ctx, cfg); return err })
		if err != nil {
			return 0, err
		}
	}
	for _, name := range []string{snapshotsStore, mailStore, backupStore} {
		store := jetstream.ObjectStoreConfig{Bucket: name, Replicas: replicas, Storage: jetstream.FileStorage}
		if name == backupStore {
			store.TTL = backupStoreAge
		}
		err := ensure(ctx, log, "object store "+name,
			func(ctx context.Context) error { _, err := js.ObjectStore(ctx, name); return err },
			func(ctx context.Context) error { _, err := js.CreateObjectStore(ctx, store); return err })
		if err != nil {
			return 0, err
		}
	}
	var n int
	err := ensure(ctx, log, "the shard count", func(ctx context.Context) error {
		settings, err := js.KeyValue(ctx, clusterBucket)
		if err != nil {
			return err
		}
		n, err = shardCount(ctx, settings, shards)
		return err
	}, nil)
	if err != nil {
		return 0, err
	}
	for s := range n {
		name := StreamName(s)
		err := ensure(ctx, log, "stream "+name,
			func(ctx context.Context) error { _, err := js.Stream(ctx, name); return err },
			func(ctx context.Context) error {
				_, err := jslog.CreateStream(ctx, js, name, Subject(s), replicas)
				return err
			})
		if err != nil {
			return 0, err
		}
	}
	return n, nil
}

// shardCount returns the cluster's shard count, setting it to want when the
// cluster has none yet (the first node to start sets it; it never changes).
func shardCount(ctx context.Context, settings jetstream.KeyValue, want int) (int, error) {
	e, err := settings.Get(ctx, "shards")
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		e, err = createOnce(ctx, settings, "shards", []byte(strconv.Itoa(want)))
	}
	if err != nil {
		return 0, fmt.Errorf("read the shard count: %w", err)
	}
	n, err := strconv.Atoi(string(e.Value()))
	if err != nil || n < 1 || n > MaxShards {
		return 0, fmt.Errorf("the cluster's shard count %q is not one", e.Value())
	}
	return n, nil
}

// checkReplicas refuses a cluster whose shard streams keep fewer than
// three copies, unless the node was told to accept fewer (development).
func checkReplicas(ctx context.Context, js jetstream.JetStream, want int) error {
	st, err := js.Stream(ctx, StreamName(0))
	if err != nil {
		return err
	}
	info, err := st.Info(ctx)
	if err != nil {
		return err
	}
	if info.Config.Replicas < want {
		return fmt.Errorf("%w: stream %s keeps %d copies of each record, and %d are needed so that an acknowledged report survives a server's loss; run three NATS servers with JetStream (sync_interval: always) and give --cluster-replicas 3, or --cluster-replicas 1 for development only",
			ErrReplicas, StreamName(0), info.Config.Replicas, want)
	}
	return nil
}
