package snapshot

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"

	"backupmon/vfs"
)

// scan reads dir and returns the LSNs of its snapshot files, newest first,
// and the names of its leftover temp files. Other entries are ignored. A
// missing dir is empty.
func scan(fsys vfs.FS, dir string) (lsns []uint64, temps []string, err error) {
	entries, err := fsys.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, nil
		}
		return nil, nil, err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		if lsn, ok := parseName(e.Name()); ok {
			lsns = append(lsns, lsn)
		} else if isTempName(e.Name()) {
			temps = append(temps, e.Name())
		}
	}
	slices.Sort(lsns)
	slices.Reverse(lsns)
	return lsns, temps, nil
}

// List returns the LSNs of the snapshot files in dir, newest first, judging
// by their names only: the files are not opened. A missing dir gives an
// empty list. It fails only if dir cannot be read.
func (o Options) List(dir string) ([]uint64, error) {
	lsns, _, err := scan(o.fs(), dir)
	if err != nil {
		return nil, fmt.Errorf("list snapshots in %s: %w", dir, err)
	}
	return lsns, nil
}

// Prune deletes all but the newest keep snapshots in dir, judging by names
// only, and every leftover temp file; it must not run at the same time as a
// Write to dir. keep must be at least 1. It returns the LSN of the oldest
// snapshot kept, which is how far the log may be truncated, or 0 if dir has
// none. On failure it still tries every deletion but returns 0, which allows
// no truncation, and the errors.
func (o Options) Prune(dir string, keep int) (uint64, error) {
	if keep < 1 {
		return 0, fmt.Errorf("prune snapshots in %s: keep is %d, must be at least 1", dir, keep)
	}
	lsns, temps, err := scan(o.fs(), dir)
	if err != nil {
		return 0, fmt.Errorf("prune snapshots in %s: %w", dir, err)
	}
	doomed := temps
	var oldest uint64
	if len(lsns) > 0 {
		kept := lsns[:min(keep, len(lsns))]
		oldest = kept[len(kept)-1]
		for _, lsn := range lsns[len(kept):] {
			doomed = append(doomed, fileName(lsn))
		}
	}
	var errs []error
	for _, name := range doomed {
		if err := o.fs().Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		o.logger().Info("snapshot pruned", "file", filepath.Join(dir, name))
	}
	if len(errs) > 0 {
		return 0, fmt.Errorf("prune snapshots in %s: %w", dir, errors.Join(errs...))
	}
	// Deletions need no directory sync: one that a crash undoes leaves an
	// extra file, which the next Prune removes.
	return oldest, nil
}
