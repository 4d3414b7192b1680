package cluster

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"backupmon/engine"
	"backupmon/natstest"
)

// deliverNothing is a deliverer that drops every notice.
type deliverNothing struct{}

func (deliverNothing) Deliver(engine.Notice) {}

// A node that read an end of the shard's stream that is not the end (a
// replica answering for a stream without a leader, as after a partition
// heals, answers with its own state) replays less than the stream holds:
// its takeover marker, sent after what it read, is fenced, and it must not
// serve the shard at all, rather than answer from a state missing
// acknowledged records. Here a message lands on the stream between the
// node's reading its end and its takeover. The Build of the stack waits
// for the log as serve's does (SetDeliverer), so the takeover's failure
// comes while the shard opens.
func TestStaleStreamEndNotServed(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three NATS servers")
	}
	c := natstest.Start(t, 3)
	js, err := jetstream.New(c.Connect(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var late atomic.Bool // the foreign message is published once
	n := testNode(t, c, "a", func(cfg *Config) {
		options := cfg.EngineOptions
		// Called after the log read the stream's end, before the replay.
		cfg.EngineOptions = func(shard int) engine.Options {
			if !late.Swap(true) {
				if _, err := js.Publish(ctx, Subject(0), []byte("a later message")); err != nil {
					t.Error(err)
				}
			}
			return options(shard)
		}
		build := cfg.Build
		cfg.Build = func(shard int, eng *engine.Engine) (*Stack, error) {
			eng.SetDeliverer(deliverNothing{})
			return build(shard, eng)
		}
	})
	served := n.acquire(ctx, 0) && n.local(0) != nil
	time.Sleep(500 * time.Millisecond)
	if served || n.local(0) != nil {
		t.Fatalf("the node serves a shard whose takeover was fenced (at once: %v, 500 ms later: %v)", served, n.local(0) != nil)
	}
	if _, err := n.owners.Get(ctx, shardKey(0)); err == nil {
		t.Fatal("the node kept the lease of a shard it does not serve")
	}
}
