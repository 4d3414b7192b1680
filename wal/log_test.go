package wal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name        string
		segmentSize int
		submitters  int
		each        int
	}{
		{"one segment", 0, 8, 100},
		{"many segments", 4096, 8, 100},
		{"one submitter", 2048, 1, 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := tOpts(t)
			opts.SegmentSize = tt.segmentSize
			l := tOpen(t, dir, opts)
			if got := tReplay(t, l, 0); len(got) != 0 {
				t.Fatalf("new log replayed %d records", len(got))
			}
			l.Start()

			// Each payload holds its submitter and sequence number, then
			// filler of a random length (some over 127 bytes, for two-byte
			// length prefixes).
			lsnOf := make([][]uint64, tt.submitters)
			var wg sync.WaitGroup
			for g := range tt.submitters {
				lsnOf[g] = make([]uint64, tt.each)
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(g), 1))
					for i := range tt.each {
						p := binary.BigEndian.AppendUint32(nil, uint32(g))
						p = binary.BigEndian.AppendUint32(p, uint32(i))
						p = append(p, bytes.Repeat([]byte{byte(i)}, rng.IntN(300))...)
						lsn, err := tSubmit(l, &Raw{Typ: byte(1 + g), Payload: p})
						if err != nil {
							t.Errorf("submit %d/%d: %v", g, i, err)
							return
						}
						lsnOf[g][i] = lsn
					}
				})
			}
			wg.Wait()
			total := uint64(tt.submitters * tt.each)
			if l.LastLSN() != total || l.NextLSN() != total+1 {
				t.Fatalf("LastLSN %d NextLSN %d, want %d and %d", l.LastLSN(), l.NextLSN(), total, total+1)
			}
			tClose(t, l)

			l = tOpen(t, dir, opts)
			defer l.Close()
			if l.FirstLSN() != 1 || l.LastLSN() != total {
				t.Fatalf("reopened: FirstLSN %d LastLSN %d, want 1 and %d", l.FirstLSN(), l.LastLSN(), total)
			}
			all := tReplay(t, l, 1)
			if uint64(len(all)) != total {
				t.Fatalf("replayed %d records, want %d", len(all), total)
			}
			next := make([]int, tt.submitters)
			for i, r := range all {
				if r.lsn != uint64(i+1) {
					t.Fatalf("record %d has lsn %d", i, r.lsn)
				}
				g := int(binary.BigEndian.Uint32(r.payload))
				seq := int(binary.BigEndian.Uint32(r.payload[4:]))
				if r.typ != byte(1+g) {
					t.Fatalf("lsn %d: type %d, want %d", r.lsn, r.typ, 1+g)
				}
				if seq != next[g] {
					t.Fatalf("lsn %d: submitter %d record %d, want %d", r.lsn, g, seq, next[g])
				}
				if lsnOf[g][seq] != r.lsn {
					t.Fatalf("submitter %d record %d: done said lsn %d, replay says %d", g, seq, lsnOf[g][seq], r.lsn)
				}
				next[g]++
			}
			mid := total / 2
			tail := tReplay(t, l, mid)
			if uint64(len(tail)) != total-mid+1 {
				t.Fatalf("replay from %d gave %d records, want %d", mid, len(tail), total-mid+1)
			}
			for i, r := range tail {
				if want := all[int(mid)-1+i]; r.lsn != want.lsn || !bytes.Equal(r.payload, want.payload) {
					t.Fatalf("replay from %d, record %d: lsn %d, want %d", mid, i, r.lsn, want.lsn)
				}
			}
		})
	}
}

