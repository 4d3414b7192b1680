// Package engine holds the domain state, the workspace actors and every rule
// of the contract; it knows nothing of HTTP and nothing of the log's bytes.
package engine

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"runtime/debug"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"backupmon/snapshot"
	"backupmon/state"
	"backupmon/vfs"
	"backupmon/wal"
)

// Options configures an Engine.
type Options struct {
	// Dir holds the log (Dir/wal) and the snapshots (Dir/snapshots).
	Dir string
	// Clock is the engine's clock; default SystemClock. A *DevClock makes
	// SetClock work and is restored from the log on restart.
	Clock Clock
	// Timing is the real time the engine paces its own work by: when a
	// snapshot is due, when a failed one is tried again, and the elapsed
	// times it logs. Default SystemClock; Clock cannot serve, since a
	// development clock stands still.
	Timing Clock
	// Logger receives start-up, snapshot and failure logs; default slog.Default().
	Logger *slog.Logger
	// WAL passes options (hooks, fatal handler, metrics) to the log.
	WAL wal.Options
	// Log is the log to use instead of the one in Dir/wal (a replicated
	// one); the engine closes it.
	Log Log
	// Snapshots is where snapshots go instead of Dir/snapshots (a
	// cluster's object store).
	Snapshots Snapshots
	// Stamp, when set, writes the engine's shard into the start of every
	// secret and token it makes (API keys after svc_live_, ingest tokens),
	// so that any node of a cluster can route them; it gets the characters
	// to overwrite.
	Stamp func(text []byte)
	// WorkspaceID, when set, says whether a new workspace may take an id:
	// a cluster's shard takes the ids that hash to it.
	WorkspaceID func(id ID) bool
	// FS is the file system of the log (unless WAL.FS is set) and of the
	// snapshots; default vfs.OS. Tests pass a vfs.Faulty.
	FS vfs.FS
	// SnapshotEvery takes a snapshot after at least this many log records,
	// once the log has also grown by half the size of the last snapshot
	// (so that the cost of snapshots per record stays flat as the state
	// grows); default 100000.
	SnapshotEvery uint64
	// SnapshotInterval takes a snapshot this often when anything was logged;
	// default 10 minutes.
	SnapshotInterval time.Duration
	// SnapshotsKept is how many snapshots stay on disk; default 2.
	SnapshotsKept int
	// RetentionDays drops results and resolved alerts older than this many
	// days (at each snapshot); 0 keeps everything.
	RetentionDays int
	// KeepClock leaves a development clock where Clock stands instead of
	// restoring the time the log last recorded: tests use it to let time
	// pass while the server is down.
	KeepClock bool
	// Broken, when set, says which replay errors mean a history that failed
	// its checks (a cluster's log: a gap, a foreign epoch, a damaged
	// message). The engine then opens read-only on the state read before
	// the fault (ReadOnly) instead of failing: reads answer, changes are
	// refused with ErrReadOnly, nothing is written, no timer runs.
	Broken func(error) bool
	// ReadOnly opens the engine read-only from the start, as Broken does
	// (for `backupmon cluster import`, which reads a data directory
	// without changing it).
	ReadOnly bool
	// IngestDomain is the domain of jobs' ingest addresses; default
	// DefaultIngestDomain.
	IngestDomain string
	// RawDropped is told (on its own goroutine) the references of raw
	// e-mails the unparsed list no longer holds, so the mail store can
	// delete them; nil: nobody keeps them.
	RawDropped func(refs []string)
	// RawMail reads a kept raw e-mail by its reference, for a backup (which
	// carries the raw e-mails of every unparsed entry, so that they can
	// still be re-read after a restore); an error wrapping ErrRawGone for
	// one that is not kept. nil: backups carry no raw e-mails.
	RawMail func(ref string) ([]byte, error)
	// CheckChannelURL, when set, is asked about the url of every webhook
	// and Slack channel being created, once its form is valid: an error
	// refuses the channel (400, field url, the error's text as message).
	// The server sets notify.CheckChannelURL here; nil takes every URL.
	CheckChannelURL func(rawURL string) error
}

