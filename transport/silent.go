package transport

import (
	"crypto/tls"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// silentGrace is how long a connection that has sent nothing may stay open
// once Shutdown has begun: a client that connected and said nothing for
// this long is not in the middle of a request (a browser's preconnect, a
// connection an HTTP client dialled and then did not need).
const silentGrace = time.Second

// silentSweep is how often Shutdown looks for such connections.
const silentSweep = 100 * time.Millisecond

// silence keeps the connections of a Server's listeners that have not yet
// sent a byte of a request, so that Shutdown can close them. fasthttp's
// Shutdown closes only connections idle between two requests; one that
// has not sent its first request counts as busy until the read timeout
// (15 s), and kept every stop waiting that long.
type silence struct {
	mu    sync.Mutex
	conns map[*silentConn]struct{} // those that have sent nothing yet
}

// listener wraps ln, the outermost listener (after TLS), so that its
// connections are counted until they send their first byte.
func (s *silence) listener(ln net.Listener) net.Listener { return &silentListener{Listener: ln, s: s} }

// closeSilent closes, every silentSweep until done is closed, the
// connections that have sent nothing and have been open silentGrace.
// Their reads return io.EOF, which fasthttp takes for a client gone.
func (s *silence) closeSilent(done <-chan struct{}) {
	t := time.NewTicker(silentSweep)
	defer t.Stop()
	for {
		s.mu.Lock()
		for c := range s.conns {
			if time.Since(c.accepted) >= silentGrace {
				delete(s.conns, c)
				c.shut.Store(true)
				go c.Conn.Close() // a TLS close sends its alert: not under the lock
			}
		}
		s.mu.Unlock()
		select {
		case <-done:
			return
		case <-t.C:
		}
	}
}

type silentListener struct {
	net.Listener
	s *silence
}

// Accept returns the next connection, counted as silent until it sends a
// byte; a TLS connection keeps the methods fasthttp reads TLS from.
func (l *silentListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	sc := &silentConn{Conn: c, s: l.s, accepted: time.Now()}
	l.s.mu.Lock()
	if l.s.conns == nil {
		l.s.conns = map[*silentConn]struct{}{}
	}
	l.s.conns[sc] = struct{}{}
	l.s.mu.Unlock()
	if tc, ok := c.(*tls.Conn); ok {
		return &silentTLSConn{silentConn: sc, tls: tc}, nil
	}
	return sc, nil
}

// silentConn is a connection that leaves its silence's set at its first
// byte read, or at its close.
type silentConn struct {
	net.Conn
	s        *silence
	accepted time.Time
	spoke    atomic.Bool // set by Read, once; then s is never locked again
	shut     atomic.Bool // closed by closeSilent (set under s.mu)
}

func (c *silentConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if c.spoke.Load() {
		return n, err
	}
	c.s.mu.Lock()
	shut := c.shut.Load()
	if n > 0 && !shut {
		c.spoke.Store(true)
		delete(c.s.conns, c)
	}
	c.s.mu.Unlock()
	if shut {
		return 0, io.EOF
	}
	return n, err
}

// SetDeadline, SetReadDeadline and SetWriteDeadline succeed on a
// connection closeSilent closed, so that fasthttp ends it as a client gone
// (the read's io.EOF), not as an error it logs.
func (c *silentConn) SetDeadline(t time.Time) error {
	if c.shut.Load() {
		return nil
	}
	return c.Conn.SetDeadline(t)
}

func (c *silentConn) SetReadDeadline(t time.Time) error {
	if c.shut.Load() {
		return nil
	}
	return c.Conn.SetReadDeadline(t)
}

func (c *silentConn) SetWriteDeadline(t time.Time) error {
	if c.shut.Load() {
		return nil
	}
	return c.Conn.SetWriteDeadline(t)
}

func (c *silentConn) Close() error {
	if !c.spoke.Load() {
		c.s.mu.Lock()
		delete(c.s.conns, c)
		c.s.mu.Unlock()
	}
	return c.Conn.Close()
}

// silentTLSConn is a silentConn over TLS: fasthttp does the handshake and
// reads ctx.IsTLS through these two methods.
type silentTLSConn struct {
	*silentConn
	tls *tls.Conn
}

// Handshake runs the TLS handshake; its error, also when closeSilent
// closed the connection first.
func (c *silentTLSConn) Handshake() error { return c.tls.Handshake() }

// ConnectionState returns the TLS connection's state.
func (c *silentTLSConn) ConnectionState() tls.ConnectionState { return c.tls.ConnectionState() }
