package vfs

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// Op is a kind of operation that changes what is on disk, as Faulty counts
// them.
type Op uint8

// The operations Faulty numbers and can fail.
const (
	OpCreate   Op = iota + 1 // OpenFile with os.O_CREATE
	OpWrite                  // File.Write, or a write announced with BeforeWrite
	OpSync                   // File.Sync, of a file or a directory
	OpTruncate               // File.Truncate
	OpRename                 // FS.Rename
	OpRemove                 // FS.Remove
	OpMkdir                  // FS.MkdirAll
)

var opNames = [...]string{OpCreate: "create", OpWrite: "write", OpSync: "fsync", OpTruncate: "truncate", OpRename: "rename", OpRemove: "remove", OpMkdir: "mkdir"}

// String returns the operation's name ("write", "fsync", ...).
func (o Op) String() string {
	if int(o) < len(opNames) && opNames[o] != "" {
		return opNames[o]
	}
	return fmt.Sprintf("op(%d)", o)
}

// Step is one operation Faulty saw: its number (from 1), kind and path.
type Step struct {
	N    int
	Op   Op
	Name string
}

// String returns the step as "#N op base-name".
func (s Step) String() string { return fmt.Sprintf("#%d %s %s", s.N, s.Op, filepath.Base(s.Name)) }

// Faulty is an FS over another that numbers every operation changing the
// disk (see Op), records it, and fails those its rules pick, with the
// rule's error wrapped in an *fs.PathError. A failed Write first writes half
// of its bytes, as a write cut short by a full disk does; any other failed
// operation changes nothing. Reads pass through uncounted. It is safe for
// concurrent use.
//
// It also keeps, for every file written through it (or announced with
// BeforeWrite), its size at its last successful fsync, so that LoseUnsynced
// can do to the files what a power cut does: drop what was not fsynced.
type Faulty struct {
	base FS

	mu     sync.Mutex
	n      int
	trace  []Step
	failed []Step
	rules  []rule
	synced map[string]int64 // files written since their last fsync: their size then
}

type rule struct {
	pick func(Step) bool
	err  error
	once bool
	used bool
}

// NewFaulty returns a Faulty over base with no rules: every operation
// succeeds until Fail or FailStep is called.
func NewFaulty(base FS) *Faulty { return &Faulty{base: base, synced: map[string]int64{}} }

// Fail makes every operation that pick accepts fail with err, from now on
// until Heal.
func (f *Faulty) Fail(pick func(Step) bool, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = append(f.rules, rule{pick: pick, err: err})
}

// FailStep makes the operation numbered n fail with err, once.
func (f *Faulty) FailStep(n int, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = append(f.rules, rule{pick: func(s Step) bool { return s.N == n }, err: err, once: true})
}

// Heal removes every rule; operations succeed again.
func (f *Faulty) Heal() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = nil
}

// Trace returns the operations seen so far, in order.
func (f *Faulty) Trace() []Step {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Step(nil), f.trace...)
}

// Failed returns the operations that were made to fail, in order.
func (f *Faulty) Failed() []Step {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Step(nil), f.failed...)
}

// check numbers and records the operation and returns the error a rule
// gives it (as an *fs.PathError), or nil.
func (f *Faulty) check(op Op, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	s := Step{N: f.n, Op: op, Name: name}
	f.trace = append(f.trace, s)
	for i := range f.rules {
		r := &f.rules[i]
		if (r.once && r.used) || !r.pick(s) {
			continue
		}
		r.used = true
		f.failed = append(f.failed, s)
		return &fs.PathError{Op: op.String(), Path: name, Err: r.err}
	}
	return nil
}

// BeforeWrite counts a write made outside the FS as an OpWrite and returns
// its rule's error; when it lets the write go ahead, the file's bytes from
// then on are unsynced until an fsync through the FS.
func (f *Faulty) BeforeWrite(name string, n int) error {
	if err := f.check(OpWrite, name); err != nil {
		return err
	}
	f.dirty(name)
	return nil
}

