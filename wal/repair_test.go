package wal

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"backupmon/vfs"
)

// tBase is a closed log of several segments, written once per test binary
// and copied for every case.
type tBase struct {
	dir      string
	payloads [][]byte // payload of LSN i+1
	segs     []string // segment names
	last     []byte   // bytes of the last segment
	entries  []tEntry // entries of the last segment
	before   int      // records in the segments before the last
}

var (
	baseOnce sync.Once
	base     tBase
	baseErr  error
)

const baseSegmentSize = 1024

// tBaseLog returns the shared base log. Its last segment ends with three
// small records, the middle one with a two-byte length prefix.
func tBaseLog(t *testing.T) *tBase {
	t.Helper()
	baseOnce.Do(func() {
		dir, err := os.MkdirTemp("", "waltest")
		if err != nil {
			baseErr = err
			return
		}
		var payloads [][]byte
		rng := rand.New(rand.NewPCG(3, 4))
		for i := range 40 {
			payloads = append(payloads, tPayload(i+1, 10+rng.IntN(200)))
		}
		payloads = append(payloads, tPayload(41, 30), tPayload(42, 150), tPayload(43, 20))
		opts := Options{Logger: quietLogger, NoSync: true, SegmentSize: baseSegmentSize,
			OnFatal: func(err error) { baseErr = err }}
		tWrite(t, dir, opts, payloads)
		base = tBase{dir: dir, payloads: payloads, segs: tSegments(t, dir)}
		lastName := base.segs[len(base.segs)-1]
		base.last, baseErr = os.ReadFile(filepath.Join(dir, lastName))
		base.entries = tEntries(t, base.last)
		base.before = len(payloads) - len(base.entries)
	})
	if baseErr != nil {
		t.Fatal(baseErr)
	}
	if len(base.segs) < 3 || len(base.entries) < 5 {
		t.Fatalf("base log has %d segments and %d entries in the last; want at least 3 and 5",
			len(base.segs), len(base.entries))
	}
	return &base
}

func TestMain(m *testing.M) {
	code := m.Run()
	if base.dir != "" {
		os.RemoveAll(base.dir)
	}
	os.Exit(code)
}

// tLogBuffer returns options whose logger writes to the returned buffer.
func tLogBuffer(t *testing.T) (Options, *bytes.Buffer) {
	var buf bytes.Buffer
	opts := tOpts(t)
	opts.NoSync = true
	opts.SegmentSize = baseSegmentSize
	opts.Logger = slog.New(slog.NewTextHandler(&buf, nil))
	return opts, &buf
}

