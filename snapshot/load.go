package snapshot

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"backupmon/vfs"
)

// Load tries the snapshots in dir newest first. For each it calls fn with the
// snapshot's LSN and a reader of its body, which checks each chunk before
// handing out its bytes; damage, truncation or extra bytes make the reader
// fail with an error wrapping ErrCorrupt. fn may be called several times and
// must start afresh each time. A snapshot is accepted when fn returns nil and
// the whole file checked out (Load reads on to the end if fn stopped early).
// Otherwise Load logs the error at Warn with the file name and falls back to
// the next older snapshot.
//
// Load returns the LSN of the accepted snapshot. It fails with ErrNoSnapshot
// if dir holds no snapshot file (or does not exist). If there are snapshots
// but none is accepted, the error is not ErrNoSnapshot, since the log was
// truncated behind them and an empty state would lose data: it names every
// file tried and wraps each one's error, so errors.Is(err, ErrCorrupt) tells
// whether damage was among the causes. An unreadable dir fails at once.
func (o Options) Load(dir string, fn func(lsn uint64, r io.Reader) error) (uint64, error) {
	lsns, _, err := scan(o.fs(), dir)
	if err != nil {
		return 0, fmt.Errorf("load snapshot from %s: %w", dir, err)
	}
	if len(lsns) == 0 {
		return 0, fmt.Errorf("load snapshot from %s: %w", dir, ErrNoSnapshot)
	}
	var errs []error
	for _, lsn := range lsns {
		name := fileName(lsn)
		err := loadOne(o.fs(), filepath.Join(dir, name), lsn, fn)
		if err == nil {
			o.logger().Info("snapshot loaded", "file", filepath.Join(dir, name), "lsn", lsn)
			return lsn, nil
		}
		o.logger().Warn("snapshot rejected, trying an older one",
			"file", filepath.Join(dir, name), "err", err)
		errs = append(errs, fmt.Errorf("%s: %w", name, err))
	}
	return 0, fmt.Errorf("load snapshot from %s: none of %d valid: %w", dir, len(errs), errors.Join(errs...))
}

// loadOne runs fn on the snapshot file at path and makes sure the whole file
// was read and checked. It returns fn's error, the reader's, or the file's.
func loadOne(fsys vfs.FS, path string, lsn uint64, fn func(lsn uint64, r io.Reader) error) error {
	f, err := vfs.Open(fsys, path)
	if err != nil {
		return err
	}
	defer f.Close()
	return Decode(f, lsn, fn)
}
