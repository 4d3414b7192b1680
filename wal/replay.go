package wal

import (
	"fmt"
	"path/filepath"
	"sort"
)

// Replay calls fn for every record from LSN from to LastLSN(), in order,
// checking every frame of the segments it reads. from == 0 means FirstLSN().
// payload is only valid during the call: fn must copy what it keeps. Replay
// holds one segment in memory at a time and must be called before Start,
// and not at the same time as TruncateFront.
//
// It returns an error when from is outside FirstLSN()..LastLSN()+1 (records
// before FirstLSN() have been truncated away), an error naming the file and
// byte offset of a damaged record, or fn's error, wrapped with the LSN.
func (l *Log) Replay(from uint64, fn func(lsn uint64, typ byte, payload []byte) error) error {
	if l.started.Load() {
		return fmt.Errorf("replay wal %s: %w", l.dir, errStarted)
	}
	first, last := l.first.Load(), l.last.Load()
	if from == 0 {
		from = first
	}
	if from < first || from > last+1 {
		return fmt.Errorf("replay wal %s from %d: log holds %d..%d", l.dir, from, first, last)
	}
	if from > last {
		return nil
	}
	segs, err := listSegments(l.opts.FS, l.dir)
	if err != nil {
		return fmt.Errorf("replay wal %s: %w", l.dir, err)
	}
	i := sort.Search(len(segs), func(i int) bool { return segs[i].index > from }) - 1
	if i < 0 {
		return fmt.Errorf("replay wal %s: no segment holds lsn %d", l.dir, from)
	}
	var buf []byte
	for ; i < len(segs); i++ {
		seg := segs[i]
		end := last + 1 // first LSN after this segment
		if i+1 < len(segs) {
			end = segs[i+1].index
		}
		buf, err = readFileInto(l.opts.FS, buf, filepath.Join(l.dir, seg.name))
		if err != nil {
			return fmt.Errorf("replay wal %s: %w", l.dir, err)
		}
		lsn := seg.index
		for off := 0; off < len(buf); {
			typ, payload, n, err := entryAt(buf, off)
			if err != nil {
				return fmt.Errorf("replay wal %s: %w", l.dir,
					&corruptError{file: seg.name, offset: off, reason: err})
			}
			if lsn >= end {
				return fmt.Errorf("replay wal %s: %s holds records past lsn %d (at offset %d)",
					l.dir, seg.name, end-1, off)
			}
			if lsn >= from {
				if err := fn(lsn, typ, payload); err != nil {
					return fmt.Errorf("replay wal %s at lsn %d: %w", l.dir, lsn, err)
				}
			}
			lsn++
			off += n
		}
		if lsn != end {
			return fmt.Errorf("replay wal %s: %s ends after lsn %d, want %d",
				l.dir, seg.name, lsn-1, end-1)
		}
	}
	return nil
}
