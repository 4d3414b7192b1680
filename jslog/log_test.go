package jslog

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"backupmon/natstest"
	"backupmon/wal"
)

type got struct {
	lsn     uint64
	typ     byte
	payload string
}

// setup starts a cluster of three and makes the stream.
func setup(t *testing.T, opts ...nats.Option) (*natstest.Cluster, jetstream.JetStream) {
	t.Helper()
	c := natstest.Start(t, 3)
	nc := c.Connect(t, opts...)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CreateStream(context.Background(), js, "BM_S000", "bm.s000", 3); err != nil {
		t.Fatal(err)
	}
	// A new stream answers publishes only once every server routes its
	// subject to it: under -race that can take a moment after the create
	// (tests then saw "no response from stream"). A publish that expects a
	// sequence the stream cannot have is refused by the stream, which
	// shows it listens, and stores nothing.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		_, err := js.Publish(context.Background(), "bm.s000", nil, jetstream.WithExpectLastSequence(1<<40))
		var apiErr *jetstream.APIError
		if errors.As(err, &apiErr) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("stream BM_S000 does not answer publishes after 10 s: %v", err)
		}
	}
	return c, js
}

func open(t *testing.T, js jetstream.JetStream, epoch uint64, onFatal func(error)) *Log {
	t.Helper()
	l, err := Open(context.Background(), Options{JS: js, Stream: "BM_S000", Subject: "bm.s000", Epoch: epoch, OnFatal: onFatal, AckTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// submitWait submits rec and waits for its outcome.
func submitWait(l *Log, rec *wal.Raw) (uint64, error) {
	ch := make(chan struct {
		lsn uint64
		err error
	}, 1)
	l.Submit(rec, func(lsn uint64, err error) {
		ch <- struct {
			lsn uint64
			err error
		}{lsn, err}
	})
	r := <-ch
	return r.lsn, r.err
}

func replayAll(t *testing.T, l *Log, from uint64) []got {
	t.Helper()
	var out []got
	if err := l.Replay(from, func(lsn uint64, typ byte, payload []byte) error {
		out = append(out, got{lsn, typ, string(payload)})
		return nil
	}); err != nil {
		t.Fatalf("replay: %v", err)
	}
	return out
}

// TestAppendReplay: records acknowledged come back, in order, at the
// positions their acknowledgements gave, after the writer is gone and
// another took over; group commit packs concurrent records into few
// messages.
func TestAppendReplay(t *testing.T) {
	_, js := setup(t)
	l := open(t, js, 1, nil)
	l.Start()
	const n = 2000
	lsns := make([]uint64, n)
	var wg sync.WaitGroup
	var fails atomic.Int32
	for i := range n {
		wg.Add(1)
		l.Submit(&wal.Raw{Typ: byte(1 + i%7), Payload: []byte(fmt.Sprintf("record %d", i))}, func(lsn uint64, err error) {
			defer wg.Done()
			if err != nil {
				fails.Add(1)
			}
			lsns[i] = lsn
		})
	}
	wg.Wait()
	if fails.Load() > 0 {
		t.Fatalf("%d records failed", fails.Load())
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	st, _ := js.Stream(context.Background(), "BM_S000")
	info, _ := st.Info(context.Background())
	if msgs := info.State.Msgs; msgs > n/4 {
		t.Errorf("%d records took %d messages: no group commit", n, msgs)
	}
	t.Logf("%d records in %d messages", n, info.State.Msgs)

	l2 := open(t, js, 2, nil)
	all := replayAll(t, l2, 0)
	if len(all) != n {
		t.Fatalf("replayed %d records, want %d", len(all), n)
	}
	for i, g := range all {
		// Records went out in submission order from one goroutine.
		if g.payload != fmt.Sprintf("record %d", i) || g.typ != byte(1+i%7) || g.lsn != lsns[i] {
			t.Fatalf("record %d: %+v, want payload %q at %d", i, g, fmt.Sprintf("record %d", i), lsns[i])
		}
		if i > 0 && g.lsn <= all[i-1].lsn {
			t.Fatalf("positions do not increase: %d after %d", g.lsn, all[i-1].lsn)
		}
	}
	// A stream holding its whole history starts at 1, as a log on disk
	// does, and replaying from 1 is replaying it all (an engine without a
	// snapshot asks for that).
	if l2.FirstLSN() != 1 {
		t.Errorf("FirstLSN %d on a stream never truncated, want 1", l2.FirstLSN())
	}
	if from1 := replayAll(t, l2, 1); len(from1) != n || from1[0].lsn != lsns[0] {
		t.Fatalf("replay from 1: %d records, want %d from %d", len(from1), n, lsns[0])
	}
	// From a position in the middle.
	tail := replayAll(t, l2, lsns[1500])
	if len(tail) == 0 || tail[0].lsn != lsns[1500] || len(tail) != n-1500 {
		t.Fatalf("replay from %d: %d records starting %+v", lsns[1500], len(tail), tail[:min(1, len(tail))])
	}
	l2.Start()
	if lsn, err := submitWait(l2, &wal.Raw{Typ: 9, Payload: []byte("after takeover")}); err != nil || lsn <= lsns[n-1] {
		t.Fatalf("a record after the takeover: %d, %v", lsn, err)
	}
	l2.Close()
}

// TestFencing: once another writer took the stream over (its takeover
// marker published), the old writer's next append fails as fenced, its
// OnFatal is called once, and every later record fails at once; nothing
// of it is in the stream.
func TestFencing(t *testing.T) {
	_, js := setup(t)
	var fatals atomic.Int32
	var fatal atomic.Pointer[error]
	old := open(t, js, 1, func(err error) { fatals.Add(1); fatal.Store(&err) })
	old.Start()
	if _, err := submitWait(old, &wal.Raw{Typ: 1, Payload: []byte("before")}); err != nil {
		t.Fatal(err)
	}
	next := open(t, js, 2, nil)
	replayAll(t, next, 0)
	next.Start()
	if _, err := submitWait(next, &wal.Raw{Typ: 1, Payload: []byte("new owner")}); err != nil {
		t.Fatal(err)
	}
	if _, err := submitWait(old, &wal.Raw{Typ: 1, Payload: []byte("zombie")}); !errors.Is(err, ErrFenced) {
		t.Fatalf("the old writer's append: %v, want ErrFenced", err)
	}
	if _, err := submitWait(old, &wal.Raw{Typ: 1, Payload: []byte("zombie 2")}); !errors.Is(err, ErrFenced) {
		t.Fatalf("the old writer's next append: %v, want ErrFenced", err)
	}
	if fatals.Load() != 1 || !errors.Is(*fatal.Load(), ErrFenced) {
		t.Fatalf("OnFatal called %d times", fatals.Load())
	}
	next.Close()
	old.Close()
	check := open(t, js, 3, nil)
	var payloads []string
	for _, g := range replayAll(t, check, 0) {
		payloads = append(payloads, g.payload)
	}
	if fmt.Sprint(payloads) != "[before new owner]" {
		t.Fatalf("the stream holds %q", payloads)
	}
}

// TestBarrierAndTruncate: a barrier is answered once the records before it
// are durable, with the last one's position; TruncateFront drops whole
// messages before a position, and a replay from before them is refused.
func TestBarrierAndTruncate(t *testing.T) {
	_, js := setup(t)
	l := open(t, js, 1, nil)
	l.Start()
	var last uint64
	for i := range 10 {
		lsn, err := submitWait(l, &wal.Raw{Typ: 1, Payload: []byte{byte(i)}})
		if err != nil {
			t.Fatal(err)
		}
		last = lsn
	}
	ch := make(chan uint64, 1)
	l.Submit(nil, func(lsn uint64, err error) { ch <- lsn })
	if b := <-ch; b != last {
		t.Fatalf("barrier at %d, want %d", b, last)
	}
	keep := l.NextLSN()
	lsn, err := submitWait(l, &wal.Raw{Typ: 2, Payload: []byte("kept")})
	if err != nil || lsn != keep {
		t.Fatalf("next record at %d (%v), want %d", lsn, err, keep)
	}
	if err := l.TruncateFront(keep); err != nil {
		t.Fatal(err)
	}
	if l.FirstLSN() != keep {
		t.Fatalf("FirstLSN %d, want %d", l.FirstLSN(), keep)
	}
	l.Close()
	l2 := open(t, js, 2, nil)
	if g := replayAll(t, l2, 0); len(g) != 1 || g[0].payload != "kept" {
		t.Fatalf("after truncation: %+v", g)
	}
	if err := l2.Replay(lsnOf(2, 0), func(uint64, byte, []byte) error { return nil }); err == nil {
		t.Fatal("replay from a truncated position worked")
	}
}

// TestReplayFindsBrokenHistory: a gap in prevSeq, a message of an older
// epoch after a newer one, and a damaged message each stop replay with
// ErrBroken.
func TestReplayFindsBrokenHistory(t *testing.T) {
	for _, tc := range []struct {
		name string
		data func(prev uint64) []byte
	}{
		{"gap", func(prev uint64) []byte { return newMessage(5, prev+7).finish() }},
		{"older epoch", func(prev uint64) []byte { return newMessage(1, prev).finish() }},
		{"checksum", func(prev uint64) []byte {
			b := encodeMessage(nil, 5, prev, []wal.Record{&wal.Raw{Typ: 1, Payload: []byte("x")}})
			b[len(b)-6] ^= 0x40
			return b
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, js := setup(t)
			l := open(t, js, 5, nil)
			l.Start()
			if _, err := submitWait(l, &wal.Raw{Typ: 1, Payload: []byte("ok")}); err != nil {
				t.Fatal(err)
			}
			l.Close()
			prev := l.LastSeq()
			if _, err := js.PublishMsg(context.Background(), &nats.Msg{Subject: "bm.s000", Data: tc.data(prev)}); err != nil {
				t.Fatal(err)
			}
			l2 := open(t, js, 6, nil)
			err := l2.Replay(0, func(uint64, byte, []byte) error { return nil })
			if !errors.Is(err, ErrBroken) {
				t.Fatalf("replay: %v, want ErrBroken", err)
			}
		})
	}
}

// TestSurvivesServerStop: records acknowledged survive one of three servers
// stopping and coming back. An append whose outcome the stop left unknown
// for good fails the log; a new writer then replays the stream and goes
// on (most are resolved: TestLeaderChangeKeepsTheLog). Every acknowledged
// record is there.
func TestSurvivesServerStop(t *testing.T) {
	c, js := setup(t)
	epoch := uint64(1)
	l := open(t, js, epoch, func(error) {})
	l.Start()
	var acked []string
	for i := range 50 {
		p := fmt.Sprintf("a%d", i)
		if _, err := submitWait(l, &wal.Raw{Typ: 1, Payload: []byte(p)}); err != nil {
			t.Fatal(err)
		}
		acked = append(acked, p)
	}
	c.Shutdown(2)
	failed := 0
	for i := range 50 {
		p := fmt.Sprintf("b%d", i)
		for {
			_, err := submitWait(l, &wal.Raw{Typ: 2, Payload: []byte(p)})
			if err == nil {
				acked = append(acked, p)
				break
			}
			failed++
			if failed > 20 {
				t.Fatalf("append keeps failing with one server of three down: %v", err)
			}
			// Rebuild: a new writer replays the stream and takes over.
			l.Close()
			time.Sleep(500 * time.Millisecond)
			epoch++
			l = open(t, js, epoch, func(error) {})
			replayAll(t, l, 0)
			l.Start()
		}
	}
	c.Restart(t, 2)
	l.Close()
	l2 := open(t, js, epoch+1, nil)
	seen := map[string]int{}
	for _, g := range replayAll(t, l2, 0) {
		seen[g.payload]++
	}
	for _, p := range acked {
		if seen[p] < 1 {
			t.Errorf("acknowledged record %s lost", p)
		}
	}
	t.Logf("%d appends failed (leader change) and were sent again", failed)
}
