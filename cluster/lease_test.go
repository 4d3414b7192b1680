package cluster

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/valyala/fasthttp"

	"backupmon/engine"
	"backupmon/natstest"
)

// testNode connects a node of a one-shard cluster on c, with engines on the
// real clock and handlers that answer nothing (unless more changes its
// configuration); its loops are not started, so the test drives acquire,
// renew and drop itself.
func testNode(t *testing.T, c *natstest.Cluster, id string, more ...func(*Config)) *Node {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := Config{URLs: c.URLs(), NodeID: id, Shards: 1, Replicas: 3, Dir: t.TempDir(), Logger: quiet,
		EngineOptions: func(int) engine.Options { return engine.Options{Logger: quiet} },
		Build: func(int, *engine.Engine) (*Stack, error) {
			nothing := func(*fasthttp.RequestCtx) {}
			return &Stack{Public: nothing, Admin: nothing}, nil
		},
	}
	for _, f := range more {
		f(&cfg)
	}
	n, err := Connect(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		n.drop(0, false)
		n.stopWatch()
		n.nc.Close()
	})
	return n
}

// TestLeaseFencingAndHandOver runs one shard's life against an in-process
// three-server JetStream: a node takes the free shard's lease and serves
// it; another finds it owned and does not; a lease another node took makes
// the first stop serving at its next renewal; a graceful hand-over
// releases the lease at once, and the next owner serves the state the
// first one wrote.
func TestLeaseFencingAndHandOver(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three NATS servers")
	}
	c := natstest.Start(t, 3)
	a, b := testNode(t, c, "a"), testNode(t, c, "b")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	if !a.acquire(ctx, 0) || a.local(0) == nil {
		t.Fatal("a did not take the free shard")
	}
	lease, err := a.owners.Get(ctx, shardKey(0))
	if err != nil || string(lease.Value()) != "a 0" {
		t.Fatalf("the lease after a took it: %v %q", err, lease.Value())
	}
	if !b.acquire(ctx, 0) || b.local(0) != nil {
		t.Fatal("b took a shard a owns")
	}
	ws, err := a.local(0).eng.CreateWorkspace(engine.WorkspaceInput{Name: engine.Some("Acme"), Plan: engine.Some("pro")})
	if err != nil {
		t.Fatal(err)
	}

	// A renewal finds the lease at its revision: a keeps serving.
	a.renew(a.local(0))
	if a.local(0) == nil {
		t.Fatal("a stopped serving after a good renewal")
	}

	// Someone else's write to the lease (a node that took it while a was
	// frozen): a's next renewal fails its compare-and-set, and a stops
	// serving at once, without a hand-over.
	h := a.local(0)
	if _, err := a.owners.Put(ctx, shardKey(0), []byte("c 0")); err != nil {
		t.Fatal(err)
	}
	a.renew(h)
	if a.local(0) != nil || h.serving.Load() {
		t.Fatal("a still serves a shard whose lease another node took")
	}
	if _, err := a.owners.Get(ctx, shardKey(0)); err != nil {
		t.Fatalf("a released a lease that is not its own: %v", err)
	}

	// The lease gone, a takes the shard again, replays what it wrote, and
	// hands it over: the lease is released at once and b serves the same
	// workspace.
	if err := a.owners.Delete(ctx, shardKey(0)); err != nil {
		t.Fatal(err)
	}
	if !a.acquire(ctx, 0) || a.local(0) == nil {
		t.Fatal("a did not take the shard back")
	}
	if got := a.local(0).eng.Workspaces(); len(got) != 1 || got[0].ID != ws.ID {
		t.Fatalf("a's replay holds %s, want workspace %s", got, ws.ID)
	}
	a.drop(0, true)
	if _, err := a.owners.Get(ctx, shardKey(0)); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatalf("the lease after a graceful hand-over: %v, want it released", err)
	}
	if !b.acquire(ctx, 0) || b.local(0) == nil {
		t.Fatal("b did not take the handed-over shard")
	}
	if got := b.local(0).eng.Workspaces(); len(got) != 1 || got[0].ID != ws.ID || !bytes.Equal(got[0].JSON, ws.JSON) {
		t.Fatalf("b serves %s, want %s", got, ws.JSON)
	}
}

// TestLostLeaseCutsTheSnapshotInProgress: a node that loses a shard's
// lease while the shard's snapshot is being written stops serving it at
// once, cutting the write. The drop runs in the loop that renews the
// node's other leases, and the engine's close waits for its snapshot: a
// write whose chunks went unanswered held that loop for the write's
// wait per chunk (a minute here, 30 s in a node), past the other leases'
// safe bound.
func TestLostLeaseCutsTheSnapshotInProgress(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three NATS servers")
	}
	c := natstest.Start(t, 3)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	a := testNode(t, c, "a", func(cfg *Config) {
		cfg.EngineOptions = func(int) engine.Options {
			return engine.Options{Logger: quiet, SnapshotInterval: 100 * time.Millisecond}
		}
	})
	store, js := silenced(a.store, time.Minute)
	a.store = store
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if !a.acquire(ctx, 0) || a.local(0) == nil {
		t.Fatal("a did not take the free shard")
	}
	h := a.local(0)
	if _, err := h.eng.CreateWorkspace(engine.WorkspaceInput{Name: engine.Some("Acme"), Plan: engine.Some("pro")}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-js.sending:
	case <-time.After(10 * time.Second):
		t.Fatal("no snapshot began within 10 s")
	}
	if _, err := a.owners.Put(ctx, shardKey(0), []byte("c 0")); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	a.renew(h)
	took := time.Since(start)
	if a.local(0) != nil || h.serving.Load() {
		t.Fatal("a still serves a shard whose lease another node took")
	}
	if took > 3*time.Second {
		t.Fatalf("the renewal that found the lease lost took %v, want the snapshot in progress cut at once", took)
	}
}
