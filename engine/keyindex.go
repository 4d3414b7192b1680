package engine

import (
	"backupmon/state"
	"encoding/binary"
	"sync"
)

// keyIndex finds a key's workspace actor by the SHA-256 of its secret,
// across all workspaces. It is sharded by the hash's first byte, so lookups
// (every API request) rarely meet a writer (key creation and revocation);
// the hash is already uniform, so its first 8 bytes serve as the map key and
// the whole hash is compared after.
type keyIndex struct {
	shards [64]keyShard
}

type keyShard struct {
	mu sync.RWMutex
	m  map[uint64][]*keyRef
}

type keyRef struct {
	hash [32]byte
	act  *actor
	key  *state.Key // touched only in its actor, which checks key.revoked
}

func (x *keyIndex) shard(h *[32]byte) (*keyShard, uint64) {
	return &x.shards[h[0]&63], binary.LittleEndian.Uint64(h[:8])
}

// get returns the key whose secret hashes to h, or nil.
func (x *keyIndex) get(h *[32]byte) *keyRef {
	s, k := x.shard(h)
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, r := range s.m[k] {
		if r.hash == *h {
			return r
		}
	}
	return nil
}

// put adds or replaces the key whose secret hashes to r.hash.
func (x *keyIndex) put(r *keyRef) {
	s, k := x.shard(&r.hash)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[uint64][]*keyRef{}
	}
	list := s.m[k]
	for i, old := range list {
		if old.hash == r.hash {
			list[i] = r
			return
		}
	}
	s.m[k] = append(list, r)
}

// remove drops the key whose secret hashes to h.
func (x *keyIndex) remove(h *[32]byte) {
	s, k := x.shard(h)
	s.mu.Lock()
	defer s.mu.Unlock()
	list := s.m[k]
	for i, r := range list {
		if r.hash == *h {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(s.m, k)
	} else {
		s.m[k] = list
	}
}

// clear empties the index.
func (x *keyIndex) clear() {
	for i := range x.shards {
		s := &x.shards[i]
		s.mu.Lock()
		s.m = nil
		s.mu.Unlock()
	}
}
