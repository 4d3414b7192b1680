package smtpin

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countingListener counts the bytes the server reads from its connections.
type countingListener struct {
	net.Listener
	read *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{Conn: c, read: l.read}, nil
}

type countingConn struct {
	net.Conn
	read *atomic.Int64
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	return n, err
}

// liveHeap returns the heap in use after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC() // the second empties sync.Pool's victim cache
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// 1,000 slow clients, each sending 64 KiB of a message and then nothing,
// hold no more memory than the budget (measured as the live heap they add
// beyond their sessions), and an ordinary sender still gets its e-mail
// recorded meanwhile. Without the budget each session holds its message
// so far: 1,000 × 64 KiB.
func TestSlowClientsStayInBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 connections")
	}
	const (
		clients  = 1000
		budget   = 16 << 20
		perSlow  = 64 << 10
		addrs    = 40 // 25 clients from each of 127.0.1.1 ... 127.0.1.40
		lineSize = 1000
	)
	var read atomic.Int64
	f := startOpts(t, fixtureOpts{
		config:   func(c *Config) { c.MaxSessions, c.MessageMemory = clients+100, budget },
		listener: func(l net.Listener) net.Listener { return countingListener{Listener: l, read: &read} },
	})
	slowJob, j := f.job("slow", "generic"), f.job("ordinary", "generic")
	header := "From: x@h.example\r\nSubject: slow\r\nMessage-ID: <slow@h.example>\r\n\r\n"
	line := strings.Repeat("x", lineSize-2) + "\r\n"
	body := header + strings.Repeat(line, (perSlow-len(header))/lineSize)

	// The slow clients get to RCPT.
	conns := make([]net.Conn, clients)
	t.Cleanup(func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	})
	errs := make(chan error, clients)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			src := fmt.Sprintf("127.0.1.%d", 1+i%addrs)
			d := net.Dialer{LocalAddr: &net.TCPAddr{IP: []byte{127, 0, 1, byte(1 + i%addrs)}}, Timeout: 10 * time.Second}
			c, err := d.Dial("tcp", f.addr)
			if err != nil {
				errs <- fmt.Errorf("client %d from %s: %w", i, src, err)
				return
			}
			conns[i] = c
			c.SetDeadline(time.Now().Add(30 * time.Second))
			r := bufio.NewReader(c)
			want := []string{"220 ", "250 ", "250 ", "250 "}
			for k, cmd := range []string{"", "HELO h.example", "MAIL FROM:<x@h.example>", "RCPT TO:<" + slowJob.IngestAddress + ">"} {
				if cmd != "" {
					io.WriteString(c, cmd+"\r\n")
				}
				if l, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(l, want[k]) {
					errs <- fmt.Errorf("client %d from %s, after %q: %q %v", i, src, cmd, l, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	sessions := liveHeap()
	before := read.Load()

	// Each sends DATA and 64 KiB of its message, and stalls.
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			io.WriteString(c, "DATA\r\n"+body)
		}()
	}
	wg.Wait()
	want := before + int64(clients*len("DATA\r\n"+body))
	for deadline := time.Now().Add(60 * time.Second); read.Load() < want; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the server read %d of the %d bytes sent", read.Load()-before, want-before)
		}
	}
	held := int64(liveHeap()) - int64(sessions)
	t.Logf("1,000 slow clients with %d KiB each: %.1f MiB held beyond their sessions (budget %d MiB)", perSlow>>10, float64(held)/(1<<20), budget>>20)
	if held > budget {
		t.Errorf("the slow clients' messages hold %.1f MiB, over the budget of %d MiB", float64(held)/(1<<20), budget>>20)
	}

	// An ordinary sender gets through meanwhile.
	start := time.Now()
	c := dialFrom(t, "127.0.0.2", f.addr)
	c.line(t)
	for _, cmd := range []string{"HELO h.example", "MAIL FROM:<cron@h.example>", "RCPT TO:<" + j.IngestAddress + ">", "DATA"} {
		c.cmd(t, cmd)
	}
	io.WriteString(c, string(generic("ordinary", "OK", "-"))+".\r\n")
	if a := c.line(t); !strings.HasPrefix(a, "250 ") {
		t.Fatalf("the ordinary sender's DATA: %q", a)
	}
	if h := f.view(j.ID).History; len(h) != 1 {
		t.Fatalf("the ordinary sender's mail: %d results", len(h))
	}
	t.Logf("the ordinary sender was answered in %v", time.Since(start))
}
