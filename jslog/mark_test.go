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
// cutting a damaged block leaves it: Replay refuses it with ErrBroken,
// having read the stream's end again first, after every record left for a
// mark (a read-only shard serves what is left) and before any for a
// snapshot. A stream that reaches the mark replays; Acked follows the
// acknowledgements.
func TestReplayRefusesALostTail(t *testing.T) {
	_, js := setup(t)
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
	replay := func(mark, from uint64) (int, time.Duration, error) {
		start := time.Now()
		l, err := Open(context.Background(), Options{JS: js, Stream: "BM_S000", Subject: "bm.s000", Epoch: 6, Mark: mark})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		err = l.Replay(from, func(uint64, byte, []byte) error { n++; return nil })
		return n, time.Since(start), err
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
			n, took, err := replay(tc.mark, tc.from)
			if tc.broken {
				if !errors.Is(err, ErrBroken) || n != tc.records {
					t.Fatalf("replay: %d records, %v; want %d and ErrBroken", n, err, tc.records)
				}
				if took < markRereads*markReread {
					t.Fatalf("Replay took %v: it did not read the stream's end again", took)
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
}
