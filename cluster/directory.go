package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// The directory (KV bm_directory) names the shard of secrets made where
// nothing carried one: a single node's keys, session cookies and ingest
// tokens, moved in by `backupmon cluster import`. Entries: "h.<hex SHA-256
// of a key secret or a cookie value>" and "t.<ingest token>", each holding
// the shard's number. Every node keeps the whole directory in memory,
// watching the bucket; it is empty on a cluster that imported nothing,
// and then costs nothing.
type directory struct {
	mu     sync.RWMutex
	hashes map[[32]byte]int
	tokens map[string]int
}

func newDirectory() *directory {
	return &directory{hashes: map[[32]byte]int{}, tokens: map[string]int{}}
}

// watch loads the bucket and keeps following it until life ends; it
// returns once the entries present at the start are loaded, or an error
// (context.DeadlineExceeded after wait: JetStream not answering yet).
func (d *directory) watch(life context.Context, kv jetstream.KeyValue, wait time.Duration) error {
	w, err := kv.WatchAll(life)
	if err != nil {
		return err
	}
	loaded := make(chan struct{})
	go func() {
		once := sync.Once{}
		for e := range w.Updates() {
			if e == nil { // the end of the entries present at the start
				once.Do(func() { close(loaded) })
				continue
			}
			d.apply(e.Key(), e.Value(), e.Operation() == jetstream.KeyValuePut)
		}
		once.Do(func() { close(loaded) })
	}()
	select {
	case <-loaded:
		return nil
	case <-life.Done():
		w.Stop()
		return life.Err()
	case <-time.After(wait):
		w.Stop()
		return context.DeadlineExceeded
	}
}

func (d *directory) apply(key string, value []byte, put bool) {
	shard, err := strconv.Atoi(string(value))
	if put && err != nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case strings.HasPrefix(key, "h."):
		var h [32]byte
		if b, err := hex.DecodeString(key[2:]); err == nil && len(b) == 32 {
			copy(h[:], b)
			if put {
				d.hashes[h] = shard
			} else {
				delete(d.hashes, h)
			}
		}
	case strings.HasPrefix(key, "t."):
		if put {
			d.tokens[key[2:]] = shard
		} else {
			delete(d.tokens, key[2:])
		}
	}
}

// secretShard returns the shard the directory names for a key secret or a
// cookie value.
func (d *directory) secretShard(secret string) (int, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if len(d.hashes) == 0 {
		return 0, false
	}
	s, ok := d.hashes[sha256.Sum256([]byte(secret))]
	return s, ok
}

// tokenShard returns the shard the directory names for an ingest token.
func (d *directory) tokenShard(token string) (int, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	s, ok := d.tokens[token]
	return s, ok
}

// HashEntry and TokenEntry are the directory's keys for a secret's SHA-256
// and for an ingest token.
func HashEntry(h [32]byte) string { return "h." + hex.EncodeToString(h[:]) }

// TokenEntry is the directory's key of an ingest token.
func TokenEntry(token string) string { return "t." + token }
