package jslog

import (
	"context"
	"errors"
	"testing"
	"time"

	"backupmon/wal"
)

// TestReplayRefusesALostTail: a stream that ends before the shard's mark
// (the last sequence an owner saw acknowledged) or before the snapshot's
// position has lost acknowledged messages, as a majority of NATS servers
// cutting a damaged block leaves it: once the stream's leader confirms the
// end, Replay refuses it with ErrBroken, after every record left for a
// mark (a read-only shard serves what is left) and before any for a
// snapshot. A stream that reaches the mark replays; Acked follows the
// acknowledgements. An end read short that the leader does not confirm
// (Open's read was stale, or there is no leader) is an error to try again,
// never ErrBroken.
func TestReplayRefusesALostTail(t *testing.T) {
	c, js := setup(t)
	l := open(t, js, 5, nil)
	if l.Acked() != 0 {
		t.Fatalf("Acked of an empty stream: %d, want 0", l.Acked())
	}
	l.Start()
	for range 3 {
		if _, err := submitWait(l, &wal.Raw{Typ: 1, Payload: []byte("ok")}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	last := l.LastSeq() // the takeover marker and three messages
	if last != 4 || l.Acked() != last {
		t.Fatalf("after three records: last %d, acked %d; want 4 and 4", last, l.Acked())
	}
	openAt := func(mark uint64) *Log {
		l, err := Open(context.Background(), Options{JS: js, Stream: "BM_S000", Subject: "bm.s000", Epoch: 6, Mark: mark, AckTimeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	replay := func(l *Log, from uint64) (int, error) {
		n := 0
		err := l.Replay(from, func(uint64, byte, []byte) error { n++; return nil })
		return n, err
	}
	for _, tc := range []struct {
		name       string
		mark, from uint64
		broken     bool
		records    int
	}{
		{"mark at the end", last, 0, false, 3},
		{"no mark", 0, 0, false, 3},
		{"snapshot at the end", last, lsnOf(last+1, 0), false, 0},
		{"mark past the end", last + 1, 0, true, 3},
		{"snapshot past the end", 0, lsnOf(last+1, 1), true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := replay(openAt(tc.mark), tc.from)
			if tc.broken {
				if !errors.Is(err, ErrBroken) || n != tc.records {
					t.Fatalf("replay: %d records, %v; want %d and ErrBroken", n, err, tc.records)
				}
				return
			}
			if err != nil {
				t.Fatalf("replay: %v", err)
			}
			if n != tc.records {
				t.Fatalf("replayed %d records, want %d", n, tc.records)
			}
		})
	}

	// An end read before another writer appended: short of the mark, but
	// the leader holds more. An error to try again, not a loss.
	stale := openAt(last + 1)
	w := open(t, js, 7, nil)
	replayAll(t, w, 0)
	w.Start() // its takeover marker is message last+1
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if n, err := replay(stale, 0); err == nil || errors.Is(err, ErrBroken) || n != 0 {
		t.Fatalf("a stale end: %d records, %v; want none and an error that is not ErrBroken", n, err)
	}

	// Without a leader nothing confirms a short end: an error, not a loss.
	// The leader and one more server stop (a leader left alone would
	// still answer for a while, on what it holds).
	short := openAt(last + 2)
	c.LoseQuorum(t, js, "BM_S000")
	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	go func() { n, err := replay(short, 0); done <- result{n, err} }()
	select {
	case r := <-done:
		if r.err == nil || errors.Is(r.err, ErrBroken) || r.n != 0 {
			t.Fatalf("a short end without a leader: %d records, %v; want none and an error that is not ErrBroken", r.n, r.err)
		}
	case <-time.After(time.Minute):
		t.Fatal("a short end without a leader: the replay did not return within a minute (it went on to read the stream)")
	}
}
