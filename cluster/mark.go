package cluster

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// A shard's mark is the last sequence of its stream that an owner saw
// acknowledged, kept in the key-value bucket bm_marks apart from the
// stream (memo 4.7). A stream found ending before its mark has lost
// acknowledged messages: a majority of NATS servers that cut a damaged
// block on restart leave the stream short, the servers agree on it, and
// a replay finds no gap, since the hole is the tail. The next owner then
// opens the shard read-only (jslog.Options.Mark) instead of serving the
// shorter history and writing new messages where the lost ones were. The
// owner writes the mark with its heartbeat (every renewEvery) and once
// more after a hand-over's last message, so a loss of the last seconds
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
	seq, _, _ := strings.Cut(string(e.Value()), " ")
	v, err := strconv.ParseUint(seq, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("read the shard's mark: %q is not one", e.Value())
	}
	return v, nil
}

// mark writes the shard's mark when its log has had messages acknowledged
// past it: "<sequence> <node> <epoch>". A failure is logged and tried again
// at the next heartbeat. The heartbeat and a hand-over may call it at once
// for one shard: both write a sequence acknowledged, and the mark may then
// stay one heartbeat behind. A node that has lost the shard writes only what
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
