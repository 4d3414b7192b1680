// Package connlimit bounds the connections one listener serves, in all and
// per client address, answering the excess at once instead of holding it,
// and rides out temporary accept errors (EMFILE, ENFILE, ENOBUFS, ...)
// with a back-off instead of returning them (decisions.md, connection
// limits). Every listener of the server (public HTTP, admin HTTP, SMTP) is
// wrapped in one, so that the limits and the back-off hold the same on all.
package connlimit

import (
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Limits bounds one listener's connections. A zero or negative field is no
// limit.
type Limits struct {
	// Total is the number of connections served at once.
	Total int
	// PerAddress is the number of connections served at once from one
	// client address: an IPv4 address, or an IPv6 /64 (what one host or
	// one site usually holds).
	PerAddress int
}

// Options configures a Listener.
type Options struct {
	Limits
	// Name names the listener in logs ("public", "admin", "smtp").
	Name string
	// Refuse answers a connection over a limit (a 503, a 421) before the
	// Listener closes it. With wait (at most MaxRefusing refusals at once
	// per listener, each on its own goroutine) it may wait a little for
	// what the client sends first, within RefuseTimeout, and the Listener
	// then lingers for the client to close. Without (a burst past those),
	// it is called on the accept loop and must not wait: it may look at
	// what arrived already (ReadArrived) and write its answer; the
	// Listener then drops what the client sent and closes. nil: the
	// connection is closed without a word.
	Refuse func(c net.Conn, wait bool)
	// Refused, when set, counts each refused connection: reason is
	// "total" or "address".
	Refused func(reason string)
	// Logger receives accept errors and refusals, rate-limited; default
	// slog.Default().
	Logger *slog.Logger
}

// Refusal bounds.
const (
	// MaxRefusing is the number of refusals in progress at once per
	// listener (each holds a descriptor for up to RefuseTimeout); past it
	// a refused connection is closed without an answer.
	MaxRefusing = 16
	// RefuseTimeout bounds one refusal: reading what the client sent
	// first, writing the answer and waiting for the client to close.
	RefuseTimeout = 2 * time.Second
	// quickTimeout bounds the write of an answer on the accept loop (a
	// few hundred bytes to a new connection's empty send buffer).
	quickTimeout = 50 * time.Millisecond
)

// Accept back-off after a temporary error, as net/http's Server does.
const (
	firstBackoff = 5 * time.Millisecond
	maxBackoff   = time.Second
	logEvery     = 10 * time.Second // at most one log line per kind of event per listener
)

// Listener is a net.Listener that serves at most Limits connections and
// retries temporary accept errors. Its connections release their place
// when closed.
type Listener struct {
	inner  net.Listener
	opts   Options
	log    *slog.Logger
	done   chan struct{}
	closed sync.Once

	mu      sync.Mutex
	open    int
	perAddr map[netip.Addr]int

	refusing chan struct{} // a slot per refusal in progress

	acceptLog  RateLog
	refusedLog RateLog
}

// New wraps inner; the Listener owns it from then on.
func New(inner net.Listener, opts Options) *Listener {
	l := &Listener{inner: inner, opts: opts, log: opts.Logger, done: make(chan struct{}),
		perAddr: map[netip.Addr]int{}, refusing: make(chan struct{}, MaxRefusing)}
	if l.log == nil {
		l.log = slog.Default()
	}
	l.log = l.log.With("listener", opts.Name)
	return l
}

// Accept returns the next connection within the limits. Connections over a
// limit are refused (answered and closed) and never returned; temporary
// accept errors are logged and retried after a back-off (5 ms doubling to
// 1 s). It returns an error only once the listener is closed or on an
// error that is not temporary.
func (l *Listener) Accept() (net.Conn, error) {
	var delay time.Duration
	for {
		c, err := l.inner.Accept()
		if err != nil {
			if !Temporary(err) {
				return nil, err
			}
			delay = min(max(2*delay, firstBackoff), maxBackoff)
			if n, ok := l.acceptLog.Allow(); ok {
				l.log.Warn("accept failed; retrying", "err", err, "retry_in", delay, "more_since_last_log", n)
			}
			t := time.NewTimer(delay)
			select {
			case <-l.done: // the next Accept returns the closed listener's error
			case <-t.C:
			}
			t.Stop()
			continue
		}
		delay = 0
		key := AddressKey(c.RemoteAddr())
		if reason := l.admit(key); reason != "" {
			l.refuse(c, key, reason)
			continue
		}
		return &conn{Conn: c, l: l, key: key}, nil
	}
}

// admit takes a place for a connection from key; it returns why not
// ("total", "address") when a limit is reached.
func (l *Listener) admit(key netip.Addr) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.opts.Total > 0 && l.open >= l.opts.Total {
		return "total"
	}
	if l.opts.PerAddress > 0 && l.perAddr[key] >= l.opts.PerAddress {
		return "address"
	}
	l.open++
	l.perAddr[key]++
	return ""
}

