package smtpin

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"backupmon/transport/connlimit"
)

// The answers of the session limits.
const (
	msgTooManyConns = "421 4.7.0 Too many connections, try again later\r\n"
	msgLifetime     = "421 4.4.2 Session time limit reached, closing connection\r\n"
	msgShutdown     = "421 4.3.2 Service shutting down, try again later\r\n"
)

// limit wraps l in the session limits: at most MaxSessions at once and
// MaxSessionsPerAddress from one address, each ending SessionLifetime
// after its connection.
func (s *Server) limit(l net.Listener) net.Listener {
	lim := connlimit.New(l, connlimit.Options{
		Limits: connlimit.Limits{Total: s.cfg.MaxSessions, PerAddress: s.cfg.MaxSessionsPerAddress},
		Name:   "smtp", Logger: s.cfg.Logger, Refused: s.cfg.Refused,
		Refuse: func(c net.Conn, _ bool) { io.WriteString(c, msgTooManyConns) },
	})
	return lifetimeListener{Listener: lim, lifetime: s.cfg.SessionLifetime, open: &s.open}
}

// lifetimeListener gives each connection it accepts a lifetime, and keeps
// it in open until it is closed.
type lifetimeListener struct {
	net.Listener
	lifetime time.Duration
	open     *openConns
}

func (l lifetimeListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	lc := &lifetimeConn{Conn: c, end: time.Now().Add(l.lifetime), open: l.open}
	c.SetReadDeadline(lc.end)
	l.open.add(lc)
	return lc, nil
}

// Errors reads and writes return once a session is over.
var (
	errLifetime = fmt.Errorf("smtp session time limit reached: %w", net.ErrClosed)
	errShutdown = fmt.Errorf("smtp listener shutting down: %w", net.ErrClosed)
)

// openConns are a listener's sessions' connections, for Shutdown to end
// those waiting for a command.
type openConns struct {
	mu      sync.Mutex
	conns   map[*lifetimeConn]struct{}
	closing atomic.Bool // Shutdown has begun
}

func (o *openConns) add(c *lifetimeConn) {
	o.mu.Lock()
	if o.conns == nil {
		o.conns = map[*lifetimeConn]struct{}{}
	}
	o.conns[c] = struct{}{}
	o.mu.Unlock()
}

func (o *openConns) remove(c *lifetimeConn) {
	o.mu.Lock()
	delete(o.conns, c)
	o.mu.Unlock()
}

// endIdle marks the listener closing and, every 100 ms until done is
// closed, makes each session not receiving a message's data stop waiting
// for its next command: the read that times out answers 421 4.3.2 and
// closes (over TLS, go-smtp answers its 421 4.4.2). Its deadline is set
// again each time, since go-smtp sets its own before each command.
func (o *openConns) endIdle(done <-chan struct{}) {
	o.closing.Store(true)
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		o.mu.Lock()
		for c := range o.conns {
			c.nudge()
		}
		o.mu.Unlock()
		select {
		case <-done:
			return
		case <-t.C:
		}
	}
}

// lifetimeConn ends a session at end, busy or idle: no read deadline goes
// past it, and the read it stops answers the client 421 4.4.2 and closes
// the connection. go-smtp's deadlines count idle time only, so a client
// sending NOOP every minute would keep its session for ever.
type lifetimeConn struct {
	net.Conn
	end     time.Time
	expired atomic.Bool
	open    *openConns

	mu     sync.Mutex // orders nudge against dataBegins
	inData atomic.Bool
	// tls is set once the client started TLS (a read began with a TLS
	// handshake record, which no SMTP command does): the 421 can then
	// only be written by go-smtp, through TLS, which it does for a read
	// timeout ("421 4.4.2 Idle timeout").
	tls atomic.Bool
}

func (c *lifetimeConn) bound(t time.Time) time.Time {
	if t.IsZero() || t.After(c.end) {
		return c.end
	}
	return t
}

func (c *lifetimeConn) SetReadDeadline(t time.Time) error { return c.Conn.SetReadDeadline(c.bound(t)) }

func (c *lifetimeConn) SetDeadline(t time.Time) error {
	if err := c.Conn.SetReadDeadline(c.bound(t)); err != nil {
		return err
	}
	return c.Conn.SetWriteDeadline(t)
}

func (c *lifetimeConn) Read(p []byte) (int, error) {
	if c.expired.Load() {
		return 0, errLifetime
	}
	n, err := c.Conn.Read(p)
	if n > 0 && p[0] == 0x16 { // a TLS handshake record
		c.tls.Store(true)
	}
	var ne net.Error
	if err == nil || !errors.As(err, &ne) || !ne.Timeout() || c.tls.Load() {
		return n, err
	}
	switch {
	case !time.Now().Before(c.end):
		c.expire(msgLifetime)
		return n, errLifetime
	case c.open.closing.Load() && !c.inData.Load():
		c.expire(msgShutdown)
		return n, errShutdown
	}
	return n, err
}

// nudge ends the wait for a command of a session not receiving a
// message's data, by a read deadline of now.
func (c *lifetimeConn) nudge() {
	c.mu.Lock()
	if !c.inData.Load() {
		c.Conn.SetReadDeadline(time.Now())
	}
	c.mu.Unlock()
}

// dataBegins marks the session receiving a message's data, which a
// shutdown lets finish: the read deadline a nudge may just have set is
// put back to timeout from now.
func (c *lifetimeConn) dataBegins(timeout time.Duration) {
	c.mu.Lock()
	c.inData.Store(true)
	c.Conn.SetReadDeadline(c.bound(time.Now().Add(timeout)))
	c.mu.Unlock()
}

// dataEnds marks the message's data read: a shutdown may end the session
// at its next command.
func (c *lifetimeConn) dataEnds() { c.inData.Store(false) }

// Close closes the connection and forgets it.
func (c *lifetimeConn) Close() error {
	c.open.remove(c)
	return c.Conn.Close()
}

func (c *lifetimeConn) Write(p []byte) (int, error) {
	if c.expired.Load() {
		return 0, errLifetime
	}
	return c.Conn.Write(p)
}

// expire tells the client its session is over (msg) and closes the
// connection; go-smtp's reads and writes fail from then on.
func (c *lifetimeConn) expire(msg string) {
	if c.expired.CompareAndSwap(false, true) {
		c.Conn.SetWriteDeadline(time.Now().Add(time.Second))
		io.WriteString(c.Conn, msg)
		c.Conn.Close()
	}
}
