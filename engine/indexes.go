package engine

import (
	"backupmon/state"
	"encoding/binary"
	"sync"
)

// The indexes across workspaces, kept by the state machine's hooks: key
// hashes, ingest tokens, users' e-mail addresses and session hashes, each to
// its workspace's actor.

// ingestRef finds the actor of the job an ingest token belongs to.
type ingestRef struct {
	act   *actor
	jobID state.ID
}

// ingestIndex maps ingest tokens to their jobs across workspaces. A plain
// map under a lock: start-up adds one entry per job (a sync.Map's store
// cost a fifth of loading a snapshot of jobs), and a lookup (one per mail)
// rarely meets a writer.
type ingestIndex struct {
	mu sync.RWMutex
	m  map[string]*ingestRef
}

func (x *ingestIndex) get(token string) *ingestRef {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.m[token]
}

func (x *ingestIndex) put(token string, r *ingestRef) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.m == nil {
		x.m = map[string]*ingestRef{}
	}
	x.m[token] = r
}

func (x *ingestIndex) remove(token string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	delete(x.m, token)
}

func (x *ingestIndex) clear() {
	x.mu.Lock()
	defer x.mu.Unlock()
	clear(x.m)
}

// ingestAddress returns a job's address, "" for a job without a token.
func (e *Engine) ingestAddress(j *state.Job) string {
	if j.IngestToken == "" {
		return ""
	}
	return j.IngestToken + "@" + e.opts.IngestDomain
}

// people indexes users by e-mail address and sessions by the SHA-256 of
// their secret, across workspaces: a login names no workspace, and one
// e-mail address may be a user of several workspaces (emails.go).
type people struct {
	emails   emailIndex
	sessions sync.Map // [32]byte → *personRef (id: the session's)
}

type personRef struct {
	act *actor
	id  state.ID
}

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
