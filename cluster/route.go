package cluster

import (
	"encoding/binary"
	"encoding/hex"
	"hash/fnv"
	"sort"
	"strings"

	"backupmon/engine"
)

// MaxShards bounds a cluster's shard count: an ingest token carries its
// shard in two base32 characters.
const MaxShards = 1024

// The shard of each thing a request names:
//   - a workspace: the FNV-1a hash of its id, modulo the shard count (a
//     shard's engine takes only the new ids that hash to it);
//   - an API key: the four hex characters after svc_live_ (keys made by a
//     cluster's engine carry their shard there);
//   - an ingest token: its first two base32 characters;
//   - a session cookie: its first four hex characters.
//
// Secrets and tokens made before the cluster (an imported single node's)
// carry no shard: the directory bucket names it.

// WorkspaceShard returns the shard of a workspace id.
func WorkspaceShard(id engine.ID, shards int) int {
	h := fnv.New64a()
	h.Write(id[:])
	return int(h.Sum64() % uint64(shards))
}

// KeyShard returns the shard an API key secret carries, and false for a
// string that is not a key.
func KeyShard(secret string, shards int) (int, bool) {
	const prefix = "svc_live_"
	if len(secret) != len(prefix)+48 || !strings.HasPrefix(secret, prefix) {
		return 0, false
	}
	var b [2]byte
	if _, err := hex.Decode(b[:], []byte(secret[len(prefix):len(prefix)+4])); err != nil {
		return 0, false
	}
	return int(binary.BigEndian.Uint16(b[:])) % shards, true
}

// stampHex writes shard as the first four hex characters of text.
func stampHex(text []byte, shard int) {
	var b [2]byte
	binary.BigEndian.PutUint16(b[:], uint16(shard))
	hex.Encode(text[:4], b[:])
}

const base32Lower = "abcdefghijklmnopqrstuvwxyz234567"

// stampBase32 writes shard as the first two base32 characters of text.
func stampBase32(text []byte, shard int) {
	text[0] = base32Lower[(shard>>5)&31]
	text[1] = base32Lower[shard&31]
}

// TokenShard returns the shard an ingest token carries.
func TokenShard(token string, shards int) (int, bool) {
	if len(token) < 2 {
		return 0, false
	}
	hi, lo := strings.IndexByte(base32Lower, token[0]), strings.IndexByte(base32Lower, token[1])
	if hi < 0 || lo < 0 {
		return 0, false
	}
	return (hi<<5 | lo) % shards, true
}

// CookieShard returns the shard a session cookie's value carries.
func CookieShard(value string, shards int) (int, bool) {
	if len(value) < 4 {
		return 0, false
	}
	var b [2]byte
	if _, err := hex.Decode(b[:], []byte(value[:4])); err != nil {
		return 0, false
	}
	return int(binary.BigEndian.Uint16(b[:])) % shards, true
}

// SessionPrefix returns what a shard's dashboard puts before its session
// cookies' values.
func SessionPrefix(shard int) string {
	var t [4]byte
	stampHex(t[:], shard)
	return string(t[:])
}

// Rank returns the ids of nodes in a shard's order of preference, as
// every node of the cluster ranks the live nodes: the first is the node
// the shard moves to once it has been up 30 s. It never fails.
func Rank(shard int, nodes []string) []string { return rank(shard, nodes) }

// rank orders nodes for a shard by rendezvous hashing: every node computes
// the same order from the same set, the first is the shard's preferred
// owner, and a node joining or leaving moves only the shards it ranks
// first for.
func rank(shard int, nodes []string) []string {
	type scored struct {
		node  string
		score uint64
	}
	list := make([]scored, 0, len(nodes))
	for _, n := range nodes {
		h := fnv.New64a()
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], uint32(shard))
		h.Write(b[:])
		h.Write([]byte(n))
		list = append(list, scored{n, mix(h.Sum64())})
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].score != list[j].score {
			return list[i].score > list[j].score
		}
		return list[i].node < list[j].node
	})
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = s.node
	}
	return out
}

// mix spreads FNV's low bits (splitmix64's finalizer).
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}
