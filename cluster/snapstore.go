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
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"backupmon/snapshot"
)

// objectSnapshots keeps one shard's snapshots in the cluster's object store,
// in the snapshot file format, as objects named s<NNN>/<position>; it is
// the shard engine's snapshot store (engine.Snapshots).
type objectSnapshots struct {
	store  jetstream.ObjectStore
	prefix string
	logger *slog.Logger
}

func newObjectSnapshots(store jetstream.ObjectStore, shard int, logger *slog.Logger) *objectSnapshots {
	return &objectSnapshots{store: store, prefix: fmt.Sprintf("s%03d/", shard), logger: logger}
}

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
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	lsns, err := o.list(ctx)
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

func (o *objectSnapshots) loadOne(ctx context.Context, lsn uint64, fn func(lsn uint64, r io.Reader) error) error {
	res, err := o.store.Get(ctx, o.name(lsn))
	if err != nil {
		return err
	}
	defer res.Close()
	return snapshot.Decode(res, lsn, fn)
}

// Write streams a new snapshot into the store; the object appears whole or
// not at all (the store writes its chunks, then its metadata).
func (o *objectSnapshots) Write(lsn uint64, fill func(w io.Writer) error) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(snapshot.Encode(pw, lsn, fill)) }()
	if _, err := o.store.Put(ctx, jetstream.ObjectMeta{Name: o.name(lsn)}, pr); err != nil {
		pr.CloseWithError(err)
		return "", fmt.Errorf("write snapshot %s: %w", o.name(lsn), err)
	}
	return o.name(lsn), nil
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
