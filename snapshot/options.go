package snapshot

import (
	"io"
	"log/slog"

	"backupmon/vfs"
)

// Options configures the snapshot functions. The zero value is ready to use;
// the package-level functions use it.
type Options struct {
	// Logger receives the package's logs; nil means slog.Default().
	Logger *slog.Logger
	// FS is the file system; nil means vfs.OS (tests pass a vfs.Faulty).
	FS vfs.FS
}

func (o Options) fs() vfs.FS { return vfs.Or(o.FS) }

func (o Options) logger() *slog.Logger {
	if o.Logger != nil {
		return o.Logger
	}
	return slog.Default()
}

// Write streams fill's bytes into a new snapshot for lsn in dir, atomically,
// and returns its path; on failure no snapshot and no temp file is left.
// It is Options.Write with the zero Options.
func Write(dir string, lsn uint64, fill func(w io.Writer) error) (string, error) {
	return Options{}.Write(dir, lsn, fill)
}

// Load hands the newest valid snapshot in dir to fn, falling back to older
// ones, and returns its LSN; it fails with ErrNoSnapshot if dir has none. It
// is Options.Load with the zero Options.
func Load(dir string, fn func(lsn uint64, r io.Reader) error) (uint64, error) {
	return Options{}.Load(dir, fn)
}

// List returns the LSNs of the snapshot files in dir, newest first, by name
// only; it fails if dir cannot be read. It is Options.List with the zero
// Options.
func List(dir string) ([]uint64, error) {
	return Options{}.List(dir)
}

// Prune deletes all but the newest keep snapshots in dir and any temp files,
// and returns the LSN of the oldest kept (0 if none, or on failure). It is
// Options.Prune with the zero Options.
func Prune(dir string, keep int) (uint64, error) {
	return Options{}.Prune(dir, keep)
}
