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
type Faulty struct {
	base FS

	mu     sync.Mutex
	n      int
	trace  []Step
	failed []Step
	rules  []rule
}

type rule struct {
	pick func(Step) bool
	err  error
	once bool
	used bool
}

// NewFaulty returns a Faulty over base with no rules: every operation
// succeeds until Fail or FailStep is called.
func NewFaulty(base FS) *Faulty { return &Faulty{base: base} }

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
// its rule's error.
func (f *Faulty) BeforeWrite(name string, n int) error { return f.check(OpWrite, name) }

// OpenFile opens name in the base FS; with os.O_CREATE it counts as an
// OpCreate.
func (f *Faulty) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	if flag&os.O_CREATE != 0 {
		if err := f.check(OpCreate, name); err != nil {
			return nil, err
		}
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
	return f.base.Rename(oldname, newname)
}

// Remove counts as an OpRemove, then removes.
func (f *Faulty) Remove(name string) error {
	if err := f.check(OpRemove, name); err != nil {
		return err
	}
	return f.base.Remove(name)
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
	return w.File.Sync()
}

// Truncate counts as an OpTruncate.
func (w *faultyFile) Truncate(size int64) error {
	if err := w.fs.check(OpTruncate, w.Name()); err != nil {
		return err
	}
	return w.File.Truncate(size)
}
