package cluster

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"

	"backupmon/engine"
	"backupmon/jsonx"
)

// The dashboard's workspace switcher on a cluster (dashboard.Elsewhere): a
// technician's workspaces lie on several shards, each shard's dashboard
// knows only its own, and the browser's sessions of the others are checked
// by the owners of the shards their cookies name.

// Memberships returns the workspaces of every shard whose users include
// email, by name, as one node's engine lists them; a shard that gives no
// answer adds none.
func (n *Node) Memberships(email string) []engine.Membership {
	var out []engine.Membership
	for _, answer := range n.askAll(call{Op: "memberships", Email: email}) {
		var list []engine.Membership
		if jsonx.Unmarshal(answer, &list) == nil {
			out = append(out, list...)
		}
	}
	slices.SortStableFunc(out, func(a, b engine.Membership) int {
		if c := strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// SessionWorkspace returns the workspace of the session whose cookie value
// is value, asked of the owner of the shard the value names (only the
// session's hash leaves this node); ok is false for a session unknown,
// ended or expired there, or a shard that gives no answer.
func (n *Node) SessionWorkspace(value string) (engine.Membership, bool) {
	shard, ok := n.cookieShard(value)
	if !ok {
		return engine.Membership{}, false
	}
	hash := sha256.Sum256([]byte(value))
	var m engine.Membership
	if jsonx.Unmarshal(n.askOne(shard, call{Op: "session", Hash: hex.EncodeToString(hash[:])}), &m) != nil || m.ID == "" {
		return engine.Membership{}, false
	}
	return m, true
}