// release gives back a connection's place.
func (l *Listener) release(key netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if n := l.perAddr[key] - 1; n > 0 {
		l.perAddr[key] = n
	} else {
		delete(l.perAddr, key)
	}
}

// Open returns the number of connections served now.
func (l *Listener) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

// refuse answers c on a goroutine of its own (when fewer than MaxRefusing
// are) and closes it.
func (l *Listener) refuse(c net.Conn, key netip.Addr, reason string) {
	if l.opts.Refused != nil {
		l.opts.Refused(reason)
	}
	if n, ok := l.refusedLog.Allow(); ok {
		l.log.Warn("connection refused: too many connections", "reason", reason, "address", key.String(),
			"limit_total", l.opts.Total, "limit_per_address", l.opts.PerAddress, "more_since_last_log", n)
	}
	if l.opts.Refuse == nil {
		c.Close()
		return
	}
	select {
	case l.refusing <- struct{}{}:
		go func() {
			defer func() { <-l.refusing }()
			c.SetDeadline(time.Now().Add(RefuseTimeout))
			l.opts.Refuse(c, true)
			Linger(c)
		}()
	default: // a burst: answered at once, on this goroutine
		c.SetDeadline(time.Now().Add(quickTimeout))
		l.opts.Refuse(c, false)
		drainArrived(c)
		c.Close()
	}
}

// Close closes the inner listener; connections already accepted stay open.
func (l *Listener) Close() error {
	l.closed.Do(func() { close(l.done) })
	return l.inner.Close()
}

// Addr is the inner listener's address.
func (l *Listener) Addr() net.Addr { return l.inner.Addr() }

// conn is an accepted connection holding its place until closed.
type conn struct {
	net.Conn
	l        *Listener
	key      netip.Addr
	released atomic.Bool
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	if c.released.CompareAndSwap(false, true) {
		c.l.release(c.key)
	}
	return err
}

// Unwrap returns the connection as accepted from the inner listener.
func (c *conn) Unwrap() net.Conn { return c.Conn }

// AddressKey returns the address a connection from addr counts under: the
// IPv4 address (an IPv4-mapped IPv6 one unmapped), or the /64 of an IPv6
// address; the zero Addr for an address that is not IP.
func AddressKey(addr net.Addr) netip.Addr {
	var ip netip.Addr
	switch a := addr.(type) {
	case *net.TCPAddr:
		ip, _ = netip.AddrFromSlice(a.IP)
	default:
		if a == nil {
			return netip.Addr{}
		}
		ap, err := netip.ParseAddrPort(a.String())
		if err != nil {
			return netip.Addr{}
		}
		ip = ap.Addr()
	}
	ip = ip.Unmap().WithZone("")
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.Addr()
	}
	return ip
}

// Temporary reports whether an accept error is one to retry: a timeout, or
// one of the errors accept(2) gives while the listener itself is fine
// (descriptors or buffers running out, a connection aborted before it was
// taken, the network errors Linux's accept(2) says to treat as EAGAIN). A
// closed listener's error is not.
func Temporary(err error) bool {
	if errors.Is(err, net.ErrClosed) {
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return false
	}
	switch errno {
	case syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM,
		syscall.ECONNABORTED, syscall.ECONNRESET, syscall.EAGAIN, syscall.EINTR, syscall.EPERM, syscall.ETIMEDOUT,
		syscall.ENETDOWN, syscall.EPROTO, syscall.ENOPROTOOPT, syscall.EHOSTDOWN, syscall.ENONET,
		syscall.EHOSTUNREACH, syscall.EOPNOTSUPP, syscall.ENETUNREACH:
		return true
	}
	return false
}

// RateLog lets one log line through per 10 seconds and counts the rest,
// for the lines a client can cause (a refusal, a request that does not
// read): one line per event would let anyone who reaches a port fill the
// log at the rate it connects. Its zero value is ready; it is safe for
// concurrent use.
type RateLog struct {
	mu         sync.Mutex
	last       time.Time
	suppressed int
}

// Allow reports whether to log now, with the number of events not logged
// since the last line.
func (r *RateLog) Allow() (int, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if now := time.Now(); r.last.IsZero() || now.Sub(r.last) >= logEvery {
		n := r.suppressed
		r.last, r.suppressed = now, 0
		return n, true
	}
	r.suppressed++
	return 0, false
}
