package jslog

import (
	"context"
	"errors"
	"testing"
	"time"

	"backupmon/wal"
)

// TestReplayWithoutQuorumGivesUp: a stream that loses its quorum after
// Open, before Replay or between two of its fetches, makes Replay return
// an error to try again within a bounded time, never ErrBroken, and never
// a wait of minutes: a shard's open waits on it while the shard's lease
// runs out, and its owner must go on to other shards.
func TestReplayWithoutQuorumGivesUp(t *testing.T) {
	// Making the consumer (AckTimeout), a fetch's tries to make it anew
	// (10 s each, 1 s apart) and its wait (5 s), with room for -race.
	within := 2*time.Second + resetAttempts*11*time.Second + 5*time.Second + 15*time.Second
	for _, tc := range []struct {
		name     string
		messages int // more than a fetch's 512 for a second fetch
		during   bool
	}{
		{"before the replay", 3, false},
		{"between two fetches", 600, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, js := setup(t)
			l := open(t, js, 5, nil)
			l.Start()
			for range tc.messages {
				if _, err := submitWait(l, &wal.Raw{Typ: 1, Payload: []byte("ok")}); err != nil {
					t.Fatal(err)
				}
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			next, err := Open(context.Background(), Options{JS: js, Stream: "BM_S000", Subject: "bm.s000", Epoch: 6, Mark: l.LastSeq(), AckTimeout: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			var start time.Time
			lose := func() {
				c.LoseQuorum(t, js, "BM_S000")
				start = time.Now()
			}
			if !tc.during {
				lose()
			}
			// During the replay: the last record of its first fetch (512
			// messages, all received) waits while the quorum goes.
			first, resume := make(chan struct{}), make(chan struct{})
			n := 0
			done := make(chan error, 1)
			go func() {
				done <- next.Replay(0, func(lsn uint64, _ byte, _ []byte) error {
					if n++; tc.during && seqOf(lsn) == 512 {
						close(first)
						<-resume
					}
					return nil
				})
			}()
			if tc.during {
				select {
				case <-first:
				case err := <-done:
					t.Fatalf("replay ended before the end of its first fetch: %v", err)
				}
				lose()
				close(resume)
			}
			select {
			case err := <-done:
				if err == nil || errors.Is(err, ErrBroken) || n >= tc.messages {
					t.Fatalf("replay without a quorum: %d records of %d, %v; want fewer and an error that is not ErrBroken", n, tc.messages, err)
				}
				t.Logf("replay without a quorum gave up after %v, %d records in: %v", time.Since(start).Round(time.Millisecond), n, err)
			case <-time.After(within + time.Minute): // loseQuorum's own wait
				t.Fatalf("replay without a quorum did not return within %v of losing it", within)
			}
			if took := time.Since(start); took > within {
				t.Errorf("replay without a quorum returned %v after losing it, want within %v", took, within)
			}
		})
	}
}
