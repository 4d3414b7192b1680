package wal

import (
	"fmt"
	"io"
	"strconv"

	"backupmon/vfs"
)

// segmentFile is one tidwall segment file: its name is the 20-digit LSN of
// its first entry.
type segmentFile struct {
	index uint64
	name  string
}

// segmentName returns the file name of the segment whose first LSN is index.
func segmentName(index uint64) string {
	return fmt.Sprintf("%020d", index)
}

// segmentIndex returns the LSN that the first 20 characters of name, a
// segment's or one of tidwall's START and END files, stand for: false when
// they are not 20 digits of a non-zero uint64.
func segmentIndex(name string) (uint64, bool) {
	if len(name) < 20 {
		return 0, false
	}
	index, err := strconv.ParseUint(name[:20], 10, 64)
	return index, err == nil && index != 0
}

// listSegments returns the segment files in dir in LSN order (the order of
// their names). Other files, such as .broken copies, are skipped.
func listSegments(fsys vfs.FS, dir string) ([]segmentFile, error) {
	files, err := fileNames(fsys, dir, nil)
	if err != nil {
		return nil, err
	}
	var segs []segmentFile
	for _, name := range files {
		if index, ok := segmentIndex(name); ok && len(name) == 20 {
			segs = append(segs, segmentFile{index: index, name: name})
		}
	}
	return segs, nil
}

// fileNames returns the names of the files in dir (folders left out) that
// keep accepts (all when keep is nil), in the order of their names.
func fileNames(fsys vfs.FS, dir string, keep func(name string) bool) ([]string, error) {
	ents, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if !e.IsDir() && (keep == nil || keep(e.Name())) {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// scanResult is what scanSegment found in one segment's bytes.
type scanResult struct {
	valid   int   // end of the last whole valid entry; damage, if any, starts here
	records int   // whole valid entries in data[:valid]
	damage  error // why the entry at valid was rejected; nil when the whole file is valid
	resync  int   // offset of a valid entry after the damage, or -1 when there is none
}

// scanSegment walks data entry by entry and stops at the first one that is
// not a valid frame. It then looks for a valid entry at every later byte
// offset, which tells a torn tail (none) from damage in the middle (some).
func scanSegment(data []byte) scanResult {
	r := scanResult{resync: -1}
	for r.valid < len(data) {
		_, _, n, err := entryAt(data, r.valid)
		if err != nil {
			r.damage = err
			r.resync = resyncAfter(data, r.valid+1)
			return r
		}
		r.valid += n
		r.records++
	}
	return r
}

// resyncAfter returns the first offset at or after from where a valid entry
// starts (a uvarint length whose bytes form a frame with a nonzero type and
// a matching CRC), or -1.
func resyncAfter(data []byte, from int) int {
	for off := from; off < len(data); off++ {
		if _, _, _, err := entryAt(data, off); err == nil {
			return off
		}
	}
	return -1
}

// corruptError reports a damaged entry in a segment file.
type corruptError struct {
	file   string // segment file name
	offset int    // byte offset of the damaged entry's length prefix
	reason error
	follow bool // valid entries follow the damage, so it is not a torn tail
}

func (e *corruptError) Error() string {
	s := fmt.Sprintf("corrupt record in %s at offset %d: %v", e.file, e.offset, e.reason)
	if e.follow {
		s += " (valid records follow; refusing to start)"
	}
	return s
}

func (e *corruptError) Unwrap() error { return e.reason }

// readFileInto reads the file at path into buf, reusing its storage when it
// is large enough, and returns the filled slice.
func readFileInto(fsys vfs.FS, buf []byte, path string) ([]byte, error) {
	f, err := vfs.Open(fsys, path)
	if err != nil {
		return buf[:0], err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return buf[:0], err
	}
	size := int(fi.Size())
	if cap(buf) < size {
		buf = make([]byte, size)
	}
	buf = buf[:size]
	if _, err := io.ReadFull(f, buf); err != nil {
		return buf[:0], err
	}
	return buf, nil
}