// tCheckRepaired opens dir, whose last segment (name) is the base's last
// segment cut or extended, and checks that the log holds exactly the first
// want records, that name.broken holds broken (nil: no such file), and that
// a record appended afterwards survives a reopen.
func tCheckRepaired(t *testing.T, b *tBase, dir, name string, want int, broken []byte) {
	t.Helper()
	opts, logs := tLogBuffer(t)
	l, err := Open(dir, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	got := tReplay(t, l, 0)
	if len(got) != want {
		t.Fatalf("replayed %d records, want %d", len(got), want)
	}
	for i, r := range got {
		if r.lsn != uint64(i+1) || !bytes.Equal(r.payload, b.payloads[i]) {
			t.Fatalf("record %d: lsn %d or payload differs", i, r.lsn)
		}
	}
	saved, err := os.ReadFile(filepath.Join(dir, name+".broken"))
	switch {
	case broken == nil && !errors.Is(err, fs.ErrNotExist):
		t.Fatalf("nothing was cut, yet .broken: %v (%d bytes)", err, len(saved))
	case broken != nil && err != nil:
		t.Fatalf(".broken: %v", err)
	case broken != nil && !bytes.Equal(saved, broken):
		t.Fatalf(".broken holds %d bytes, want the %d cut", len(saved), len(broken))
	}
	if broken != nil {
		for _, s := range []string{"cut torn tail", name, fmt.Sprintf("bytes=%d", len(broken))} {
			if !strings.Contains(logs.String(), s) {
				t.Fatalf("warning does not mention %q: %s", s, logs)
			}
		}
	}

	l.Start()
	lsn, err := tSubmit(l, &Raw{Typ: 9, Payload: []byte("after repair")})
	if err != nil || lsn != uint64(want+1) {
		t.Fatalf("append after repair = (%d, %v), want (%d, nil)", lsn, err, want+1)
	}
	tClose(t, l)
	l = tOpen(t, dir, opts)
	defer l.Close()
	got = tReplay(t, l, 0)
	if len(got) != want+1 || string(got[want].payload) != "after repair" {
		t.Fatalf("after append and reopen: %d records, want %d ending in the new one", len(got), want+1)
	}
}

func TestTornTailCuts(t *testing.T) {
	b := tBaseLog(t)
	name := b.segs[len(b.segs)-1]
	// Every offset within the last three frames, and a sample across the file.
	cuts := map[int]bool{}
	for off := b.entries[len(b.entries)-3].start; off <= len(b.last); off++ {
		cuts[off] = true
	}
	for off := 0; off < len(b.last); off += 37 {
		cuts[off] = true
	}
	for _, e := range b.entries {
		cuts[e.start+1] = true
		cuts[e.end-1] = true
	}
	t.Logf("%d cut offsets in a %d-byte last segment", len(cuts), len(b.last))
	for cut := range len(b.last) + 1 {
		if !cuts[cut] {
			continue
		}
		t.Run(fmt.Sprintf("cut=%d", cut), func(t *testing.T) {
			dir := tCopyDir(t, b.dir)
			if err := os.Truncate(filepath.Join(dir, name), int64(cut)); err != nil {
				t.Fatal(err)
			}
			whole, boundary := 0, 0
			for _, e := range b.entries {
				if e.end <= cut {
					whole, boundary = whole+1, e.end
				}
			}
			var broken []byte
			if cut > boundary {
				broken = b.last[boundary:cut]
			}
			tCheckRepaired(t, b, dir, name, b.before+whole, broken)
		})
	}
}

func TestTornTailAppended(t *testing.T) {
	b := tBaseLog(t)
	name := b.segs[len(b.segs)-1]
	garbage := make([]byte, 1000)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range garbage {
		garbage[i] = byte(rng.Uint32())
	}
	next := tEntryBytes(1, bytes.Repeat([]byte("n"), 300)) // two-byte length prefix
	tests := []struct {
		name  string
		extra []byte
	}{
		{"random garbage", garbage},
		{"4096 zero bytes", make([]byte, 4096)},
		{"one zero byte", []byte{0}},
		{"partial last frame", next[:len(next)/2]},
		{"frame without its last byte", next[:len(next)-1]},
		{"half a length prefix", next[:1]},
		{"length prefix only", next[:2]},
		{"whole frame then zeros", append(bytes.Clone(next[:len(next)-1]), make([]byte, 512)...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tCopyDir(t, b.dir)
			f, err := os.OpenFile(filepath.Join(dir, name), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.Write(tt.extra)
			f.Close()
			tCheckRepaired(t, b, dir, name, len(b.payloads), tt.extra)
		})
	}
}

func TestRepeatedRepairKeepsEveryCut(t *testing.T) {
	b := tBaseLog(t)
	name := b.segs[len(b.segs)-1]
	dir := tCopyDir(t, b.dir)
	opts, _ := tLogBuffer(t)
	for i, suffix := range []string{".broken", ".broken.1", ".broken.2"} {
		extra := bytes.Repeat([]byte{byte(0xf0 + i)}, 10+i)
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.Write(extra)
		f.Close()
		tClose(t, tOpen(t, dir, opts))
		saved, err := os.ReadFile(filepath.Join(dir, name+suffix))
		if err != nil || !bytes.Equal(saved, extra) {
			t.Fatalf("repair %d: %s holds %x (%v), want %x", i, suffix, saved, err, extra)
		}
	}
}

func TestCorruptMiddle(t *testing.T) {
	b := tBaseLog(t)
	lastName := b.segs[len(b.segs)-1]
	mid := b.entries[len(b.entries)/2]
	// flip returns a mutation flipping the byte at off.
	flip := func(off int) func([]byte) []byte {
		return func(d []byte) []byte { d[off] ^= 0x5a; return d }
	}
	seg0, _ := os.ReadFile(filepath.Join(b.dir, b.segs[0]))
	seg0Entries := tEntries(t, seg0)
	seg0Mid := seg0Entries[len(seg0Entries)/2]
	tests := []struct {
		name      string
		file      string
		mutate    func([]byte) []byte
		offset    int
		reason    string
		failsOpen bool
	}{
		{"payload byte in the last segment", lastName, flip(mid.end - 2), mid.start, "crc mismatch", true},
		{"crc byte in the last segment", lastName, flip(mid.start + 1), mid.start, "crc mismatch", true},
		{"length byte in the last segment", lastName, flip(mid.start), mid.start, "", true},
		{"type zeroed in the last segment", lastName, func(d []byte) []byte { d[mid.start+5] = 0; return d },
			mid.start, "record type 0", true},
		{"zeros over a record in the last segment", lastName, func(d []byte) []byte {
			clear(d[mid.start:mid.end])
			return d
		}, mid.start, "frame shorter than 5 bytes", true},
		{"payload byte in the first segment", b.segs[0], flip(seg0Mid.end - 1), seg0Mid.start, "crc mismatch", false},
		{"length byte in the first segment", b.segs[0], flip(seg0Mid.start), seg0Mid.start, "", false},
		{"torn end of the first segment", b.segs[0], func(d []byte) []byte { return d[:len(d)-3] },
			seg0Entries[len(seg0Entries)-1].start, "record runs past end of file", false},
		{"lost last record of the first segment", b.segs[0], func(d []byte) []byte {
			return d[:seg0Entries[len(seg0Entries)-1].start]
		}, -1, "ends after lsn", false},
		{"zeros appended to the first segment", b.segs[0], func(d []byte) []byte {
			return append(d, make([]byte, 100)...)
		}, len(seg0), "frame shorter than 5 bytes", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tCopyDir(t, b.dir)
			path := filepath.Join(dir, tt.file)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			data = tt.mutate(data)
			if err := os.WriteFile(path, data, 0o640); err != nil {
				t.Fatal(err)
			}
			opts, _ := tLogBuffer(t)
			l, err := Open(dir, opts)
			if err == nil {
				if tt.failsOpen {
					l.Close()
					t.Fatal("Open succeeded")
				}
				_, err = tReplayErr(l, 0)
				l.Close()
				if err == nil {
					t.Fatal("Open and Replay succeeded")
				}
			} else if !tt.failsOpen {
				t.Fatalf("Open failed: %v", err)
			}
			msg := err.Error()
			want := []string{tt.file, tt.reason}
			if tt.offset >= 0 {
				want = append(want, fmt.Sprintf("at offset %d:", tt.offset))
			}
			if tt.failsOpen {
				want = append(want, "valid records follow")
			}
			for _, s := range want {
				if !strings.Contains(msg, s) {
					t.Fatalf("error %q does not contain %q", msg, s)
				}
			}
			t.Logf("%v", err)
			after, _ := os.ReadFile(path)
			if !bytes.Equal(after, data) {
				t.Fatal("the damaged file was changed")
			}
			if _, err := os.Stat(path + ".broken"); err == nil {
				t.Fatal("a .broken file was written")
			}
		})
	}
}

func TestInterruptedTruncation(t *testing.T) {
	b := tBaseLog(t)
	seg1, err := os.ReadFile(filepath.Join(b.dir, b.segs[1]))
	if err != nil {
		t.Fatal(err)
	}
	seg1Entries := tEntries(t, seg1)
	seg1First, err := strconv.ParseUint(b.segs[1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	index := seg1First + 2 // the third record of the second segment becomes the first
	start := seg1[seg1Entries[2].start:]
	tests := []struct {
		name string
		torn bool
	}{
		{"clean tail", false},
		{"torn tail", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tCopyDir(t, b.dir)
			// A crash after tidwall wrote the START file and before it removed
			// the segments it replaces.
			if err := os.WriteFile(filepath.Join(dir, segmentName(index)+".START"), start, 0o640); err != nil {
				t.Fatal(err)
			}
			want := len(b.payloads)
			if tt.torn {
				next := tEntryBytes(1, []byte("torn record"))
				f, _ := os.OpenFile(filepath.Join(dir, b.segs[len(b.segs)-1]), os.O_APPEND|os.O_WRONLY, 0)
				f.Write(next[:len(next)-2])
				f.Close()
			}
			opts, _ := tLogBuffer(t)
			l, err := Open(dir, opts)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer l.Close()
			if left, _ := truncationFiles(vfs.OS, dir); len(left) > 0 {
				t.Fatalf("left behind: %v", left)
			}
			if l.FirstLSN() != index || l.LastLSN() != uint64(want) {
				t.Fatalf("FirstLSN %d LastLSN %d, want %d and %d", l.FirstLSN(), l.LastLSN(), index, want)
			}
			got := tReplay(t, l, index)
			if len(got) != want-int(index)+1 || got[0].lsn != index || !bytes.Equal(got[0].payload, b.payloads[index-1]) {
				t.Fatalf("replayed %d records from %d", len(got), index)
			}
		})
	}
}

func TestOpenCreatesDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	l := tOpen(t, dir, tOpts(t))
	if l.FirstLSN() != 1 || l.LastLSN() != 0 || l.NextLSN() != 1 {
		t.Fatalf("new log: FirstLSN %d LastLSN %d NextLSN %d", l.FirstLSN(), l.LastLSN(), l.NextLSN())
	}
	tClose(t, l)
	l = tOpen(t, dir, tOpts(t))
	tClose(t, l)
}
