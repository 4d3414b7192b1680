package snapshot

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"backupmon/vfs"
)

const (
	dirPerm  = 0o750
	filePerm = 0o640
)

// Write streams fill's bytes into a new snapshot for lsn in dir, creating
// dir if missing. It writes a temp file, syncs it, renames it to the final
// name (replacing a snapshot of the same LSN) and syncs dir. It returns the
// final path. On any error, fill's included (returned wrapped), the temp file
// is removed and no snapshot appears. fill must not keep w after it returns.
func (o Options) Write(dir string, lsn uint64, fill func(w io.Writer) error) (string, error) {
	name := fileName(lsn)
	final := filepath.Join(dir, name)
	start := time.Now()
	fsys := o.fs()

	if err := fsys.MkdirAll(dir, dirPerm); err != nil {
		return "", fmt.Errorf("write snapshot %s: %w", name, err)
	}
	f, err := vfs.CreateTemp(fsys, dir, tmpPattern(lsn), filePerm)
	if err != nil {
		return "", fmt.Errorf("write snapshot %s: %w", name, err)
	}
	tmp := f.Name()
	done := false
	defer func() { // also runs if fill panics
		if done {
			return
		}
		f.Close()
		if err := fsys.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
			o.logger().Warn("snapshot: cannot remove temp file", "file", tmp, "err", err)
		}
	}()

	h := header{chunkSize: defaultChunkSize, lsn: lsn, created: start.UnixMilli()}
	if err := encode(f, h, fill); err != nil {
		return "", fmt.Errorf("write snapshot %s: %w", name, err)
	}
	if err := f.Sync(); err != nil {
		return "", fmt.Errorf("write snapshot %s: sync: %w", name, err)
	}
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("write snapshot %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("write snapshot %s: close: %w", name, err)
	}
	if err := fsys.Rename(tmp, final); err != nil {
		return "", fmt.Errorf("write snapshot %s: %w", name, err)
	}
	done = true
	if err := vfs.SyncDir(fsys, dir); err != nil {
		// The rename may not survive a crash. Take the snapshot back so that
		// the caller, seeing the error, does not rely on it.
		if rerr := fsys.Remove(final); rerr != nil {
			o.logger().Warn("snapshot: cannot remove unsynced snapshot", "file", final, "err", rerr)
		}
		return "", fmt.Errorf("write snapshot %s: %w", name, err)
	}
	o.logger().Debug("snapshot file written", "file", final, "lsn", lsn,
		"bytes", fi.Size(), "took", time.Since(start))
	return final, nil
}
