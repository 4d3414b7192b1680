package smtpin

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"time"

	"backupmon/transport/connlimit"
)

// The answers of the session limits.
const (
	msgTooManyConns = "421 4.7.0 Too many connections, try again later\r\n"
	msgLifetime     = "421 4.4.2 Session time limit reached, closing connection\r\n"
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
	return lifetimeListener{Listener: lim, lifetime: s.cfg.SessionLifetime}
}

// lifetimeListener gives each connection it accepts a lifetime.
type lifetimeListener struct {
	net.Listener
	lifetime time.Duration
}

func (l lifetimeListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	lc := &lifetimeConn{Conn: c, end: time.Now().Add(l.lifetime)}
	c.SetReadDeadline(lc.end)
	return lc, nil
}

// errLifetime is what reads and writes return once a session's time is up.
var errLifetime = fmt.Errorf("smtp session time limit reached: %w", net.ErrClosed)

// lifetimeConn ends a session at end, busy or idle: no read deadline goes
// past it, and the read it stops answers the client 421 4.4.2 and closes
// the connection. go-smtp's deadlines count idle time only, so a client
// sending NOOP every minute would keep its session for ever.
type lifetimeConn struct {
	net.Conn
	end     time.Time
	expired atomic.Bool
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
	if err != nil && errors.As(err, &ne) && ne.Timeout() && !time.Now().Before(c.end) && !c.tls.Load() {
		c.expire()
		return n, errLifetime
	}
	return n, err
}

func (c *lifetimeConn) Write(p []byte) (int, error) {
	if c.expired.Load() {
		return 0, errLifetime
	}
	return c.Conn.Write(p)
}

// expire tells the client its session is over and closes the connection;
// go-smtp's reads and writes fail from then on.
func (c *lifetimeConn) expire() {
	if c.expired.CompareAndSwap(false, true) {
		c.Conn.SetWriteDeadline(time.Now().Add(time.Second))
		io.WriteString(c.Conn, msgLifetime)
		c.Conn.Close()
	}
}
