package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"backupmon/state"
)

// Replaying the log after the snapshot on several cores. A workspace's
// records change its own state, applied on one of loadWorkers goroutines
// chosen by the workspace, in log order; and through its hooks the indexes
// across workspaces (keys, ingest tokens, e-mail addresses, sessions),
// which nothing reads during the replay: those changes are kept and made
// in log order (two workspaces may hold the same secret: the later record
// wins, as serially). Every other record (the development clock, a
// workspace's creation or import, a record of a workspace not loaded)
// waits until every record before it is applied, with its index changes,
// and is applied by the reading goroutine, as a serial replay does.
//
// A record that fails on a replay goroutine may already have been followed
// by later records of other workspaces: the replay then stops with
// errReplaySerially, and Open loads the snapshot again and replays one
// record after another, for the state and the error a serial replay gives.
// A failure of the log itself (a damaged record, a broken history) comes
// after every record before it is applied, as serially.

// errReplaySerially says a record failed on a replay goroutine.
var errReplaySerially = errors.New("a record failed on a replay goroutine")

// replayBatch is how many records a replay goroutine is handed at once.
const replayBatch = 256

// replayItem is one record of a loaded workspace, its actor, and its place
// among the records handed to replay goroutines.
type replayItem struct {
	a   *actor
	rec state.Record
	seq uint64
}

// indexChanges are the index changes of one lane's records, in order;
// seq is the place of the record being applied.
type indexChanges struct {
	seq  uint64
	list []indexChange
}

type indexChange struct {
	seq    uint64
	change func(e *Engine)
}

func (c *indexChanges) add(change func(e *Engine)) {
	c.list = append(c.list, indexChange{seq: c.seq, change: change})
}

// replayer hands records to replay goroutines, each workspace's to the
// same one.
type replayer struct {
	e        *Engine
	lanes    []chan []replayItem
	pending  [][]replayItem // per lane: read, not handed over yet
	changes  []indexChanges // per lane: made by what it applied, not yet in the indexes
	seq      uint64         // records handed over so far
	inFlight sync.WaitGroup // batches handed over and not yet applied
	workers  sync.WaitGroup
	failed   atomic.Bool
	mu       sync.Mutex
	dropped  []string // raw mails the records let go of: told once the replay succeeded
}

// replayLog replays l from lsn from on workers goroutines (1: each record
// as it is read) and returns how many records it read.
func (e *Engine) replayLog(l Log, from uint64, workers int) (int, error) {
	replayed := 0
	decode := func(lsn uint64, typ byte, payload []byte) (state.Record, error) {
		rec, err := state.Decode(typ, payload)
		if err != nil {
			return nil, fmt.Errorf("record %d: %w", lsn, err)
		}
		replayed++
		return rec, nil
	}
	if workers <= 1 {
		err := l.Replay(from, func(lsn uint64, typ byte, payload []byte) error {
			rec, err := decode(lsn, typ, payload)
			if err != nil {
				return err
			}
			return e.replay(rec)
		})
		return replayed, err
	}
	p := &replayer{e: e, lanes: make([]chan []replayItem, workers), pending: make([][]replayItem, workers), changes: make([]indexChanges, workers)}
	for i := range p.lanes {
		p.lanes[i] = make(chan []replayItem, 2)
		p.workers.Add(1)
		go p.run(p.lanes[i], &p.changes[i])
	}
	err := l.Replay(from, func(lsn uint64, typ byte, payload []byte) error {
		if p.failed.Load() {
			return errReplaySerially
		}
		rec, err := decode(lsn, typ, payload)
		if err != nil {
			return err
		}
		return p.add(rec)
	})
	p.flush()
	for _, lane := range p.lanes {
		close(lane)
	}
	p.workers.Wait()
	if p.failed.Load() {
		return replayed, errReplaySerially
	}
	p.changeIndexes()
	e.dropRaw(p.dropped)
	return replayed, err
}

// add applies rec, or hands it to its workspace's goroutine.
func (p *replayer) add(rec state.Record) error {
	id := state.ID(rec.Head().Workspace)
	var a *actor
	switch rec.(type) {
	case *state.ImportPart, *state.WorkspaceCreated:
	default:
		if !id.IsZero() {
			a = p.e.actor(id)
		}
	}
	if a == nil {
		p.flush()
		p.inFlight.Wait()
		if p.failed.Load() {
			return errReplaySerially
		}
		p.changeIndexes()
		return p.e.replay(rec)
	}
	lane := binary.LittleEndian.Uint64(id[8:]) % uint64(len(p.lanes))
	p.seq++
	p.pending[lane] = append(p.pending[lane], replayItem{a: a, rec: rec, seq: p.seq})
	if len(p.pending[lane]) == replayBatch {
		p.send(lane)
	}
	return nil
}

// flush hands every lane what it has read for it.
func (p *replayer) flush() {
	for lane := range p.pending {
		if len(p.pending[lane]) > 0 {
			p.send(uint64(lane))
		}
	}
}

func (p *replayer) send(lane uint64) {
	p.inFlight.Add(1)
	p.lanes[lane] <- p.pending[lane]
	p.pending[lane] = make([]replayItem, 0, replayBatch)
}

// run applies the batches of one lane until it closes; after a failure it
// only lets them go.
func (p *replayer) run(lane chan []replayItem, changes *indexChanges) {
	defer p.workers.Done()
	var dropped []string
	drop := func(refs []string) { dropped = append(dropped, refs...) }
	for batch := range lane {
		for _, it := range batch {
			if p.failed.Load() {
				break
			}
			changes.seq = it.seq
			it.a.deferred = changes
			err := p.e.replayTo(it.a, it.rec, drop)
			it.a.deferred = nil
			if err != nil {
				p.failed.Store(true)
			}
		}
		p.inFlight.Done()
	}
	p.mu.Lock()
	p.dropped = append(p.dropped, dropped...)
	p.mu.Unlock()
}

// changeIndexes makes the index changes the lanes kept, in their records'
// order. The lanes are idle.
func (p *replayer) changeIndexes() {
	for {
		next := -1
		for i := range p.changes {
			if l := p.changes[i].list; len(l) > 0 && (next < 0 || l[0].seq < p.changes[next].list[0].seq) {
				next = i
			}
		}
		if next < 0 {
			return
		}
		c := &p.changes[next]
		c.list[0].change(p.e)
		c.list[0] = indexChange{}
		c.list = c.list[1:]
	}
}
