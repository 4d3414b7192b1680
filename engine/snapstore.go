package engine

import (
	"io"

	"backupmon/snapshot"
)

// Snapshots is where the engine keeps its snapshots: files in
// Dir/snapshots on a single node (the default), a shard's objects in a
// cluster's object store.
type Snapshots interface {
	// Load hands the newest valid snapshot to fn, falling back to older
	// ones, and returns its position; an error wrapping
	// snapshot.ErrNoSnapshot when there is none.
	Load(fn func(lsn uint64, r io.Reader) error) (uint64, error)
	// Write makes a snapshot at position lsn of fill's bytes, whole or not
	// at all, and returns its name.
	Write(lsn uint64, fill func(w io.Writer) error) (string, error)
	// Prune drops all but the newest keep snapshots and returns the
	// oldest kept's position (0 when none).
	Prune(keep int) (uint64, error)
}

// dirSnapshots are snapshot files in one directory.
type dirSnapshots struct {
	dir  string
	opts snapshot.Options
}

func (d dirSnapshots) Load(fn func(lsn uint64, r io.Reader) error) (uint64, error) {
	return d.opts.Load(d.dir, fn)
}

func (d dirSnapshots) Write(lsn uint64, fill func(w io.Writer) error) (string, error) {
	return d.opts.Write(d.dir, lsn, fill)
}

func (d dirSnapshots) Prune(keep int) (uint64, error) { return d.opts.Prune(d.dir, keep) }