// Engine is the whole in-memory state: a registry of workspace actors, the
// key index, the clock and the write-ahead log they all share.
type Engine struct {
	opts     Options
	readOnly error // the fault that made the engine read-only (Options.Broken); nil: not
	clock    Clock
	timing   Clock // Options.Timing
	dev      *DevClock
	log      Log
	logger   *slog.Logger

	actors sync.Map // ID → *actor
	keys   keyIndex // SHA-256 of a key secret → its actor and key id
	ingest ingestIndex
	people people
	count  atomic.Int64

	globalMu  sync.Mutex          // serialises engine-level records and workspace creation
	imports   map[state.ID][]byte // replay only: the parts of imported workspaces read so far
	globalIDs *state.IDGen

	snapMu    sync.Mutex
	lastSnap  lastSnapshot // under snapMu
	snapRetry time.Time    // under snapMu: no periodic snapshot before this, after a failed one
	stop      chan struct{}
	stopped   sync.WaitGroup
	closeOnce sync.Once
	closed    atomic.Bool
	ready     atomic.Bool

	deliv atomic.Pointer[delivererBox] // where notices go; nil until SetDeliverer
	ai    atomic.Pointer[aiBox]        // the model's asker; nil until SetAI (cmd_ai.go)
}

// Errors returned by engine commands.
var (
	// ErrFailed means the log could not make a change durable; nothing was
	// acknowledged and the process is stopping (fail-stop).
	ErrFailed = errors.New("engine: change not recorded: the log failed")
	// ErrClosed means the engine was closed; nothing was changed.
	ErrClosed = errors.New("engine: closed")
	// ErrNoDevClock means SetClock was called without a development clock.
	ErrNoDevClock = errors.New("engine: the development clock is off")
	// ErrReadOnly means the engine is read-only (its log failed its checks,
	// see Options.Broken); nothing was changed.
	ErrReadOnly = errors.New("engine: read-only: nothing is changed")
	// errOpenedReadOnly is ReadOnly()'s answer for Options.ReadOnly.
	errOpenedReadOnly = errors.New("engine: opened read-only")
)