// SyncedOutside notes that name was fsynced outside the FS: nothing of it
// is lost by LoseUnsynced. It is not an operation Faulty can fail.
func (f *Faulty) SyncedOutside(name string) { f.clean(name) }

// dirty notes that name is about to change: if it was synced, its size now
// is what survives a power cut.
func (f *Faulty) dirty(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.synced[name]; ok {
		return
	}
	var size int64 // a file made since: nothing of it survives
	if fi, err := f.base.Stat(name); err == nil {
		size = fi.Size()
	}
	f.synced[name] = size
}

// clean notes that name was fsynced.
func (f *Faulty) clean(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.synced, name)
}

// LoseUnsynced cuts every file written through the FS since its last fsync
// back to its size at that fsync, as a power cut would leave it (a model:
// a real disk may keep more, and the directory entries of files are taken
// as durable). It returns the files it cut and the first error.
func (f *Faulty) LoseUnsynced() ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var cut []string
	var first error
	for name, size := range f.synced {
		fi, err := f.base.Stat(name)
		if err != nil || fi.Size() <= size {
			continue
		}
		file, err := f.base.OpenFile(name, os.O_WRONLY, 0)
		if err == nil {
			err = file.Truncate(size)
			if cerr := file.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil && first == nil {
			first = err
		}
		cut = append(cut, name)
	}
	clear(f.synced)
	return cut, first
}

// OpenFile opens name in the base FS; with os.O_CREATE it counts as an
// OpCreate.
func (f *Faulty) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	if flag&os.O_CREATE != 0 {
		if err := f.check(OpCreate, name); err != nil {
			return nil, err
		}
	}
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_TRUNC) != 0 {
		f.dirty(name) // conservative: opened to write
	}
	file, err := f.base.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &faultyFile{File: file, fs: f}, nil
}

// ReadDir reads the directory in the base FS.
func (f *Faulty) ReadDir(name string) ([]fs.DirEntry, error) { return f.base.ReadDir(name) }

// Stat returns name's information from the base FS.
func (f *Faulty) Stat(name string) (fs.FileInfo, error) { return f.base.Stat(name) }

// MkdirAll counts as an OpMkdir, then creates the directories.
func (f *Faulty) MkdirAll(name string, perm fs.FileMode) error {
	if err := f.check(OpMkdir, name); err != nil {
		return err
	}
	return f.base.MkdirAll(name, perm)
}

// Rename counts as an OpRename (named by the new name), then renames.
func (f *Faulty) Rename(oldname, newname string) error {
	if err := f.check(OpRename, newname); err != nil {
		return err
	}
	if err := f.base.Rename(oldname, newname); err != nil {
		return err
	}
	f.mu.Lock()
	if size, ok := f.synced[oldname]; ok {
		delete(f.synced, oldname)
		f.synced[newname] = size
	}
	f.mu.Unlock()
	return nil
}

// Remove counts as an OpRemove, then removes.
func (f *Faulty) Remove(name string) error {
	if err := f.check(OpRemove, name); err != nil {
		return err
	}
	if err := f.base.Remove(name); err != nil {
		return err
	}
	f.clean(name)
	return nil
}

// faultyFile is a file opened through a Faulty.
type faultyFile struct {
	File
	fs *Faulty
}

// Write counts as an OpWrite; when it fails, half of p is written first.
func (w *faultyFile) Write(p []byte) (int, error) {
	if err := w.fs.check(OpWrite, w.Name()); err != nil {
		n, _ := w.File.Write(p[:len(p)/2])
		return n, err
	}
	return w.File.Write(p)
}

// Sync counts as an OpSync.
func (w *faultyFile) Sync() error {
	if err := w.fs.check(OpSync, w.Name()); err != nil {
		return err
	}
	if err := w.File.Sync(); err != nil {
		return err
	}
	w.fs.clean(w.Name())
	return nil
}

// Truncate counts as an OpTruncate.
func (w *faultyFile) Truncate(size int64) error {
	if err := w.fs.check(OpTruncate, w.Name()); err != nil {
		return err
	}
	return w.File.Truncate(size)
}
