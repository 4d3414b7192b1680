package wal

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"

	tidwall "github.com/tidwall/wal"

	"backupmon/vfs"
)

// store is what a Log needs from its segment files. tidwallStore is the real
// one; tests wrap it to make writes fail.
type store interface {
	// WriteBatch appends the batch's entries and makes them durable.
	WriteBatch(b *batch) error
	// TruncateFront drops every entry before index.
	TruncateFront(index uint64) error
	// FirstIndex returns the first LSN held (LastIndex()+1 when empty).
	FirstIndex() (uint64, error)
	// LastIndex returns the last LSN held (0 for a new log).
	LastIndex() (uint64, error)
	// Close syncs and closes the files.
	Close() error
}

// batch is one group commit: tidwall's batch, the bytes it adds to the
// segment and its LSNs.
type batch struct {
	tb          tidwall.Batch
	n           int
	bytes       int
	first, last uint64
}

// add appends data as the entry for lsn. tidwall copies data.
func (b *batch) add(lsn uint64, data []byte) {
	if b.n == 0 {
		b.first = lsn
	}
	b.last = lsn
	b.tb.Write(lsn, data)
	b.n++
	b.bytes += uvarintLen(len(data)) + len(data)
}

// reset empties the batch, keeping its storage.
func (b *batch) reset() {
	b.tb.Clear()
	b.n = 0
	b.bytes = 0
	b.first, b.last = 0, 0
}

// len returns the number of entries in the batch.
func (b *batch) len() int { return b.n }

// tidwallOptions returns the tidwall options for a Log opened with opts.
// tidwall never fsyncs a batch: tidwallStore does, through the FS, so that
// a test's FS can make the fsync fail. (tidwall still fsyncs a segment it
// closes to start the next one, and the files of a truncation.)
func tidwallOptions(opts Options) *tidwall.Options {
	return &tidwall.Options{
		NoSync:           true,
		SegmentSize:      opts.SegmentSize,
		LogFormat:        tidwall.Binary,
		SegmentCacheSize: 1,
		AllowEmpty:       true,
		DirPerms:         0o750,
		FilePerms:        0o640,
	}
}

// tidwallStore is a tidwall log whose batches it makes durable itself: it
// fsyncs the tail segment through the FS after tidwall has written a batch,
// and the directory when a new segment file appears (tidwall never fsyncs
// its directory, so without this a segment created by a write, or renamed
// by TruncateFront, could vanish in a crash with records already reported
// durable). tidwall does not say when it starts a segment, so the store
// looks: tidwall never leaves its tail at SegmentSize or more (it starts the
// next segment after the entry that takes it there), so once the segment
// the store holds has reached that size it is no longer the tail, and the
// newest segment file in the directory is.
//
// tidwall writes the segments with its own files, outside the FS; each
// write is announced to it with vfs.BeforeWrite, and so is a truncation's
// first write, so that a test's FS can fail them.
type tidwallStore struct {
	log     *tidwall.Log
	fs      vfs.FS
	dir     string
	segSize int
	noSync  bool

	mu        sync.Mutex // serialises writes and truncations with the fields below
	tailStart uint64     // first LSN of the segment tidwall appends to
	tail      vfs.File   // that segment, opened through the FS for its fsyncs
}

// openTidwall opens (or creates) the tidwall log in dir.
func openTidwall(dir string, opts Options) (store, error) {
	tl, err := tidwall.Open(dir, tidwallOptions(opts))
	if err != nil {
		return nil, err
	}
	s := &tidwallStore{log: tl, fs: opts.FS, dir: dir, segSize: opts.SegmentSize, noSync: opts.NoSync}
	if err := s.learnTail(); err != nil {
		tl.Close()
		return nil, err
	}
	if err := s.openTail(); err != nil {
		tl.Close()
		return nil, err
	}
	if !s.noSync {
		if err := vfs.SyncDir(s.fs, dir); err != nil {
			s.tail.Close()
			tl.Close()
			return nil, err
		}
	}
	return s, nil
}

// learnTail finds the last segment in the directory.
func (s *tidwallStore) learnTail() error {
	segs, err := listSegments(s.fs, s.dir)
	if err != nil {
		return err
	}
	if len(segs) == 0 {
		return errors.New("no segment file in the log's directory")
	}
	s.tailStart = segs[len(segs)-1].index
	return nil
}

// openTail opens the tail segment through the FS, closing the one opened
// before.
func (s *tidwallStore) openTail() error {
	if s.tail != nil {
		s.tail.Close()
		s.tail = nil
	}
	f, err := vfs.Open(s.fs, s.tailPath())
	if err != nil {
		return fmt.Errorf("open tail segment: %w", err)
	}
	s.tail = f
	return nil
}

func (s *tidwallStore) tailPath() string { return filepath.Join(s.dir, segmentName(s.tailStart)) }

// WriteBatch has tidwall write the batch, fsyncs the tail segment, and
// fsyncs the directory if tidwall started a new segment. It returns the
// first error of these steps.
func (s *tidwallStore) WriteBatch(b *batch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := vfs.BeforeWrite(s.fs, s.tail.Name(), b.bytes); err != nil {
		return err
	}
	if err := s.log.WriteBatch(&b.tb); err != nil {
		return err
	}
	cycled, err := s.tailMoved()
	if err != nil {
		return err
	}
	if s.noSync {
		return nil
	}
	if err := s.tail.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", s.tail.Name(), err)
	}
	if cycled {
		return vfs.SyncDir(s.fs, s.dir)
	}
	return nil
}

// tailMoved reports whether tidwall started a new segment while writing
// the last batch: the segment the store holds has reached SegmentSize. It
// then finds the new tail (the newest segment file) and opens it.
func (s *tidwallStore) tailMoved() (bool, error) {
	// The handle only reads, so its offset is free to use: seeking to the
	// end tells the size without a FileInfo to allocate.
	size, err := s.tail.Seek(0, io.SeekEnd)
	if err != nil {
		return false, fmt.Errorf("size of %s: %w", s.tail.Name(), err)
	}
	if size < int64(s.segSize) {
		return false, nil
	}
	// tidwall fsynced the segment it left before starting the next.
	vfs.SyncedOutside(s.fs, s.tail.Name())
	if err := s.learnTail(); err != nil {
		return false, err
	}
	return true, s.openTail()
}

// TruncateFront drops the entries before index through tidwall and fsyncs
// the directory. It returns tidwall's error (after which tidwall refuses
// every write until reopened) or the fsync error.
func (s *tidwallStore) TruncateFront(index uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := vfs.BeforeWrite(s.fs, filepath.Join(s.dir, segmentName(index)+".START.TEMP"), 0); err != nil {
		return err
	}
	if err := s.log.TruncateFront(index); err != nil {
		return err
	}
	if index >= s.tailStart {
		// tidwall rewrote the tail segment as <index> holding what is left.
		s.tailStart = index
		if err := s.openTail(); err != nil {
			return fmt.Errorf("after truncation: %w", err)
		}
	}
	if s.noSync {
		return nil
	}
	return vfs.SyncDir(s.fs, s.dir)
}

// FirstIndex returns tidwall's first index.
func (s *tidwallStore) FirstIndex() (uint64, error) { return s.log.FirstIndex() }

// LastIndex returns tidwall's last index.
func (s *tidwallStore) LastIndex() (uint64, error) { return s.log.LastIndex() }

// Close closes the tail segment's FS handle, then has tidwall fsync and
// close its own.
func (s *tidwallStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tail != nil {
		s.tail.Close()
		s.tail = nil
	}
	return s.log.Close()
}
