package cluster

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// fakePeer is the owner's side of the peer wire, answering each request
// with answer(shard, request); an empty answer leaves it unanswered.
type fakePeer struct {
	ln     net.Listener
	answer func(shard int, req []byte) string

	mu     sync.Mutex
	hellos []string
	conns  []net.Conn
}

func startFakePeer(t testing.TB, answer func(int, []byte) string) *fakePeer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &fakePeer{ln: ln, answer: answer}
	t.Cleanup(func() { ln.Close(); p.dropAll() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			p.conns = append(p.conns, c)
			p.mu.Unlock()
			go p.serve(c)
		}
	}()
	return p
}

func (p *fakePeer) serve(c net.Conn) {
	r := bufio.NewReader(c)
	hello, err := readFrame(r, nil, 0)
	if err != nil {
		return
	}
	p.mu.Lock()
	p.hellos = append(p.hellos, string(hello))
	p.mu.Unlock()
	out := newSender(c)
	for {
		f, err := readFrame(r, nil, requestHead)
		if err != nil {
			out.close(err)
			return
		}
		id, shard, req := binary.BigEndian.Uint64(f), int(binary.BigEndian.Uint16(f[8:])), f[requestHead:]
		go func() {
			if a := p.answer(shard, req); a != "" {
				out.send(func(b []byte) []byte { return appendAnswerFrame(b, id, []byte(a)) })
			}
		}()
	}
}

// dropAll closes every connection the fake took.
func (p *fakePeer) dropAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// ask sends req to shard over l and returns the answer.
func ask(l *link, shard int, req string, timeout time.Duration) (string, error) {
	var got string
	err := l.do(shard, []byte(req), timeout, func(a []byte) error { got = string(a); return nil })
	return got, err
}

// TestLinkAnswersEachRequestItsOwn: many requests in flight on one
// connection, answered out of order, each get their own answer; the
// connection opens with the hello and the secret.
func TestLinkAnswersEachRequestItsOwn(t *testing.T) {
	p := startFakePeer(t, func(shard int, req []byte) string {
		time.Sleep(time.Duration(len(req)%7) * time.Millisecond) // out of order
		return fmt.Sprintf("%d:%s", shard, bytes.ToUpper(req))
	})
	l := newLink(p.ln.Addr().String(), []byte("s3cret"), nil)
	defer l.close()
	var wg sync.WaitGroup
	errs := make(chan error, 300)
	for i := range 300 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := fmt.Sprintf("req-%d-%s", i, bytes.Repeat([]byte("x"), i%13))
			got, err := ask(l, i%256, req, 5*time.Second)
			if want := fmt.Sprintf("%d:%s", i%256, bytes.ToUpper([]byte(req))); err != nil || got != want {
				errs <- fmt.Errorf("request %d: %q, %v; want %q", i, got, err, want)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.hellos) != 1 || p.hellos[0] != peerHello+"s3cret" {
		t.Errorf("hellos %q, want one %q", p.hellos, peerHello+"s3cret")
	}
}

