package vfs

import (
	"io"
	"io/fs"
	"os"
)

// FS is the set of file operations the log and the snapshots make.
type FS interface {
	// OpenFile opens name with os.OpenFile's flags and permissions.
	OpenFile(name string, flag int, perm fs.FileMode) (File, error)
	// ReadDir returns the entries of the directory name, sorted by name.
	ReadDir(name string) ([]fs.DirEntry, error)
	// Stat returns the file information of name.
	Stat(name string) (fs.FileInfo, error)
	// MkdirAll creates the directory name and its missing parents.
	MkdirAll(name string, perm fs.FileMode) error
	// Rename renames (moves) oldname to newname, replacing newname.
	Rename(oldname, newname string) error
	// Remove removes the file or empty directory name.
	Remove(name string) error
}

// File is an open file of an FS.
type File interface {
	io.Reader
	io.Writer
	io.Seeker
	io.Closer
	// Sync commits the file's contents (or a directory's entries) to
	// stable storage.
	Sync() error
	// Truncate changes the file's size.
	Truncate(size int64) error
	// Stat returns the file's information.
	Stat() (fs.FileInfo, error)
	// Name returns the name the file was opened with.
	Name() string
}

// OS is the operating system's file system.
var OS FS = osFS{}

type osFS struct{}

func (osFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err // a nil *os.File must not become a non-nil File
	}
	return f, nil
}

func (osFS) ReadDir(name string) ([]fs.DirEntry, error)   { return os.ReadDir(name) }
func (osFS) Stat(name string) (fs.FileInfo, error)        { return os.Stat(name) }
func (osFS) MkdirAll(name string, perm fs.FileMode) error { return os.MkdirAll(name, perm) }
func (osFS) Rename(oldname, newname string) error         { return os.Rename(oldname, newname) }
func (osFS) Remove(name string) error                     { return os.Remove(name) }

// Or returns fsys, or OS when fsys is nil.
func Or(fsys FS) FS {
	if fsys == nil {
		return OS
	}
	return fsys
}
