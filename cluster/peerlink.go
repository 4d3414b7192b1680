package cluster

import (
	"bufio"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"backupmon/clustertls"
)

// link is a front's connection to one peer: requests go out as frames
// (peerwire.go), each waits for the answer with its id. A connection that
// breaks fails the requests waiting on it; the next request dials again.
type link struct {
	addr   string
	secret []byte
	tls    *tls.Config // the cluster's TLS; nil: in clear

	mu     sync.Mutex
	cur    *linkConn
	closed bool
}

// linkConn is one connection of a link and the requests waiting on it.
type linkConn struct {
	out *sender

	mu    sync.Mutex
	next  uint64
	calls map[uint64]*peerCall
	err   error // why the connection ended; no call is added after
}

// peerCall is one request waiting for its answer.
type peerCall struct {
	done   chan struct{} // one value once answer or err is set
	answer []byte
	err    error
	timer  *time.Timer
}

var peerCalls = sync.Pool{New: func() any {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &peerCall{done: make(chan struct{}, 1), timer: t}
}}

// errUnreached is a request that may not have reached the peer: it could
// not dial, or the connection broke before the answer came.
var errUnreached = errors.New("the peer could not be reached")

// maxPeerCalls bounds the requests waiting on one connection, as
// fasthttp's MaxConns bounded the exchanges in flight before: past it a
// request is not sent there (the front tries NATS), so that a peer that
// stopped does not find thousands of stale requests when it goes on.
const maxPeerCalls = 1024

// peerDialTimeout bounds dialling a peer, and the TLS handshake with it
// (then the front tries NATS).
const peerDialTimeout = time.Second

// newLink returns the link to the peer at addr, which opens each
// connection with secret, over TLS of tlsc when it is not nil.
func newLink(addr string, secret []byte, tlsc *tls.Config) *link {
	return &link{addr: addr, secret: secret, tls: tlsc}
}

// conn returns the link's connection, dialling it when there is none.
func (l *link) conn() (*linkConn, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, errSenderClosed
	}
	if l.cur != nil {
		return l.cur, nil
	}
	c, err := l.dial()
	if err != nil {
		return nil, err
	}
	hello := binary.BigEndian.AppendUint32(nil, uint32(len(peerHello)+len(l.secret)))
	hello = append(append(hello, peerHello...), l.secret...)
	if _, err := c.Write(hello); err != nil {
		c.Close()
		return nil, fmt.Errorf("greet peer %s: %w", l.addr, err)
	}
	lc := &linkConn{out: newSender(c), calls: map[uint64]*peerCall{}}
	l.cur = lc
	go l.read(lc, c)
	return lc, nil
}

// dial opens a connection to the peer: TCP, then the TLS handshake (which
// checks that the peer's certificate is the cluster's and names the host
// dialled) when the link has TLS.
func (l *link) dial() (net.Conn, error) {
	deadline := time.Now().Add(peerDialTimeout)
	c, err := net.DialTimeout("tcp", l.addr, peerDialTimeout)
	if err != nil {
		return nil, fmt.Errorf("dial peer %s: %w", l.addr, err)
	}
	if l.tls == nil {
		return c, nil
	}
	tc := tls.Client(c, clustertls.Dialling(l.tls, l.addr))
	tc.SetDeadline(deadline)
	if err := tc.Handshake(); err != nil {
		c.Close()
		return nil, fmt.Errorf("TLS with peer %s: %w", l.addr, err)
	}
	tc.SetDeadline(time.Time{})
	return tc, nil
}