func TestReplayArguments(t *testing.T) {
	dir := t.TempDir()
	tWrite(t, dir, tOpts(t), [][]byte{tPayload(1, 10), tPayload(2, 10), tPayload(3, 10)})
	l := tOpen(t, dir, tOpts(t))
	defer l.Close()
	stop := errors.New("stop")
	tests := []struct {
		name    string
		from    uint64
		fn      func(uint64, byte, []byte) error
		want    int
		wantErr error
	}{
		{"zero means first", 0, nil, 3, nil},
		{"from last", 3, nil, 1, nil},
		{"from last plus one", 4, nil, 0, nil},
		{"past the end", 5, nil, 0, errAny},
		{"fn error", 1, func(lsn uint64, _ byte, _ []byte) error {
			if lsn == 2 {
				return stop
			}
			return nil
		}, 0, stop},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := 0
			err := l.Replay(tt.from, func(lsn uint64, typ byte, p []byte) error {
				n++
				if tt.fn != nil {
					return tt.fn(lsn, typ, p)
				}
				return nil
			})
			switch {
			case tt.wantErr == errAny && err == nil:
				t.Fatal("no error")
			case tt.wantErr == nil && err != nil:
				t.Fatalf("error %v", err)
			case tt.wantErr != nil && tt.wantErr != errAny && !errors.Is(err, tt.wantErr):
				t.Fatalf("error %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr == nil && n != tt.want {
				t.Fatalf("%d records, want %d", n, tt.want)
			}
		})
	}
	t.Run("after start", func(t *testing.T) {
		l.Start()
		if err := l.Replay(1, func(uint64, byte, []byte) error { return nil }); !errors.Is(err, errStarted) {
			t.Fatalf("Replay after Start = %v, want errStarted", err)
		}
	})
}

// errAny stands for "some error" in test tables.
var errAny = errors.New("any error")

func TestBarrierAndNextLSN(t *testing.T) {
	dir := t.TempDir()
	hold := make(chan struct{})
	entered := make(chan struct{}, 1)
	var holding atomic.Bool
	opts := tOpts(t)
	opts.BeforeSync = func(first, last uint64) {
		if holding.Load() {
			entered <- struct{}{}
			<-hold
		}
	}
	l := tOpen(t, dir, opts)
	defer l.Close()
	if l.NextLSN() != 1 || l.LastLSN() != 0 || l.FirstLSN() != 1 {
		t.Fatalf("new log: NextLSN %d LastLSN %d FirstLSN %d", l.NextLSN(), l.LastLSN(), l.FirstLSN())
	}
	l.Start()

	t.Run("empty log", func(t *testing.T) {
		lsn, err := tSubmit(l, nil)
		if err != nil || lsn != 0 {
			t.Fatalf("barrier on empty log = (%d, %v), want (0, nil)", lsn, err)
		}
	})
	t.Run("after records", func(t *testing.T) {
		for i := range 5 {
			tSubmit(l, &Raw{Typ: 1, Payload: tPayload(i, 10)})
		}
		lsn, err := tSubmit(l, nil)
		if err != nil || lsn != 5 {
			t.Fatalf("barrier = (%d, %v), want (5, nil)", lsn, err)
		}
		if l.NextLSN() != 6 {
			t.Fatalf("NextLSN %d, want 6", l.NextLSN())
		}
	})
	t.Run("inside a batch", func(t *testing.T) {
		var calls tCalls
		holding.Store(true)
		l.Submit(&Raw{Typ: 1, Payload: []byte("held")}, calls.done(0)) // lsn 6, held in BeforeSync
		<-entered
		holding.Store(false)
		if l.NextLSN() != 7 || l.LastLSN() != 5 {
			t.Fatalf("while held: NextLSN %d LastLSN %d, want 7 and 5", l.NextLSN(), l.LastLSN())
		}
		var atBarrier uint64
		l.Submit(&Raw{Typ: 1, Payload: []byte("a")}, calls.done(1)) // lsn 7
		l.Submit(nil, func(lsn uint64, err error) {
			atBarrier = l.LastLSN()
			calls.done(2)(lsn, err)
		})
		l.Submit(&Raw{Typ: 1, Payload: []byte("b")}, calls.done(3)) // lsn 8
		if l.NextLSN() != 7 {
			t.Fatalf("queued but not taken: NextLSN %d, want 7", l.NextLSN())
		}
		close(hold)
		if _, err := tSubmit(l, nil); err != nil {
			t.Fatal(err)
		}
		want := []tCall{{0, 6, nil}, {1, 7, nil}, {2, 7, nil}, {3, 8, nil}}
		got := calls.get()
		if len(got) != len(want) {
			t.Fatalf("calls %v, want %v", got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("calls %v, want %v", got, want)
			}
		}
		if atBarrier < 7 {
			t.Fatalf("LastLSN at the barrier's done = %d, want >= 7", atBarrier)
		}
		if l.NextLSN() != 9 {
			t.Fatalf("NextLSN %d, want 9", l.NextLSN())
		}
	})
}

