package intake

import (
	"sync"
	"testing"
)

// TestSendUntilClosed: values sent before Close are all received; Send
// after Close sends nothing and says so; a second Close says it did
// nothing; senders racing Close never panic on a closed channel.
func TestSendUntilClosed(t *testing.T) {
	in := New[int](4)
	got := make(chan []int)
	go func() {
		var vs []int
		for v := range in.C {
			vs = append(vs, v)
		}
		got <- vs
	}()
	var wg sync.WaitGroup
	var mu sync.Mutex
	sent := 0
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if in.Send(i) {
				mu.Lock()
				sent++
				mu.Unlock()
			}
		}()
	}
	for range 50 {
		if !in.Send(-1) {
			t.Fatal("Send refused before Close")
		}
	}
	if !in.Close() {
		t.Fatal("the first Close did nothing")
	}
	wg.Wait()
	if in.Send(1) {
		t.Fatal("Send took a value after Close")
	}
	if in.Close() {
		t.Fatal("a second Close closed again")
	}
	if vs := <-got; len(vs) != sent+50 {
		t.Fatalf("received %d values, %d were sent", len(vs), sent+50)
	}
}
