package engine

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"backupmon/codec"
	"backupmon/state"
)

// The snapshot loop: when to take one, writing every workspace's state to
// it, and loading one at start-up.

// snapshotMagic starts the engine's part of a snapshot body; the version
// changes whenever the layout below changes.
const snapshotMagic = "BMENGINE"

// Snapshot writes every workspace's state to a new snapshot and truncates the
// log behind the oldest snapshot kept. It is safe to call at any time; calls
// are serialised.
//
// The snapshot is fuzzy: workspaces are encoded one after another while the
// others keep working. It is stamped with the log position taken before the
// first workspace is encoded; replay starts there and skips, per workspace,
// the records the snapshot already holds (by sequence number). Before the
// file is made visible, a log barrier makes sure every record it holds is
// durable.
func (e *Engine) Snapshot() error {
	if e.readOnly != nil {
		// A snapshot would let the log be truncated past its fault.
		return ErrReadOnly
	}
	e.snapMu.Lock()
	defer e.snapMu.Unlock()
	return e.snapshotLocked()
}

// snapshotIfDue takes a snapshot when one is due (snapshotDue), deciding
// under the snapshot lock so that a snapshot another caller just took
// counts.
func (e *Engine) snapshotIfDue() error {
	e.snapMu.Lock()
	defer e.snapMu.Unlock()
	now := e.timing.Now()
	if now.Before(e.snapRetry) || !e.snapshotDue(now.Sub(e.lastSnap.at)) {
		return nil
	}
	err := e.snapshotLocked()
	if err != nil {
		// The log still holds everything; try again later rather than
		// every second against a failing disk.
		e.snapRetry = e.timing.Now().Add(snapshotRetry)
	}
	return err
}

// snapshotRetry is how long the snapshot loop waits after a failed
// snapshot.
const snapshotRetry = time.Minute

func (e *Engine) snapshotLocked() error {
	start := e.timing.Now()
	from := e.log.NextLSN()
	logAt := e.log.Written()
	var size int64
	var dropped []string // raw mails retention let go of: deleted once the snapshot is durable
	path, err := e.snaps().Write(from, func(w io.Writer) error {
		cw := &countingWriter{w: w}
		bw := bufio.NewWriterSize(cw, 1<<20)
		if err := e.writeSnapshot(bw, &dropped); err != nil {
			return err
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		size = cw.n
		return e.barrier()
	})
	if err != nil {
		return fmt.Errorf("snapshot at %d: %w", from, err)
	}
	e.lastSnap = lastSnapshot{lsn: from, logAt: logAt, size: size, at: start}
	e.dropRaw(dropped)
	oldest, err := e.snaps().Prune(e.opts.SnapshotsKept)
	if err != nil {
		return fmt.Errorf("prune snapshots: %w", err)
	}
	if oldest > 0 {
		if err := e.log.TruncateFront(oldest); err != nil {
			return fmt.Errorf("truncate log before %d: %w", oldest, err)
		}
	}
	e.logger.Info("snapshot written", "path", path, "lsn", from, "bytes", size, "elapsed", e.timing.Now().Sub(start).Round(time.Millisecond))
	return nil
}

// barrier waits until every record submitted so far is durable.
func (e *Engine) barrier() error {
	if e.readOnly != nil {
		return nil // nothing is written: everything read is all there is
	}
	ch := make(chan error, 1)
	e.log.Submit(nil, func(_ uint64, err error) { ch <- err })
	return <-ch
}

// lastSnapshot is what the snapshot loop knows of the last snapshot: its
// log position, the log's size (Written) when it began and its own size
// (the next waits until the log has grown by half of it), and when it began
// (or the engine opened).
type lastSnapshot struct {
	lsn, logAt uint64
	size       int64
	at         time.Time
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// snapshotLoop takes a snapshot once SnapshotEvery records are logged and
// the log has grown by half the last snapshot's size (a snapshot costs in
// proportion to the whole state, so a large state is snapshotted less
// often per record, and a restart replays at most about half a snapshot's
// worth of log), or every SnapshotInterval when anything was logged.
func (e *Engine) snapshotLoop() {
	defer e.stopped.Done()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-e.stop:
			return
		case <-tick.C:
		}
		if err := e.snapshotIfDue(); err != nil {
			e.logger.Error("periodic snapshot failed; the log keeps every record, retrying in a minute", "err", err)
		}
	}
}

