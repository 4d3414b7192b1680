package localcluster

import (
	"io"
	"net"
	"sync"
)

// Proxy forwards TCP connections from a loopback port to a target address,
// until Cut: then it closes the connections it carries and refuses new
// ones, until Heal.
type Proxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]struct{}
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

// Cut closes every connection the proxy carries and refuses new ones.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c := range p.conns {
		c.Close()
	}
}

// Heal lets connections through again.
func (p *Proxy) Heal() {
	p.mu.Lock()
	p.cut = false
	p.mu.Unlock()
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

// carry joins in to a new connection to the target, both ways.
func (p *Proxy) carry(in net.Conn) {
	if !p.track(in) {
		in.Close()
		return
	}
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
	pipe := func(dst, src net.Conn) {
		defer wg.Done()
		io.Copy(dst, src)
		dst.Close()
		src.Close()
	}
	go pipe(out, in)
	go pipe(in, out)
	wg.Wait()
	p.untrack(in)
	p.untrack(out)
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
