package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"backupmon/snapshot"
)

// objectSnapshots keeps one shard's snapshots in the cluster's object store,
// in the snapshot file format, as objects named s<NNN>/<position>; it is
// the shard engine's snapshot store (engine.Snapshots).
type objectSnapshots struct {
	store  *objects
	prefix string
	logger *slog.Logger
	stall  time.Duration // stallWait; shorter in tests

	mu      sync.Mutex
	until   time.Time          // set by hurry: no write goes on past it
	writing context.CancelFunc // the write in progress, if any
}

func newObjectSnapshots(store *objects, shard int, logger *slog.Logger) *objectSnapshots {
	return &objectSnapshots{store: store, prefix: fmt.Sprintf("s%03d/", shard), logger: logger, stall: stallWait}
}

// stallWait bounds each wait of a snapshot's load on the object store: the
// listing, the start of a read, and every next bytes of it. A load that
// gets nothing for that long fails, and the shard's open is tried again.
// Without it, an object store that lost its quorum held the shard's open,
// and its owner's assignments behind it, for the load's whole bound of
// 10 minutes; a fixed bound short enough would cut a big snapshot read
// steadily.
const stallWait = 30 * time.Second

// loadWait bounds a snapshot's whole load or write, as before the stall's
// bound.
const loadWait = 10 * time.Minute

func (o *objectSnapshots) name(lsn uint64) string { return fmt.Sprintf("%s%020d", o.prefix, lsn) }

// list returns the positions of the shard's snapshots, newest first.
func (o *objectSnapshots) list(ctx context.Context) ([]uint64, error) {
	infos, err := o.store.List(ctx)
	if errors.Is(err, jetstream.ErrNoObjectsFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var lsns []uint64
	for _, info := range infos {
		if rest, ok := strings.CutPrefix(info.Name, o.prefix); ok && !info.Deleted {
			if lsn, err := strconv.ParseUint(rest, 10, 64); err == nil {
				lsns = append(lsns, lsn)
			}
		}
	}
	sort.Slice(lsns, func(i, j int) bool { return lsns[i] > lsns[j] })
	return lsns, nil
}

// Load tries the shard's snapshots newest first, as snapshot.Load does with
// files: fn gets each one's checked body until one is accepted.
func (o *objectSnapshots) Load(fn func(lsn uint64, r io.Reader) error) (uint64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), loadWait)
	defer cancel()
	lctx, lcancel := context.WithTimeout(ctx, o.stall)
	lsns, err := o.list(lctx)
	lcancel()
	if err != nil && lctx.Err() != nil {
		return 0, fmt.Errorf("load snapshot of %s: no listing from the object store within %v: %w", o.prefix, o.stall, err)
	}
	if err != nil {
		return 0, fmt.Errorf("load snapshot of %s: %w", o.prefix, err)
	}
	if len(lsns) == 0 {
		return 0, fmt.Errorf("load snapshot of %s: %w", o.prefix, snapshot.ErrNoSnapshot)
	}
	var errs []error
	for _, lsn := range lsns {
		err := o.loadOne(ctx, lsn, fn)
		if err == nil {
			o.logger.Info("snapshot loaded", "object", o.name(lsn), "lsn", lsn)
			return lsn, nil
		}
		o.logger.Warn("snapshot rejected, trying an older one", "object", o.name(lsn), "err", err)
		errs = append(errs, fmt.Errorf("%s: %w", o.name(lsn), err))
	}
	return 0, fmt.Errorf("load snapshot of %s: none of %d valid: %w", o.prefix, len(errs), errors.Join(errs...))
}

// loadOne reads one snapshot through a pipe, fed from the object store by
// a goroutine of its own, and fails it once o.stall passes without bytes.
// nats.go's object reader cannot be interrupted (its Close waits for a
// blocked Read, which waits until ctx's deadline), so a stalled feeder is
// left behind, to end at that deadline.
func (o *objectSnapshots) loadOne(ctx context.Context, lsn uint64, fn func(lsn uint64, r io.Reader) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pr, pw := io.Pipe()
	stall := time.AfterFunc(o.stall, func() {
		cancel()
		pw.CloseWithError(fmt.Errorf("no bytes from the object store for %v", o.stall))
	})
	defer stall.Stop()
	res, err := o.store.Get(ctx, o.name(lsn))
	// The listing saw the object, but its info is read from any of the
	// stream's replicas, and one may not hold it yet: under the race
	// detector, 3–5 reads in 100 right after a write missed it, which
	// would load the snapshot before and replay more.
	for deadline := time.Now().Add(missedWait); errors.Is(err, jetstream.ErrObjectNotFound) && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		res, err = o.store.Get(ctx, o.name(lsn))
	}
	if err != nil {
		if !stall.Stop() {
			return fmt.Errorf("no answer from the object store within %v: %w", o.stall, err)
		}
		return err
	}
	go func() {
		defer res.Close()
		_, err := io.Copy(pw, progressReader{res, func() { stall.Reset(o.stall) }})
		pw.CloseWithError(err)
	}()
	err = snapshot.Decode(pr, lsn, fn)
	pr.CloseWithError(errors.New("snapshot read")) // stops the feeder if Decode stopped early
	return err
}

