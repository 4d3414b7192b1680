package wal

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"

	"backupmon/internal/testfs"
	"backupmon/vfs"
)

// tGot is one record as Replay handed it back.
type tGot struct {
	lsn     uint64
	typ     byte
	payload []byte
}

var quietLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

// tOpts returns options for a test log: quiet, and failing the test instead
// of exiting on a write error.
func tOpts(t testing.TB) Options {
	return Options{
		Logger:  quietLogger,
		OnFatal: func(err error) { t.Errorf("unexpected OnFatal: %v", err) },
	}
}

// tOpen opens dir and fails the test on error.
func tOpen(t testing.TB, dir string, opts Options) *Log {
	t.Helper()
	l, err := Open(dir, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return l
}

// tClose closes l and fails the test on error.
func tClose(t testing.TB, l *Log) {
	t.Helper()
	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// tSubmit submits rec and waits for its done.
func tSubmit(l *Log, rec Record) (uint64, error) {
	type res struct {
		lsn uint64
		err error
	}
	ch := make(chan res, 1)
	l.Submit(rec, func(lsn uint64, err error) { ch <- res{lsn, err} })
	r := <-ch
	return r.lsn, r.err
}

// tReplay replays l from from and returns what it got.
func tReplay(t testing.TB, l *Log, from uint64) []tGot {
	t.Helper()
	got, err := tReplayErr(l, from)
	if err != nil {
		t.Fatalf("Replay(%d): %v", from, err)
	}
	return got
}

func tReplayErr(l *Log, from uint64) ([]tGot, error) {
	var got []tGot
	err := l.Replay(from, func(lsn uint64, typ byte, payload []byte) error {
		got = append(got, tGot{lsn, typ, bytes.Clone(payload)})
		return nil
	})
	return got, err
}

// tWrite opens dir, appends one record per payload (type 1), and closes it.
func tWrite(t testing.TB, dir string, opts Options, payloads [][]byte) {
	t.Helper()
	l := tOpen(t, dir, opts)
	l.Start()
	for i, p := range payloads {
		if _, err := tSubmit(l, &Raw{Typ: 1, Payload: p}); err != nil {
			t.Fatalf("submit %d: %v", i, err)
		}
	}
	tClose(t, l)
}

// tPayload returns a payload of n bytes that starts with i.
func tPayload(i, n int) []byte {
	p := make([]byte, max(n, 8))
	binary.LittleEndian.PutUint64(p, uint64(i))
	for j := 8; j < len(p); j++ {
		p[j] = byte(i*7 + j)
	}
	return p
}

// tEntry is one entry of a segment file as the test parses it, apart from
// the package's own decoder.
type tEntry struct{ start, end int }

// tEntries splits a clean segment file into its entries.
func tEntries(t testing.TB, data []byte) []tEntry {
	t.Helper()
	var es []tEntry
	for off := 0; off < len(data); {
		size, k := binary.Uvarint(data[off:])
		if k <= 0 || off+k+int(size) > len(data) {
			t.Fatalf("segment does not parse at offset %d", off)
		}
		es = append(es, tEntry{off, off + k + int(size)})
		off += k + int(size)
	}
	return es
}

// tSegments returns the segment file names in dir, in order.
func tSegments(t testing.TB, dir string) []string {
	t.Helper()
	segs, err := listSegments(vfs.OS, dir)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(segs))
	for i, s := range segs {
		names[i] = s.name
	}
	return names
}

// tCopyDir copies the files of src into a new temp dir.
func tCopyDir(t testing.TB, src string) string { return testfs.Copy(t, src) }

// tCalls records done calls made from the committer.
type tCalls struct {
	mu    sync.Mutex
	calls []tCall
}

type tCall struct {
	id  int
	lsn uint64
	err error
}

func (c *tCalls) done(id int) func(uint64, error) {
	return func(lsn uint64, err error) {
		c.mu.Lock()
		c.calls = append(c.calls, tCall{id, lsn, err})
		c.mu.Unlock()
	}
}

func (c *tCalls) get() []tCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]tCall(nil), c.calls...)
}

func (c tCall) String() string { return fmt.Sprintf("{id %d lsn %d err %v}", c.id, c.lsn, c.err) }
