package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"backupmon/engine"
)

// Secret returns the cluster's secret of that name (the admin token, the
// cursor key): the first node to ask makes it (32 random bytes, hex) and
// every node reads the same.
func (n *Node) Secret(name string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	key := "secret." + name
	if e, err := n.config.Get(ctx, key); err == nil {
		return e.Value(), nil
	} else if !errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, fmt.Errorf("read the cluster's %s: %w", name, err)
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return nil, err
	}
	e, err := createOnce(ctx, n.config, key, []byte(hex.EncodeToString(raw[:])))
	if err != nil {
		return nil, fmt.Errorf("make the cluster's %s: %w", name, err)
	}
	return e.Value(), nil
}

// createOnce sets key to value unless a node set it first, and returns
// what the key holds (getCreated).
func createOnce(ctx context.Context, kv jetstream.KeyValue, key string, value []byte) (jetstream.KeyValueEntry, error) {
	if _, err := kv.Create(ctx, key, value); err != nil && !errors.Is(err, jetstream.ErrKeyExists) {
		return nil, err
	}
	return getCreated(ctx, kv, key)
}

// getCreated reads a key another node or this one has just created (its
// Create answered, or answered that the key exists). A bucket's reads are
// answered by any of its servers (direct gets), and one that has not yet
// applied the create answers that there is no such key: such answers are
// asked again until ctx ends (then its error, which ensure retries). A
// fresh cluster's nodes starting together met it (a node stopped with "the
// cluster's clock is unreadable").
func getCreated(ctx context.Context, kv jetstream.KeyValue, key string) (jetstream.KeyValueEntry, error) {
	for {
		e, err := kv.Get(ctx, key)
		if !errors.Is(err, jetstream.ErrKeyNotFound) {
			return e, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: still %v", ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// shareClock puts the node's development clock where the cluster's stands:
// the first node to start gives its own time, and every node then reads
// the same, so that a shard moving to another node keeps its time.
func (n *Node) shareClock() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	data := []byte(n.cfg.Clock.Now().Format(time.RFC3339Nano))
	e, err := createOnce(ctx, n.config, "clock", data)
	if err != nil {
		return fmt.Errorf("share the development clock: %w", err)
	}
	at, err := time.Parse(time.RFC3339Nano, string(e.Value()))
	if err != nil {
		return fmt.Errorf("share the development clock: the cluster's clock %q is unreadable", e.Value())
	}
	n.cfg.Clock.Set(at)
	return nil
}

// ClockAt returns the development time the cluster last moved its clock
// to, and false when it never did.
func (n *Node) ClockAt() (time.Time, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	e, err := n.config.Get(ctx, "clock")
	if err != nil {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, string(e.Value()))
	return t, err == nil
}

// Engine returns the engine of the shard of workspace ws when this node
// serves it, else nil (for a delivery's outcome coming back to it).
func (n *Node) Engine(ws engine.ID) *engine.Engine {
	if h := n.local(WorkspaceShard(ws, n.shards)); h != nil {
		return h.eng
	}
	return nil
}

// ClaimDemo makes this node the one that creates the demo workspace, unless
// another node claimed it first: it reports whether this node should. A
// node that claimed it before a restart, and never published its keys,
// claims it again.
func (n *Node) ClaimDemo() (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := n.config.Create(ctx, "demo.owner", []byte(n.cfg.NodeID))
	if err == nil {
		return true, nil
	}
	if !errors.Is(err, jetstream.ErrKeyExists) {
		return false, fmt.Errorf("claim the demo: %w", err)
	}
	e, err := getCreated(ctx, n.config, "demo.owner")
	if err != nil {
		return false, fmt.Errorf("claim the demo: %w", err)
	}
	_, published := n.DemoKeys()
	return string(e.Value()) == n.cfg.NodeID && !published, nil
}

// PublishDemoKeys shares the demo's keys file with every node.
func (n *Node) PublishDemoKeys(text []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := n.config.Put(ctx, "demo.keys", text); err != nil {
		return fmt.Errorf("publish the demo's keys: %w", err)
	}
	return nil
}

// DemoKeys returns the demo's keys file, once the node that created the
// demo published it.
func (n *Node) DemoKeys() ([]byte, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	e, err := n.config.Get(ctx, "demo.keys")
	if err != nil {
		return nil, false
	}
	return e.Value(), true
}

// AnyEngine returns the engine of a shard this node serves, or nil.
func (n *Node) AnyEngine() *engine.Engine {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, h := range n.hosted {
		if h.serving.Load() {
			return h.eng
		}
	}
	return nil
}
