package vfs

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Open opens name for reading.
func Open(fsys FS, name string) (File, error) {
	return fsys.OpenFile(name, os.O_RDONLY, 0)
}

// ReadFile returns the whole contents of name.
func ReadFile(fsys FS, name string) ([]byte, error) {
	f, err := Open(fsys, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// CreateTemp creates a new file with permissions perm in dir, opened for
// reading and writing, named by pattern with its last "*" replaced by a
// random string (or the string appended when there is none), as
// os.CreateTemp does.
func CreateTemp(fsys FS, dir, pattern string, perm fs.FileMode) (File, error) {
	prefix, suffix := pattern, ""
	if i := strings.LastIndexByte(pattern, '*'); i >= 0 {
		prefix, suffix = pattern[:i], pattern[i+1:]
	}
	var rnd [8]byte
	for range 100 {
		rand.Read(rnd[:])
		name := filepath.Join(dir, prefix+hex.EncodeToString(rnd[:])+suffix)
		f, err := fsys.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, fmt.Errorf("create temp file in %s: too many names taken", dir)
}

// SyncDir fsyncs the directory dir, making file creations, renames and
// removals in it durable. The error names the directory.
func SyncDir(fsys FS, dir string) error {
	d, err := Open(fsys, dir)
	if err == nil {
		err = syncClose(d)
	}
	if err != nil {
		return fmt.Errorf("sync dir %s: %w", dir, err)
	}
	return nil
}

// syncClose fsyncs f and closes it; it returns the first error.
func syncClose(f File) error {
	err := f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Gate is implemented by file systems that inject faults, to hear of writes
// and fsyncs made to their files by code that opens them itself:
// tidwall/wal writes the log's segments with its own *os.File, and fsyncs
// a segment it has filled.
type Gate interface {
	// BeforeWrite is called before n bytes are written to name outside
	// the FS; an error stands for that write's failure, and the write is
	// not made.
	BeforeWrite(name string, n int) error
	// SyncedOutside is called after name was fsynced outside the FS.
	SyncedOutside(name string)
}

// BeforeWrite asks fsys whether a write of n bytes to name, made outside it,
// may go ahead: nil unless fsys is a Gate that fails it.
func BeforeWrite(fsys FS, name string, n int) error {
	if g, ok := fsys.(Gate); ok {
		return g.BeforeWrite(name, n)
	}
	return nil
}

// SyncedOutside tells fsys, if it is a Gate, that name was fsynced outside
// it.
func SyncedOutside(fsys FS, name string) {
	if g, ok := fsys.(Gate); ok {
		g.SyncedOutside(name)
	}
}
