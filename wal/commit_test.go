package wal

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestGroupCommit(t *testing.T) {
	tests := []struct {
		name       string
		maxBatch   int
		submitters int
		each       int
	}{
		{"default batch", 0, 40, 10},
		{"batch of 64", 64, 40, 10},
		{"batch of 1", 1, 5, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hold := make(chan struct{})
			entered := make(chan struct{})
			var syncs atomic.Int32
			var observed atomic.Int32
			opts := tOpts(t)
			opts.MaxBatch = tt.maxBatch
			opts.BeforeSync = func(first, last uint64) {
				if syncs.Add(1) == 1 {
					close(entered)
					<-hold
				}
			}
			opts.Observe = func(records int, _ time.Duration) { observed.Add(int32(records)) }
			l := tOpen(t, t.TempDir(), opts)
			defer l.Close()
			l.Start()

			var calls tCalls
			l.Submit(&Raw{Typ: 1, Payload: []byte("first")}, calls.done(-1))
			<-entered
			n := tt.submitters * tt.each
			var wg sync.WaitGroup
			for g := range tt.submitters {
				wg.Go(func() {
					for i := range tt.each {
						l.Submit(&Raw{Typ: 1, Payload: tPayload(i, 30)}, calls.done(g*tt.each+i))
					}
				})
			}
			wg.Wait()
			if len(l.queue.C()) != n {
				t.Fatalf("%d records queued, want %d", len(l.queue.C()), n)
			}
			close(hold)
			if _, err := tSubmit(l, nil); err != nil {
				t.Fatal(err)
			}

			maxBatch := tt.maxBatch
			if maxBatch == 0 {
				maxBatch = 1024
			}
			wantBatches := 1 + (n+maxBatch-1)/maxBatch
			if got := int(syncs.Load()); got != wantBatches {
				t.Fatalf("%d records written in %d batches, want %d", n+1, got, wantBatches)
			}
			if wantBatches >= n+1 && maxBatch > 1 {
				t.Fatalf("no grouping: %d batches for %d records", wantBatches, n+1)
			}
			if got := int(observed.Load()); got != n+1 {
				t.Fatalf("Observe counted %d records, want %d", got, n+1)
			}
			got := calls.get()
			if len(got) != n+1 {
				t.Fatalf("%d done calls, want %d", len(got), n+1)
			}
			seen := make(map[int]bool)
			for i, c := range got {
				if c.err != nil || c.lsn != uint64(i+1) {
					t.Fatalf("call %d = %v, want lsn %d", i, c, i+1)
				}
				if seen[c.id] {
					t.Fatalf("done of record %d called twice", c.id)
				}
				seen[c.id] = true
			}
		})
	}
}

// failStore is a store whose WriteBatch fails from its failOn-th call: the
// entries reach the file but the fsync "fails".
type failStore struct {
	store
	failOn int32
	err    error
	writes atomic.Int32
}

func (s *failStore) WriteBatch(b *batch) error {
	if s.writes.Add(1) < s.failOn {
		return s.store.WriteBatch(b)
	}
	s.store.WriteBatch(b)
	return s.err
}