// TestLinkTimeoutAndBreak: a request unanswered in time fails with
// errPeerTimeout (its late answer is dropped, the next request still gets
// its own); a connection that breaks fails its waiting requests with
// errUnreached, and the next request dials again.
func TestLinkTimeoutAndBreak(t *testing.T) {
	release := make(chan struct{})
	p := startFakePeer(t, func(_ int, req []byte) string {
		switch string(req) {
		case "slow":
			<-release
			return "late"
		case "never":
			return ""
		}
		return "ok " + string(req)
	})
	l := newLink(p.ln.Addr().String(), []byte("k"), nil)
	defer l.close()

	if _, err := ask(l, 1, "slow", 50*time.Millisecond); !errors.Is(err, errPeerTimeout) {
		t.Fatalf("an answer too late: %v, want errPeerTimeout", err)
	}
	close(release)
	for i := range 20 {
		if got, err := ask(l, 1, fmt.Sprint(i), time.Second); err != nil || got != fmt.Sprint("ok ", i) {
			t.Fatalf("after a late answer, request %d: %q, %v", i, got, err)
		}
	}

	waiting := make(chan error, 1)
	go func() { _, err := ask(l, 2, "never", 10*time.Second); waiting <- err }()
	deadline := time.Now().Add(5 * time.Second)
	for {
		p.mu.Lock()
		n := len(p.conns)
		p.mu.Unlock()
		l.mu.Lock()
		lc := l.cur
		l.mu.Unlock()
		pending := 0
		if lc != nil {
			lc.mu.Lock()
			pending = len(lc.calls)
			lc.mu.Unlock()
		}
		if n == 1 && pending == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the request never got in flight (%d connections, %d pending)", n, pending)
		}
		time.Sleep(5 * time.Millisecond)
	}
	p.dropAll()
	select {
	case err := <-waiting:
		if !errors.Is(err, errUnreached) {
			t.Fatalf("a request on a broken connection: %v, want errUnreached", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a request on a broken connection still waits")
	}
	if got, err := ask(l, 3, "again", time.Second); err != nil || got != "ok again" {
		t.Fatalf("after the break: %q, %v", got, err)
	}
	p.mu.Lock()
	if len(p.hellos) != 2 {
		t.Errorf("%d connections, want 2 (one dialled again after the break)", len(p.hellos))
	}
	p.mu.Unlock()

	p.ln.Close()
	p.dropAll()
	l2 := newLink(p.ln.Addr().String(), nil, nil)
	if _, err := ask(l2, 0, "x", time.Second); !errors.Is(err, errUnreached) {
		t.Fatalf("no one listening: %v, want errUnreached", err)
	}
	l.close()
	if _, err := ask(l, 0, "x", time.Second); !errors.Is(err, errUnreached) {
		t.Fatalf("a closed link: %v, want errUnreached", err)
	}
}

// TestReadFrameBounds: a frame shorter than its head or longer than the
// limit does not read.
func TestReadFrameBounds(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		min  int
		want error
	}{
		{"short", binary.BigEndian.AppendUint32(nil, 3), requestHead, errFrame},
		{"over the limit", binary.BigEndian.AppendUint32(nil, peerBodyLimit+requestHead+1), requestHead, errFrame},
		{"cut", append(binary.BigEndian.AppendUint32(nil, 20), make([]byte, 12)...), requestHead, io.ErrUnexpectedEOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readFrame(bufio.NewReader(bytes.NewReader(tc.in)), nil, tc.min)
			if !errors.Is(err, tc.want) {
				t.Fatalf("readFrame: %v, want %v", err, tc.want)
			}
		})
	}
	f := appendRequestFrame(nil, 42, 7, []byte("body"))
	got, err := readFrame(bufio.NewReader(bytes.NewReader(f)), nil, requestHead)
	if err != nil || binary.BigEndian.Uint64(got) != 42 || binary.BigEndian.Uint16(got[8:]) != 7 || string(got[requestHead:]) != "body" {
		t.Fatalf("a request frame read back: %q, %v", got, err)
	}
}

// FuzzReadFrame: any bytes read as frames end in a frame within bounds or
// an error, never a panic.
func FuzzReadFrame(f *testing.F) {
	f.Add(appendRequestFrame(nil, 1, 2, []byte("x")))
	f.Add(appendAnswerFrame(appendAnswerFrame(nil, 1, nil), 2, []byte("yy")))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bufio.NewReader(bytes.NewReader(in))
		var buf []byte
		for {
			var err error
			if buf, err = readFrame(r, buf, answerHead); err != nil {
				return
			}
			if len(buf) < answerHead || len(buf) > peerBodyLimit+requestHead {
				t.Fatalf("a frame of %d bytes", len(buf))
			}
		}
	})
}

// TestLinkBoundsWaitingRequests: a peer that takes no answers out (it
// stopped) holds at most maxPeerCalls requests of a front; the next one is
// not sent there (errUnreached: the front tries NATS), so the peer finds
// no flood of stale requests when it goes on.
func TestLinkBoundsWaitingRequests(t *testing.T) {
	p := startFakePeer(t, func(int, []byte) string { return "" }) // never answers
	l := newLink(p.ln.Addr().String(), []byte("k"), nil)
	defer l.close()
	var wg sync.WaitGroup
	for range maxPeerCalls {
		wg.Add(1)
		go func() { defer wg.Done(); ask(l, 1, "x", 3*time.Second) }()
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		lc, err := l.conn()
		if err != nil {
			t.Fatal(err)
		}
		lc.mu.Lock()
		n := len(lc.calls)
		lc.mu.Unlock()
		if n == maxPeerCalls {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d requests waiting, want %d", n, maxPeerCalls)
		}
		time.Sleep(5 * time.Millisecond)
	}
	start := time.Now()
	if _, err := ask(l, 1, "one more", 3*time.Second); !errors.Is(err, errUnreached) || time.Since(start) > time.Second {
		t.Fatalf("request %d: %v after %v, want errUnreached at once", maxPeerCalls+1, err, time.Since(start))
	}
	wg.Wait() // the others time out
}
