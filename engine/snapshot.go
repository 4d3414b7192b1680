package engine

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"backupmon/codec"
	"backupmon/snapshot"
)

// snapshotMagic starts the engine's part of a snapshot body; the version
// changes whenever the layout below changes.
const (
	snapshotMagic   = "BMENGINE"
	snapshotVersion = 6
)

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
	if time.Now().Before(e.snapRetry) || !e.snapshotDue(time.Since(e.lastSnap.at)) {
		return nil
	}
	err := e.snapshotLocked()
	if err != nil {
		// The log still holds everything; try again later rather than
		// every second against a failing disk.
		e.snapRetry = time.Now().Add(snapshotRetry)
	}
	return err
}

// snapshotRetry is how long the snapshot loop waits after a failed
// snapshot.
const snapshotRetry = time.Minute

func (e *Engine) snapshotLocked() error {
	start := time.Now()
	from := e.log.NextLSN()
	logAt := e.log.Written()
	var size int64
	var dropped []string // raw mails retention let go of: deleted once the snapshot is durable
	path, err := e.snaps().Write(e.snapDir(), from, func(w io.Writer) error {
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
	oldest, err := e.snaps().Prune(e.snapDir(), e.opts.SnapshotsKept)
	if err != nil {
		return fmt.Errorf("prune snapshots: %w", err)
	}
	if oldest > 0 {
		if err := e.log.TruncateFront(oldest); err != nil {
			return fmt.Errorf("truncate log before %d: %w", oldest, err)
		}
	}
	e.logger.Info("snapshot written", "path", path, "lsn", from, "bytes", size, "elapsed", time.Since(start).Round(time.Millisecond))
	return nil
}

// barrier waits until every record submitted so far is durable.
func (e *Engine) barrier() error {
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
	b = codec.AppendUvarint(b, snapshotVersion)
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
			w.prune(now, int64(e.opts.RetentionDays)*msPerDay)
			gone = w.takeDropped()
			return w.encode(now)
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
	if version != snapshotVersion && version != 5 {
		return fmt.Errorf("snapshot version %d, this build reads %d (and 5)", version, snapshotVersion)
	}
	dev, err := binary.ReadVarint(br)
	if err != nil {
		return fmt.Errorf("read snapshot clock: %w", err)
	}
	if e.dev != nil && dev != 0 {
		e.dev.Set(msTime(dev))
	}
	count, err := binary.ReadUvarint(br)
	if err != nil {
		return fmt.Errorf("read workspace count: %w", err)
	}
	var blob []byte
	for i := uint64(0); i < count; i++ {
		n, err := binary.ReadUvarint(br)
		if err != nil {
			return fmt.Errorf("read workspace %d: %w", i, err)
		}
		if n > 1<<40 {
			return fmt.Errorf("workspace %d: length %d is not plausible", i, n)
		}
		if uint64(cap(blob)) < n {
			blob = make([]byte, n)
		}
		blob = blob[:n]
		if _, err := io.ReadFull(br, blob); err != nil {
			return fmt.Errorf("read workspace %d: %w", i, err)
		}
		w, err := decodeWorkspace(blob, version)
		if err != nil {
			return fmt.Errorf("decode workspace %d: %w", i, err)
		}
		e.addActor(w)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		if err == nil {
			return errors.New("snapshot has bytes after its last workspace")
		}
		return fmt.Errorf("read snapshot end: %w", err)
	}
	return nil
}

// idemKeepMs is how long idempotency keys are kept (decisions.md 3).
const idemKeepMs = 30 * msPerDay

// encode returns the workspace's whole state.
func (w *workspace) encode(now int64) []byte {
	b := make([]byte, 0, 4096)
	b = append(b, w.id[:]...)
	b = codec.AppendUvarint(b, w.seq)
	b = codec.AppendString(b, w.name)
	b = codec.AppendString(b, w.timeZone)
	b = codec.AppendString(b, w.plan)
	b = codec.AppendString(b, w.status)
	b = codec.AppendVarint(b, w.trialEndsAt)
	b = codec.AppendVarint(b, w.createdAt)
	b = codec.AppendVarint(b, w.restMonth)
	b = codec.AppendVarint(b, w.restMonthCount)

	b = codec.AppendUvarint(b, uint64(len(w.sources)))
	for _, s := range w.sources {
		b = codec.AppendString(b, s)
	}
	b = codec.AppendUvarint(b, uint64(len(w.clients)))
	for _, c := range w.clients {
		b = append(b, c.id[:]...)
		b = codec.AppendString(b, c.name)
		b = codec.AppendString(b, c.status)
		b = codec.AppendVarint(b, c.createdAt)
		b = codec.AppendVarint(b, c.offAt)
		b = codec.AppendUvarint(b, c.offSeq)
	}
	b = codec.AppendUvarint(b, uint64(len(w.devices)))
	for _, d := range w.devices {
		b = append(b, d.id[:]...)
		b = append(b, d.clientID[:]...)
		b = codec.AppendString(b, d.name)
		b = codec.AppendString(b, d.typ)
		b = codec.AppendString(b, d.hostname)
	}
	b = codec.AppendUvarint(b, uint64(len(w.jobs)))
	for _, j := range w.jobs {
		b = j.encode(b, now)
	}
	b = codec.AppendUvarint(b, uint64(len(w.keys)))
	for _, k := range w.keys {
		b = append(b, k.id[:]...)
		b = codec.AppendString(b, k.name)
		b = codec.AppendString(b, k.typ)
		b = codec.AppendString(b, k.prefix)
		b = append(b, k.hash[:]...)
		b = append(b, k.scopes)
		b = codec.AppendBool(b, k.readWrite)
		b = codec.AppendVarint(b, k.createdAt)
		b = codec.AppendVarint(b, k.expiresAt)
		b = codec.AppendBool(b, k.firstUsed)
		b = codec.AppendVarint(b, k.lastUsed.Load())
	}
	b = codec.AppendUvarint(b, uint64(len(w.alertLog)))
	for _, a := range w.alertLog {
		b = append(b, a.id[:]...)
		b = append(b, a.job.id[:]...)
		b = append(b, a.typ, a.severity, a.status)
		b = codec.AppendString(b, a.summary)
		b = codec.AppendVarint(b, a.createdAt)
		b = codec.AppendVarint(b, a.acknowledgedAt)
		b = codec.AppendVarint(b, a.snoozedUntil)
		b = codec.AppendVarint(b, a.resolvedAt)
		b = codec.AppendVarint(b, a.escChecked)
		b = codec.AppendBool(b, a.ai != nil)
		if a.ai != nil {
			b = codec.AppendString(b, a.ai.cause)
			b = codec.AppendString(b, a.ai.confidence)
			b = codec.AppendString(b, a.ai.category)
		}
	}
	b = codec.AppendUvarint(b, uint64(len(w.activity)))
	for _, a := range w.activity {
		b = append(b, a.id[:]...)
		b = codec.AppendVarint(b, a.at)
		b = codec.AppendString(b, a.typ)
		b = codec.AppendString(b, a.actor)
		b = append(b, a.keyID[:]...)
		b = codec.AppendString(b, a.keyName)
		b = append(b, a.alertID[:]...)
		b = append(b, a.jobID[:]...)
		b = codec.AppendString(b, a.note)
		b = append(b, a.subjectID[:]...)
		b = codec.AppendString(b, a.subjectName)
	}
	b = w.encodeNotifications(b)
	b = w.encodeUnparsed(b)
	return w.encodePeople(b, now)
}

func (j *job) encode(b []byte, now int64) []byte {
	b = append(b, j.id[:]...)
	b = append(b, j.client.id[:]...)
	b = append(b, j.device.id[:]...)
	b = codec.AppendString(b, j.name)
	b = codec.AppendString(b, j.vendor)
	b = codec.AppendVarint(b, j.createdAt)
	b = codec.AppendVarint(b, j.intervalMinutes)
	b = codec.AppendVarint(b, j.graceMinutes)
	b = append(b, j.expectedDays)
	b = codec.AppendFloat(b, j.slaTarget)
	b = codec.AppendBool(b, j.paused)
	b = codec.AppendVarint(b, j.pausedUntil)
	b = codec.AppendVarint(b, j.pausedAt)
	b = append(b, j.lastResult)
	b = codec.AppendVarint(b, j.lastReportAt)
	b = codec.AppendVarint(b, j.lastReceivedAt)
	b = codec.AppendVarint(b, j.lastSuccessAt)
	b = codec.AppendVarint(b, j.lastFailureAt)
	b = codec.AppendUvarint(b, j.pausedSeq)
	b = codec.AppendUvarint(b, j.lastReportSeq)
	b = codec.AppendVarint(b, int64(j.failureStreak))
	b = codec.AppendVarint(b, j.dueBase)
	b = codec.AppendString(b, j.ingestToken)
	b = codec.AppendVarint(b, j.missedDue)

	b = codec.AppendUvarint(b, uint64(len(j.results)))
	var prev int64
	for i := range j.results {
		r := &j.results[i]
		b = append(b, r.id[:]...)
		b = codec.AppendVarint(b, r.receivedAt-prev)
		prev = r.receivedAt
		b = codec.AppendVarint(b, r.completedAt-r.receivedAt)
		b = codec.AppendVarint(b, r.sizeBytes)
		b = codec.AppendVarint(b, int64(r.duration))
		b = append(b, r.status)
		b = codec.AppendUvarint(b, uint64(r.source))
	}
	var keep int
	for _, ent := range j.idem {
		if now-ent.at < idemKeepMs {
			keep++
		}
	}
	b = codec.AppendUvarint(b, uint64(keep))
	for k, ent := range j.idem {
		if now-ent.at < idemKeepMs {
			b = codec.AppendString(b, k)
			b = codec.AppendVarint(b, ent.at)
		}
	}
	return b
}

// decodeWorkspace rebuilds a workspace from encode's bytes, written by
// snapshot format version (5 or snapshotVersion).
func decodeWorkspace(blob []byte, version uint64) (*workspace, error) {
	r := codec.NewReader(blob)
	w := &workspace{
		ids: newIDGen(), clients: map[ID]*client{}, jobs: map[ID]*job{}, devices: map[ID]*device{},
		keys: map[ID]*apiKey{}, alerts: map[ID]*alert{}, sourceIx: map[string]int{},
		deliveryIx: map[ID]*delivery{}, users: map[ID]*user{}, sessions: map[ID]*session{},
	}
	r.Fixed(w.id[:])
	w.seq = r.Uvarint()
	w.name, w.timeZone, w.plan, w.status = r.String(), r.String(), r.String(), r.String()
	w.trialEndsAt, w.createdAt = r.Varint(), r.Varint()
	w.restMonth, w.restMonthCount = r.Varint(), r.Varint()
	if r.Err() != nil {
		return nil, r.Err()
	}
	loc, err := time.LoadLocation(w.timeZone)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: time zone %q: %w", w.id, w.timeZone, err)
	}
	w.loc = loc
	w.ids.observe(w.id)

	n := count(r)
	for i := 0; i < n; i++ {
		s := r.String()
		w.sourceIx[s] = len(w.sources)
		w.sources = append(w.sources, s)
	}
	n = count(r)
	for i := 0; i < n && r.Err() == nil; i++ {
		c := &client{jobs: map[ID]*job{}}
		r.Fixed(c.id[:])
		c.name, c.status = r.String(), r.String()
		c.createdAt, c.offAt = r.Varint(), r.Varint()
		if version > 5 {
			c.offSeq = r.Uvarint()
		}
		w.clients[c.id] = c
		w.ids.observe(c.id)
	}
	n = count(r)
	for i := 0; i < n && r.Err() == nil; i++ {
		d := &device{}
		r.Fixed(d.id[:])
		r.Fixed(d.clientID[:])
		d.name, d.typ, d.hostname = r.String(), r.String(), r.String()
		w.devices[d.id] = d
		w.ids.observe(d.id)
	}
	n = count(r)
	for i := 0; i < n && r.Err() == nil; i++ {
		if err := w.decodeJob(r, version); err != nil {
			return nil, err
		}
	}
	if version == 5 {
		w.orderOffAndReports()
	}
	n = count(r)
	for i := 0; i < n && r.Err() == nil; i++ {
		k := &apiKey{}
		r.Fixed(k.id[:])
		k.name, k.typ, k.prefix = r.String(), r.String(), r.String()
		k.source = "api:" + k.prefix
		r.Fixed(k.hash[:])
		k.scopes = r.Byte()
		k.readWrite = r.Bool()
		k.createdAt, k.expiresAt = r.Varint(), r.Varint()
		k.firstUsed = r.Bool()
		k.lastUsed.Store(r.Varint())
		w.keys[k.id] = k
		w.ids.observe(k.id)
	}
	n = count(r)
	w.alertLog = make([]*alert, 0, n)
	for i := 0; i < n && r.Err() == nil; i++ {
		a := &alert{}
		var jobID ID
		r.Fixed(a.id[:])
		r.Fixed(jobID[:])
		a.typ, a.severity, a.status = r.Byte(), r.Byte(), r.Byte()
		a.summary = r.String()
		a.createdAt, a.acknowledgedAt, a.snoozedUntil, a.resolvedAt = r.Varint(), r.Varint(), r.Varint(), r.Varint()
		a.escChecked = r.Varint()
		if r.Bool() {
			a.ai = &aiNote{cause: r.String(), confidence: r.String(), category: r.String()}
		}
		if r.Err() != nil {
			break
		}
		a.job = w.jobs[jobID]
		if a.job == nil {
			return nil, fmt.Errorf("alert %s of unknown job %s", a.id, jobID)
		}
		if a.status != alertResolved {
			a.job.alert = a
		}
		w.alerts[a.id] = a
		w.alertLog = append(w.alertLog, a)
		w.ids.observe(a.id)
	}
	n = count(r)
	w.activity = make([]activity, 0, n)
	for i := 0; i < n && r.Err() == nil; i++ {
		var a activity
		r.Fixed(a.id[:])
		a.at = r.Varint()
		a.typ, a.actor = r.String(), r.String()
		r.Fixed(a.keyID[:])
		a.keyName = r.String()
		r.Fixed(a.alertID[:])
		r.Fixed(a.jobID[:])
		a.note = r.String()
		r.Fixed(a.subjectID[:])
		a.subjectName = r.String()
		w.activity = append(w.activity, a)
		w.ids.observe(a.id)
	}
	if err := w.decodeNotifications(r); err != nil {
		return nil, fmt.Errorf("workspace %s: %w", w.id, err)
	}
	w.decodeUnparsed(r)
	if err := w.decodePeople(r); err != nil {
		return nil, fmt.Errorf("workspace %s: %w", w.id, err)
	}
	if err := r.Done(); err != nil {
		return nil, fmt.Errorf("workspace %s: %w", w.id, err)
	}
	w.rebuildIndexes()
	return w, nil
}

func (w *workspace) decodeJob(r *codec.Reader, version uint64) error {
	j := &job{}
	var clientID, deviceID ID
	r.Fixed(j.id[:])
	r.Fixed(clientID[:])
	r.Fixed(deviceID[:])
	j.name = r.String()
	j.setVendor(r.String())
	j.createdAt, j.intervalMinutes, j.graceMinutes = r.Varint(), r.Varint(), r.Varint()
	j.expectedDays = r.Byte()
	j.slaTarget = r.Float()
	j.paused = r.Bool()
	j.pausedUntil, j.pausedAt = r.Varint(), r.Varint()
	j.lastResult = r.Byte()
	j.lastReportAt, j.lastReceivedAt, j.lastSuccessAt, j.lastFailureAt = r.Varint(), r.Varint(), r.Varint(), r.Varint()
	if version > 5 {
		j.pausedSeq, j.lastReportSeq = r.Uvarint(), r.Uvarint()
	}
	j.failureStreak = r.Int()
	j.dueBase = r.Varint()
	j.ingestToken = r.String()
	j.missedDue = r.Varint()
	n := count(r)
	j.results = make([]result, n)
	var prev int64
	for i := 0; i < n && r.Err() == nil; i++ {
		res := &j.results[i]
		r.Fixed(res.id[:])
		res.receivedAt = prev + r.Varint()
		prev = res.receivedAt
		res.completedAt = res.receivedAt + r.Varint()
		res.sizeBytes = r.Varint()
		res.duration = int32(r.Varint())
		res.status = r.Byte()
		res.source = uint16(r.Uvarint())
	}
	if n > 0 {
		w.ids.observe(j.results[n-1].id)
	}
	n = count(r)
	if n > 0 {
		j.idem = make(map[string]*idemEntry, n)
	}
	for i := 0; i < n && r.Err() == nil; i++ {
		k := r.String()
		j.idem[k] = &idemEntry{at: r.Varint()}
	}
	if r.Err() != nil {
		return r.Err()
	}
	c := w.clients[clientID]
	d := w.devices[deviceID]
	if c == nil || d == nil {
		return fmt.Errorf("job %s: unknown client %s or device %s", j.id, clientID, deviceID)
	}
	j.client, j.device = c, d
	d.jobs++
	c.jobs[j.id] = j
	w.jobs[j.id] = j
	w.ids.observe(j.id)
	return nil
}

// count reads a collection length, refusing one larger than the bytes left
// (each element takes at least one byte).
func count(r *codec.Reader) int {
	n := r.Uvarint()
	if n > uint64(r.Len()) {
		r.Fail(fmt.Errorf("%w: count %d exceeds the %d bytes left", codec.ErrShort, n, r.Len()))
		return 0
	}
	return int(n)
}

func (e *Engine) snaps() snapshot.Options {
	return snapshot.Options{Logger: e.logger, FS: e.opts.FS}
}