// do sends request req for shard and waits up to timeout for its answer,
// which it hands to use before it returns. It returns errUnreached when
// the request may not have reached the peer (the caller may try another
// way), errPeerTimeout when no answer came in time.
func (l *link) do(shard int, req []byte, timeout time.Duration, use func(answer []byte) error) error {
	lc, err := l.conn()
	if err != nil {
		return fmt.Errorf("%w: %w", errUnreached, err)
	}
	c := peerCalls.Get().(*peerCall)
	lc.mu.Lock()
	if lc.err != nil || len(lc.calls) >= maxPeerCalls {
		err := lc.err
		lc.mu.Unlock()
		peerCalls.Put(c)
		if err == nil {
			err = fmt.Errorf("%d requests waiting on the connection", maxPeerCalls)
		}
		return fmt.Errorf("%w: %w", errUnreached, err)
	}
	lc.next++
	id := lc.next
	lc.calls[id] = c
	lc.mu.Unlock()
	switch err := lc.out.send(func(b []byte) []byte { return appendRequestFrame(b, id, shard, req) }); {
	case errors.Is(err, errPeerBacklog): // not sent: the connection stays
		if lc.withdraw(id) {
			peerCalls.Put(c)
			return fmt.Errorf("%w: %w", errUnreached, err)
		}
		<-c.done // the connection broke meanwhile and answered the call
		return l.finish(c, use)
	case err != nil:
		l.broken(lc, err) // answers this call too
	}
	c.timer.Reset(timeout)
	select {
	case <-c.done:
		c.timer.Stop()
	case <-c.timer.C:
		if lc.withdraw(id) {
			peerCalls.Put(c)
			return errPeerTimeout
		}
		<-c.done // the answer is being handed over
	}
	return l.finish(c, use)
}

// withdraw takes call id off lc and reports whether it was still waiting
// (else its answer or its connection's failure is being handed to it).
func (lc *linkConn) withdraw(id uint64) bool {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	_, waiting := lc.calls[id]
	delete(lc.calls, id)
	return waiting
}

// finish hands an answered call's answer to use (or returns its error as
// errUnreached) and returns the call to the pool.
func (l *link) finish(c *peerCall, use func(answer []byte) error) error {
	var err error
	if c.err == nil {
		err = use(c.answer)
	} else {
		err = fmt.Errorf("%w: %w", errUnreached, c.err)
	}
	c.answer, c.err = c.answer[:0], nil
	if cap(c.answer) <= maxPooledEnvelope {
		peerCalls.Put(c)
	}
	return err
}

// read hands each answer that comes on lc to its call, until the
// connection breaks.
func (l *link) read(lc *linkConn, c net.Conn) {
	r := bufio.NewReaderSize(c, 64<<10)
	var buf []byte
	for {
		var err error
		buf, err = readFrame(r, buf, answerHead)
		if err != nil {
			l.broken(lc, fmt.Errorf("read from peer %s: %w", l.addr, err))
			return
		}
		id := binary.BigEndian.Uint64(buf)
		lc.mu.Lock()
		call := lc.calls[id]
		delete(lc.calls, id)
		lc.mu.Unlock()
		if call != nil {
			call.answer = append(call.answer[:0], buf[answerHead:]...)
			call.done <- struct{}{}
		}
		if cap(buf) > 1<<20 {
			buf = nil
		}
	}
}

// broken ends lc: its waiting calls fail with err, and the link dials a
// new connection for the next request.
func (l *link) broken(lc *linkConn, err error) {
	lc.out.close(err)
	l.mu.Lock() // first, so that a call failed below that tries again dials anew
	if l.cur == lc {
		l.cur = nil
	}
	l.mu.Unlock()
	lc.mu.Lock()
	if lc.err == nil {
		lc.err = err
	}
	calls := lc.calls
	lc.calls = map[uint64]*peerCall{}
	lc.mu.Unlock()
	for _, c := range calls {
		c.err = err
		c.done <- struct{}{}
	}
}

// close closes the link's connection; requests waiting on it fail and no
// new one is sent.
func (l *link) close() {
	l.mu.Lock()
	l.closed = true
	lc := l.cur
	l.mu.Unlock()
	if lc != nil {
		l.broken(lc, errSenderClosed)
	}
}