// missedWait bounds how long a load reads again an object its listing
// showed but its read did not find.
const missedWait = time.Second

// progressReader calls progress after each read that returned bytes.
type progressReader struct {
	r        io.Reader
	progress func()
}

func (p progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.progress()
	}
	return n, err
}

// Write streams a new snapshot into the store; the object appears whole or
// not at all (see objects.Put). It fails when a chunk's acknowledgement
// does not come within the store's wait (stallWait), and after loadWait in
// all, or at the deadline hurry set.
//
// Before that bound, a write to an object store that had lost its quorum
// waited its whole 10 minutes. That holds the engine's snapshot lock, and
// the engine's close waits for it: a shard dropped meanwhile held the
// loop that renews the node's other leases.
func (o *objectSnapshots) Write(lsn uint64, fill func(w io.Writer) error) (string, error) {
	o.mu.Lock()
	bound := loadWait
	if !o.until.IsZero() {
		bound = time.Until(o.until)
	}
	if bound <= 0 {
		o.mu.Unlock()
		return "", fmt.Errorf("write snapshot %s: %w: the deadline has passed", o.name(lsn), errClosing)
	}
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	o.writing = cancel
	o.mu.Unlock()
	defer func() {
		o.mu.Lock()
		o.writing = nil
		o.mu.Unlock()
	}()
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(snapshot.Encode(pw, lsn, fill)) }()
	defer context.AfterFunc(ctx, func() { pr.CloseWithError(ctx.Err()) })() // a deadline reached while the snapshot is being made
	if _, err := o.store.Put(ctx, jetstream.ObjectMeta{Name: o.name(lsn)}, pr); err != nil {
		pr.CloseWithError(err)
		if o.hurried() && ctx.Err() != nil {
			return "", fmt.Errorf("write snapshot %s: %w: %w", o.name(lsn), errClosing, err)
		}
		return "", fmt.Errorf("write snapshot %s: %w", o.name(lsn), err)
	}
	return o.name(lsn), nil
}

// handOverWait bounds the snapshots of a shard being handed over: the one
// the hand-over takes, and one in progress that it waits for. A hand-over
// without its snapshot costs the next owner a longer replay, while one
// that waits keeps the shard unanswered: a write whose chunks' acknowledge-
// ments a NATS server's crash had lost held a SIGTERM's hand-over past
// Stop's 30 s, after which the shard waited for its lease to expire too.
// 20 s leaves Stop time for the rest of the hand-over.
const handOverWait = 20 * time.Second

// errClosing is wrapped by a write that hurry cut: its shard is being
// handed over or abandoned.
var errClosing = errors.New("not written by the shard's close (the next owner replays the log from the snapshot before)")

// hurry makes every write of the shard's snapshots give up at until: the
// one in progress, and those after it.
func (o *objectSnapshots) hurry(until time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.until = until
	if o.writing != nil {
		time.AfterFunc(time.Until(until), o.writing)
	}
}

func (o *objectSnapshots) hurried() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return !o.until.IsZero()
}

// pruneWait bounds a prune. The engine prunes while it holds its snapshot
// lock, so a prune that waits lets nothing else snapshot, and a hand-over's
// closing snapshot waits behind it: in a chaos round a prune sent while
// the object store's stream was between leaders waited its whole minute
// and held a SIGTERM hand-over for 22 s (the shard went 9.4 s unanswered,
// until its lease ran out). A prune given up costs nothing: the log keeps
// every record, and the next snapshot prunes again.
const pruneWait = 5 * time.Second

// Prune deletes all but the newest keep snapshots of the shard and returns
// the oldest kept's position, or an error after pruneWait.
func (o *objectSnapshots) Prune(keep int) (uint64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), pruneWait)
	defer cancel()
	lsns, err := o.list(ctx)
	if err != nil {
		return 0, fmt.Errorf("prune snapshots of %s: %w", o.prefix, err)
	}
	if len(lsns) == 0 {
		return 0, nil
	}
	for _, lsn := range lsns[min(keep, len(lsns)):] {
		if err := o.store.Delete(ctx, o.name(lsn)); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
			return 0, fmt.Errorf("prune %s: %w", o.name(lsn), err)
		}
	}
	return lsns[min(keep, len(lsns))-1], nil
}
