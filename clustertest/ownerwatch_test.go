package clustertest

import (
	"slices"
	"sync"
	"testing"
	"time"

	"backupmon/internal/testserver"
)

// ownerWatch reads GET /admin/v1/cluster through one node every 200 ms and
// keeps what it saw.
type ownerWatch struct {
	mu   sync.Mutex
	seen []ownersAt
	quit chan struct{}
	done sync.WaitGroup
}

type ownersAt struct {
	at     time.Time
	owners []shardOwner
}

func watchOwners(c *testserver.Client) *ownerWatch {
	w := &ownerWatch{quit: make(chan struct{})}
	w.done.Go(func() {
		for {
			var st struct{ Owners []shardOwner }
			if c.AdminCall(200, "GET", "/cluster", nil, &st) == nil {
				w.mu.Lock()
				w.seen = append(w.seen, ownersAt{time.Now(), st.Owners})
				w.mu.Unlock()
			}
			select {
			case <-w.quit:
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	})
	return w
}

func (w *ownerWatch) stop() {
	select {
	case <-w.quit:
	default:
		close(w.quit)
	}
	w.done.Wait()
}

// firstOwned returns when the watcher first saw node serve shard.
func (w *ownerWatch) firstOwned(shard int, node string) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range w.seen {
		for _, o := range s.owners {
			if o.Shard == shard && o.State == "served" && o.Owner == node {
				return s.at, true
			}
		}
	}
	return time.Time{}, false
}

// lastServed returns the last time the watcher saw o (owner and epoch)
// serve its shard.
func (w *ownerWatch) lastServed(o shardOwner) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	var last time.Time
	for _, s := range w.seen {
		if slices.Contains(s.owners, o) {
			last = s.at
		}
	}
	return last
}

// handOver returns the watcher's last view of old serving its shard and
// its first of b4 serving it.
func (w *ownerWatch) handOver(shard int, old shardOwner) (time.Time, time.Time) {
	to, _ := w.firstOwned(shard, "b4")
	return w.lastServed(old), to
}

// checkStill fails the test when the watcher saw a shard that does not
// move served by another node or in another epoch than before.
func (w *ownerWatch) checkStill(t *testing.T, before map[int]shardOwner, moving map[int]bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range w.seen {
		for _, o := range s.owners {
			if !moving[o.Shard] && o.State == "served" && o != before[o.Shard] {
				t.Errorf("at %s shard %d was %+v, before the join %+v: only the shards b4 ranks first for move", s.at.Format(time.TimeOnly), o.Shard, o, before[o.Shard])
				return
			}
		}
	}
}