func TestFailStop(t *testing.T) {
	for _, failOn := range []int32{1, 3} {
		t.Run(fmt.Sprintf("fail on write %d", failOn), func(t *testing.T) {
			syncErr := errors.New("fsync: input/output error")
			var fs *failStore
			openStore := func(dir string, opts Options) (store, error) {
				st, err := openTidwall(dir, opts)
				if err != nil {
					return nil, err
				}
				fs = &failStore{store: st, failOn: failOn, err: syncErr}
				return fs, nil
			}
			var fatals atomic.Int32
			var fatalErr error
			hold := make(chan struct{})
			entered := make(chan struct{})
			opts := tOpts(t)
			opts.OnFatal = func(err error) { fatals.Add(1); fatalErr = err }
			opts.BeforeSync = func(first, last uint64) {
				if fs.writes.Load() == failOn-1 {
					close(entered)
					<-hold
				}
			}
			l, err := open(t.TempDir(), opts, openStore)
			if err != nil {
				t.Fatal(err)
			}
			l.Start()

			for i := range failOn - 1 {
				if _, err := tSubmit(l, &Raw{Typ: 1, Payload: tPayload(int(i), 10)}); err != nil {
					t.Fatalf("record %d before the failure: %v", i, err)
				}
			}
			var calls tCalls
			l.Submit(&Raw{Typ: 1, Payload: []byte("fails")}, calls.done(0))
			<-entered
			for i := 1; i <= 10; i++ { // queued behind the failing batch
				l.Submit(&Raw{Typ: 1, Payload: tPayload(i, 10)}, calls.done(i))
			}
			l.Submit(nil, calls.done(11))
			close(hold)
			for len(calls.get()) < 12 {
				time.Sleep(time.Millisecond)
			}
			for _, c := range calls.get() {
				if c.lsn != 0 || !errors.Is(c.err, ErrFailed) || !errors.Is(c.err, syncErr) {
					t.Fatalf("done after failure = %v, want lsn 0 and ErrFailed wrapping the cause", c)
				}
			}

			var late tCall
			lateCalled := false
			l.Submit(&Raw{Typ: 1, Payload: []byte("late")}, func(lsn uint64, err error) {
				late, lateCalled = tCall{0, lsn, err}, true
			})
			if !lateCalled || !errors.Is(late.err, ErrFailed) {
				t.Fatalf("submit after failure: called %v with %v, want ErrFailed at once", lateCalled, late)
			}
			if got := fs.writes.Load(); got != failOn {
				t.Fatalf("%d WriteBatch calls, want %d (none after the failure)", got, failOn)
			}
			if got := l.LastLSN(); got != uint64(failOn-1) {
				t.Fatalf("LastLSN %d, want %d", got, failOn-1)
			}
			if err := l.TruncateFront(1); !errors.Is(err, ErrFailed) {
				t.Fatalf("TruncateFront after failure = %v, want ErrFailed", err)
			}
			err = l.Close()
			if !errors.Is(err, ErrFailed) {
				t.Fatalf("Close = %v, want ErrFailed", err)
			}
			if fatals.Load() != 1 || !errors.Is(fatalErr, syncErr) {
				t.Fatalf("OnFatal called %d times with %v, want once with the cause", fatals.Load(), fatalErr)
			}
		})
	}
}

func TestTruncateFrontWhileWriting(t *testing.T) {
	dir := t.TempDir()
	opts := tOpts(t)
	opts.SegmentSize = 2048
	l := tOpen(t, dir, opts)
	l.Start()
	const submitters, each = 4, 250
	var wg sync.WaitGroup
	for g := range submitters {
		wg.Go(func() {
			for i := range each {
				if _, err := tSubmit(l, &Raw{Typ: 1, Payload: tPayload(g*each+i, 40)}); err != nil {
					t.Errorf("submit: %v", err)
					return
				}
			}
		})
	}
	stop := make(chan struct{})
	truncated := make(chan int)
	go func() {
		n := 0
		defer func() { truncated <- n }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if last := l.LastLSN(); last > 20 {
				if err := l.TruncateFront(last - 20); err != nil {
					t.Errorf("TruncateFront: %v", err)
					return
				}
				n++
			}
			time.Sleep(200 * time.Microsecond)
		}
	}()
	wg.Wait()
	close(stop)
	n := <-truncated
	first := l.FirstLSN()
	tClose(t, l)
	t.Logf("%d truncations; first LSN %d", n, first)

	l = tOpen(t, dir, opts)
	defer l.Close()
	if l.FirstLSN() != first || l.LastLSN() != submitters*each {
		t.Fatalf("reopened: FirstLSN %d LastLSN %d, want %d and %d", l.FirstLSN(), l.LastLSN(), first, submitters*each)
	}
	got := tReplay(t, l, l.FirstLSN())
	if len(got) != int(l.LastLSN()-first+1) || got[0].lsn != first {
		t.Fatalf("replayed %d records from %d", len(got), first)
	}
}
