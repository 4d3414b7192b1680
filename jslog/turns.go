package jslog

import "sync"

// turns decides when the shard writer may publish its next message: while
// fewer than Window messages wait for their acknowledgements, and, while a
// message of at least BatchFrom records is among them, only once that one
// is acknowledged. Under a load that fills messages, the records that come
// while one waits then go out together in the next, instead of split over
// two (each message costs every NATS server a log append and an fsync);
// under a light load the next message goes out at once.
type turns struct {
	mu       sync.Mutex
	cond     sync.Cond
	inflight int // messages handed to the acker and not yet answered
	big      int // of them, those of at least bigFrom records
	window   int
	bigFrom  int
}

func newTurns(window, bigFrom int) *turns {
	t := &turns{window: window, bigFrom: bigFrom}
	t.cond.L = &t.mu
	return t
}

// wait blocks until the writer may publish.
func (t *turns) wait() {
	t.mu.Lock()
	for t.inflight >= t.window || t.big > 0 {
		t.cond.Wait()
	}
	t.mu.Unlock()
}

// sent counts a message of records handed to the acker.
func (t *turns) sent(records int) {
	t.mu.Lock()
	t.inflight++
	if records >= t.bigFrom {
		t.big++
	}
	t.mu.Unlock()
}

// answered counts a message of records the acker is done with.
func (t *turns) answered(records int) {
	t.mu.Lock()
	t.inflight--
	if records >= t.bigFrom {
		t.big--
	}
	t.cond.Broadcast()
	t.mu.Unlock()
}
