package main

// The log's files as the crash tests see them from outside: segment files
// named by the 20-digit LSN of their first entry under <data>/wal, each entry
// a uvarint length and a frame [crc32c(type+payload) LE][type][payload]
// (wal/doc.go).

import (
	"backupmon/state"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// walEntry is one entry of a segment file.
type walEntry struct {
	start, end int // byte range of the whole entry (length prefix included)
	prefix     int // bytes of the length prefix
	typ        byte
	payload    []byte
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// parseSegment returns the valid entries at the start of data and the offset
// where they end (len(data) when the whole file is valid).
func parseSegment(data []byte) ([]walEntry, int) {
	var list []walEntry
	off := 0
	for off < len(data) {
		size, k := binary.Uvarint(data[off:])
		if k <= 0 || size < 5 || size > uint64(len(data)-off-k) {
			break
		}
		frame := data[off+k : off+k+int(size)]
		if frame[4] == 0 || binary.LittleEndian.Uint32(frame) != crc32.Checksum(frame[4:], crcTable) {
			break
		}
		list = append(list, walEntry{start: off, end: off + k + int(size), prefix: k, typ: frame[4], payload: frame[5:]})
		off += k + int(size)
	}
	return list, off
}

// readSegment reads the log segment name of dataDir and parses it: its
// bytes, its entries and the length of its valid prefix.
func readSegment(t testing.TB, dataDir, name string) ([]byte, []walEntry, int) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dataDir, "wal", name))
	if err != nil {
		t.Fatal(err)
	}
	entries, valid := parseSegment(data)
	return data, entries, valid
}

// segmentNames returns the segment files of the log in dir/wal, in LSN
// order, with their first LSNs.
func segmentNames(t testing.TB, dataDir string) ([]string, []uint64) {
	t.Helper()
	var names []string
	for _, n := range dataFiles(t, dataDir, "wal", false) {
		if _, err := strconv.ParseUint(n, 10, 64); err == nil && len(n) == 20 {
			names = append(names, n)
		}
	}
	lsns := make([]uint64, len(names))
	for i, n := range names {
		lsns[i], _ = strconv.ParseUint(n, 10, 64)
	}
	return names, lsns
}

// effectiveSegments returns the segments of the log in dataDir/wal as
// tidwall's Open will see them after finishing a front truncation that a
// kill interrupted: a <index>.START file replaces every segment before it.
// It returns the file names and first LSNs.
func effectiveSegments(t testing.TB, dataDir string) ([]string, []uint64) {
	t.Helper()
	var names []string
	for _, n := range dataFiles(t, dataDir, "wal", false) { // sorted: <index> before <index>.START
		if len(n) < 20 {
			continue
		}
		if _, err := strconv.ParseUint(n[:20], 10, 64); err != nil {
			continue
		}
		switch {
		case len(n) == 26 && strings.HasSuffix(n, ".START"):
			names = append(names[:0], n)
		case len(n) == 20:
			names = append(names, n)
		}
	}
	lsns := make([]uint64, len(names))
	for i, n := range names {
		lsns[i], _ = strconv.ParseUint(n[:20], 10, 64)
	}
	return names, lsns
}

// dataFiles returns the names of the files (not folders) in dataDir/sub,
// sorted; a folder that cannot be read fails the test, unless it is missing
// and optional.
func dataFiles(t testing.TB, dataDir, sub string, optional bool) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dataDir, sub))
	if err != nil && !(optional && os.IsNotExist(err)) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names
}

// reportIDs returns, for every Report record in entries, the size_bytes of
// the report (the test's id) and the entry's end offset.
func reportIDs(t testing.TB, entries []walEntry) map[int64]int {
	t.Helper()
	out := map[int64]int{}
	for _, e := range entries {
		rec, err := state.Decode(e.typ, e.payload)
		if err != nil {
			t.Fatalf("decode record at offset %d: %v", e.start, err)
		}
		if r, ok := rec.(*state.Report); ok {
			if _, dup := out[r.SizeBytes]; dup {
				t.Fatalf("report %d is in the log twice", r.SizeBytes)
			}
			out[r.SizeBytes] = e.end
		}
	}
	return out
}

// dirDigest describes every file under dir (path, size, SHA-256), to tell
// whether anything changed.
func dirDigest(t testing.TB, dir string) string {
	t.Helper()
	var b bytes.Buffer
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		fmt.Fprintf(&b, "%s %d %x\n", rel, len(data), sha256.Sum256(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