func TestCloseDrains(t *testing.T) {
	tests := []struct {
		name  string
		start bool // Start before submitting; otherwise Close starts the committer
	}{
		{"started", true},
		{"never started", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := tOpts(t)
			opts.QueueSize = 1000
			l := tOpen(t, dir, opts)
			if tt.start {
				l.Start()
			}
			const n = 500
			var calls tCalls
			for i := range n {
				l.Submit(&Raw{Typ: 1, Payload: tPayload(i, 20)}, calls.done(i))
			}
			tClose(t, l)
			got := calls.get()
			if len(got) != n {
				t.Fatalf("%d done calls, want %d", len(got), n)
			}
			for i, c := range got {
				if c.id != i || c.lsn != uint64(i+1) || c.err != nil {
					t.Fatalf("call %d = %v", i, c)
				}
			}

			var after tCall
			l.Submit(&Raw{Typ: 1, Payload: []byte("late")}, func(lsn uint64, err error) { after = tCall{0, lsn, err} })
			if !errors.Is(after.err, ErrClosed) {
				t.Fatalf("submit after Close: done got %v, want ErrClosed", after)
			}
			if err := l.Close(); !errors.Is(err, ErrClosed) {
				t.Fatalf("second Close = %v, want ErrClosed", err)
			}
			if err := l.TruncateFront(2); !errors.Is(err, ErrClosed) {
				t.Fatalf("TruncateFront after Close = %v, want ErrClosed", err)
			}

			l = tOpen(t, dir, opts)
			defer l.Close()
			if got := tReplay(t, l, 1); len(got) != n {
				t.Fatalf("reopened log holds %d records, want %d", len(got), n)
			}
		})
	}
}

func TestSubmitTypeZero(t *testing.T) {
	l := tOpen(t, t.TempDir(), tOpts(t))
	defer l.Close()
	l.Start()
	var got error
	l.Submit(&Raw{Typ: 0}, func(_ uint64, err error) { got = err })
	if !errors.Is(got, errZeroType) {
		t.Fatalf("done got %v, want errZeroType", got)
	}
	if lsn, err := tSubmit(l, &Raw{Typ: 1}); lsn != 1 || err != nil {
		t.Fatalf("next record = (%d, %v), want (1, nil)", lsn, err)
	}
}

func TestSubmitDoesNotAllocate(t *testing.T) {
	opts := tOpts(t)
	opts.QueueSize = 1000
	l := tOpen(t, t.TempDir(), opts)
	defer l.Close()
	rec := &Raw{Typ: 1, Payload: []byte("payload")}
	done := func(uint64, error) {}
	// Not started: the records wait in the queue, so only Submit runs.
	if n := testing.AllocsPerRun(500, func() { l.Submit(rec, done) }); n != 0 {
		t.Fatalf("Submit allocates %v times", n)
	}
}

func TestCommitterAllocations(t *testing.T) {
	opts := tOpts(t)
	opts.NoSync = true
	l := tOpen(t, t.TempDir(), opts)
	defer l.Close()
	l.Start()
	rec := &Raw{Typ: 1, Payload: bytes.Repeat([]byte("x"), 100)}
	ch := make(chan error, 1)
	done := func(_ uint64, err error) { ch <- err }
	// Whatever tidwall allocates grows geometrically (its segment buffer),
	// which rounds down to nothing per record.
	if n := testing.AllocsPerRun(2000, func() {
		l.Submit(rec, done)
		<-ch
	}); n != 0 {
		t.Fatalf("a record through the committer allocates %v times", n)
	}
}