// Open recovers the engine from dir: the newest valid snapshot, then the log
// after it. It returns an error naming the damaged file when the state cannot
// be recovered.
func Open(opts Options) (*Engine, error) {
	if opts.Clock == nil {
		opts.Clock = SystemClock{}
	}
	if opts.Timing == nil {
		opts.Timing = SystemClock{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.SnapshotEvery == 0 {
		opts.SnapshotEvery = 100000
	}
	if opts.SnapshotInterval == 0 {
		opts.SnapshotInterval = 10 * time.Minute
	}
	if opts.IngestDomain == "" {
		opts.IngestDomain = DefaultIngestDomain
	}
	if opts.SnapshotsKept < 2 {
		opts.SnapshotsKept = 2
	}
	if opts.WAL.Logger == nil {
		opts.WAL.Logger = opts.Logger
	}
	opts.FS = vfs.Or(opts.FS)
	if opts.WAL.FS == nil {
		opts.WAL.FS = opts.FS
	}
	if err := openFormat(opts.Dir); err != nil {
		return nil, fmt.Errorf("open engine %s: %w", opts.Dir, err)
	}
	e := &Engine{opts: opts, clock: opts.Clock, timing: opts.Timing, logger: opts.Logger, globalIDs: state.NewIDGen(), stop: make(chan struct{})}
	e.lastSnap.at = e.timing.Now()
	e.dev, _ = opts.Clock.(*DevClock)
	var keep time.Time
	if e.dev != nil && opts.KeepClock {
		keep = e.dev.Now()
	}

	start := e.timing.Now()
	defer relaxGC()()
	snapLSN, err := e.loadNewestSnapshot()
	if err != nil {
		return nil, fmt.Errorf("open engine %s: %w", opts.Dir, err)
	}
	from := max(snapLSN, 1)
	l := opts.Log
	if l == nil {
		wl, err := wal.Open(filepath.Join(opts.Dir, "wal"), opts.WAL)
		if err != nil {
			return nil, fmt.Errorf("open engine %s: %w", opts.Dir, err)
		}
		l = wl
	}
	if first := l.FirstLSN(); first > from {
		l.Close()
		return nil, fmt.Errorf("open engine %s: the log starts at %d but the snapshot needs it from %d", opts.Dir, first, from)
	}
	replayed, err := e.replayLog(l, from, loadWorkers())
	if errors.Is(err, errReplaySerially) {
		// Later records of other workspaces may be applied already: the
		// state and the error are a serial replay's.
		if _, err = e.loadNewestSnapshot(); err == nil {
			replayed, err = e.replayLog(l, from, 1)
		}
	}
	if err != nil {
		if opts.Broken == nil || !opts.Broken(err) {
			l.Close()
			return nil, fmt.Errorf("open engine %s: replay: %w", opts.Dir, err)
		}
		e.readOnly = err
		e.logger.Error("the log failed its checks: the shard is read-only until an operator repairs its log", "after", replayed, "err", err)
	}
	if opts.ReadOnly && e.readOnly == nil {
		e.readOnly = errOpenedReadOnly
	}
	e.log = l
	if e.readOnly == nil {
		l.Start()
	}
	if !keep.IsZero() {
		e.dev.Set(keep)
	}
	now := e.nowMs()
	e.actors.Range(func(_, v any) bool {
		a := v.(*actor)
		a.ws.rebuildTimers(now)
		go a.run()
		// The first message runs what came due while the server was down.
		a.send(func(*workspace) {})
		return true
	})
	e.logger.Info("engine recovered", "workspaces", e.count.Load(), "snapshot", snapLSN, "replayed", replayed, "elapsed", e.timing.Now().Sub(start).Round(time.Millisecond))
	if e.readOnly == nil {
		e.stopped.Add(1)
		go e.snapshotLoop()
	}
	e.ready.Store(true)
	return e, nil
}

// loadNewestSnapshot empties the state and loads the newest valid snapshot;
// it returns the snapshot's log position, 0 when there is none, or the
// error of the snapshot store.
func (e *Engine) loadNewestSnapshot() (uint64, error) {
	e.imports = nil
	lsn, err := e.snaps().Load(func(lsn uint64, r io.Reader) error {
		e.reset()
		return e.loadSnapshot(r)
	})
	switch {
	case err == nil:
		e.lastSnap.lsn = lsn
		return lsn, nil
	case errors.Is(err, snapshot.ErrNoSnapshot):
		e.reset()
		return 0, nil
	}
	return 0, err
}

// reset empties the state before a snapshot is loaded (a failed load of a
// newer snapshot may have left part of one behind).
func (e *Engine) reset() {
	e.actors.Range(func(k, _ any) bool { e.actors.Delete(k); return true })
	e.keys.clear()
	e.ingest.clear()
	e.people.emails.Clear()
	e.people.sessions.Clear()
	e.count.Store(0)
}

// snaps returns where the engine's snapshots are.
func (e *Engine) snaps() Snapshots {
	if e.opts.Snapshots != nil {
		return e.opts.Snapshots
	}
	return dirSnapshots{dir: filepath.Join(e.opts.Dir, "snapshots"), opts: snapshot.Options{Logger: e.logger, FS: e.opts.FS}}
}

// Ready reports whether recovery is done and the engine takes requests.
func (e *Engine) Ready() bool { return e.ready.Load() }

// Now returns the engine's current time.
func (e *Engine) Now() time.Time { return e.clock.Now() }

func (e *Engine) nowMs() int64 { return e.clock.Now().UnixMilli() }

// submit hands a record to the log.
func (e *Engine) submit(rec state.Record, done func(uint64, error)) { e.log.Submit(rec, done) }

// replay applies one record read from the log at start-up.
func (e *Engine) replay(rec state.Record) error {
	h := rec.Head()
	if state.ID(h.Workspace).IsZero() {
		if r, ok := rec.(*state.ClockSet); ok {
			if e.dev != nil {
				e.dev.Set(state.MsTime(r.Now))
			}
			return nil
		}
		return fmt.Errorf("engine record of type %d", rec.Type())
	}
	if r, ok := rec.(*state.ImportPart); ok {
		return e.replayImport(r)
	}
	if r, ok := rec.(*state.WorkspaceCreated); ok {
		if _, exists := e.actors.Load(state.ID(h.Workspace)); exists {
			return nil // the snapshot holds it
		}
		w, err := state.NewWorkspace(r)
		if err != nil {
			return err
		}
		e.addActor(w)
		return nil
	}
	a := e.actor(state.ID(h.Workspace))
	if a == nil {
		return fmt.Errorf("record %d of type %d for unknown workspace %s", h.Seq, rec.Type(), state.ID(h.Workspace))
	}
	return e.replayTo(a, rec, e.dropRaw)
}

// replayTo applies a record of a's workspace read from the log, unless the
// snapshot holds it; drop is told the raw mails it let go of.
func (e *Engine) replayTo(a *actor, rec state.Record, drop func(refs []string)) error {
	h := rec.Head()
	w := a.ws
	if h.Seq <= w.Seq {
		return nil // the snapshot holds it
	}
	if h.Seq != w.Seq+1 {
		return fmt.Errorf("workspace %s: record %d follows %d: records are missing", w.ID, h.Seq, w.Seq)
	}
	err := w.Apply(rec, a)
	drop(w.TakeDropped()) // the record let them go: the store may too
	// Deliveries a replayed record made wait for their timers, rebuilt
	// once recovery is done.
	clear(w.Fresh)
	w.Fresh = w.Fresh[:0]
	return err
}

// addActor makes the actor of a workspace just created or loaded, and
// indexes its keys, ingest tokens and people.
func (e *Engine) addActor(sw *state.Workspace) *actor {
	w := &workspace{Workspace: sw}
	a := newActor(e, w)
	e.actors.Store(w.ID, a)
	e.count.Add(1)
	a.indexAll()
	sw.ScheduleTrial(a)
	return a
}

func (e *Engine) actor(id state.ID) *actor {
	v, ok := e.actors.Load(id)
	if !ok {
		return nil
	}
	return v.(*actor)
}

// sortedActors returns every actor, oldest workspace first.
func (e *Engine) sortedActors() []*actor {
	var list []*actor
	e.actors.Range(func(_, v any) bool {
		list = append(list, v.(*actor))
		return true
	})
	sort.Slice(list, func(i, j int) bool { return string(list[i].ws.ID[:]) < string(list[j].ws.ID[:]) })
	return list
}

// Close stops the snapshot loop, takes a last snapshot, closes the log and
// stops the actors. Callers stop sending requests first; a command that
// still comes, during Close or after it, returns promptly with
// ReportNotRecorded, ErrClosed, ErrFailed or a zero answer.
func (e *Engine) Close() error { return e.close(closeSnapshot) }

// Abandon stops the engine as Close does, but without the last snapshot:
// for a cluster's shard whose lease was lost, whose log no longer takes
// records (another node owns them now).
func (e *Engine) Abandon() error { return e.close(closeAbandon) }

// ReadOnly returns the fault that made the engine read-only (see
// Options.Broken), or nil.
func (e *Engine) ReadOnly() error { return e.readOnly }

// How close ends: with the last snapshot, with it and the rate levels of a
// hand-over (handover.go), or without either.
const (
	closeSnapshot = iota
	closeHandOver
	closeAbandon
)

func (e *Engine) close(mode int) error {
	var err error
	e.closeOnce.Do(func() {
		close(e.stop)
		e.stopped.Wait()
		if e.readOnly != nil {
			mode = closeAbandon // a snapshot would hide the fault
		}
		if mode != closeAbandon {
			if serr := e.Snapshot(); serr != nil {
				e.logger.Error("snapshot at shutdown failed", "err", serr)
				err = serr
			}
		}
		if mode == closeHandOver && err == nil {
			err = e.logRateLevels()
		}
		if cerr := e.log.Close(); cerr != nil && err == nil {
			err = cerr
		}
		// Commands from now on are refused, and the actors stop, so the
		// state can be collected. Under globalMu no workspace is being
		// created: each actor is in the list, or is made after this, and
		// then every command to it is refused by the closed flag (its
		// goroutine stays idle).
		e.globalMu.Lock()
		e.closed.Store(true)
		var list []*actor
		e.actors.Range(func(_, v any) bool {
			list = append(list, v.(*actor))
			return true
		})
		e.globalMu.Unlock()
		// Each actor runs what is queued (a command that checked the
		// closed flag just before it was set gets its answer: the log is
		// closed, so a change fails) and then stops; later sends are
		// refused.
		for _, a := range list {
			a.stop()
		}
	})
	return err
}

// relaxGC lets the heap grow further between collections while Open loads a
// snapshot and replays the log: nearly everything allocated then stays live,
// so collections in the middle of it mark the growing state again and again
// and free little. It returns the function that restores the setting. With
// the collector off (GOGC=off) it changes nothing; a memory limit
// (GOMEMLIMIT, --memory-limit) still bounds the heap as before.
func relaxGC() (restore func()) {
	old := debug.SetGCPercent(-1)
	if old < 0 {
		debug.SetGCPercent(old)
		return func() {}
	}
	debug.SetGCPercent(old * loadGCFactor)
	return func() { debug.SetGCPercent(old) }
}

// loadGCFactor multiplies GOGC while Open loads (bench/RESULTS.md, "Restart").
const loadGCFactor = 4
