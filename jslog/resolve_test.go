package jslog

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"backupmon/wal"
)

// TestLeaderChangeKeepsTheLog: the server that leads the stream stops
// while records are appended from many goroutines, twice. Appends whose
// acknowledgement the stop swallowed are resolved by reading the stream
// back: the log never fails, every record submitted is acknowledged, and
// a replay holds each exactly once, at the position its acknowledgement
// gave.
func TestLeaderChangeKeepsTheLog(t *testing.T) {
	c, js := setup(t)
	var fatal atomic.Value
	// The product's bound on a resolution (10 s): the tests' 5 s was
	// passed once, in a fresh clone's run, by a stream whose leader had
	// stopped (every append resolved "not found in the stream nor
	// published again within 5s").
	l, err := Open(context.Background(), Options{JS: js, Stream: "BM_S000", Subject: "bm.s000", Epoch: 1, OnFatal: func(err error) { fatal.Store(err) }})
	if err != nil {
		t.Fatal(err)
	}
	l.Start()
	st, err := js.Stream(context.Background(), "BM_S000")
	if err != nil {
		t.Fatal(err)
	}
	stopLeader := func() int {
		info, err := st.Info(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		i := int(info.Cluster.Leader[1] - '1') // n1 … n3
		c.Shutdown(i)
		return i
	}

	var mu sync.Mutex
	acked := map[string]uint64{}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var sent atomic.Int64
	for w := range 16 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				p := fmt.Sprintf("w%d-%d", w, i)
				sent.Add(1)
				lsn, err := submitWait(l, &wal.Raw{Typ: 1, Payload: []byte(p)})
				if err != nil {
					t.Errorf("append %s: %v", p, err)
					return
				}
				mu.Lock()
				acked[p] = lsn
				mu.Unlock()
			}
		})
	}
	time.Sleep(500 * time.Millisecond)
	for range 2 {
		i := stopLeader()
		time.Sleep(3 * time.Second)
		c.Restart(t, i)
		time.Sleep(time.Second)
	}
	close(stop)
	wg.Wait()
	if err, _ := fatal.Load().(error); err != nil {
		t.Fatalf("the log failed: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, g := range replayAll(t, open(t, js, 2, nil), 0) {
		seen[g.payload]++
		if lsn, ok := acked[g.payload]; ok && lsn != g.lsn {
			t.Errorf("record %s acknowledged at %d, replayed at %d", g.payload, lsn, g.lsn)
		}
	}
	for p := range acked {
		if seen[p] != 1 {
			t.Errorf("acknowledged record %s is there %d times", p, seen[p])
		}
	}
	if int64(len(acked)) != sent.Load() || len(seen) != len(acked) {
		t.Fatalf("%d sent, %d acknowledged, %d in the stream", sent.Load(), len(acked), len(seen))
	}
	t.Logf("%d records through two leader changes", len(acked))
}
