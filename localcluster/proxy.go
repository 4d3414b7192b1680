package localcluster

import (
	"net"
	"sync"
	"time"
)

// Proxy forwards TCP connections from a loopback port to a target address.
// Its faults: Cut closes the connections it carries and refuses new ones
// (the ends see it at once); Blackhole lets no byte through either way and
// closes nothing (the ends learn only from their own timeouts, as behind a
// dead switch); Delay holds every byte for a while. Heal ends the fault.
type Proxy struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	cut    bool
	hole   bool
	healed chan struct{} // closed when the blackhole ends
	delay  time.Duration
	conns  map[net.Conn]struct{}
}

// NewProxy listens on a free loopback port and forwards to target; it
// returns the listener's error.
func NewProxy(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	go p.serve()
	return p, nil
}

// Addr returns the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Carries reports whether the proxy carries a connection now.
func (p *Proxy) Carries() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns) > 0
}

// Cut closes every connection the proxy carries and refuses new ones.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	p.open()
	for c := range p.conns {
		c.Close()
	}
}

// Blackhole stops every byte, both ways, on the connections the proxy
// carries and on those it accepts meanwhile (it dials their target only
// after Heal), and closes nothing: an end that closes meanwhile is closed
// at the other end only after Heal, as a reset that waits for the link.
func (p *Proxy) Blackhole() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.hole {
		p.hole, p.healed = true, make(chan struct{})
	}
}

// Delay holds every chunk of bytes d before passing it on (0: none), in
// both directions; each connection's bytes keep their order.
func (p *Proxy) Delay(d time.Duration) {
	p.mu.Lock()
	p.delay = d
	p.mu.Unlock()
}

// Heal ends every fault: connections go through again, with no delay.
func (p *Proxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut, p.delay = false, 0
	p.open()
}

// open ends a blackhole; p.mu is held.
func (p *Proxy) open() {
	if p.hole {
		p.hole = false
		close(p.healed)
	}
}

// Close stops the proxy and closes its connections.
func (p *Proxy) Close() {
	p.ln.Close()
	p.Cut()
}

func (p *Proxy) serve() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.carry(in)
	}
}

// pass waits while the proxy is a blackhole, and returns how long to hold
// the bytes before passing them on.
func (p *Proxy) pass() time.Duration {
	for {
		p.mu.Lock()
		hole, healed, delay := p.hole, p.healed, p.delay
		p.mu.Unlock()
		if !hole {
			return delay
		}
		<-healed
	}
}

// carry joins in to a new connection to the target, both ways.
func (p *Proxy) carry(in net.Conn) {
	if !p.track(in) {
		in.Close()
		return
	}
	p.pass()
	out, err := net.Dial("tcp", p.target)
	if err != nil || !p.track(out) {
		p.untrack(in)
		if out != nil {
			out.Close()
		}
		return
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); p.pipe(out, in) }()
	go func() { defer wg.Done(); p.pipe(in, out) }()
	wg.Wait()
	p.untrack(in)
	p.untrack(out)
}

// chunk is bytes read from one end, and when.
type chunk struct {
	b  []byte
	at time.Time
}

// pipe copies src to dst, each chunk once the proxy lets it pass (after
// the delay, counted from when it was read), and closes both when src
// ends or a write fails. Up to 64 chunks wait in the proxy, as in a
// link's buffers.
func (p *Proxy) pipe(dst, src net.Conn) {
	line := make(chan chunk, 64)
	go func() {
		defer close(line)
		for {
			b := make([]byte, 32<<10)
			n, err := src.Read(b)
			if n > 0 {
				line <- chunk{b[:n], time.Now()}
			}
			if err != nil {
				return
			}
		}
	}()
	defer src.Close()
	defer dst.Close()
	for c := range line {
		if hold := time.Until(c.at.Add(p.pass())); hold > 0 {
			time.Sleep(hold)
			// A blackhole that began meanwhile holds the bytes too.
			p.pass()
		}
		if _, err := dst.Write(c.b); err != nil {
			src.Close()
			for range line { // the reader stops at its next read
			}
			return
		}
	}
	// src ended: a blackhole holds the close as it held the bytes.
	p.pass()
}

// track adds c to the connections carried, unless the proxy is cut.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	c.Close()
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}
