package notify

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"backupmon/engine"
)

// blockingReceiver answers 200 once release is closed, and tells arrived
// of each request first. release is closed when the test ends, before the
// server is.
func blockingReceiver(t *testing.T) (url string, arrived chan struct{}, release func()) {
	t.Helper()
	arrived = make(chan struct{}, 16)
	ch := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(ch) }) }
	srv, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-ch:
			w.WriteHeader(200)
		case <-r.Context().Done():
		}
	})
	t.Cleanup(release) // runs before receiver's srv.Close
	return srv.URL + "/hook", arrived, release
}

func waitArrival(t *testing.T, arrived chan struct{}) {
	t.Helper()
	select {
	case <-arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("the receiver got no request")
	}
}

func attemptNotice(url string, attempt int) engine.Notice {
	nt := testNotice(engine.ChannelWebhook, url)
	nt.Attempt = attempt
	return nt
}

// byAttempt collects k outcomes by attempt number.
func byAttempt(t *testing.T, rec *recorder, k int) map[int]string {
	t.Helper()
	got := map[int]string{}
	for range k {
		o := rec.next(t)
		got[o.attempt] = o.failure
	}
	return got
}

func TestQueueFull(t *testing.T) {
	url, arrived, release := blockingReceiver(t)
	var mu sync.Mutex // held around Deliver and taken by Done: a Done called inside Deliver would deadlock
	rec := newRecorder()
	n, _ := newTestNotifier(t, Options{Workers: 1, QueueSize: 1, AllowPrivate: true, Done: func(ws, d engine.ID, a int, f string) {
		mu.Lock()
		defer mu.Unlock()
		rec.done(ws, d, a, f)
	}})

	deliver := func(nt engine.Notice) {
		t.Helper()
		returned := make(chan struct{})
		go func() {
			mu.Lock()
			defer mu.Unlock()
			n.Deliver(nt)
			close(returned)
		}()
		select {
		case <-returned:
		case <-time.After(5 * time.Second):
			t.Fatal("Deliver blocked")
		}
	}
	deliver(attemptNotice(url, 1)) // taken by the one worker, which then blocks
	waitArrival(t, arrived)
	deliver(attemptNotice(url, 2)) // fills the queue
	deliver(attemptNotice(url, 3)) // refused
	deliver(attemptNotice(url, 4)) // refused
	got := byAttempt(t, rec, 2)
	if got[3] != FailureQueueFull || got[4] != FailureQueueFull {
		t.Fatalf("outcomes while full %v", got)
	}
	rec.none(t)
	release()
	got = byAttempt(t, rec, 2)
	if f1, f2 := got[1], got[2]; f1 != "" || f2 != "" || len(got) != 2 {
		t.Fatalf("outcomes after release %v", got)
	}
}

func TestClose(t *testing.T) {
	t.Run("waits for the attempt in flight and reports the queued ones", func(t *testing.T) {
		url, arrived, release := blockingReceiver(t)
		n, rec := newTestNotifier(t, Options{Workers: 1, QueueSize: 8, AllowPrivate: true})
		n.Deliver(attemptNotice(url, 1))
		waitArrival(t, arrived)
		n.Deliver(attemptNotice(url, 2))
		n.Deliver(attemptNotice(url, 3))

		closed := make(chan struct{})
		go func() {
			n.Close()
			close(closed)
		}()
		for !n.closing.Load() {
			time.Sleep(time.Millisecond)
		}
		select {
		case <-closed:
			t.Fatal("Close returned while an attempt was in flight")
		case <-time.After(100 * time.Millisecond):
		}
		rec.none(t)
		release()
		select {
		case <-closed:
		case <-time.After(10 * time.Second):
			t.Fatal("Close did not return")
		}
		// Every outcome was handed over before Close returned.
		got := map[int]string{}
		for range 3 {
			select {
			case o := <-rec.ch:
				got[o.attempt] = o.failure
			default:
				t.Fatalf("Close returned before all outcomes: %v", got)
			}
		}
		if got[1] != "" || got[2] != FailureClosed || got[3] != FailureClosed {
			t.Fatalf("outcomes %v", got)
		}
		if len(arrived) != 0 {
			t.Fatal("a queued notice was sent after Close")
		}

		n.Deliver(attemptNotice(url, 4))
		if o := rec.next(t); o.attempt != 4 || o.failure != FailureClosed {
			t.Fatalf("Deliver after Close: %+v", o)
		}
		n.Close() // again: nothing happens
	})

	t.Run("an attempt in flight ends within Timeout", func(t *testing.T) {
		url, arrived, _ := blockingReceiver(t)
		n, rec := newTestNotifier(t, Options{Workers: 2, Timeout: 300 * time.Millisecond, AllowPrivate: true})
		n.Deliver(attemptNotice(url, 1))
		waitArrival(t, arrived)
		start := time.Now()
		n.Close()
		if took := time.Since(start); took > 3*time.Second {
			t.Fatalf("Close took %v with Timeout 300ms", took)
		}
		if o := rec.next(t); o.failure != "timeout after 300ms" {
			t.Fatalf("outcome %+v", o)
		}
	})
}

func TestManyConcurrent(t *testing.T) {
	srv, _ := receiver(t, status(200))
	n, rec := newTestNotifier(t, Options{Workers: 4, QueueSize: 64, AllowPrivate: true})
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() { n.Deliver(attemptNotice(srv.URL+"/hook", i+1)) })
	}
	wg.Wait()
	got := byAttempt(t, rec, 50)
	for a := 1; a <= 50; a++ {
		if f, ok := got[a]; !ok || f != "" {
			t.Errorf("attempt %d: %q, %v", a, f, ok)
		}
	}
}

func TestUnknownChannelType(t *testing.T) {
	n, rec := newTestNotifier(t, Options{})
	if f := sendOne(t, n, rec, testNotice("pager", "")); f != `unknown channel type "pager"` {
		t.Fatalf("failure %q", f)
	}
}

func TestCleanFailure(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"kept", "HTTP 500", "HTTP 500"},
		{"one line", "smtp: 550 5.1.1 no\r\nsuch\tuser  here", "smtp: 550 5.1.1 no such user here"},
		{"empty", " \r\n", "failed"},
		{"invalid UTF-8", "bad \xff byte", "bad \uFFFD byte"},
		{"long", strings.Repeat("é", 300), strings.Repeat("é", MaxFailureLen-1) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := cleanFailure(tt.in)
			if got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
			if utf8.RuneCountInString(got) > MaxFailureLen {
				t.Fatalf("%d characters", utf8.RuneCountInString(got))
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	n := New(Options{})
	defer n.Close()
	if cap(n.queue) != DefaultQueueSize || n.timeout != DefaultTimeout {
		t.Fatalf("queue %d timeout %v", cap(n.queue), n.timeout)
	}
	n.Deliver(testNotice("pager", "")) // a nil Done is allowed
}
