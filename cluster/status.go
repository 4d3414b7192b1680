package cluster

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"backupmon/jsonx"
)

// Status is the cluster as one node sees it: its nodes, and each shard's
// owner (the admin API's GET /admin/v1/cluster and `backupmon admin
// cluster`).
type Status struct {
	Cluster  string        `json:"cluster"` // the cluster's id, as nodes keep it in shards/cluster.id
	Node     string        `json:"node"`    // the node that answered
	Shards   int           `json:"shards"`
	Replicas int           `json:"replicas"`
	Nodes    []NodeStatus  `json:"nodes"`
	Owners   []ShardStatus `json:"owners"`
}

// NodeStatus is a live node (its heartbeat is in the nodes bucket).
type NodeStatus struct {
	ID       string    `json:"id"`
	LastBeat time.Time `json:"lastBeat"`
	// Peer is where the node takes requests forwarded node to node over TCP; empty:
	// over NATS only.
	Peer   string `json:"peer,omitempty"`
	Shards []int  `json:"shards"`
}

// ShardStatus is a shard and its owner: state "served" (owner and epoch
// set), "unowned" (no node holds its lease: it is being taken over), or
// "broken" (its history failed its checks; Problem says how).
type ShardStatus struct {
	Shard   int    `json:"shard"`
	State   string `json:"state"`
	Owner   string `json:"owner,omitempty"`
	Epoch   uint64 `json:"epoch,omitempty"`
	Problem string `json:"problem,omitempty"`
}

// Status reads the cluster's nodes and leases; it returns an error when
// NATS does not answer.
func (n *Node) Status() (Status, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st := Status{Cluster: n.clusterID, Node: n.cfg.NodeID, Shards: n.shards, Replicas: n.cfg.Replicas, Nodes: []NodeStatus{}}
	ids, err := n.nodes.Keys(ctx)
	if err != nil && !errors.Is(err, jetstream.ErrNoKeysFound) {
		return st, err
	}
	sort.Strings(ids)
	byID := map[string]*NodeStatus{}
	for _, id := range ids {
		ns := NodeStatus{ID: id, Shards: []int{}}
		if e, err := n.nodes.Get(ctx, id); err == nil {
			if at, peer, ok := parseHeartbeat(e.Value()); ok {
				ns.LastBeat, ns.Peer = at, peer
			}
		}
		st.Nodes = append(st.Nodes, ns)
	}
	for i := range st.Nodes {
		byID[st.Nodes[i].ID] = &st.Nodes[i]
	}
	for s := range n.shards {
		ss := ShardStatus{Shard: s, State: "unowned"}
		if e, err := n.owners.Get(ctx, shardKey(s)); err == nil {
			owner, epoch, _ := strings.Cut(string(e.Value()), " ")
			ss.State, ss.Owner = "served", owner
			ss.Epoch, _ = strconv.ParseUint(epoch, 10, 64)
			if ss.Epoch == 0 {
				ss.Epoch = e.Revision() // the lease's first revision is the epoch
			}
			if ns := byID[owner]; ns != nil {
				ns.Shards = append(ns.Shards, s)
			}
		} else if !errors.Is(err, jetstream.ErrKeyNotFound) {
			return st, err
		}
		if e, err := n.config.Get(ctx, brokenKey(s)); err == nil {
			ss.State, ss.Problem = "broken", string(e.Value())
		}
		st.Owners = append(st.Owners, ss)
	}
	return st, nil
}

// StatusJSON returns Status as JSON, for the admin API.
func (n *Node) StatusJSON() ([]byte, error) {
	st, err := n.Status()
	if err != nil {
		return nil, err
	}
	return jsonx.Marshal(st)
}

func brokenKey(shard int) string { return "broken." + shardKey(shard) }

// noteBroken records in the cluster's settings whether a shard the node
// opened is read-only because its history failed its checks (problem), or
// no longer is (nil: its log was repaired), so that every node reports it;
// and counts the node's broken shards in its metrics.
func (n *Node) noteBroken(shard int, problem error) {
	n.mu.Lock()
	_, was := n.broken[shard]
	if problem != nil {
		n.broken[shard] = problem
	} else {
		delete(n.broken, shard)
	}
	count := len(n.broken)
	n.mu.Unlock()
	n.cfg.Metrics.shardBroken(count)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var err error
	switch {
	case problem != nil:
		n.log.Error("shard read-only: its log failed its checks", "shard", shard, "err", problem)
		_, err = n.config.Put(ctx, brokenKey(shard), []byte(problem.Error()))
	case was || n.brokenInKV(ctx, shard):
		err = n.config.Delete(ctx, brokenKey(shard))
	}
	if err != nil {
		n.log.Warn("record a broken shard", "shard", shard, "err", err)
	}
}

func (n *Node) brokenInKV(ctx context.Context, shard int) bool {
	_, err := n.config.Get(ctx, brokenKey(shard))
	return err == nil
}