// snapshotDue reports whether the snapshot loop takes a snapshot now, the
// last one (or the start) having been since ago. The caller holds snapMu.
func (e *Engine) snapshotDue(since time.Duration) bool {
	// Records since the last snapshot (LSNs start at 1).
	pending := e.log.NextLSN() - max(e.lastSnap.lsn, 1)
	if pending == 0 {
		return false
	}
	grown := e.log.Written()-e.lastSnap.logAt >= uint64(e.lastSnap.size/2)
	return pending >= e.opts.SnapshotEvery && grown || since >= e.opts.SnapshotInterval
}

// writeSnapshot writes every workspace, pruned by the retention rules; the
// raw mails the pruning let go of are added to dropped.
func (e *Engine) writeSnapshot(bw *bufio.Writer, dropped *[]string) error {
	var b []byte
	b = append(b, snapshotMagic...)
	b = codec.AppendUvarint(b, state.SnapshotVersion)
	var dev int64
	if e.dev != nil {
		dev = e.dev.Now().UnixMilli()
	}
	b = codec.AppendVarint(b, dev)
	actors := e.sortedActors()
	b = codec.AppendUvarint(b, uint64(len(actors)))
	if _, err := bw.Write(b); err != nil {
		return err
	}
	var lenBuf [binary.MaxVarintLen64]byte
	for _, a := range actors {
		var gone []string
		blob := ask(a, func(w *workspace) []byte {
			now := e.nowMs()
			w.Prune(now, int64(e.opts.RetentionDays)*state.MsPerDay)
			gone = w.TakeDropped()
			return w.Encode(now)
		})
		*dropped = append(*dropped, gone...)
		n := binary.PutUvarint(lenBuf[:], uint64(len(blob)))
		if _, err := bw.Write(lenBuf[:n]); err != nil {
			return err
		}
		if _, err := bw.Write(blob); err != nil {
			return err
		}
	}
	return nil
}

func (e *Engine) loadSnapshot(r io.Reader) error {
	br := bufio.NewReaderSize(r, 1<<20)
	head := make([]byte, len(snapshotMagic))
	if _, err := io.ReadFull(br, head); err != nil {
		return fmt.Errorf("read snapshot header: %w", err)
	}
	if string(head) != snapshotMagic {
		return errors.New("not an engine snapshot")
	}
	version, err := binary.ReadUvarint(br)
	if err != nil {
		return fmt.Errorf("read snapshot version: %w", err)
	}
	if version < state.OldestSnapshotVersion || version > state.SnapshotVersion {
		return fmt.Errorf("snapshot version %d, this build reads %d to %d", version, state.OldestSnapshotVersion, state.SnapshotVersion)
	}
	dev, err := binary.ReadVarint(br)
	if err != nil {
		return fmt.Errorf("read snapshot clock: %w", err)
	}
	if e.dev != nil && dev != 0 {
		e.dev.Set(state.MsTime(dev))
	}
	count, err := binary.ReadUvarint(br)
	if err != nil {
		return fmt.Errorf("read workspace count: %w", err)
	}
	if err := e.loadWorkspaces(br, count, version); err != nil {
		return err
	}
	if _, err := br.ReadByte(); err != io.EOF {
		if err == nil {
			return errors.New("snapshot has bytes after its last workspace")
		}
		return fmt.Errorf("read snapshot end: %w", err)
	}
	return nil
}
