package state

import (
	"bytes"
	"crypto/sha256"
	"slices"
	"sync/atomic"
)

// A workspace's idempotency keys live in one table of fixed-size entries,
// not as strings in a map per job: a key is kept 30 days, so on a busy
// host they outnumber everything but the results, and a string, its map
// slot and an entry of its own cost more than the result the key came
// with (bench/RESULTS.md, "Idempotency keys"). The table holds no
// pointers, so the collector never scans it.

// IdemDigest names one job's idempotency key: the first 16 bytes of the
// SHA-256 of the job's id and the key. Keys of different jobs differ.
type IdemDigest [16]byte

// IdemDigestOf returns the digest of job's idempotency key.
func IdemDigestOf(job ID, key string) IdemDigest {
	var buf [len(ID{}) + 240]byte
	var sum [sha256.Size]byte
	if len(key) <= len(buf)-len(job) {
		n := copy(buf[:], job[:])
		n += copy(buf[n:], key)
		sum = sha256.Sum256(buf[:n])
	} else {
		h := sha256.New()
		h.Write(job[:])
		h.Write([]byte(key))
		h.Sum(sum[:0])
	}
	return IdemDigest(sum[:16])
}

// IdemEntry is one recorded idempotency key: when the report that
// recorded it was received, and whether that report is still on its way
// to the log. Entries never move, so the log's committer may clear
// Pending while the workspace's actor goes on.
type IdemEntry struct {
	At      int64
	Pending atomic.Bool
}

// idemChunkBits sizes the table's largest chunk (4,096 entries); the
// first chunks are smaller, so a workspace with a few keys keeps a few
// entries.
const idemChunkBits = 12

// IdemTable is a workspace's idempotency keys. The zero table is empty
// and ready. Only the workspace's actor calls its methods; the log's
// committer touches the entries it was handed, nothing else.
type IdemTable struct {
	index  map[IdemDigest]uint32 // digest → slot: chunk<<idemChunkBits | place
	chunks [][]IdemEntry
	used   int      // entries handed out of the last chunk
	free   []uint32 // slots to hand out again
	// Slots replaced while their report was on its way to the log: freed
	// once it is no longer (the committer may still clear its flag).
	orphans []uint32
}

// Len returns how many keys the table holds.
func (t *IdemTable) Len() int { return len(t.index) }

func (t *IdemTable) entry(slot uint32) *IdemEntry {
	return &t.chunks[slot>>idemChunkBits][slot&(1<<idemChunkBits-1)]
}

// Get returns the entry of d, or nil.
func (t *IdemTable) Get(d IdemDigest) *IdemEntry {
	slot, ok := t.index[d]
	if !ok {
		return nil
	}
	return t.entry(slot)
}

// Put records d as received at at, not pending, and returns its entry. An
// entry d had is replaced (its slot freed, or once its report is no longer
// pending).
func (t *IdemTable) Put(d IdemDigest, at int64) *IdemEntry {
	if old, ok := t.index[d]; ok {
		t.release(old)
	}
	slot := t.alloc()
	if t.index == nil {
		t.index = map[IdemDigest]uint32{}
	}
	t.index[d] = slot
	e := t.entry(slot)
	e.At = at
	e.Pending.Store(false)
	return e
}

// alloc returns a slot to use: a freed one, else the next of the last
// chunk, else the first of a new chunk twice the size of the last (up to
// 1<<idemChunkBits entries).
func (t *IdemTable) alloc() uint32 {
	if n := len(t.free); n > 0 {
		slot := t.free[n-1]
		t.free = t.free[:n-1]
		return slot
	}
	if n := len(t.chunks); n == 0 || t.used == len(t.chunks[n-1]) {
		size := min(8<<n, 1<<idemChunkBits)
		t.chunks = append(t.chunks, make([]IdemEntry, size))
		t.used = 0
	}
	slot := uint32(len(t.chunks)-1)<<idemChunkBits | uint32(t.used)
	t.used++
	return slot
}

// release frees slot, or keeps it aside while its report is pending.
func (t *IdemTable) release(slot uint32) {
	if t.entry(slot).Pending.Load() {
		t.orphans = append(t.orphans, slot)
		return
	}
	t.free = append(t.free, slot)
}

// Prune drops the keys older than IdemKeepMs at now whose reports are no
// longer pending, and frees the replaced slots no longer pending. A table
// left with no key and nothing pending lets its memory go.
func (t *IdemTable) Prune(now int64) {
	for d, slot := range t.index {
		if e := t.entry(slot); now-e.At >= IdemKeepMs && !e.Pending.Load() {
			delete(t.index, d)
			t.free = append(t.free, slot)
		}
	}
	t.orphans = slices.DeleteFunc(t.orphans, func(slot uint32) bool {
		if t.entry(slot).Pending.Load() {
			return false
		}
		t.free = append(t.free, slot)
		return true
	})
	switch {
	case len(t.index) == 0 && len(t.orphans) == 0:
		*t = IdemTable{} // a map keeps its buckets when emptied
	case len(t.index)*4 < t.slots() && t.slots() > 1<<idemChunkBits:
		t.compact()
	}
}

// slots returns how many entries the table's chunks hold.
func (t *IdemTable) slots() int {
	n := t.used
	for i := 0; i < len(t.chunks)-1; i++ {
		n += len(t.chunks[i])
	}
	return n
}

// compact moves the keys to a table of their size, unless a report is
// pending (its entry must not move): a map keeps its buckets and the
// chunks their entries when most keys are dropped.
func (t *IdemTable) compact() {
	if len(t.orphans) > 0 {
		return
	}
	for _, slot := range t.index {
		if t.entry(slot).Pending.Load() {
			return
		}
	}
	var fresh IdemTable
	fresh.index = make(map[IdemDigest]uint32, len(t.index))
	for d, slot := range t.index {
		fresh.Put(d, t.entry(slot).At)
	}
	*t = fresh
}

// idemKept is one key of a snapshot: its digest and receipt time.
type idemKept struct {
	d  IdemDigest
	at int64
}

// sorted returns the keys younger than IdemKeepMs at now, in the byte
// order of their digests, so that one state always encodes to the same
// bytes.
func (t *IdemTable) sorted(now int64) []idemKept {
	out := make([]idemKept, 0, len(t.index))
	for d, slot := range t.index {
		if at := t.entry(slot).At; now-at < IdemKeepMs {
			out = append(out, idemKept{d, at})
		}
	}
	slices.SortFunc(out, func(a, b idemKept) int { return bytes.Compare(a.d[:], b.d[:]) })
	return out
}
