package cluster

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// staleKV answers misses Gets as a server that has not yet applied a
// create does (no such key), then the entry.
type staleKV struct {
	jetstream.KeyValue
	misses, gets int
}

type entry struct {
	jetstream.KeyValueEntry
	value []byte
}

func (e entry) Value() []byte { return e.value }

func (s *staleKV) Get(ctx context.Context, key string) (jetstream.KeyValueEntry, error) {
	if s.gets++; s.gets <= s.misses {
		return nil, jetstream.ErrKeyNotFound
	}
	return entry{value: []byte("v:" + key)}, nil
}

// TestGetCreated: a key just created is read until a server answers with
// it; when ctx ends first, the error is the context's (which set-up's
// ensure retries), not "no such key".
func TestGetCreated(t *testing.T) {
	kv := &staleKV{misses: 3}
	e, err := getCreated(context.Background(), kv, "clock")
	if err != nil || string(e.Value()) != "v:clock" || kv.gets != 4 {
		t.Fatalf("after 3 stale answers: %v %v, %d gets; want v:clock after 4", e, err, kv.gets)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = getCreated(ctx, &staleKV{misses: 1 << 30}, "clock")
	if !errors.Is(err, context.DeadlineExceeded) || !retryable(err) {
		t.Fatalf("never there: %v, want the context's deadline, retryable", err)
	}
}
