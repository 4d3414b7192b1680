package jslog

import (
	"testing"
	"time"
)

// TestTurns: the writer publishes at once while fewer than the window's
// messages are in flight and none of them is big; a full window, or one
// big message in flight, holds it until an answer frees the way.
func TestTurns(t *testing.T) {
	waits := func(tr *turns) chan struct{} {
		ch := make(chan struct{})
		go func() { tr.wait(); close(ch) }()
		return ch
	}
	now := func(ch chan struct{}) bool {
		select {
		case <-ch:
			return true
		case <-time.After(50 * time.Millisecond):
			return false
		}
	}
	for _, tc := range []struct {
		name     string
		inflight []int // records of the messages in flight
		held     bool  // the next waits
		answer   int   // the one answered to free it
	}{
		{"nothing in flight", nil, false, 0},
		{"one small", []int{3}, false, 0},
		{"window full of small ones", []int{1, 3}, true, 0},
		{"one big", []int{4}, true, 0},
		{"a big one behind a small one", []int{1, 9}, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTurns(2, 4)
			for _, n := range tc.inflight {
				tr.sent(n)
			}
			ch := waits(tr)
			if got := now(ch); got == tc.held {
				t.Fatalf("publishes at once: %v, want %v", got, !tc.held)
			}
			if !tc.held {
				return
			}
			tr.answered(tc.inflight[tc.answer])
			if len(tc.inflight) == 2 && tc.inflight[1-tc.answer] >= 4 {
				// The other is big and still in flight.
				if now(ch) {
					t.Fatal("published while a big message is in flight")
				}
				tr.answered(tc.inflight[1-tc.answer])
			}
			if !now(ch) {
				t.Fatal("still held after the answers")
			}
		})
	}
}
