package cluster

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"backupmon/jslog"
)

// A shard's mark is the last sequence of its stream that an owner saw
// acknowledged, kept in the key-value bucket bm_marks apart from the
// stream (memo 4.7). A stream found ending before its mark has lost
// acknowledged messages: a majority of NATS servers that cut a damaged
// block on restart leave the stream short, the servers agree on it, and
// a replay finds no gap, since the hole is the tail. The next owner then
// opens the shard read-only (jslog.Options.Mark) instead of serving the
// shorter history and writing new messages where the lost ones were. The
// owner writes the mark every renewEvery (in a loop of its own: a slow
// write must not hold up the lease renewals) and once more after a
// hand-over's last message, so a loss of the last seconds
// before a crash goes unseen; the rest does not.

// readMark returns a shard's mark: 0 when it has none yet.
func (n *Node) readMark(ctx context.Context, shard int) (uint64, error) {
	e, err := n.marks.Get(ctx, shardKey(shard))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read the shard's mark: %w", err)
	}
	return parseMark(e.Value())
}

// parseMark returns the sequence of a mark's value ("<sequence> <node>
// <epoch>"), or an error quoting a value that is not one.
func parseMark(value []byte) (uint64, error) {
	seq, _, _ := strings.Cut(string(value), " ")
	v, err := strconv.ParseUint(seq, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("read the shard's mark: %q is not one", value)
	}
	return v, nil
}

// markAll writes the mark of every shard the node owns.
func (n *Node) markAll() {
	for _, h := range n.hostedList() {
		n.mark(h)
	}
}

// mark writes the shard's mark when its log has had messages acknowledged
// past it: "<sequence> <node> <epoch>". A failure is logged and tried again
// at the next round. The mark loop and a hand-over may call it at once
// for one shard: both write a sequence acknowledged, and the mark may then
// stay one round behind. A node that has lost the shard writes only what
// its log saw acknowledged, never more than the stream holds.
func (n *Node) mark(h *hosted) {
	if h.log == nil {
		return
	}
	acked := h.log.Acked()
	if acked <= h.marked.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), renewEvery)
	defer cancel()
	value := strconv.FormatUint(acked, 10) + " " + n.cfg.NodeID + " " + strconv.FormatUint(h.epoch, 10)
	if _, err := n.marks.Put(ctx, shardKey(h.shard), []byte(value)); err != nil {
		n.log.Warn("write the shard's mark", "shard", h.shard, "err", err)
		return
	}
	h.marked.Store(acked)
}

// LostTail is what AcceptLoss found of a shard: where its stream ends,
// and its mark (0: none).
type LostTail struct {
	Shard           int
	StreamEnd, Mark uint64
}

// Lost reports whether the stream ends before the mark.
func (l LostTail) Lost() bool { return l.Mark > l.StreamEnd }

// AcceptLoss accepts the loss of a shard whose stream ends before its
// mark (served read-only since): it deletes the mark, then the shard's
// lease, so that its owner lets the shard go at its next renewal and the
// next owner serves the stream as it is. A shard that lost nothing is left
// as it is. It returns what it found, or an error when the cluster cannot
// be reached, shard is not one of its shards, or the mark changed
// meanwhile.
func AcceptLoss(urls string, creds Credentials, shard int) (LostTail, error) {
	return lostTail(urls, creds, shard, true)
}

// LostTailOf returns where a shard's stream ends and its mark, changing
// nothing; the errors are AcceptLoss's.
func LostTailOf(urls string, creds Credentials, shard int) (LostTail, error) {
	return lostTail(urls, creds, shard, false)
}

// lostTail reads a shard's stream end and mark and, when accept is set and
// the stream ends before the mark, accepts the loss.
func lostTail(urls string, creds Credentials, shard int, accept bool) (LostTail, error) {
	found := LostTail{Shard: shard}
	nc, err := nats.Connect(urls, append(creds.natsOptions(), nats.Name("backupmon accept-loss"), nats.IgnoreDiscoveredServers())...)
	if err != nil {
		return found, connectError(urls, err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return found, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	shards, err := setUpShards(ctx, js)
	if err != nil {
		return found, err
	}
	if shard < 0 || shard >= shards {
		return found, fmt.Errorf("the cluster has shards 0 to %d, not %d", shards-1, shard)
	}
	st, err := js.Stream(ctx, StreamName(shard))
	if err != nil {
		return found, fmt.Errorf("stream %s: %w", StreamName(shard), err)
	}
	// The leader's word: a replica may answer with its own, stale end.
	if found.StreamEnd, err = jslog.LeaderEnd(ctx, st, Subject(shard)); err != nil {
		return found, fmt.Errorf("stream %s: %w", StreamName(shard), err)
	}
	marks, err := js.KeyValue(ctx, marksBucket)
	if err != nil {
		return found, err
	}
	e, err := marks.Get(ctx, shardKey(shard))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return found, nil
	}
	if err != nil {
		return found, fmt.Errorf("read the shard's mark: %w", err)
	}
	if found.Mark, err = parseMark(e.Value()); err != nil || !found.Lost() || !accept {
		return found, err
	}
	if err := marks.Delete(ctx, shardKey(shard), jetstream.LastRevision(e.Revision())); err != nil {
		return found, fmt.Errorf("delete the shard's mark: %w", err)
	}
	owners, err := js.KeyValue(ctx, ownersBucket)
	if err == nil {
		err = owners.Delete(ctx, shardKey(shard))
	}
	if err != nil {
		return found, fmt.Errorf("the mark is deleted; release the shard's lease: %w (restart its owner instead)", err)
	}
	return found, nil
}
