package wal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	tidwall "github.com/tidwall/wal"
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

// batch is one group commit: tidwall's batch plus the size of each entry,
// which tidwallStore needs to follow tidwall's segment changes.
type batch struct {
	tb          tidwall.Batch
	sizes       []int
	first, last uint64
}

// add appends data as the entry for lsn. tidwall copies data.
func (b *batch) add(lsn uint64, data []byte) {
	if len(b.sizes) == 0 {
		b.first = lsn
	}
	b.last = lsn
	b.tb.Write(lsn, data)
	b.sizes = append(b.sizes, len(data))
}

// reset empties the batch, keeping its storage.
func (b *batch) reset() {
	b.tb.Clear()
	b.sizes = b.sizes[:0]
	b.first, b.last = 0, 0
}

// len returns the number of entries in the batch.
func (b *batch) len() int { return len(b.sizes) }

// tidwallOptions returns the tidwall options for a Log opened with opts.
func tidwallOptions(opts Options) *tidwall.Options {
	return &tidwall.Options{
		NoSync:           opts.NoSync,
		SegmentSize:      opts.SegmentSize,
		LogFormat:        tidwall.Binary,
		SegmentCacheSize: 1,
		AllowEmpty:       true,
		DirPerms:         0o750,
		FilePerms:        0o640,
	}
}

// tidwallStore is a tidwall log that also fsyncs the directory when a new
// segment file appears. tidwall fsyncs the segment files but never their
// directory, so without this a segment created by a write (or renamed by
// TruncateFront) could vanish in a crash with records already reported
// durable. tidwall does not say when it starts a segment, so the store
// follows its rule: tidwall v1.2.1 starts one before a batch when the tail
// is larger than SegmentSize, and after any entry that brings the tail to
// SegmentSize or more.
type tidwallStore struct {
	log     *tidwall.Log
	dir     string
	segSize int
	noSync  bool

	mu        sync.Mutex // serialises writes and truncations with the fields below
	tailStart uint64     // first LSN of the segment tidwall appends to
	tailSize  int        // that segment's size in bytes
}

// openTidwall opens (or creates) the tidwall log in dir.
func openTidwall(dir string, opts Options) (store, error) {
	tl, err := tidwall.Open(dir, tidwallOptions(opts))
	if err != nil {
		return nil, err
	}
	s := &tidwallStore{log: tl, dir: dir, segSize: opts.SegmentSize, noSync: opts.NoSync}
	if err := s.learnTail(); err != nil {
		tl.Close()
		return nil, err
	}
	if !s.noSync {
		if err := syncDir(dir); err != nil {
			tl.Close()
			return nil, err
		}
	}
	return s, nil
}

// learnTail reads the name and size of the last segment from the directory.
func (s *tidwallStore) learnTail() error {
	segs, err := listSegments(s.dir)
	if err != nil {
		return err
	}
	if len(segs) == 0 {
		return errors.New("no segment file after tidwall open")
	}
	last := segs[len(segs)-1]
	fi, err := os.Stat(filepath.Join(s.dir, last.name))
	if err != nil {
		return err
	}
	s.tailStart, s.tailSize = last.index, int(fi.Size())
	return nil
}

// WriteBatch writes and fsyncs the batch through tidwall, then fsyncs the
// directory if tidwall started a new segment. It returns tidwall's error or
// the directory's fsync error.
func (s *tidwallStore) WriteBatch(b *batch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.log.WriteBatch(&b.tb); err != nil {
		return err
	}
	if s.follow(b) && !s.noSync {
		return syncDir(s.dir)
	}
	return nil
}

// follow applies tidwall's segment rule to the batch just written, updating
// tailStart and tailSize, and reports whether a new segment was started.
func (s *tidwallStore) follow(b *batch) bool {
	cycled := false
	if s.tailSize > s.segSize {
		s.tailStart, s.tailSize = b.first, 0
		cycled = true
	}
	for i, n := range b.sizes {
		s.tailSize += uvarintLen(n) + n
		if s.tailSize >= s.segSize {
			s.tailStart, s.tailSize = b.first+uint64(i)+1, 0
			cycled = true
		}
	}
	return cycled
}

// TruncateFront drops the entries before index through tidwall and fsyncs
// the directory. It returns tidwall's error (after which tidwall refuses
// every write until reopened) or the fsync error.
func (s *tidwallStore) TruncateFront(index uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.log.TruncateFront(index); err != nil {
		return err
	}
	if index >= s.tailStart {
		// tidwall rewrote the tail segment as <index> holding what is left.
		fi, err := os.Stat(filepath.Join(s.dir, segmentName(index)))
		if err != nil {
			return fmt.Errorf("after truncation: %w", err)
		}
		s.tailStart, s.tailSize = index, int(fi.Size())
	}
	if s.noSync {
		return nil
	}
	return syncDir(s.dir)
}

// FirstIndex returns tidwall's first index.
func (s *tidwallStore) FirstIndex() (uint64, error) { return s.log.FirstIndex() }

// LastIndex returns tidwall's last index.
func (s *tidwallStore) LastIndex() (uint64, error) { return s.log.LastIndex() }

// Close fsyncs and closes the tail segment.
func (s *tidwallStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.Close()
}
